import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// Every body the client reads has a bound in bytes and in time, and reaching it stops the
/// transfer, not only the client's interest in it: a server that sends more than the client
/// was told to expect (a lying Content-Length on a kept-alive connection, no length and a
/// connection close, an endless chunked body) gets the connection closed within that size
/// plus 64 KiB, the call returns at once with an error and
/// the process's memory stays flat; a server that trickles is left after one window of
/// `transferRateWindow` below `minimumTransferRate`, a metadata request after
/// `metadataDeadline`. Measured with `endless_server.py`, which counts the bytes it sent;
/// what the client took off the connection is that less what the two sockets still hold.
final class TransferBoundsTests: XCTestCase {
    /// The most a client reads past what it expects.
    static let slack: Int64 = 64 << 10

    /// A signed site with one model of `size` bytes (and its segment index), served by
    /// `endless_server.py`.
    final class Site {
        let site: ClientTests.Site
        let server: EndlessServer
        let artifactSize: Int
        var work: Scratch { site.work }

        init(artifactSize: Int = 300_000) throws {
            site = try ClientTests.Site()
            self.artifactSize = artifactSize
            try site.publish([try site.work.write("v1/m.bin", patternBytes(artifactSize, seed: 7))], version: "1.0.0", ["--segment-index", "always"])
            server = try EndlessServer(root: site.root, port: site.port, work: site.work)
        }

        func configuration(_ directory: String, retries: Int = 0) -> ClientConfiguration {
            var configuration = site.configuration(directory: directory)
            configuration.retries = retries
            return configuration
        }

        /// The size the manifest gives the segment index of the model's file.
        func indexSize() throws -> Int64 {
            let release = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json")), source: "manifest")
            return try XCTUnwrap(release.models["m"]?.files.first?.segments?.size)
        }
    }

    /// What one endless answer cost the client.
    struct Measure: CustomStringConvertible {
        let target: String
        let body: String
        let seconds: Double
        let memoryGrowth: Int64
        let expected: Int64
        let sent: Int64
        let read: Int64?
        let sentLater: Int64
        let open: Bool
        let error: String

        var description: String {
            "\(target)/\(body): returned in \(String(format: "%.3f", seconds)) s, memory +\(memoryGrowth >> 20) MiB, expected \(expected) B, "
                + "server sent \(sent) B (\(sentLater) B more 0.5 s later, connection \(open ? "open" : "closed")), client read \(read.map(String.init) ?? "-") B; \(error)"
        }
    }

    /// Runs one update against `server` with `target` answered by an endless `body`, and
    /// checks the bounds: back within 10 s, memory within 256 MiB, no more than `expected`
    /// plus 64 KiB read (or the connection closed within 1 s), nothing more sent between
    /// 0.5 s and 1 s later.
    func endless(_ target: String, _ body: String, expected: Int64, server: EndlessServer, configuration: ClientConfiguration,
                 succeeds: Bool = false, file: StaticString = #filePath, line: UInt = #line) async throws -> Measure {
        try server.rules([["target": target, "body": body]])
        let updater = try ModelUpdater(configuration)
        let call = await bounded(seconds: 20, server: server) { try await updater.update() }
        try await Task.sleep(nanoseconds: 500_000_000)
        let answer = try XCTUnwrap(server.last(target), "\(target)/\(body): the server shaped no answer", file: file, line: line)
        let read = server.bytesRead(clientPort: answer.port, sent: answer.connection.sent)
        try await Task.sleep(nanoseconds: 500_000_000)
        let later = server.connections()[answer.port]
        // The flood ends (the server closes what its rules no longer shape) before the next update.
        try server.rules([])
        try await Task.sleep(nanoseconds: 200_000_000)
        var errorText = "no error"
        if case .failure(let error) = call.result { errorText = String(describing: error) }
        let measure = Measure(target: target, body: body, seconds: call.seconds, memoryGrowth: call.memoryGrowth, expected: expected,
                              sent: answer.connection.sent, read: read, sentLater: (later?.sent ?? answer.connection.sent) - answer.connection.sent,
                              open: later?.open ?? false, error: errorText)
        print(measure)
        let label = "\(target)/\(body)"
        guard let result = call.result else {
            XCTFail("\(label): the update did not return within 20 s (\(measure))", file: file, line: line)
            return measure
        }
        XCTAssertLessThan(call.seconds, 10, "\(label): \(measure)", file: file, line: line)
        XCTAssertLessThan(call.memoryGrowth, 256 << 20, "\(label): \(measure)", file: file, line: line)
        if let read {
            XCTAssertLessThanOrEqual(read, expected + Self.slack, "\(label): \(measure)", file: file, line: line)
        } else {
            // The client closed the connection before it could be measured (the cancel
            // landed while the socket had nothing waiting): what the server counts then
            // includes what the sockets held.
            XCTAssertFalse(answer.connection.open, "\(label): \(measure)", file: file, line: line)
            XCTAssertLessThan(answer.connection.seconds, 1, "\(label): closed late (\(measure))", file: file, line: line)
        }
        XCTAssertLessThanOrEqual(measure.sentLater, 0, "\(label): the server could still send (\(measure))", file: file, line: line)
        switch (result, succeeds) {
        case (.success, false): XCTFail("\(label): the update succeeded", file: file, line: line)
        case (.failure(let error), true): XCTFail("\(label): \(error)", file: file, line: line)
        default: break
        }
        if !succeeds { XCTAssertTrue(updater.installedModels().isEmpty, "\(label): something was installed", file: file, line: line) }
        return measure
    }

    static let bodies = ["lying", "close", "chunked"]

    func testAnEndlessManifestIsNotReadPastItsLimit() async throws {
        let site = try Site()
        for body in Self.bodies {
            let configuration = site.configuration("device-manifest-\(body)")
            let measure = try await endless("manifest", body, expected: Int64(configuration.maxManifestBytes), server: site.server, configuration: configuration)
            XCTAssertTrue(measure.error.contains("manifest is larger than"), measure.error)
        }
    }

    func testAnEndlessSignatureIsNotReadPastItsLimitAndIsNamedASignature() async throws {
        let site = try Site()
        for body in Self.bodies {
            let measure = try await endless("minisig", body, expected: 16 << 10, server: site.server, configuration: site.configuration("device-minisig-\(body)"))
            XCTAssertTrue(measure.error.contains("manifest.json.minisig: the signature is larger than 16384 bytes"), measure.error)
        }
    }

    func testAnEndlessArtifactIsNotReadPastItsSize() async throws {
        let site = try Site()
        for body in Self.bodies {
            let measure = try await endless("artifact", body, expected: Int64(site.artifactSize), server: site.server, configuration: site.configuration("device-artifact-\(body)", retries: 2))
            XCTAssertTrue(measure.error.contains("m.bin"), measure.error)
            let downloads = (try? FileManager.default.contentsOfDirectory(atPath: site.work.at("device-artifact-\(body)/downloads"))) ?? []
            XCTAssertNil(downloads.first { !$0.contains(".") }, "no complete download: \(downloads)")
        }
    }

    /// A segment index only spares bytes, and one the server cannot serve is done without
    /// (the file is downloaded whole); but one that runs past its size is the server
    /// misbehaving, like a too slow one: the update stops there.
    func testAnEndlessSegmentIndexIsNotReadPastItsSize() async throws {
        let site = try Site()
        let size = try site.indexSize()
        for body in Self.bodies {
            let measure = try await endless("index", body, expected: size, server: site.server, configuration: site.configuration("device-index-\(body)"))
            XCTAssertTrue(measure.error.contains(".mcsx: the segment index is larger than \(size) bytes"), measure.error)
        }
    }

    func testAnEndlessModelSignatureBundleIsNotReadPastItsSize() async throws {
        let signatures = try ModelSignatureSite()
        let model = try signatures.work.write("v1/m.bin", patternBytes(50_000, seed: 3))
        try signatures.publish([model], version: "1.0.0")
        let bundle = try signatures.bundle(try ModelSignatureSite.statement(["m.bin": SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: model))).hex],
                                                                             ignorePaths: []))
        try signatures.attach(bundle)
        let server = try EndlessServer(root: signatures.site.root, port: signatures.site.port, work: signatures.work)
        for body in Self.bodies {
            var configuration = try signatures.configuration(directory: "device-bundle-\(body)")
            configuration.retries = 1
            _ = try await endless("bundle", body, expected: Int64(bundle.count), server: server, configuration: configuration)
        }
    }

    /// A manifest trickled at 12 bytes a second is left after one window of 1 s below
    /// 1024 bytes a second, with an error that says so, and its connection is closed.
    func testATrickledManifestIsAbandonedAfterOneWindow() async throws {
        let site = try Site()
        try site.server.rules([["target": "manifest", "body": "trickle", "rate": 12]])
        var configuration = site.configuration("device")
        configuration.transferRateWindow = 1
        let updater = try ModelUpdater(configuration)
        let call = await bounded(seconds: 10, server: site.server) { try await updater.update() }
        guard case .failure(let error)? = call.result else { return XCTFail("not abandoned: \(String(describing: call.result))") }
        XCTAssertLessThan(call.seconds, 3)
        XCTAssertEqual((error as? ClientError)?.kind, .network)
        let text = String(describing: error)
        XCTAssertNotNil(text.range(of: #"^http://127\.0\.0\.1:[0-9]+/models/manifest\.json: the transfer brought [0-9]+ bytes in 1 s, less than the minimum of 1024 bytes/s; abandoned$"#,
                                   options: .regularExpression), text)
        try await assertClosed("manifest", server: site.server)
    }

    /// A metadata request that keeps above the minimum rate still ends at
    /// `metadataDeadline`.
    func testAMetadataRequestIsAbandonedAtItsDeadline() async throws {
        let site = try Site()
        try site.server.rules([["target": "manifest", "body": "trickle", "rate": 200]])
        var configuration = site.configuration("device")
        (configuration.minimumTransferRate, configuration.transferRateWindow, configuration.metadataDeadline) = (100, 1, 2)
        let updater = try ModelUpdater(configuration)
        let call = await bounded(seconds: 10, server: site.server) { try await updater.update() }
        guard case .failure(let error)? = call.result else { return XCTFail("not abandoned: \(String(describing: call.result))") }
        XCTAssertGreaterThanOrEqual(call.seconds, 2)
        XCTAssertLessThan(call.seconds, 4)
        XCTAssertEqual((error as? ClientError)?.kind, .network)
        let text = String(describing: error)
        XCTAssertNotNil(text.range(of: #"/models/manifest\.json: the transfer took longer than the 2 s allowed for metadata \([0-9]+ bytes arrived\); abandoned$"#,
                                   options: .regularExpression), text)
        try await assertClosed("manifest", server: site.server)
    }

    /// A trickled artifact is left after each window below the minimum, retried (resuming)
    /// `retries` times, so the update ends within (retries + 1) windows and the backoff;
    /// nothing is installed, and the next update resumes where the last attempt stopped.
    func testATrickledArtifactIsAbandonedRetriedAndResumedLater() async throws {
        let site = try Site()
        try site.server.rules([["target": "artifact", "body": "trickle", "rate": 200]])
        var configuration = site.configuration("device", retries: 2)
        configuration.transferRateWindow = 1
        let updater = try ModelUpdater(configuration)
        let call = await bounded(seconds: 15, server: site.server) { try await updater.update() }
        guard case .failure(let error)? = call.result else { return XCTFail("not abandoned: \(String(describing: call.result))") }
        XCTAssertLessThan(call.seconds, 3 * 1 + 0.6 + 2, "three windows of 1 s and the backoff")
        XCTAssertTrue(String(describing: error).contains("/models/models/m/1.0.0/m.bin: the transfer brought"), String(describing: error))
        XCTAssertEqual((error as? ClientError)?.kind, .network)
        XCTAssertTrue(updater.installedModels().isEmpty)
        let gets = site.server.requests.filter { $0.contains("/m.bin ") }
        XCTAssertEqual(gets.count, 3, gets.joined(separator: "\n"))
        XCTAssertTrue(gets.dropFirst().allSatisfy { $0.contains(" bytes=") }, "each retry resumes: \(gets)")
        try await assertClosed("artifact", server: site.server)

        try site.server.rules([])
        let outcome = try await ModelUpdater(site.configuration("device")).update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let resumed = try XCTUnwrap(site.server.requests.filter { $0.contains("/m.bin ") }.last)
        XCTAssertNotNil(resumed.range(of: #" bytes=[1-9][0-9]*-$"#, options: .regularExpression), resumed)
    }

    /// A slow artifact above the minimum rate is not abandoned.
    func testAnArtifactAboveTheMinimumRateIsNotAbandoned() async throws {
        let site = try Site(artifactSize: 10_000)
        try site.server.rules([["target": "artifact", "body": "trickle", "rate": 4000]])
        var configuration = site.configuration("device")
        configuration.transferRateWindow = 1
        let outcome = try await ModelUpdater(configuration).update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
    }

    /// A silent server and a closed port read as what happened, naming the URL, not as a
    /// Foundation error domain and code.
    func testTimeoutsAndRefusedConnectionsReadInPlainWords() async throws {
        let site = try Site()
        try site.server.rules([["target": "manifest", "body": "silent"]])
        var configuration = site.configuration("device")
        configuration.requestTimeout = 1
        let silent = try ModelUpdater(configuration)
        let call = await bounded(seconds: 10, server: site.server) { try await silent.update() }
        guard case .failure(let timeout)? = call.result else { return XCTFail("no timeout: \(String(describing: call.result))") }
        XCTAssertEqual(String(describing: timeout), "\(site.site.base)/manifest.json: the server sent nothing for 1 s (timed out)")
        XCTAssertEqual((timeout as? ClientError)?.kind, .network)

        let closed = try freeLoopbackPort()
        let refused = ClientConfiguration(manifestURL: URL(string: "http://127.0.0.1:\(closed)/models/manifest.json")!,
                                          directory: URL(fileURLWithPath: site.work.at("device-refused")), deviceID: "d", retries: 0)
        do {
            _ = try await ModelUpdater(refused).update()
            XCTFail("a closed port answered")
        } catch {
            XCTAssertEqual(String(describing: error), "http://127.0.0.1:\(closed)/models/manifest.json: cannot connect to 127.0.0.1:\(closed) (connection refused)")
            XCTAssertEqual((error as? ClientError)?.kind, .network)
        }
    }

    /// `ClientError.kind` sorts failures the way a device program exits: 1 for what was
    /// refused, 3 for the network and the disk.
    func testEveryErrorSaysWhatKindOfFailureItIs() {
        let network: [ClientError] = [.http(url: "u", status: 404), .http(url: "u", status: 503), .network(url: "u", reason: "r"),
                                      .tooSlow(url: "u", received: 12, seconds: 30, minimumRate: 1024),
                                      .deadlineExceeded(url: "u", received: 1, deadline: 60), .badRangeResponse(url: "u", reason: "r")]
        let io: [ClientError] = [.io(path: "p", reason: "No space left on device"), .insufficientDiskSpace(needed: 2, available: 1),
                                 .undoFailed(cause: "c", models: ["m"]),
                                 .insufficientSpaceToInstall(model: "m", version: "1.0.0", bytes: 2, available: 1, reserve: 1),
                                 .directoryBusy(path: "d", waited: 1)]
        let refused: [ClientError] = [.manifestTooLarge(url: "u", limit: 1), .tooLarge(url: "u", object: "signature", limit: 1),
                                      .invalidManifest(url: "u", reason: "r"), .unsigned(url: "u"), .badSignature(url: "u", reason: "r"),
                                      .expired(url: "u", expiresAt: "e", now: "n"), .replayed(url: "u", sequence: 1, highestAccepted: 2),
                                      .hashMismatch(model: "m", file: "f", expected: "e", actual: "a"),
                                      .sizeMismatch(model: "m", file: "f", expected: 1, actual: 2), .unsafeArchive(model: "m", file: "f", reason: "r"),
                                      .requiresNewerApp(minimum: "2", current: "1"), .unknownModel(url: "u", model: "m"),
                                      .installTooLarge(model: "m", version: "1.0.0", bytes: 2, limit: 1)]
        XCTAssertEqual(network.map(\.kind), Array(repeating: .network, count: network.count))
        XCTAssertEqual(io.map(\.kind), Array(repeating: .io, count: io.count))
        XCTAssertEqual(refused.map(\.kind), Array(repeating: .refused, count: refused.count))
        XCTAssertEqual(ClientError.configuration(reason: "r").kind, .configuration)
        XCTAssertEqual(ClientError.tooSlow(url: "https://cdn.example.com/m.bin", received: 12, seconds: 30, minimumRate: 1024).description,
                       "https://cdn.example.com/m.bin: the transfer brought 12 bytes in 30 s, less than the minimum of 1024 bytes/s; abandoned")
    }

    /// Within 2 s, the connection of the last answer for `target` is closed.
    func assertClosed(_ target: String, server: EndlessServer, file: StaticString = #filePath, line: UInt = #line) async throws {
        for _ in 0..<20 where server.last(target)?.connection.open ?? false { try await Task.sleep(nanoseconds: 100_000_000) }
        XCTAssertEqual(server.last(target)?.connection.open, false, "the \(target)'s connection is still open", file: file, line: line)
    }
}
