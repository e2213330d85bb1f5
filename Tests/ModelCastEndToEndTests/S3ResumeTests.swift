import Foundation
import NIOConcurrencyHelpers
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Multipart uploads against a real S3 API server (moto on loopback): a publish killed
/// mid-upload is resumed by the next publish of the same bytes (only the missing parts
/// go up), an upload holding other bytes is neither resumed nor aborted, and uploads
/// report their progress.
final class S3ResumeTests: XCTestCase {
    static let mib = 1 << 20

    func environment(_ moto: MotoS3, endpoint: String? = nil) -> [String: String] {
        var environment = pinnedEnvironment(moto.environment)
        if let endpoint { environment["AWS_ENDPOINT_URL"] = endpoint }
        return environment
    }

    /// The part uploads moto answered so far.
    func partPUTs(_ moto: MotoS3) -> Int {
        moto.loggedRequests().filter { $0.method == "PUT" && $0.path.contains("partNumber=") }.count
    }

    /// Waits until moto has answered `count` part uploads (a guard against a hang, not a timing check).
    func waitForPartPUTs(_ moto: MotoS3, _ count: Int, timeout: TimeInterval = 120) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if partPUTs(moto) >= count { return true }
            usleep(20_000)
        }
        return false
    }

    func pendingUploads(_ moto: MotoS3) throws -> [[String: Any]] {
        let text = try moto.awsCLI(["s3api", "list-multipart-uploads", "--bucket", moto.bucket, "--output", "json"])
        let json = try JSONSerialization.jsonObject(with: Data(text.isEmpty ? "{}".utf8 : text.utf8)) as? [String: Any]
        return json?["Uploads"] as? [[String: Any]] ?? []
    }

    func verifyBucket(_ moto: MotoS3, _ target: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try modelcast(["verify", target, "--json"], environment: moto.environment)
        let report = try? JSONDecoder().decode(VerifyReport.self, from: Data(result.stdout.utf8))
        XCTAssertNotNil(report, result.stdout + result.stderr, file: file, line: line)
        XCTAssertEqual(report?.failures, 0, "\(report?.checks.filter { $0.status == .fail } ?? [])", file: file, line: line)
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
    }

    /// kill -9 while a 40 MiB artifact goes up in 8 parts of 5 MiB: the two parts the
    /// store answered before the kill stay in its pending upload, and the next publish of
    /// the same inputs finds that upload, proves those parts are its bytes, sends only the
    /// six others (counted in moto's own log) and completes it; the bucket verifies.
    func testKilledPublishIsResumedByTheNextOne() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let size = 40 * Self.mib
        let bytes = patternBytes(size, seed: 40)
        let model = try work.write("big.bin", bytes)
        let target = "s3://\(moto.bucket)/r"
        let arguments = ["publish", "m=\(model)", "--version", "1.0.0", "--base-url", "https://cdn.example.com/r", "--to", target,
                         "--multipart-threshold", "5", "--part-size", "5", "--concurrent-parts", "2"]
        do {
            // The proxy lets two part uploads through and holds every later one, so the kill
            // comes with exactly two parts stored whatever the machine's speed.
            let rules = work.at("rules.json")
            let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: #"[{"method": "PUT", "contains": "partNumber=", "action": "delay:600", "skip": 2, "times": 99}]"#)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: modelcastBinary)
            process.arguments = arguments
            process.environment = environment(moto, endpoint: endpoint)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            XCTAssertTrue(waitForPartPUTs(moto, 2), "the first two parts never reached the store")
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            withExtendedLifetime(proxy) {}  // stopped here, with the parts it holds
        }
        XCTAssertEqual(partPUTs(moto), 2)
        let pending = try pendingUploads(moto)
        XCTAssertEqual(pending.count, 1, "\(pending)")
        XCTAssertEqual(pending.first?["Key"] as? String, "r/models/m/1.0.0/big.bin")

        let resumed = try modelcast(arguments + ["--json"], environment: environment(moto))
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertTrue(resumed.stderr.contains("resuming the interrupted upload of \(target)/models/m/1.0.0/big.bin: 2 of 8 parts are stored already"), resumed.stderr)
        XCTAssertEqual(partPUTs(moto) - 2, 6, "only the missing parts go up")
        XCTAssertEqual(try pendingUploads(moto).count, 0)
        XCTAssertEqual(try moto.download("r/models/m/1.0.0/big.bin"), Data(bytes))
        try verifyBucket(moto, target)

        // Published: the same inputs again upload nothing.
        let again = try modelcast(arguments, environment: environment(moto))
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(partPUTs(moto), 8)
    }

    /// The store stops answering mid-upload (every attempt at part 3 has its connection
    /// reset): the publish fails saying the parts stay, the upload is not aborted, and the
    /// next publish sends only the parts the store does not hold.
    func testUploadCutOffByTheNetworkIsResumed() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let bytes = patternBytes(20 * Self.mib, seed: 20)
        let model = try work.write("net.bin", bytes)
        let target = "s3://\(moto.bucket)/n"
        let arguments = ["publish", "m=\(model)", "--version", "1.0.0", "--base-url", "https://cdn.example.com/n", "--to", target,
                         "--multipart-threshold", "5", "--part-size", "5", "--concurrent-parts", "1"]
        do {
            let (proxy, endpoint) = try moto.startFaultProxy(rules: work.at("rules.json"), json: #"[{"method": "PUT", "contains": "partNumber=3", "action": "reset", "times": 99}]"#)
            defer { withExtendedLifetime(proxy) {} }
            let cut = try modelcast(arguments, environment: environment(moto, endpoint: endpoint))
            XCTAssertEqual(cut.status, 3, cut.stderr)
            XCTAssertTrue(cut.stderr.contains("UploadPart 3") && cut.stderr.contains("the next publish of these bytes resumes the upload"), cut.stderr)
        }
        let pending = try pendingUploads(moto)
        XCTAssertEqual(pending.count, 1, "the upload is kept: \(pending)")
        XCTAssertEqual(partPUTs(moto), 2, "parts 1 and 2 went up before part 3 failed")

        let resumed = try modelcast(arguments, environment: environment(moto))
        XCTAssertEqual(resumed.status, 0, resumed.stderr)
        XCTAssertTrue(resumed.stderr.contains("2 of 4 parts are stored already"), resumed.stderr)
        XCTAssertEqual(partPUTs(moto), 4)
        XCTAssertEqual(try moto.download("n/models/m/1.0.0/net.bin"), Data(bytes))
        XCTAssertEqual(try pendingUploads(moto).count, 0)
        try verifyBucket(moto, target)
    }

    /// A pending upload of the key that holds other bytes (another tool's, or an older
    /// file's) is not resumed: a fresh upload sends every part, and the other upload is
    /// left alone (it may still be someone's). `prune --abort-uploads-older-than` removes it.
    func testPendingUploadOfOtherBytesIsNeitherResumedNorAborted() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let size = 12 * Self.mib
        let bytes = patternBytes(size, seed: 12)
        let model = try work.write("m.bin", bytes)
        var other = Array(bytes[0..<(5 * Self.mib)])
        other[4242] ^= 0x01
        let otherPart = try work.write("other-part.bin", other)
        let key = "o/models/m/1.0.0/m.bin"
        let created = try moto.awsCLI(["s3api", "create-multipart-upload", "--bucket", moto.bucket, "--key", key, "--checksum-algorithm", "SHA256", "--output", "json"])
        let uploadID = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(created.utf8)) as? [String: Any])?["UploadId"] as? String)
        try moto.awsCLI(["s3api", "upload-part", "--bucket", moto.bucket, "--key", key, "--upload-id", uploadID, "--part-number", "1",
                         "--body", otherPart, "--checksum-algorithm", "SHA256"])
        let before = partPUTs(moto)

        let target = "s3://\(moto.bucket)/o"
        let result = try modelcast(["publish", "m=\(model)", "--version", "1.0.0", "--base-url", "https://cdn.example.com/o", "--to", target,
                                    "--multipart-threshold", "5", "--part-size", "5"], environment: environment(moto))
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(result.stderr.contains("resuming"), result.stderr)
        XCTAssertEqual(partPUTs(moto) - before, 3, "a fresh upload sends every part")
        XCTAssertEqual(try moto.download(key), Data(bytes))
        XCTAssertEqual(try pendingUploads(moto).compactMap { $0["UploadId"] as? String }, [uploadID], "the other upload stays")
        try verifyBucket(moto, target)

        let pruned = try modelcast(["prune", target, "--keep", "1", "--abort-uploads-older-than", "1s", "--json"], environment: environment(moto))
        XCTAssertEqual(pruned.status, 0, pruned.stderr)
        XCTAssertEqual(try pendingUploads(moto).count, 0)
    }

    /// `--checksum sha256` (a store without CRC-64/NVME, as LocalStack 4.0): the parts'
    /// SHA-256 checksums are made in the read that hashes the artifact, as the default's
    /// CRC-64s are, not in a second read of the file before the upload. Counted as the bytes
    /// the process read (Linux `rchar`, sendfile's included): the same for both modes.
    func testSHA256PartsAreMadeInTheHashingRead() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let size = 12 * Self.mib
        let file = try work.write("big.bin", patternBytes(size, seed: 21))
        func readBytes(_ mode: String) throws -> Int {
            let run = try BytesReadRun(["publish", "big=\(file)", "--version", "1.0.0", "--base-url", "https://cdn.example.com/\(mode)",
                                        "--to", "s3://\(moto.bucket)/\(mode)", "--checksum", mode, "--multipart-threshold", "5", "--part-size", "5"],
                                       environment: environment(moto), errorFile: work.at("err-" + mode))
            XCTAssertEqual(run.status, 0, run.stderr)
            return run.bytes
        }
        let crc = try readBytes("crc64nvme")
        let sha256 = try readBytes("sha256")
        XCTAssertGreaterThanOrEqual(crc, 2 * size, "the hashing read and the upload's")
        XCTAssertLessThan(sha256, crc + size / 2, "--checksum sha256 read \(sha256) bytes, the default \(crc): a second read of the \(size)-byte file")
        try verifyBucket(moto, "s3://\(moto.bucket)/sha256")
    }

    /// Backblaze B2 answers 400 to every x-amz-checksum-* (and x-amz-sdk-checksum-*) header;
    /// a proxy in front of moto does the same. By default a publish fails, saying what to
    /// do, and leaves the bucket as it was; with `--checksum none` (or
    /// `$MODELCAST_S3_CHECKSUM=none`) publish (single PUTs and a multipart upload),
    /// rollback and verify send no such header and succeed, the objects proven by
    /// downloading them.
    func testChecksumNoneSendsNoChecksumHeaders() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let rules = work.at("rules.json")
        let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: """
            [{"header": "x-amz-checksum-", "action": "unsupported-header"}, {"header": "x-amz-sdk-checksum-", "action": "unsupported-header"}]
            """)
        defer { withExtendedLifetime(proxy) {} }
        let refusals = { ((try? String(contentsOfFile: rules + ".log", encoding: .utf8)) ?? "").components(separatedBy: "unsupported-header").count - 1 }
        let big = try work.write("big.bin", patternBytes(11 * Self.mib, seed: 11))
        let small = try work.write("small.bin", patternBytes(1000, seed: 1))
        let target = "s3://\(moto.bucket)/b2"
        func publish(_ version: String, _ extra: [String], environment: [String: String]? = nil) throws -> ProcessOutput {
            try PublishRun(["big=\(big)", "small=\(small)"], name: nil, version: version, baseURL: "https://cdn.example.com/b2", to: target,
                           ["--multipart-threshold", "5", "--part-size", "5"] + extra, environment: environment ?? self.environment(moto, endpoint: endpoint)).run()
        }

        let refused = try publish("1.0.0", [])
        XCTAssertEqual(refused.status, 3, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--checksum none"), refused.stderr)
        XCTAssertGreaterThan(refusals(), 0)
        XCTAssertEqual(try moto.listing(), [:], "the bucket is left as it was")

        let counted = refusals()
        let first = try publish("1.0.0", ["--checksum", "none"])
        XCTAssertEqual(first.status, 0, first.stderr)
        var environment = self.environment(moto, endpoint: endpoint)
        environment["MODELCAST_S3_CHECKSUM"] = "none"
        let second = try publish("1.1.0", [], environment: environment)
        XCTAssertEqual(second.status, 0, second.stderr)
        let rollback = try modelcast(["rollback", target, "--version", "1.0.0", "--checksum", "none"], environment: self.environment(moto, endpoint: endpoint))
        XCTAssertEqual(rollback.status, 0, rollback.stderr)
        let verify = try modelcast(["verify", target, "--checksum", "none", "--json"], environment: self.environment(moto, endpoint: endpoint))
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        XCTAssertTrue(verify.stdout.contains("downloaded and hashed"), verify.stdout)
        XCTAssertEqual(refusals(), counted, "no request carried a checksum header")
        let log = try String(contentsOfFile: rules + ".log", encoding: .utf8)
        XCTAssertTrue(log.contains("partNumber=3"), "the big file went up in parts: \(log)")
        XCTAssertEqual(try moto.download("b2/models/big/1.0.0/big.bin"), Data(patternBytes(11 * Self.mib, seed: 11)))
        try verifyBucket(moto, target)  // straight to moto, checksums and all

        // A value that is not a mode is named, from the flag or the environment.
        let badFlag = try publish("1.2.0", ["--checksum", "md5"])
        XCTAssertEqual(badFlag.status, 2, badFlag.stderr)
        XCTAssertTrue(badFlag.stderr.contains("md5"), badFlag.stderr)
        environment["MODELCAST_S3_CHECKSUM"] = "crc32"
        let badEnvironment = try publish("1.2.0", [], environment: environment)
        XCTAssertEqual(badEnvironment.status, 1, badEnvironment.stderr)
        XCTAssertTrue(badEnvironment.stderr.contains("MODELCAST_S3_CHECKSUM='crc32'"), badEnvironment.stderr)
        let directory = try modelcast(["publish", "m=\(small)", "--version", "1.0.0", "--base-url", "https://cdn.example.com/d", "--to", work.at("site"),
                                       "--checksum", "none"])
        XCTAssertEqual(directory.status, 1, directory.stderr)
        XCTAssertTrue(directory.stderr.contains("--checksum"), directory.stderr)
    }
}

/// Records what a `ProgressFactory` was asked to report.
final class RecordedProgress: ProgressReporter, @unchecked Sendable {
    let label: String
    let total: Int64
    private let state = NIOLockedValueBox((done: Int64(0), before: Int64(0), finished: false))

    init(label: String, total: Int64) {
        self.label = label
        self.total = total
    }

    func advance(by bytes: Int) { state.withLockedValue { $0.done += Int64(bytes) } }
    func alreadyDone(_ bytes: Int) { state.withLockedValue { $0.done += Int64(bytes); $0.before += Int64(bytes) } }
    func finish() { state.withLockedValue { $0.finished = true } }
    /// Of `done`, what an earlier run had stored.
    var before: Int64 { state.withLockedValue { $0.before } }
    var done: Int64 { state.withLockedValue { $0.done } }
    var finished: Bool { state.withLockedValue { $0.finished } }
}

extension S3ResumeTests {
    /// Each object upload reports "uploading KEY" with its size, advances as its bytes go
    /// out (a part sent twice, after a dropped connection, counts once) and finishes;
    /// an unchanged object reports nothing.
    func testUploadsReportProgress() async throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let rules = work.at("rules.json")
        let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: #"[{"method": "PUT", "contains": "partNumber=2", "action": "reset"}]"#)
        defer { withExtendedLifetime(proxy) {} }
        let recorded = NIOLockedValueBox<[RecordedProgress]>([])
        var policy = S3UploadPolicy()
        policy.multipartThreshold = 5 << 20
        policy.partSize = 5 << 20
        let storage = try S3Storage(
            target: S3Location("s3://\(moto.bucket)/p"),
            endpoint: S3Endpoint(endpoint: endpoint, region: "us-east-1", pathStyle: true),
            credentials: AWSCredentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey), policy: policy,
            progress: { label, total in
                let progress = RecordedProgress(label: label, total: total)
                recorded.withLockedValue { $0.append(progress) }
                return progress
            })
        var failure: Error?
        do {
            for (name, size) in [("big.bin", 12 * Self.mib + 5), ("small.bin", 1000)] {
                let path = try work.write(name, patternBytes(size, seed: UInt32(size % 100)))
                let digest = try StreamDigester.digest(ofFileAt: path)
                let staged = StagedObject(path: path, metadata: ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: "application/octet-stream",
                                                                               size: digest.size, sha256: digest.sha256), isTemporary: false)
                let created = try await storage.putIfAbsent(name, staged: staged)
                XCTAssertEqual(created, .created)
                let unchanged = try await storage.putIfAbsent(name, staged: staged)
                XCTAssertEqual(unchanged, .unchanged)
            }
            let log = try String(contentsOfFile: rules + ".log", encoding: .utf8)
            XCTAssertEqual(log.components(separatedBy: "partNumber=2").count - 1, 2, "part 2 was sent twice: \(log)")
            let reports = recorded.withLockedValue { $0 }
            XCTAssertEqual(reports.map(\.label), ["uploading big.bin", "uploading small.bin"])
            XCTAssertEqual(reports.map(\.total), [Int64(12 * Self.mib + 5), 1000])
            XCTAssertEqual(reports.map(\.done), reports.map(\.total))
            XCTAssertEqual(reports.map(\.finished), [true, true])
        } catch {
            failure = error
        }
        await storage.shutdown()
        if let failure { throw failure }
    }
}
