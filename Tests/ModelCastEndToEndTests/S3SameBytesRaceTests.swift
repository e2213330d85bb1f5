import Foundation
import XCTest
import ModelCastFormat
import ModelCastCore
import ModelCastTestSupport

/// Issue 44, item 1: two publishers of the same version on S3, ordered request by request
/// with the fault proxy (each publisher through a proxy of its own, so each is held where
/// the test says). Identical bytes have identical ETags, so a run that fails or loses a
/// race can never tell an object it stored from the same object another run adopted: it
/// must delete nothing the other run may have made live — artifact, segment index, model
/// signature, history record, kept signature alike.
final class S3SameBytesRaceTests: XCTestCase {
    typealias Publish = S3ConcurrentPublishTests.Publish

    /// A publisher with a proxy of its own in front of moto, whose holds the test releases.
    struct Lane {
        let proxy: BackgroundProcess
        let rules: String
        let environment: [String: String]

        init(_ moto: MotoS3, work: Scratch, name: String, holds: [(method: String, contains: String, name: String)], environment: [String: String]) throws {
            rules = work.at("\(name)-rules.json")
            let json = "[" + holds.map { #"{"method": "\#($0.method)", "contains": "\#($0.contains)", "action": "hold:\#($0.name)"}"# }.joined(separator: ", ") + "]"
            let (proxy, endpoint) = try moto.startFaultProxy(rules: rules, json: json)
            self.proxy = proxy
            var environment = environment
            environment["AWS_ENDPOINT_URL"] = endpoint
            self.environment = environment
        }

        /// Waits until a request is held under `name`.
        func waitsAt(_ name: String, timeout: TimeInterval = 60) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if FileManager.default.fileExists(atPath: rules + ".\(name).waiting") { return true }
                usleep(20_000)
            }
            return false
        }

        func release(_ name: String) throws {
            try Data().write(to: URL(fileURLWithPath: rules + ".\(name)"))
        }
    }

    /// Every object the live manifest names is stored with the SHA-256 it names (downloaded
    /// and hashed), and verify passes (with the model-signing key, when given).
    func assertLiveIsWhole(_ moto: MotoS3, prefix: String, modelSigningPublicKey: String? = nil, _ label: String,
                           file: StaticString = #filePath, line: UInt = #line) throws -> Release {
        let live = try Release.decode(try moto.download(prefix + "/manifest.json"), source: label)
        let keys = try moto.listing().keys
        for object in live.objects {
            guard keys.contains(prefix + "/" + object.key) else {
                XCTFail("\(label): the live manifest names \(object.key) (\(object.label)), which is gone", file: file, line: line)
                continue
            }
            XCTAssertEqual(try SHA256Hasher.digest(try moto.download(prefix + "/" + object.key)).hex, object.sha256, "\(label): \(object.key)", file: file, line: line)
        }
        let record = TargetLayout.historyPrefix(manifestKey: "manifest.json") + String(format: "%08lld.json", live.sequence)
        XCTAssertTrue(keys.contains(prefix + "/" + record), "\(label): the live release's record \(record) is gone", file: file, line: line)
        let verify = try modelcast(["verify", "s3://\(moto.bucket)/\(prefix)", "--json"] + (modelSigningPublicKey.map { ["--model-signing-public-key", $0] } ?? []),
                                   environment: moto.environment)
        XCTAssertEqual(verify.status, 0, "\(label): \(verify.stdout)\(verify.stderr)", file: file, line: line)
        return live
    }

    func keygen(_ work: Scratch) throws -> String {
        let result = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")])
        XCTAssertEqual(result.status, 0, result.stderr)
        return work.at("k.key")
    }

    /// The reported attack: A and B publish the same version with the same bytes in the
    /// same second (identical artifact, segment index, record and signature). A stores
    /// the artifact and index; B, having read the target before A's record, finds them
    /// and A's record (the same bytes) and adopts all of it, and goes live; A then loses
    /// the history-index write. A must delete none of it: the live manifest stays whole,
    /// and the next publish needs no --adopt-live.
    func testALoserOfTheIndexRaceDeletesNothingAnIdenticalWinnerMadeLive() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let key = try keygen(work)
        try work.write("model.bin", patternBytes(6000, seed: 9))
        let target = "s3://\(moto.bucket)/same"
        let arguments = ["m=" + work.at("model.bin"), "--version", "1.0.0", "--base-url", "https://cdn.example.com/same", "--to", target,
                         "--segment-index", "always", "--sign", key]
        let environment = pinnedEnvironment(moto.environment)
        let a = try Lane(moto, work: work, name: "a", holds: [("PUT", "manifests/00000001.json", "record"), ("PUT", "_modelcast/history-index.json", "index")],
                         environment: environment)
        let b = try Lane(moto, work: work, name: "b", holds: [("PUT", "manifests/00000001.json", "record")], environment: environment)
        defer { withExtendedLifetime((a, b)) {} }

        let first = try Publish(arguments, environment: a.environment, logs: work.at("a"))
        XCTAssertTrue(a.waitsAt("record"), "A never reached its record: \(first.stderr)")
        let second = try Publish(arguments, environment: b.environment, logs: work.at("b"))
        XCTAssertTrue(b.waitsAt("record"), "B never reached its record: \(second.stderr)")
        try a.release("record")
        XCTAssertTrue(a.waitsAt("index"), "A never reached the index: \(first.stderr)")
        try b.release("record")
        XCTAssertEqual(second.wait(), 0, "B adopts A's objects and record and goes live: \(second.stderr)")
        try a.release("index")
        XCTAssertEqual(first.wait(), 1, first.stderr)
        XCTAssertTrue(first.stderr.contains("prune"), "A says it left what it wrote for prune: \(first.stderr)")

        let live = try assertLiveIsWhole(moto, prefix: "same", "after A lost")
        XCTAssertEqual(Set(live.objects.map(\.kind)), [.artifact, .segmentIndex])
        XCTAssertNotNil(try? moto.download("same/manifests/00000001.json.minisig"), "the live release's kept signature stays")
        // Nothing is left for the next run to trip over.
        try work.write("model.bin", patternBytes(6000, seed: 10))
        let next = try modelcast(["publish", "m=" + work.at("model.bin"), "--version", "2.0.0", "--base-url", "https://cdn.example.com/same", "--to", target,
                                  "--segment-index", "always", "--sign", key], environment: pinnedEnvironment(moto.environment, epoch: 1_790_000_100))
        XCTAssertEqual(next.status, 0, next.stderr)
        _ = try assertLiveIsWhole(moto, prefix: "same", "after the next publish")
    }

    /// The same race where the two releases differ (each run makes its own model-signature
    /// bundle: ECDSA signatures differ): B goes live first with its own record; A's record
    /// write then meets B's. A removes only what no record names — its own bundle — and
    /// never the artifact and index B adopted.
    func testALoserOfTheRecordRaceKeepsWhatTheWinnersRecordNames() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let made = try modelcast(["keygen", "--model-signing", "--unencrypted", "--private-key", work.at("ms.pem"), "--public-key", work.at("ms.pub")])
        XCTAssertEqual(made.status, 0, made.stderr)
        try work.write("model.bin", patternBytes(6000, seed: 19))
        let target = "s3://\(moto.bucket)/signed"
        let arguments = ["m=" + work.at("model.bin"), "--version", "1.0.0", "--base-url", "https://cdn.example.com/signed", "--to", target,
                         "--segment-index", "always", "--model-signing-key", work.at("ms.pem")]
        let environment = pinnedEnvironment(moto.environment)
        let a = try Lane(moto, work: work, name: "a", holds: [("PUT", "manifests/00000001.json", "record")], environment: environment)
        defer { withExtendedLifetime(a) {} }
        let first = try Publish(arguments, environment: a.environment, logs: work.at("a"))
        XCTAssertTrue(a.waitsAt("record"), "A never reached its record: \(first.stderr)")
        let second = try modelcast(["publish"] + arguments, environment: environment)
        XCTAssertEqual(second.status, 0, second.stderr)
        try a.release("record")
        XCTAssertEqual(first.wait(), 1, first.stderr)
        let live = try assertLiveIsWhole(moto, prefix: "signed", modelSigningPublicKey: work.at("ms.pub"), "after A lost")
        XCTAssertEqual(Set(live.objects.map(\.kind)), [.artifact, .segmentIndex, .modelSignature])
    }

    /// What a losing run leaves once its record is written is left for prune, as the run
    /// says: A (other bytes) writes record 1 and its artifact, then loses the index to B,
    /// which read the target after A's record and went live as sequence 2. history shows
    /// record 1 as never live; prune removes it with the artifact only it names, and the
    /// live release still verifies.
    func testWhatALoserLeavesIsPrunedWithWhatOnlyItNames() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        try work.write("a.bin", patternBytes(6000, seed: 31))
        try work.write("b.bin", patternBytes(6000, seed: 32))
        let target = "s3://\(moto.bucket)/left"
        func arguments(_ file: String) -> [String] {
            ["m=" + work.at(file), "--version", "1.0.0", "--base-url", "https://cdn.example.com/left", "--to", target]
        }
        let a = try Lane(moto, work: work, name: "a", holds: [("PUT", "_modelcast/history-index.json", "index")], environment: pinnedEnvironment(moto.environment))
        defer { withExtendedLifetime(a) {} }
        let first = try Publish(arguments("a.bin"), environment: a.environment, logs: work.at("a"))
        XCTAssertTrue(a.waitsAt("index"), "A never reached the index: \(first.stderr)")
        let second = try modelcast(["publish"] + arguments("b.bin"), environment: pinnedEnvironment(moto.environment, epoch: 1_790_000_100))
        XCTAssertEqual(second.status, 0, second.stderr)
        try a.release("index")
        XCTAssertEqual(first.wait(), 1, first.stderr)
        XCTAssertTrue(first.stderr.contains("left manifests/00000001.json") && first.stderr.contains("prune"), first.stderr)
        let live = try assertLiveIsWhole(moto, prefix: "left", "after A lost")
        XCTAssertEqual(live.sequence, 2)
        let left = try Release.decode(try moto.download("left/manifests/00000001.json"), source: "A's record")
        let leftKey = try XCTUnwrap(left.objects.first?.key)
        XCTAssertTrue(try moto.listing().keys.contains("left/" + leftKey), "A left its artifact for prune")

        let history = try modelcast(["history", target, "--json"], environment: moto.environment)
        XCTAssertEqual(history.status, 0, history.stderr)
        let releases = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any])?["releases"] as? [[String: Any]])
        XCTAssertEqual(releases.first { $0["sequence"] as? Int == 1 }?["state"] as? String, "never live", history.stdout)

        let pruned = try modelcast(["prune", target, "--keep", "1"], environment: moto.environment)
        XCTAssertEqual(pruned.status, 0, pruned.stderr)
        let keys = try moto.listing().keys
        XCTAssertFalse(keys.contains("left/" + leftKey), "prune removes what only the left record names")
        XCTAssertFalse(keys.contains("left/manifests/00000001.json"), "and the record")
        _ = try assertLiveIsWhole(moto, prefix: "left", "after prune")
    }
}
