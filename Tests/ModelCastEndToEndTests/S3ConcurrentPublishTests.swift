import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Two publishers writing one key: a multipart upload is completed only if the key is
/// still absent (`If-None-Match: *`), and a run deletes only what it created, so the
/// live manifest never names an object another run overwrote or removed.
final class S3ConcurrentPublishTests: XCTestCase {
    func makeStorage(_ moto: MotoS3, prefix: String, endpoint: String, policy: S3UploadPolicy) throws -> S3Storage {
        try S3Storage(
            target: S3Location("s3://\(moto.bucket)/\(prefix)"),
            endpoint: S3Endpoint(endpoint: endpoint, region: "us-east-1", pathStyle: true),
            credentials: AWSCredentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey), policy: policy)
    }

    /// Waits until the proxy's log has a line containing every one of `parts`.
    func waitForLog(_ rules: String, _ parts: [String], timeout: TimeInterval = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let log = (try? String(contentsOfFile: rules + ".log", encoding: .utf8)) ?? ""
            if log.split(separator: "\n").contains(where: { line in parts.allSatisfy { line.contains($0) } }) { return true }
            usleep(20_000)
        }
        return false
    }

    /// The live manifest names only objects that exist with its SHA-256 (downloaded and hashed).
    func assertLiveManifestVerifies(_ moto: MotoS3, prefix: String, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws -> Release {
        let live = try Release.decode(try moto.download(prefix + "/manifest.json"), source: label)
        let keys = try moto.listing().keys
        for model in live.models.values {
            for entry in model.files {
                XCTAssertTrue(keys.contains(prefix + "/" + entry.key), "\(label): the live manifest names \(entry.key), which is gone", file: file, line: line)
                guard keys.contains(prefix + "/" + entry.key) else { continue }
                XCTAssertEqual(try SHA256Hasher.digest(try moto.download(prefix + "/" + entry.key)).hex, entry.sha256, "\(label): \(entry.key)", file: file, line: line)
            }
        }
        return live
    }

    /// Starts `modelcast publish` in the background, its output going to files.
    final class Publish {
        let process = Process()
        let out: String, err: String

        init(_ arguments: [String], environment: [String: String], logs: String) throws {
            out = logs + ".out"
            err = logs + ".err"
            _ = FileManager.default.createFile(atPath: out, contents: nil)
            _ = FileManager.default.createFile(atPath: err, contents: nil)
            process.executableURL = URL(fileURLWithPath: modelcastBinary)
            process.arguments = ["publish"] + arguments
            process.environment = environment
            process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle(forWritingAtPath: out)
            process.standardError = FileHandle(forWritingAtPath: err)
            try process.run()
        }

        /// Waits (polling: waitUntilExit can spin off the main thread) and returns the exit status.
        func wait(timeout: TimeInterval = 180) -> Int32 {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL); usleep(200_000) }
            return process.isRunning ? -1 : process.terminationStatus
        }

        var stderr: String { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" }
    }

    /// The key appears while the parts of a multipart upload are in flight (its
    /// CompleteMultipartUpload held in the proxy): the upload is not completed over it.
    /// Other bytes there are a conflict; the same bytes are `unchanged`, never `created`.
    /// Either way the other writer's object stays and the upload is aborted.
    func testMultipartCompletionIsConditional() async throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let rules = work.at("rules.json")
        let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: #"[{"method": "POST", "contains": "uploadId=", "action": "delay:3", "times": 99}]"#)
        defer { withExtendedLifetime(proxy) {} }
        var policy = S3UploadPolicy()
        policy.multipartThreshold = 5 << 20
        policy.partSize = 5 << 20
        let storage = try makeStorage(moto, prefix: "cond", endpoint: endpoint, policy: policy)
        let size = 6 << 20
        let mine = try work.write("mine.bin", patternBytes(size, seed: 1))
        let theirs = try work.write("theirs.bin", patternBytes(size, seed: 2))
        let digest = try StreamDigester.digest(ofFileAt: mine)
        let staged = StagedObject(
            path: mine, metadata: ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: "application/octet-stream", size: digest.size, sha256: digest.sha256),
            isTemporary: false)

        var failure: Error?
        do {
            for (index, (other, same)) in [(theirs, false), (mine, true)].enumerated() {
                let key = "k\(index).bin"
                let upload = Task { try await storage.putIfAbsent(key, staged: staged) }
                XCTAssertTrue(waitForLog(rules, ["POST", key, "uploadId="]), "the CompleteMultipartUpload never came")
                // Another writer gets there first.
                try moto.awsCLI(["s3api", "put-object", "--bucket", moto.bucket, "--key", "cond/" + key, "--body", other])
                do {
                    let outcome = try await upload.value
                    XCTAssertTrue(same, "other bytes under \(key) must not be \(outcome)")
                    XCTAssertEqual(outcome, .unchanged, "this run did not create \(key)")
                } catch let error as StorageError {
                    XCTAssertFalse(same, "\(error)")
                    if case .conflict(let k, _, _, let existing, _) = error {
                        XCTAssertEqual(k, key)
                        XCTAssertEqual(existing, try SHA256Hasher.digest(patternBytes(size, seed: 2)).hex)
                    } else {
                        XCTFail("\(error)")
                    }
                }
                XCTAssertEqual(try moto.download("cond/" + key), try Data(contentsOf: URL(fileURLWithPath: other)), "the other writer's object stays")
            }
            let pending = try await storage.pendingUploads()
            XCTAssertEqual(pending, [], "the refused uploads are aborted")
        } catch {
            failure = error
        }
        await storage.shutdown()
        if let failure { throw failure }
    }

    /// A run deletes only what it stored: once another writer has replaced an object this
    /// store created (by hand, or through a store whose conditional writes are not atomic),
    /// deleting it (a failed publish cleaning up) leaves the other writer's object alone.
    func testDeleteRemovesOnlyWhatThisRunStored() async throws {
        let moto = try MotoS3()
        let work = try Scratch()
        var policy = S3UploadPolicy()
        policy.multipartThreshold = 5 << 20
        policy.partSize = 5 << 20
        let storage = try makeStorage(moto, prefix: "del", endpoint: moto.endpoint, policy: policy)
        var failure: Error?
        do {
            for (name, size) in [("single.bin", 1000), ("multipart.bin", 6 << 20)] {
                let mine = try work.write("mine-" + name, patternBytes(size, seed: 1))
                let theirs = try work.write("theirs-" + name, patternBytes(size, seed: 2))
                let digest = try StreamDigester.digest(ofFileAt: mine)
                let staged = StagedObject(
                    path: mine, metadata: ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: "application/octet-stream", size: digest.size, sha256: digest.sha256),
                    isTemporary: false)
                // Stored and deleted again: gone.
                let first = try await storage.putIfAbsent("own-" + name, staged: staged)
                XCTAssertEqual(first, .created)
                try await storage.delete("own-" + name)
                XCTAssertFalse(try moto.listing().keys.contains("del/own-" + name))
                // Stored, then replaced by another writer: the delete leaves it.
                let second = try await storage.putIfAbsent(name, staged: staged)
                XCTAssertEqual(second, .created)
                try moto.awsCLI(["s3api", "put-object", "--bucket", moto.bucket, "--key", "del/" + name, "--body", theirs])
                try await storage.delete(name)
                XCTAssertEqual(try moto.download("del/" + name), Data(patternBytes(size, seed: 2)), "\(name): another writer's object must not be deleted")
            }
        } catch {
            failure = error
        }
        await storage.shutdown()
        if let failure { throw failure }
    }

    /// Deterministic: the big publish's CompleteMultipartUpload waits in the proxy while a
    /// small publish of the same version (other bytes, same key) goes live. The big one
    /// must fail naming the key and delete nothing of the winner's.
    func testSlowMultipartPublishLosesWithoutBreakingTheWinner() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let rules = work.at("rules.json")
        let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: #"[{"method": "POST", "contains": "uploadId=", "action": "delay:4", "times": 99}]"#)
        defer { withExtendedLifetime(proxy) {} }
        try work.mkdir("big")
        try work.mkdir("small")
        try work.write("big/model.bin", patternBytes(12 << 20, seed: 3))
        try work.write("small/model.bin", patternBytes(4096, seed: 4))
        let target = "s3://\(moto.bucket)/race"
        let environment = pinnedEnvironment(moto.environment)
        func arguments(_ file: String) -> [String] {
            ["m=" + work.at(file), "--version", "1.0.0", "--base-url", "https://cdn.example.com/race", "--to", target,
             "--multipart-threshold", "5", "--part-size", "5"]
        }
        var slow = environment
        slow["AWS_ENDPOINT_URL"] = endpoint
        let big = try Publish(arguments("big/model.bin"), environment: slow, logs: work.at("big"))
        XCTAssertTrue(waitForLog(rules, ["POST", "models/m/1.0.0/model.bin", "uploadId="]), "the CompleteMultipartUpload never came: \(big.stderr)")
        let small = try Publish(arguments("small/model.bin"), environment: environment, logs: work.at("small"))
        XCTAssertEqual(small.wait(), 0, small.stderr)
        XCTAssertEqual(big.wait(), 1, big.stderr)
        XCTAssertTrue(big.stderr.contains("models/m/1.0.0/model.bin") && big.stderr.contains("already exists with different content"), big.stderr)

        let live = try assertLiveManifestVerifies(moto, prefix: "race", "after the race")
        XCTAssertEqual(live.models["m"]?.files.first?.size, 4096)
        XCTAssertEqual(try moto.download("race/models/m/1.0.0/model.bin"), Data(patternBytes(4096, seed: 4)))
        let verify = try modelcast(["verify", target, "--json"], environment: moto.environment)
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }

    /// Two `modelcast publish` processes of one version with other bytes (one multipart)
    /// to one prefix, started 0.5 s (once 1 s) apart, several times: exactly one succeeds
    /// and the live manifest names only objects that exist with its SHA-256.
    ///
    /// Both talk to moto through the fault proxy, which holds each part upload 0.4 s (a
    /// slow uplink), so the small publish stores the key while the big one's parts are
    /// still going up. Without the delay the race also lands inside moto's own
    /// CompleteMultipartUpload, which checks `If-None-Match` before assembling the parts
    /// and stores them without a lock (0.66 s for 120 MiB here): a PUT arriving in that
    /// window succeeds too, and the completion then overwrites it. No client can make
    /// that safe; AWS S3 applies conditional writes atomically.
    func testConcurrentPublishesOfOneVersionLeaveOneWinner() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let rules = work.at("rules.json")
        let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: #"[{"method": "PUT", "contains": "partNumber=", "action": "delay:0.4", "times": 9999}]"#)
        defer { withExtendedLifetime(proxy) {} }
        try work.mkdir("big")
        try work.mkdir("small")
        let big = try XCTUnwrap(FileHandle(forWritingAtPath: try work.write("big/model.bin", [])))
        for index in 0..<30 { try big.write(contentsOf: Data(patternBytes(1 << 20, seed: UInt32(100 + index)))) }
        try big.close()
        try work.write("small/model.bin", patternBytes(4096, seed: 6))
        var environment = pinnedEnvironment(moto.environment)
        environment["AWS_ENDPOINT_URL"] = endpoint
        let rounds: [(first: String, second: String, gap: Double)] = [
            ("big/model.bin", "small/model.bin", 0.5), ("big/model.bin", "small/model.bin", 0.5),
            ("big/model.bin", "small/model.bin", 1.0), ("small/model.bin", "big/model.bin", 0.5),
        ]
        for (round, order) in rounds.enumerated() {
            let prefix = "round\(round)"
            let target = "s3://\(moto.bucket)/\(prefix)"
            func arguments(_ file: String) -> [String] {
                ["m=" + work.at(file), "--version", "1.0.0", "--base-url", "https://cdn.example.com/\(prefix)", "--to", target,
                 "--multipart-threshold", "5", "--part-size", "5", "--concurrent-parts", "2"]
            }
            let first = try Publish(arguments(order.first), environment: environment, logs: work.at("\(prefix)-1"))
            usleep(UInt32(order.gap * 1_000_000))
            let second = try Publish(arguments(order.second), environment: environment, logs: work.at("\(prefix)-2"))
            let statuses = [first.wait(), second.wait()]
            let label = "round \(round) (\(order.first) first, \(order.gap) s): exit \(statuses), stderr:\n\(first.stderr)\n---\n\(second.stderr)"
            XCTAssertEqual(statuses.sorted(), [0, 1], label)
            let loser = statuses[0] == 0 ? second : first
            // The loser stops at the key (stored meanwhile) or, starting after the winner went live, at the version.
            XCTAssertTrue((loser.stderr.contains("models/m/1.0.0/model.bin") && loser.stderr.contains("already exists with different content"))
                          || loser.stderr.contains("version 1.0.0 of model m is already published with different files"), label)
            let live = try assertLiveManifestVerifies(moto, prefix: prefix, label)
            let winner = statuses[0] == 0 ? order.first : order.second
            XCTAssertEqual(live.models["m"]?.files.first?.size, winner.hasPrefix("big") ? 30 << 20 : 4096, label)
            let verify = try modelcast(["verify", target, "--json"], environment: moto.environment)
            XCTAssertEqual(verify.status, 0, label + "\n" + verify.stdout)
        }
        let pending = try moto.awsCLI(["s3api", "list-multipart-uploads", "--bucket", moto.bucket, "--output", "json"])
        XCTAssertFalse(pending.contains("UploadId"), "refused uploads are aborted: \(pending)")
    }

    /// Issue 24, item 1, deterministic: publisher A creates the artifact, then its history
    /// write is held in the proxy while publisher B (same version, same bytes) finds the
    /// object, adopts it and goes live. A then loses the history write. Identical bytes
    /// have identical ETags, so A's conditional delete of "its" object would succeed: A
    /// must see that a release (B's, live) names the key and leave it.
    func testALosingPublisherLeavesTheObjectTheWinnerAdopted() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let rules = work.at("rules.json")
        let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: #"[{"method": "PUT", "contains": "manifests/00000001.json", "action": "hold:go"}]"#)
        defer { withExtendedLifetime(proxy) {} }
        try work.write("model.bin", patternBytes(5000, seed: 9))
        let target = "s3://\(moto.bucket)/same"
        let arguments = ["m=" + work.at("model.bin"), "--version", "1.0.0", "--base-url", "https://cdn.example.com/same", "--to", target]
        var slow = moto.environment
        slow["AWS_ENDPOINT_URL"] = endpoint
        slow["SOURCE_DATE_EPOCH"] = "1790000000"
        let first = try Publish(arguments, environment: slow, logs: work.at("a"))
        XCTAssertTrue(waitForLog(rules, ["PUT", "manifests/00000001.json", "hold:go"]), "A never reached its history write: \(first.stderr)")
        let direct = pinnedEnvironment(moto.environment, epoch: 1790000100)
        let second = try modelcast(["publish"] + arguments, environment: direct)
        XCTAssertEqual(second.status, 0, second.stderr)
        try Data().write(to: URL(fileURLWithPath: rules + ".go"))
        XCTAssertEqual(first.wait(), 1, first.stderr)
        _ = try assertLiveManifestVerifies(moto, prefix: "same", "after A lost")
        XCTAssertTrue(first.stderr.contains("models/m/1.0.0/model.bin"), "A says which object it left and why: \(first.stderr)")
        let verify = try modelcast(["verify", target, "--json"], environment: moto.environment)
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }

    /// Issue 24, item 1, the narrow window: A fails (its history write refused) and
    /// starts removing the artifact it created; its DELETE is held. Meanwhile B adopts the
    /// object and writes its history record. Whichever way the two interleave, B must not
    /// make a manifest live that names an object A removed: here B sees A's announced
    /// removal, waits for it, finds the object gone and refuses; the live release (an
    /// earlier one) still verifies.
    func testAPublisherDoesNotGoLiveOnAnObjectARemovalTookAway() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        try work.write("base.bin", patternBytes(3000, seed: 1))
        try work.write("model.bin", patternBytes(5000, seed: 9))
        let target = "s3://\(moto.bucket)/window"
        var direct = pinnedEnvironment(moto.environment)
        let base = try modelcast(["publish", "base=" + work.at("base.bin"), "--version", "1.0.0", "--base-url", "https://cdn.example.com/window", "--to", target], environment: direct)
        XCTAssertEqual(base.status, 0, base.stderr)

        let rules = work.at("rules.json")
        let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: #"""
            [{"method": "PUT", "contains": "manifests/00000002.json", "action": "503", "times": 99},
             {"method": "DELETE", "contains": "models/m/1.0.0/model.bin", "action": "hold:go"}]
            """#)
        defer { withExtendedLifetime(proxy) {} }
        let arguments = ["base=" + work.at("base.bin"), "m=" + work.at("model.bin"), "--version", "1.0.0",
                         "--base-url", "https://cdn.example.com/window", "--to", target]
        var slow = direct
        slow["AWS_ENDPOINT_URL"] = endpoint
        slow["SOURCE_DATE_EPOCH"] = "1790000050"
        let first = try Publish(arguments, environment: slow, logs: work.at("a"))
        XCTAssertTrue(waitForLog(rules, ["DELETE", "models/m/1.0.0/model.bin", "hold:go"]), "A never came to remove its object: \(first.stderr)")
        direct["SOURCE_DATE_EPOCH"] = "1790000100"
        let second = try Publish(arguments, environment: direct, logs: work.at("b"))
        let deadline = Date().addingTimeInterval(60)
        while !second.stderr.contains("waiting") && second.process.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertTrue(second.stderr.contains("waiting"), "B waits for the removal it sees announced: \(second.stderr)")
        try Data().write(to: URL(fileURLWithPath: rules + ".go"))
        XCTAssertNotEqual(first.wait(), 0, first.stderr)
        XCTAssertEqual(second.wait(), 1, second.stderr)
        XCTAssertTrue(second.stderr.contains("models/m/1.0.0/model.bin") && second.stderr.contains("run again"), second.stderr)
        let live = try assertLiveManifestVerifies(moto, prefix: "window", "after the removal")
        XCTAssertEqual(live.models.keys.sorted(), ["base"], "the earlier release is still live")
        let again = try modelcast(["publish"] + arguments, environment: direct)
        XCTAssertEqual(again.status, 0, "running again publishes: " + again.stderr)
        _ = try assertLiveManifestVerifies(moto, prefix: "window", "after running again")
    }

    /// Issue 24, item 1, ordinary runs: ten rounds of two publishes of one version with the
    /// same bytes, the second started 0 to 0.45 s after the first (five rounds at a time,
    /// each on its own prefix). Whoever wins, the live manifest names only objects that
    /// are there with its SHA-256.
    func testTenRoundsOfIdenticalConcurrentPublishesLeaveAVerifyingTarget() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        try work.write("model.bin", patternBytes(20_000, seed: 12))
        for batch in 0..<2 {
            var runs: [(prefix: String, first: Publish, second: Publish)] = []
            for index in 0..<5 {
                let round = batch * 5 + index
                let prefix = "same\(round)"
                let arguments = ["m=" + work.at("model.bin"), "--version", "1.0.0", "--base-url", "https://cdn.example.com/\(prefix)",
                                 "--to", "s3://\(moto.bucket)/\(prefix)"]
                var environment = pinnedEnvironment(moto.environment)
                let first = try Publish(arguments, environment: environment, logs: work.at("\(prefix)-1"))
                usleep(UInt32(round) * 50_000)
                environment["SOURCE_DATE_EPOCH"] = "1790000100"
                runs.append((prefix, first, try Publish(arguments, environment: environment, logs: work.at("\(prefix)-2"))))
            }
            for run in runs {
                let statuses = [run.first.wait(), run.second.wait()]
                let label = "\(run.prefix): exit \(statuses), stderr:\n\(run.first.stderr)\n---\n\(run.second.stderr)"
                XCTAssertTrue(statuses.contains(0) && statuses.allSatisfy { $0 == 0 || $0 == 1 }, label)
                _ = try assertLiveManifestVerifies(moto, prefix: run.prefix, label)
                let verify = try modelcast(["verify", "s3://\(moto.bucket)/\(run.prefix)", "--json"], environment: moto.environment)
                XCTAssertEqual(verify.status, 0, label + "\n" + verify.stdout)
            }
        }
    }
}
