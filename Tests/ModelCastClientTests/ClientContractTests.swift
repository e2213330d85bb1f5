import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an app can rely on (issue 23): channels bound, cancellation, one update at a time,
/// recovery without the network, app versions as apps write them, and the things an app
/// also expects (its own session settings, stable paths, models it no longer gets removed).
final class ClientContractTests: XCTestCase {
    typealias Site = ClientTests.Site

    func sha256(_ path: String) throws -> String {
        try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: path))).hex
    }

    /// A misbehaving server (Tests/Fixtures) on a free port serving `root`.
    func startMisbehavingServer(_ root: String) throws -> (BackgroundProcess, Int) {
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", root, String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        return (server, port)
    }

    /// Beta's signed manifest (a higher sequence) served at stable's URL is refused: its
    /// signed comment names `channels/beta/manifest.json` (so even a client that does not
    /// read the channel field refuses it) and the manifest says channel beta. Afterwards
    /// the real stable manifest still installs (no replay poisoning).
    func testAnotherChannelsManifestIsRefused() async throws {
        let site = try Site()
        let stable = try site.work.write("s/m.bin", patternBytes(20_000, seed: 1))
        let beta = try site.work.write("b/m.bin", patternBytes(21_000, seed: 2))
        try site.publish([stable], version: "1.0.0")
        for version in ["2.0.0", "2.1.0", "2.2.0"] { try site.publish([beta], version: version, ["--channel", "beta"]) }
        try site.start()
        let betaSignature = try String(contentsOfFile: site.root + "/channels/beta/manifest.json.minisig", encoding: .utf8)
        XCTAssertTrue(betaSignature.contains("\tfile:channels/beta/manifest.json\t"), betaSignature)
        let stableSignature = try String(contentsOfFile: site.root + "/manifest.json.minisig", encoding: .utf8)
        XCTAssertTrue(stableSignature.contains("\tfile:manifest.json\t"), stableSignature)

        // The real beta device takes beta's release.
        let betaDevice = try ModelUpdater(site.configuration(directory: "beta-device", channel: "beta"))
        XCTAssertEqual(betaDevice.configuration.channel, "beta", "the channel comes from the URL's layout")
        let betaOutcome = try await betaDevice.update()
        XCTAssertEqual(betaOutcome, .updated(sequence: 3, models: ["m": "2.2.0"]))

        let device = try ModelUpdater(site.configuration())
        let first = try await device.update()
        XCTAssertEqual(first, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let saved = (try Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json")), try Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json.minisig")))
        try FileManager.default.removeItem(atPath: site.root + "/manifest.json")
        try FileManager.default.removeItem(atPath: site.root + "/manifest.json.minisig")
        try FileManager.default.copyItem(atPath: site.root + "/channels/beta/manifest.json", toPath: site.root + "/manifest.json")
        try FileManager.default.copyItem(atPath: site.root + "/channels/beta/manifest.json.minisig", toPath: site.root + "/manifest.json.minisig")
        do {
            _ = try await device.update()
            XCTFail("beta's manifest was accepted at stable's URL")
        } catch let error as ClientError {
            guard case .badSignature(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("'channels/beta/manifest.json'"), reason)
        }
        // Unsigned (no keys pinned): the manifest's own channel field.
        let unsigned = try ModelUpdater(site.configuration(directory: "unsigned-device", keys: []))
        do {
            _ = try await unsigned.update()
            XCTFail("beta's manifest was accepted at stable's URL")
        } catch let error as ClientError {
            XCTAssertEqual(error, .wrongChannel(url: site.base + "/manifest.json", expected: "stable", actual: "beta"))
        }
        XCTAssertEqual(device.installed("m")?.version, "1.0.0")
        try saved.0.write(to: URL(fileURLWithPath: site.root + "/manifest.json"))
        try saved.1.write(to: URL(fileURLWithPath: site.root + "/manifest.json.minisig"))
        try site.publish([try site.work.write("s2/m.bin", patternBytes(20_000, seed: 3))], version: "1.1.0")
        let after = try await device.update()
        XCTAssertEqual(after, .updated(sequence: 2, models: ["m": "1.1.0"]), "stable's own next release is not taken for a replay")
    }

    /// Cancelling the task running `update()` over a server that sends one byte a second
    /// stops it within a second, keeps the partial download, and installs nothing.
    func testCancellingAnUpdateStopsItAtOnce() async throws {
        let work = try Scratch("modelcast-cancel")
        let (server, port) = try startMisbehavingServer(work.at("sites"))
        let base = "http://127.0.0.1:\(port)/drip"
        let model = try work.write("m.bin", patternBytes(100_000, seed: 4))
        let published = try modelcast(["publish", model, "--name", "m", "--version", "1.0.0", "--base-url", base, "--to", try work.atMadeParent("sites/drip")])
        XCTAssertEqual(published.status, 0, published.stderr)
        let updater = try ModelUpdater(ClientConfiguration(manifestURL: URL(string: base + "/manifest.json")!,
                                                           directory: URL(fileURLWithPath: work.at("device")), deviceID: "d", requestTimeout: 60))
        let task = Task { try await updater.update() }
        let part = work.at("device/downloads/\(try sha256(model)).part")
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: part), Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
        try await Task.sleep(nanoseconds: 1_500_000_000)
        let cancelledAt = Date()
        task.cancel()
        let result = await task.result
        let latency = Date().timeIntervalSince(cancelledAt)
        XCTAssertLessThan(latency, 1.0, "update() returned \(latency) s after the cancel")
        guard case .failure(let error) = result else { return XCTFail("the update finished: \(result)") }
        XCTAssertTrue(error is CancellationError, "\(error)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: part), "the partial download is kept for the next attempt")
        XCTAssertNil(updater.installed("m"))
        XCTAssertEqual(updater.installedModels(), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.at("device/models/m/current")))
        print("cancel latency: \(String(format: "%.3f", latency)) s")
        _ = server
    }

    /// Two `update()` calls at once on one updater: the second waits for the first, so
    /// one installs, the other finds the model installed, and the file is fetched once.
    func testConcurrentUpdatesRunOneAfterTheOther() async throws {
        let site = try Site()
        try site.publish([try site.work.write("v1/m.bin", patternBytes(3_000_000, seed: 5))], version: "1.0.0")
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        async let a = updater.update()
        async let b = updater.update()
        let outcomes = try await [a, b]
        XCTAssertTrue(outcomes.contains(.updated(sequence: 1, models: ["m": "1.0.0"])), "\(outcomes)")
        XCTAssertTrue(outcomes.contains { $0 == .notModified || $0 == .upToDate(sequence: 1) }, "\(outcomes)")
        XCTAssertEqual(site.requests.filter { $0.contains("/models/models/m/") }.count, 1, site.requests.joined(separator: "\n"))
        XCTAssertEqual(updater.installed("m")?.version, "1.0.0")
    }

    /// A garbage `state.json`, and a crash between the link switch and the state write:
    /// `installed()` answers from the disk, and the next update rebuilds the state (the
    /// highest sequence a version was installed from is kept, so an old manifest is still a replay).
    func testStateIsRebuiltFromTheDisk() async throws {
        let site = try Site()
        let v1 = try site.work.write("v1/m.bin", patternBytes(5000, seed: 6))
        let v2 = try site.work.write("v2/m.bin", patternBytes(5000, seed: 7))
        try site.publish([v1], version: "1.0.0")
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        _ = try await updater.update()
        let state = site.work.at("device/state.json")
        let stateAtV1 = try Data(contentsOf: URL(fileURLWithPath: state))
        let oldManifest = (try Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json")), try Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json.minisig")))
        try site.publish([v2], version: "1.1.0")
        _ = try await updater.update()

        // The link says 1.1.0, the state still 1.0.0: the state write never happened.
        try stateAtV1.write(to: URL(fileURLWithPath: state))
        XCTAssertEqual(updater.installed("m")?.version, "1.1.0")
        XCTAssertEqual(try sha256(try XCTUnwrap(updater.installed("m")).mainFile.path), try sha256(v2))
        let again = try await updater.update()
        XCTAssertEqual(again, .upToDate(sequence: 2), "nothing is downloaded again")

        // Garbage.
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: state))
        XCTAssertEqual(updater.installed("m")?.version, "1.1.0")
        XCTAssertEqual(updater.installedModels().map(\.name), ["m"])
        try oldManifest.0.write(to: URL(fileURLWithPath: site.root + "/manifest.json"))
        try oldManifest.1.write(to: URL(fileURLWithPath: site.root + "/manifest.json.minisig"))
        do {
            _ = try await updater.update()
            XCTFail("sequence 1 was accepted after 2 was installed")
        } catch let error as ClientError {
            XCTAssertEqual(error, .replayed(url: site.base + "/manifest.json", sequence: 1, highestAccepted: 2))
        }
        XCTAssertEqual(updater.installed("m")?.version, "1.1.0")
    }

    /// `min_app_version` as apps write their versions: two and four numbers; a value that
    /// is no version is refused at publish.
    func testAppVersionsAsAppsWriteThem() async throws {
        let cases: [(String, String, Bool)] = [
            ("5.2", "5.1.9", true), ("5.2", "5.2", false), ("5.2", "5.2.0", false), ("5.2", "5.10", false),
            ("1.0.0.123", "1.0.0.122", true), ("1.0.0.123", "1.0.0.123", false), ("1.0.0.123", "1.0.1", false),
            ("2.0.0", "2.0.0-beta.1", true), ("2.0.0-beta.2", "2.0.0-beta.10", false), ("3", "2.99.99.99", true),
        ]
        for (minimum, app, older) in cases {
            XCTAssertEqual(try AppVersion(app) < AppVersion(minimum), older, "\(app) < \(minimum)")
        }
        for bad in ["", "latest", "1.2.3.4.5", "v1.2", "1..2", "1.2.", "１.2", "1.2 ", "-1"] {
            XCTAssertThrowsError(try AppVersion(bad), bad)
        }

        let site = try Site()
        let model = try site.work.write("v1/m.bin", patternBytes(4000, seed: 8))
        let refused = try modelcast(["publish", model, "--name", "m", "--version", "1.0.0", "--base-url", site.base, "--to", site.root, "--min-app-version", "latest"])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--min-app-version 'latest' is not an app version"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.root + "/manifest.json"))

        try site.publish([model], version: "1.0.0", ["--min-app-version", "5.2"])
        try site.start()
        var old = site.configuration(directory: "old")
        old.appVersion = "5.1"
        do {
            _ = try await ModelUpdater(old).update()
            XCTFail("app 5.1 took a release for 5.2")
        } catch let error as ClientError {
            XCTAssertEqual(error, .requiresNewerApp(minimum: "5.2", current: "5.1"))
        }
        var current = site.configuration(directory: "current")
        current.appVersion = "5.2.0.17"
        let outcome = try await ModelUpdater(current).update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        var garbled = site.configuration(directory: "garbled")
        garbled.appVersion = "five"
        XCTAssertThrowsError(try ModelUpdater(garbled)) { error in
            XCTAssertEqual(error as? ClientError, .configuration(reason: "appVersion 'five' is not an app version (e.g. 5.2, 1.4.0, 1.0.0.123)"))
        }
    }

    /// What an app also expects: `mainFile` stays the same path across updates (under
    /// `current/`), a model the manifest no longer names is removed once superseded, and
    /// `installed()` / `installedModels()` work with the server gone.
    func testStablePathsRemovedModelsAndOfflineAnswers() async throws {
        let site = try Site()
        func publish(_ names: [String], version: String, seed: UInt32, _ extra: [String] = []) throws {
            let files = try names.map { "\($0)=" + (try site.work.write("\(version)/\($0).bin", patternBytes(3000, seed: seed + UInt32($0.count)))) }
            try PublishRun(files, name: nil, version: version, baseURL: site.base, to: site.root, ["--sign", site.work.at("k.key")] + extra).succeeds()
        }
        try publish(["a", "bb"], version: "1.0.0", seed: 1)
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        _ = try await updater.update()
        let mainBefore = try XCTUnwrap(updater.installed("a")).mainFile
        XCTAssertEqual(mainBefore.path, site.work.at("device/models/a/current/a.bin"))
        XCTAssertEqual(updater.installedModels().map(\.name), ["a", "bb"])

        try publish(["a"], version: "1.1.0", seed: 2, ["--remove-model", "bb"])
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 2, models: ["a": "1.1.0"]))
        XCTAssertEqual(try XCTUnwrap(updater.installed("a")).mainFile, mainBefore, "the path an app keeps is the same after an update")
        XCTAssertEqual(try sha256(mainBefore.path), try sha256(site.work.at("1.1.0/a.bin")))
        // bb is still the rollback target's (the release before names it): it stays until a release no longer does.
        try publish(["a"], version: "1.2.0", seed: 3)
        _ = try await updater.update()
        XCTAssertNil(updater.installed("bb"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.work.at("device/models/bb")), "a model no manifest names is removed")
        XCTAssertEqual(updater.installedModels().map(\.name), ["a"])

        site.stopServer()
        XCTAssertEqual(updater.installed("a")?.version, "1.2.0", "answered offline")
        XCTAssertEqual(updater.installedModels().map(\.version), ["1.2.0"])
        XCTAssertNil(updater.installed("../a"))
    }

    /// The app's own `URLSessionConfiguration` is used (here: a header it adds to every request).
    func testTheAppsSessionConfigurationIsUsed() async throws {
        let work = try Scratch("modelcast-session")
        let port = try freeLoopbackPort()
        let script = """
            import sys
            from http.server import BaseHTTPRequestHandler, HTTPServer
            class H(BaseHTTPRequestHandler):
                def do_GET(self):
                    sys.stderr.write("header " + str(self.headers.get("X-App-Test")) + "\\n"); sys.stderr.flush()
                    self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers()
                def log_message(self, *a): pass
            s = HTTPServer(("127.0.0.1", int(sys.argv[1])), H)
            print("ready", flush=True)
            s.serve_forever()
            """
        let server = try BackgroundProcess("/usr/bin/env", ["python3", "-c", script, String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let session = URLSessionConfiguration.ephemeral
        session.httpAdditionalHeaders = ["X-App-Test": "from-the-app"]
        let updater = try ModelUpdater(ClientConfiguration(manifestURL: URL(string: "http://127.0.0.1:\(port)/manifest.json")!,
                                                           directory: URL(fileURLWithPath: work.at("device")), deviceID: "d"),
                                       sessionConfiguration: session)
        do {
            _ = try await updater.update()
            XCTFail("a 404 was taken for a manifest")
        } catch let error as ClientError {
            XCTAssertEqual(error, .http(url: "http://127.0.0.1:\(port)/manifest.json", status: 404))
        }
        XCTAssertTrue(server.standardError.contains("header from-the-app"), server.standardError)
    }

    /// Configuration values the client cannot use are refused when it starts, by name.
    func testBadConfigurationIsRefusedByName() throws {
        let directory = URL(fileURLWithPath: "/tmp/modelcast-never-created")
        let cases: [(ClientConfiguration, String)] = [
            (ClientConfiguration(manifestURL: URL(string: "ftp://127.0.0.1/manifest.json")!, directory: directory, deviceID: "d"), "manifestURL 'ftp://127.0.0.1/manifest.json' is not an http or https URL"),
            (ClientConfiguration(manifestURL: URL(string: "http://127.0.0.1/manifest.json")!, directory: directory, deviceID: "d", channel: "Beta"), "channel 'Beta' is not a channel name"),
            (ClientConfiguration(manifestURL: URL(string: "http://127.0.0.1/manifest.json")!, directory: directory, deviceID: "d", models: ["../x"]), "models names '../x', which is not a model name"),
            (ClientConfiguration(manifestURL: URL(string: "http://u:secret@127.0.0.1/manifest.json")!, directory: directory, deviceID: "d"), "manifestURL carries a user name or password"),
        ]
        for (configuration, message) in cases {
            XCTAssertThrowsError(try ModelUpdater(configuration), message) { error in
                XCTAssertTrue((error as? ClientError)?.description.contains(message) ?? false, "\(error)")
                XCTAssertFalse("\(error)".contains("secret"))
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path))
    }
}
