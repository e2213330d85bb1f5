import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// ModelCastClient against real servers (`modelcast serve`, nginx, a misbehaving server),
/// with the real CLI publishing.
final class ClientTests: XCTestCase {
    /// A published site served by `modelcast serve` on 127.0.0.1 under /models.
    final class Site {
        let work: Scratch
        let port: Int
        let base: String
        var root: String { work.at("site") }
        private(set) var server: BackgroundProcess?

        init() throws {
            work = try Scratch("modelcast-client")
            port = try freeLoopbackPort()
            base = "http://127.0.0.1:\(port)/models"
            let keys = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")])
            XCTAssertEqual(keys.status, 0, keys.stderr)
        }

        var publicKey: String { (try? String(contentsOfFile: work.at("k.pub"), encoding: .utf8)) ?? "" }

        /// Publishes (signed) with the CLI; `extra` adds flags.
        @discardableResult
        func publish(_ files: [String], version: String, name: String = "m", _ extra: [String] = [], environment: [String: String]? = nil) throws -> ProcessOutput {
            try PublishRun(files, name: name, version: version, baseURL: base, to: root, ["--sign", work.at("k.key")] + extra, environment: environment).succeeds()
        }

        func run(_ arguments: [String]) throws {
            let result = try modelcast(arguments + ["--sign", work.at("k.key")])
            XCTAssertEqual(result.status, 0, result.stderr)
        }

        /// Starts `modelcast serve` (once the directory exists).
        func start() throws {
            guard server == nil else { return }
            let process = try BackgroundProcess(modelcastBinary, ["serve", root, "--port", String(port), "--base-path", "/models"])
            XCTAssertTrue(process.firstLine.contains("127.0.0.1:\(port)"), process.firstLine)
            server = process
        }

        /// Stops the server (the device is offline).
        func stopServer() { server = nil }

        /// The GET request lines the server logged.
        var requests: [String] { (server?.standardError ?? "").split(separator: "\n").map(String.init).filter { $0.hasPrefix("GET ") } }

        func configuration(device: String = "device-1", directory: String = "device", channel: String = "stable", keys: [String]? = nil,
                           now: @escaping @Sendable () -> Date = { Date() }) -> ClientConfiguration {
            ClientConfiguration(
                manifestURL: ClientConfiguration.manifestURL(base: URL(string: base)!, channel: channel),
                directory: URL(fileURLWithPath: work.at(directory)), deviceID: device, publicKeys: keys ?? [publicKey], retries: 3,
                requestTimeout: 10, now: now)
        }
    }

    func sha256(_ path: String) throws -> String {
        try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: path))).hex
    }

    /// With no optional setting: first install, nothing new (a 304), an update, and a
    /// rollback that reuses the kept version without downloading it; a tree model and a
    /// zipped directory both land whole.
    func testFirstInstallUpdateAndRollbackAgainstServe() async throws {
        let site = try Site()
        let v1 = try site.work.write("v1/m.bin", patternBytes(300_000, seed: 1))
        let v2 = try site.work.write("v2/m.bin", patternBytes(310_000, seed: 2))
        try site.publish([v1], version: "1.0.0")
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        let progress = Task { () -> [UpdateProgress] in
            var steps: [UpdateProgress] = []
            for await step in updater.progress {
                steps.append(step)
                if step.completedBytes == step.totalBytes { break }
            }
            return steps
        }

        let outcome1 = try await updater.update()

        XCTAssertEqual(outcome1, .updated(sequence: 1, models: ["m": "1.0.0"]))
        var installed = try XCTUnwrap(updater.installed("m"))
        XCTAssertEqual(installed.version, "1.0.0")
        XCTAssertEqual(try sha256(installed.mainFile.path), try sha256(v1))
        let steps = await progress.value
        XCTAssertEqual(steps.last, UpdateProgress(file: "m.bin", completedBytes: 300_000, totalBytes: 300_000))
        XCTAssertEqual(steps.map(\.completedBytes), steps.map(\.completedBytes).sorted(), "progress only grows")
        let outcome2 = try await updater.update()
        XCTAssertEqual(outcome2, .notModified, "the manifest's ETag makes the second check a 304")

        try site.publish([v2], version: "1.1.0")
        let outcome3 = try await updater.update()
        XCTAssertEqual(outcome3, .updated(sequence: 2, models: ["m": "1.1.0"]))
        installed = try XCTUnwrap(updater.installed("m"))
        XCTAssertEqual(try sha256(installed.mainFile.path), try sha256(v2))
        let previous = site.work.at("device/models/m/versions")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: previous).filter { !$0.hasPrefix(".") }.count, 2, "the previous version is kept")

        let downloadsBefore = site.requests.filter { $0.contains("/models/models/") }.count
        try site.run(["rollback", site.root, "--version", "1.0.0"])
        let outcome4 = try await updater.update()
        XCTAssertEqual(outcome4, .updated(sequence: 3, models: ["m": "1.0.0"]))
        XCTAssertEqual(try sha256(try XCTUnwrap(updater.installed("m")).mainFile.path), try sha256(v1))
        XCTAssertEqual(site.requests.filter { $0.contains("/models/models/") }.count, downloadsBefore, "the kept 1.0.0 is reused, not downloaded")

        // A third version: the oldest (not current, not the one kept) is deleted.
        try site.publish([try site.work.write("v3/m.bin", patternBytes(320_000, seed: 3))], version: "1.2.0")
        _ = try await updater.update()
        let kept = try FileManager.default.contentsOfDirectory(atPath: previous).filter { !$0.hasPrefix(".") }.sorted()
        XCTAssertEqual(kept.map { String($0.prefix(5)) }, ["1.0.0", "1.2.0"], "current 1.2.0 and the one before it")

        // A directory model, zipped and as a tree: unpacked whole, file for file.
        let zipped = try ModelUpdater(site.configuration(directory: "device-zip"))
        try site.publish([repositoryRoot + "/examples/models/TinyClassifier.mlpackage"], version: "2.0.0", name: "m", [])
        _ = try await zipped.update()
        let unzipped = try XCTUnwrap(zipped.installed("m")).mainFile
        XCTAssertEqual(unzipped.lastPathComponent, "TinyClassifier.mlpackage")
        XCTAssertEqual(try sha256(unzipped.path + "/Data/com.apple.CoreML/weights/weight.bin"),
                       try sha256(repositoryRoot + "/examples/models/TinyClassifier.mlpackage/Data/com.apple.CoreML/weights/weight.bin"))
        try site.publish([repositoryRoot + "/examples/models/retrained/TinyClassifier.mlpackage"], version: "2.1.0", name: "m", ["--no-zip"])
        _ = try await zipped.update()
        let tree = try XCTUnwrap(zipped.installed("m")).mainFile
        XCTAssertEqual(try sha256(tree.path + "/Data/com.apple.CoreML/weights/weight.bin"),
                       try sha256(repositoryRoot + "/examples/models/retrained/TinyClassifier.mlpackage/Data/com.apple.CoreML/weights/weight.bin"))
    }

    /// Through nginx and the snippet publish wrote (gzip on for everything nginx may
    /// compress): a signed two-file model on the beta channel installs, bytes exact.
    func testInstallThroughNginxOnAChannel() async throws {
        guard let binary = NginxServer.binary else { throw XCTSkip("nginx is not installed (scripts/setup installs it)") }
        let site = try Site()
        let model = try site.work.write("v1/m.bin", patternBytes(700_000, seed: 5))
        let companion = try site.work.write("v1/m-extra.bin", patternBytes(90_000, seed: 6))
        try site.publish([model, companion], version: "1.0.0", ["--channel", "beta"])
        let nginx = try NginxServer(binary: binary, site: site.root, port: site.port, work: site.work, probe: site.base + "/channels/beta/manifest.json")
        defer { withExtendedLifetime(nginx) {} }
        let updater = try ModelUpdater(site.configuration(channel: "beta"))
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let installed = try XCTUnwrap(updater.installed("m"))
        XCTAssertEqual(try sha256(installed.mainFile.path), try sha256(model))
        XCTAssertEqual(try sha256(installed.directory.appendingPathComponent("m-extra.bin").path), try sha256(companion))
    }

    /// `ModelCastClient` depends on none of the server side: it lives in a package of its
    /// own (`modelcast-client/`) whose only dependencies are swift-crypto and ZIPFoundation; the
    /// closure of its target's dependencies, read from `swift package dump-package`, is
    /// ModelCastFormat, Crypto and ZIPFoundation, and on Linux only the system's libcurl
    /// (CCurl, its HTTP transport there); the CLI's package uses the same package.
    func testTheClientPullsInNoServerSideDependency() throws {
        func dump(_ directory: String) throws -> [String: Any] {
            // Its own scratch path: the test runner's build holds the lock on .build.
            let scratch = try Scratch("modelcast-dump")
            let dump = try runProcess("/usr/bin/env", ["swift", "package", "--scratch-path", scratch.path, "dump-package"], cwd: directory)
            XCTAssertEqual(dump.status, 0, dump.stderr)
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        }
        func targetDependencies(_ package: [String: Any]) -> [String: [String]] {
            var dependencies: [String: [String]] = [:]
            for target in package["targets"] as? [[String: Any]] ?? [] {
                let name = target["name"] as? String ?? ""
                dependencies[name] = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                    if let byName = dependency["byName"] as? [Any] { return byName.first as? String }
                    if let target = dependency["target"] as? [Any] {
                        // A target for some platforms only: "NAME@platform,…".
                        let platforms = ((target.dropFirst().first as? [String: Any])?["platformNames"] as? [String])?.joined(separator: ",")
                        return (target.first as? String).map { name in platforms.map { "\(name)@\($0)" } ?? name }
                    }
                    if let product = dependency["product"] as? [Any], let name = product.first as? String { return "product:\(name)" }
                    return nil
                }
            }
            return dependencies
        }
        let client = try dump(repositoryRoot + "/modelcast-client")
        let packages = (client["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency -> String? in
            guard let source = (dependency["sourceControl"] as? [[String: Any]])?.first,
                  let location = (source["location"] as? [String: Any])?["remote"] as? [[String: Any]] else { return nil }
            return (location.first?["urlString"] as? String).map { String($0.split(separator: "/").last ?? "") }
        }
        XCTAssertEqual(packages.sorted(), ["ZIPFoundation", "swift-crypto"], "the client package depends on these two packages only")
        let dependencies = targetDependencies(client)
        var closure = Set<String>()
        var queue = ["ModelCastClient"]
        while let next = queue.popLast() {
            for dependency in dependencies[next] ?? [] where closure.insert(dependency).inserted { queue.append(dependency) }
        }
        XCTAssertEqual(closure, ["ModelCastFormat", "product:Crypto", "product:ZIPFoundation", "CCurl@linux"])
        let curl = (client["targets"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "CCurl" }
        XCTAssertEqual(curl?["type"] as? String, "system", "libcurl is the system's, not a package to resolve")
        XCTAssertEqual(dependencies["ModelCastFormat"], [], "the shared target has no dependency at all")
        let platforms = (client["platforms"] as? [[String: Any]] ?? []).map { "\($0["platformName"] ?? "") \($0["version"] ?? "")" }
        XCTAssertEqual(platforms.sorted(), ["ios 15.0", "macos 12.0"], "the client's platforms are its own, not the CLI's")
        let server = targetDependencies(try dump(repositoryRoot))
        XCTAssertTrue(server["ModelCastCore"]?.contains("product:ModelCastFormat") ?? false, "the server builds on the same format code")
    }

    /// Checking the manifest again and again holds no descriptor open: an app checks on
    /// every launch and every foreground.
    func testRepeatedChecksLeakNoDescriptors() async throws {
        let site = try Site()
        try site.publish([try site.work.write("v1/m.bin", patternBytes(2000, seed: 1))], version: "1.0.0")
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        _ = try await updater.check()
        let before = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        for _ in 0..<50 { _ = try await updater.check() }
        try await Task.sleep(nanoseconds: 500_000_000)
        let after = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
        XCTAssertLessThan(after - before, 5, "descriptors before \(before), after 50 checks \(after)")
    }

    /// Staged rollouts: over the ids device-0 … device-199 the client takes the candidate
    /// exactly as often as `modelcast rollout simulate` says, each device by the documented
    /// rule; a halt sends a device that took the candidate back to the fallback, reusing it.
    func testRolloutCohortsMatchSimulate() async throws {
        let site = try Site()
        try site.publish([try site.work.write("v1/m.bin", patternBytes(2000, seed: 1))], version: "1.0.0")
        try site.publish([try site.work.write("v2/m.bin", patternBytes(2100, seed: 2))], version: "1.1.0", ["--rollout", "30%"])
        try site.start()
        let simulated = try modelcast(["rollout", "simulate", site.root, "--devices", "200", "--json"])
        XCTAssertEqual(simulated.status, 0, simulated.stderr)
        let simulation = try JSONDecoder().decode(RolloutSimulation.self, from: Data(simulated.stdout.utf8))
        var candidates = 0
        for index in 0..<200 {
            let plan = try await ModelUpdater(site.configuration(device: "device-\(index)", directory: "plans")).check()
            if try XCTUnwrap(plan).takesCandidate { candidates += 1 }
        }
        XCTAssertEqual(candidates, simulation.candidate.devices)
        XCTAssertGreaterThan(candidates, 30)

        // One device in the cohort installs the candidate; after a halt it goes back.
        let release = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json")), source: "manifest")
        let inCohort = try XCTUnwrap((0..<200).map { "device-\($0)" }.first { release.rollout!.selects(deviceID: $0, at: Date()) })
        let outside = try XCTUnwrap((0..<200).map { "device-\($0)" }.first { !release.rollout!.selects(deviceID: $0, at: Date()) })
        let early = try ModelUpdater(site.configuration(device: inCohort, directory: "early"))
        let late = try ModelUpdater(site.configuration(device: outside, directory: "late"))
        let outcome5 = try await early.update()
        XCTAssertEqual(outcome5, .updated(sequence: 2, models: ["m": "1.1.0"]))
        let outcome6 = try await late.update()
        XCTAssertEqual(outcome6, .updated(sequence: 2, models: ["m": "1.0.0"]))
        try site.run(["rollout", site.root, "--halt"])
        let outcome7 = try await early.update()
        XCTAssertEqual(outcome7, .updated(sequence: 3, models: ["m": "1.0.0"]))
        let outcome8 = try await late.update()
        XCTAssertEqual(outcome8, .upToDate(sequence: 3))
    }

    /// A connection dropped mid-body is resumed from the offset: the second request asks
    /// for `Range: bytes=N-` with `If-Range` set to the first answer's ETag, and the file
    /// ends up whole and proven.
    func testDroppedConnectionIsResumedFromTheOffset() async throws {
        let work = try Scratch("modelcast-client")
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/dropfirst"
        let model = try work.write("m.bin", patternBytes(4 << 20, seed: 3))
        let published = try modelcast(["publish", model, "--name", "m", "--version", "1.0.0", "--base-url", base, "--to", try work.atMadeParent("sites/dropfirst")])
        XCTAssertEqual(published.status, 0, published.stderr)
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let updater = try ModelUpdater(ClientConfiguration(
            manifestURL: URL(string: base + "/manifest.json")!, directory: URL(fileURLWithPath: work.at("device")), deviceID: "d", requestTimeout: 10))
        let outcome9 = try await updater.update()
        XCTAssertEqual(outcome9, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertEqual(try sha256(try XCTUnwrap(updater.installed("m")).mainFile.path), try sha256(model))
        let gets = server.standardError.split(separator: "\n").filter { $0.contains("/models/m/1.0.0/m.bin") }
        XCTAssertEqual(gets.count, 2, server.standardError)
        XCTAssertTrue(gets[0].hasSuffix("Range: None If-Range: None"), String(gets[0]))
        let second = String(gets[1])
        let range = try XCTUnwrap(second.range(of: #"Range: bytes=([0-9]+)- If-Range: "[0-9a-f]{16}""#, options: .regularExpression), second)
        let offset = Int(second[range].dropFirst("Range: bytes=".count).prefix { $0.isNumber })!
        XCTAssertGreaterThan(offset, 0)
        XCTAssertLessThanOrEqual(offset, 2 << 20, "no more than the half the server sent")
    }

    /// A download killed after its last byte but before its rename (a complete `.part`)
    /// is proven and used as it is: no request for it (a `Range` past the end would get
    /// a 416), and a `.part` with wrong bytes is thrown away and fetched again.
    func testACompletePartialDownloadIsProvenNotRequestedAgain() async throws {
        let site = try Site()
        let model = try site.work.write("v1/m.bin", patternBytes(200_000, seed: 8))
        try site.publish([model], version: "1.0.0")
        try site.start()
        let sha = try sha256(model)
        let downloads = site.work.at("device/downloads")
        try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: model, toPath: downloads + "/\(sha).part")
        let updater = try ModelUpdater(site.configuration())
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertFalse(site.requests.contains { $0.contains("/models/models/m/") }, site.requests.joined(separator: "\n"))

        let other = try ModelUpdater(site.configuration(directory: "device2"))
        try FileManager.default.createDirectory(atPath: site.work.at("device2/downloads"), withIntermediateDirectories: true)
        _ = try site.work.write("device2/downloads/\(sha).part", patternBytes(200_000, seed: 9))
        let second = try await other.update()
        XCTAssertEqual(second, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertEqual(try sha256(try XCTUnwrap(other.installed("m")).mainFile.path), sha)
    }

    /// A two-model update whose second switch fails puts the first model back: a failed
    /// update leaves every model as it was, and the next one goes through.
    func testAFailedSwitchOfOneModelPutsTheOthersBack() async throws {
        let site = try Site()
        func files(_ version: Int) throws -> [String] {
            ["a=" + (try site.work.write("v\(version)/a.bin", patternBytes(3000, seed: UInt32(10 + version)))),
             "b=" + (try site.work.write("v\(version)/b.bin", patternBytes(4000, seed: UInt32(20 + version))))]
        }
        let first = try modelcast(["publish"] + (try files(1)) + ["--version", "1.0.0", "--base-url", site.base, "--to", site.root, "--sign", site.work.at("k.key")])
        XCTAssertEqual(first.status, 0, first.stderr)
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        let installed = try await updater.update()
        XCTAssertEqual(installed, .updated(sequence: 1, models: ["a": "1.0.0", "b": "1.0.0"]))
        let second = try modelcast(["publish"] + (try files(2)) + ["--version", "1.1.0", "--base-url", site.base, "--to", site.root, "--sign", site.work.at("k.key")])
        XCTAssertEqual(second.status, 0, second.stderr)
        // b's link is in the way: a directory where the link goes, which a rename cannot replace.
        let link = site.work.at("device/models/b/current")
        try FileManager.default.removeItem(atPath: link)
        _ = try site.work.write("device/models/b/current/in-the-way", patternBytes(10))
        do {
            _ = try await updater.update()
            XCTFail("the switch of b cannot have succeeded")
        } catch let error as ClientError {
            guard case .io = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(updater.installed("a")?.version, "1.0.0", "a went back to the version it had")
        try FileManager.default.removeItem(atPath: link)
        let retried = try await updater.update()
        XCTAssertEqual(retried, .updated(sequence: 2, models: ["a": "1.1.0", "b": "1.1.0"]))
    }

    /// A corrupted artifact is refused with both digests named, and the installed model
    /// stays as it was.
    func testCorruptedArtifactIsRejectedAndTheCurrentModelStays() async throws {
        let work = try Scratch("modelcast-client")
        let port = try freeLoopbackPort()
        let v1 = try work.write("v1/m.bin", patternBytes(50_000, seed: 1))
        let v2 = try work.write("v2/m.bin", patternBytes(60_000, seed: 2))
        for mode in ["ok", "corrupt"] {
            XCTAssertEqual(try modelcast(["publish", v1, "--name", "m", "--version", "1.0.0", "--base-url", "http://127.0.0.1:\(port)/\(mode)", "--to", try work.atMadeParent("sites/\(mode)")]).status, 0)
        }
        XCTAssertEqual(try modelcast(["publish", v2, "--name", "m", "--version", "1.1.0", "--base-url", "http://127.0.0.1:\(port)/corrupt", "--to", try work.atMadeParent("sites/corrupt")]).status, 0)
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let directory = URL(fileURLWithPath: work.at("device"))
        let good = try ModelUpdater(ClientConfiguration(manifestURL: URL(string: "http://127.0.0.1:\(port)/ok/manifest.json")!, directory: directory, deviceID: "d"))
        let outcome10 = try await good.update()
        XCTAssertEqual(outcome10, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let bad = try ModelUpdater(ClientConfiguration(manifestURL: URL(string: "http://127.0.0.1:\(port)/corrupt/manifest.json")!, directory: directory, deviceID: "d"))
        do {
            _ = try await bad.update()
            XCTFail("a corrupted artifact was installed")
        } catch let error as ClientError {
            guard case .hashMismatch(_, let file, let expected, let actual) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(file, "m.bin")
            XCTAssertEqual(expected, try sha256(v2))
            XCTAssertNotEqual(actual, expected)
        }
        let current = try XCTUnwrap(bad.installed("m"))
        XCTAssertEqual(current.version, "1.0.0")
        XCTAssertEqual(try sha256(current.mainFile.path), try sha256(v1))
    }

    /// Tampered, wrong-key, expired and replayed manifests are refused, and the installed
    /// model never changes; a release for a newer app is refused by min_app_version.
    func testTamperedWrongKeyExpiredAndReplayedManifestsAreRejected() async throws {
        let site = try Site()
        try site.publish([try site.work.write("v1/m.bin", patternBytes(2000, seed: 1))], version: "1.0.0", ["--expires-in", "30d"])
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        let outcome11 = try await updater.update()
        XCTAssertEqual(outcome11, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let v1Manifest = try Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json"))
        let v1Signature = try Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json.minisig"))
        try site.publish([try site.work.write("v2/m.bin", patternBytes(2100, seed: 2))], version: "1.1.0", ["--expires-in", "30d"])
        let v2Manifest = try String(contentsOfFile: site.root + "/manifest.json", encoding: .utf8)

        func expectFailure(_ updater: ModelUpdater, _ label: String, _ matches: (ClientError) -> Bool) async {
            do {
                _ = try await updater.update()
                XCTFail("\(label): accepted")
            } catch let error as ClientError {
                XCTAssertTrue(matches(error), "\(label): \(error)")
            } catch {
                XCTFail("\(label): \(error)")
            }
            XCTAssertEqual(updater.installed("m")?.version, "1.0.0", label)
        }
        // Tampered: one byte of the manifest changed after signing.
        try v2Manifest.replacingOccurrences(of: "\"1.1.0\"", with: "\"1.1.1\"").write(toFile: site.root + "/manifest.json", atomically: true, encoding: .utf8)
        await expectFailure(updater, "tampered") { if case .badSignature = $0 { return true }; return false }
        try v2Manifest.write(toFile: site.root + "/manifest.json", atomically: true, encoding: .utf8)
        // Signed by a key the app does not trust.
        let other = try modelcast(["keygen", "--unencrypted", "--public-key", site.work.at("o.pub"), "--secret-key", site.work.at("o.key")])
        XCTAssertEqual(other.status, 0)
        let wrongKey = try ModelUpdater(site.configuration(keys: [try String(contentsOfFile: site.work.at("o.pub"), encoding: .utf8)]))
        await expectFailure(wrongKey, "wrong key") { if case .badSignature(_, let reason) = $0 { return reason.contains("key") }; return false }
        // Expired: the device's clock is past expires_at.
        let future = try ModelUpdater(site.configuration(now: { Date().addingTimeInterval(40 * 86_400) }))
        await expectFailure(future, "expired") { if case .expired = $0 { return true }; return false }
        // An unsigned manifest, when keys are pinned.
        try FileManager.default.moveItem(atPath: site.root + "/manifest.json.minisig", toPath: site.work.at("saved.minisig"))
        await expectFailure(updater, "unsigned") { if case .unsigned = $0 { return true }; return false }
        try FileManager.default.moveItem(atPath: site.work.at("saved.minisig"), toPath: site.root + "/manifest.json.minisig")
        // Accept sequence 2, then replay sequence 1 (validly signed).
        let outcome12 = try await updater.update()
        XCTAssertEqual(outcome12, .updated(sequence: 2, models: ["m": "1.1.0"]))
        try v1Manifest.write(to: URL(fileURLWithPath: site.root + "/manifest.json"))
        try v1Signature.write(to: URL(fileURLWithPath: site.root + "/manifest.json.minisig"))
        do {
            _ = try await updater.update()
            XCTFail("a replayed manifest was accepted")
        } catch let error as ClientError {
            XCTAssertEqual(error, .replayed(url: site.base + "/manifest.json", sequence: 1, highestAccepted: 2))
        }
        XCTAssertEqual(updater.installed("m")?.version, "1.1.0")

        // A configured key that is not a minisign public key is named in the error.
        let garbled = try ModelUpdater(site.configuration(directory: "garbled", keys: ["not a key"]))
        do {
            _ = try await garbled.update()
            XCTFail("a garbled configured key was accepted")
        } catch let error as ClientError {
            guard case .badSignature(_, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("configured public key 1 ('not a key')"), reason)
        }

        // min_app_version gates the release.
        let app = try Site()
        try app.publish([try app.work.write("v1/m.bin", patternBytes(500, seed: 4))], version: "1.0.0", ["--min-app-version", "2.0.0"])
        try app.start()
        var configuration = app.configuration()
        configuration.appVersion = "1.9.0"
        do {
            _ = try await ModelUpdater(configuration).update()
            XCTFail("a release for app 2.0.0 was installed by app 1.9.0")
        } catch let error as ClientError {
            XCTAssertEqual(error, .requiresNewerApp(minimum: "2.0.0", current: "1.9.0"))
        }
        configuration.appVersion = "2.0.0"
        let outcome13 = try await ModelUpdater(configuration).update()
        XCTAssertEqual(outcome13, .updated(sequence: 1, models: ["m": "1.0.0"]))
    }

    /// `kill -9` of a device (the example, `modelcast-device`) at several points of an
    /// update: afterwards `current` always names a complete version whose file is proven
    /// (the old or the new), and the next run finishes the update.
    func testKillDuringUpdateLeavesThePreviousModelUsable() throws {
        let site = try Site()
        let device = modelcastBinary.replacingOccurrences(of: "/modelcast", with: "/modelcast-device")
        // Large enough that a run resuming a killed one's partial download still takes
        // longer than the next kill's delay (24 MiB did not, once downloads got faster).
        let v1 = try site.work.write("v1/m.bin", patternBytes(64 << 20, seed: 1))
        let v2 = try site.work.write("v2/m.bin", patternBytes(64 << 20, seed: 2))
        let (sha1, sha2) = (try sha256(v1), try sha256(v2))
        try site.publish([v1], version: "1.0.0")
        try site.start()
        let arguments = ["--manifest", site.base + "/manifest.json", "--dir", site.work.at("device"), "--public-key", site.publicKey]
        let first = try runProcess(device, arguments)
        XCTAssertEqual(first.status, 0, first.stderr)
        try site.publish([v2], version: "1.1.0")
        var finished = false
        var kills = 0
        for delay in [30_000, 80_000, 150_000, 300_000, 600_000] where !finished {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: device)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(useconds_t(delay))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                kills += 1
            } else {
                finished = true
            }
            process.waitUntilExit()
            let current = try FileManager.default.destinationOfSymbolicLink(atPath: site.work.at("device/models/m/current"))
            let file = site.work.at("device/models/m/" + current + "/m.bin")
            XCTAssertTrue([sha1, sha2].contains(try sha256(file)), "after a kill at \(delay) µs, current (\(current)) holds a proven model")
        }
        XCTAssertGreaterThanOrEqual(kills, 2, "the device was killed while it worked")
        let last = try runProcess(device, arguments)
        XCTAssertEqual(last.status, 0, last.stderr)
        XCTAssertTrue(last.stdout.contains("running m 1.1.0"), last.stdout)
        XCTAssertEqual(try sha256(site.work.at("device/models/m/current/m.bin")), sha2)
    }
}
