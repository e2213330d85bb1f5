import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Two publishers writing one key: a multipart upload is completed only if the key is
/// still absent (`If-None-Match: *`), and a run deletes only what it created, so the
/// live manifest never names an object another run overwrote or removed.
///
/// What is S3's own stays here, on moto: the conditional multipart completion, the
/// conditional delete, and a lost race through the CLI. The commit logic of two
/// publishers (every interleaving of identical and of different bytes, a loser leaving
/// what the winner adopted, a removal taking an adopted object away, the same-bytes
/// races) runs in process on the in-memory store: ConcurrentPublishLogicTests.
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
        // Each key's completion is held until the other writer's object is there (a gate
        // file per key), not for a fixed time an `aws` start-up on a loaded machine outlasted.
        let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: #"[{"method": "POST", "contains": "k0.bin?uploadId=", "action": "hold:k0"}, {"method": "POST", "contains": "k1.bin?uploadId=", "action": "hold:k1"}]"#)
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
                try moto.put("cond/" + key, file: other)
                FileManager.default.createFile(atPath: rules + ".k\(index)", contents: nil)
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
                try moto.put("del/" + name, file: theirs)
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
}
