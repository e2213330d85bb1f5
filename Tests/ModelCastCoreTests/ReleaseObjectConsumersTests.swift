import Foundation
import XCTest
import ModelCastFormat
@testable import ModelCastCore

/// Issue 48, item 1: the consumers that used to walk a release themselves (verify's
/// history check, the history's actions, the rollout salt) read `Release.objects`, so
/// none misses an object kind, a variant or a section.
final class ReleaseObjectConsumersTests: XCTestCase {
    private func hex(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    private func file(_ key: String, _ n: Int, index: Bool = false) -> ReleaseFile {
        ReleaseFile(name: PathText.lastComponent(key), key: key, url: "https://cdn.example.com/" + key, sha256: hex(n), size: Int64(100 + n),
                    contentType: "application/octet-stream",
                    segments: index ? SegmentIndexObject(key: key + ".mcsx", url: "https://cdn.example.com/\(key).mcsx", sha256: hex(n + 50), size: 64) : nil)
    }

    private func release(_ sequence: Int64, models: [String: ReleaseModel], prototypes: ReleaseModel? = nil, rollback: ReleaseRollback? = nil) -> Release {
        Release(sequence: sequence, publishedAt: "2026-11-2\(sequence)T00:00:00Z", channel: "stable", profile: "modelcast",
                models: models, prototypes: prototypes, rollback: rollback, replaces: sequence > 1 ? sequence - 1 : nil)
    }

    /// A model with variants `big` (needs 8 GiB) and `small` (the default, named at the top level).
    private func variants(big: ReleaseFile, small: ReleaseFile) -> ReleaseModel {
        let bigModel = ReleaseModel(version: "1.0.0", files: [big])
        let smallModel = ReleaseModel(version: "1.0.0", files: [small])
        return ReleaseModel(version: "1.0.0", files: [small], variant: "small",
                            variants: [ReleaseVariant(name: "big", requires: ["min_memory": .int(8 << 30)], model: bigModel),
                                       ReleaseVariant(name: "small", model: smallModel)])
    }

    /// Verify of a target expects every object the live record's rollback section names —
    /// segment indexes and model signatures too (the walk of files missed them), and those
    /// the release names as well.
    func testTheHistoryCheckExpectsEveryObjectOfTheRollbackSection() {
        let shared = file("models/a/1.0.0/a.bin", 1)
        let old = ReleaseModel(version: "1.0.0", files: [file("models/m/1.0.0/m.gguf", 2, index: true)],
                               modelSignature: ModelSignatureObject(key: "models/m/signatures/s.sigstore.json",
                                                                    url: "https://cdn.example.com/models/m/signatures/s.sigstore.json", sha256: hex(3), size: 900))
        let record = release(2, models: ["a": ReleaseModel(version: "1.0.0", files: [shared]), "m": ReleaseModel(version: "2.0.0", files: [file("models/m/2.0.0/m.gguf", 4)])],
                             rollback: ReleaseRollback(sequence: 1, models: ["a": ReleaseModel(version: "1.0.0", files: [shared]), "m": old]))
        let state = TargetState(history: [record], manifestInfo: nil, manifestData: Data("{}".utf8), signatureData: nil, liveRecord: record)
        let expected = TargetHistoryCheck(state: state, manifestKey: "manifest.json").check(source: "test", log: CheckLog())
        XCTAssertEqual(expected.map(\.url), [
            "https://cdn.example.com/models/a/1.0.0/a.bin", "https://cdn.example.com/models/m/1.0.0/m.gguf",
            "https://cdn.example.com/models/m/1.0.0/m.gguf.mcsx", "https://cdn.example.com/models/m/signatures/s.sigstore.json",
        ])
        XCTAssertEqual(expected.map(\.label), [
            "rollback a 1.0.0/a.bin", "rollback m 1.0.0/m.gguf", "rollback m 1.0.0/m.gguf segment index", "rollback m 1.0.0 model signature",
        ])
        XCTAssertEqual(expected[1].segmentIndex?.url, "https://cdn.example.com/models/m/1.0.0/m.gguf.mcsx")
        XCTAssertEqual(expected[3].sha256, hex(3))
    }

    /// A release that changes only a variant devices do not take by default has other
    /// files: the history calls it a publish, not the same files published again.
    func testAChangeToANonDefaultVariantIsNewContent() {
        let small = file("models/m/variants/small/1.0.0/s.bin", 1)
        let first = release(1, models: ["m": variants(big: file("models/m/variants/big/1.0.0/b.bin", 2), small: small)])
        let second = release(2, models: ["m": variants(big: file("models/m/variants/big/1.0.1/b.bin", 3), small: small)])
        let actions = HistoryActions(history: [first, second], otherChannels: [:])
        XCTAssertEqual(actions.describe(second).0, .publish, actions.describe(second).1)
        // The same files again is still a republish.
        let third = release(3, models: second.models)
        XCTAssertEqual(HistoryActions(history: [first, second, third], otherChannels: [:]).describe(third).0, .republish)
    }

    /// The rollout salt is made of the files of the release's models (every variant's) and
    /// prototypes in key order, as before it read `Release.objects`: a manifest published
    /// again gets the same salt, so devices keep their cohorts.
    func testTheRolloutSaltReadsTheReleasesArtifacts() {
        let model = variants(big: file("models/m/variants/big/1.0.0/b.bin", 2, index: true), small: file("models/m/variants/small/1.0.0/s.bin", 1))
        let prototypes = ReleaseModel(version: "1.0.0", files: [file("models/prototypes/1.0.0/p.json", 5)])
        let subject = release(4, models: ["m": model, "z": ReleaseModel(version: "1.0.0", files: [file("models/z/1.0.0/z.bin", 6)])], prototypes: prototypes,
                              rollback: ReleaseRollback(sequence: 3, models: ["m": ReleaseModel(version: "0.9.0", files: [file("models/m/0.9.0/m.bin", 7)])]))
        // Spelled out: channel, sequence, then each artifact of the release section by key.
        var text = "modelcast-rollout\nstable\n4\n"
        for key in ["models/m/variants/big/1.0.0/b.bin", "models/m/variants/small/1.0.0/s.bin", "models/prototypes/1.0.0/p.json", "models/z/1.0.0/z.bin"] {
            let file = subject.objects.first { $0.key == key }!
            text += file.url + " " + file.sha256 + "\n"
        }
        let expected = SHA256Small.hash(Array(text.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
        XCTAssertEqual(Rollout.salt(for: subject), expected)
    }
}
