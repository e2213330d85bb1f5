import Foundation
import XCTest
import ModelCastFormat
import ModelCastCore
import ModelCastTestSupport

/// Issue 44, item 3, on the in-memory store (both semantics: an object store and a
/// directory): every go-live command proves every object the release it makes live names —
/// artifacts, segment indexes and model-signature bundles, of the release and of its
/// rollback section — and refuses, naming the object, when one is missing or holds other
/// bytes, writing nothing. Moved from GoLiveProofTests' directory and S3 matrices, which
/// started a process (and copied a target) per case; GoLiveProofTests keeps one refusal
/// through the CLI for its exit status and message.
final class GoLiveProofLogicTests: XCTestCase {
    let base = "https://cdn.example.com/p"

    /// How an object is damaged.
    enum Damage: String, CaseIterable {
        /// Deleted.
        case missing
        /// Other bytes: an artifact one byte longer (a changed size: a take-over checks
        /// sizes), a segment index or bundle with its last byte flipped (same size),
        /// uploaded with a SHA-256 checksum as a tool would.
        case changed
    }

    struct Inputs {
        let keys: TestKeys
        let v1: String, v2: String, v3: String
    }

    func inputs(_ work: Scratch) throws -> Inputs {
        Inputs(keys: try TestKeys(in: work),
               v1: try work.write("in/v1/m.bin", patternBytes(7000, seed: 1)), v2: try work.write("in/v2/m.bin", patternBytes(7000, seed: 2)),
               v3: try work.write("in/v3/m.bin", patternBytes(7000, seed: 3)))
    }

    /// Every publish of these targets: signed, model-signed, indexed.
    func publish(_ commands: TargetCommands, _ file: String, _ version: String, _ inputs: Inputs, epoch: Int,
                 configure: @escaping (inout PublishCommandLine) -> Void = { _ in }) async throws {
        try await commands.publish(["m=" + file], name: nil, version: version, baseURL: base, epoch: epoch, signing: inputs.keys.signing) { line in
            line.modelSigning.path = inputs.keys.modelSigningPath
            line.options.segmentIndexes = .always
            configure(&line)
        }
    }

    /// m 1.0.0 (record 1) to stable, the same to beta, then 2.0.0 (record 2) to stable —
    /// as a plain release, or as a staged rollout of 10 %.
    func makeTarget(_ storage: InMemoryStorage, _ inputs: Inputs, rollout: Bool) async throws {
        let commands = TargetCommands(storage)
        try await publish(commands, inputs.v1, "1.0.0", inputs, epoch: 1_790_000_000)
        try await publish(commands, inputs.v1, "1.0.0", inputs, epoch: 1_790_000_010) { $0.channel = "beta" }
        try await publish(commands, inputs.v2, "2.0.0", inputs, epoch: 1_790_000_020) { line in
            if rollout { line.options.rolloutPercent = try? Rollout.parsePercent("10") }
        }
    }

    /// The objects of version `version` of model m (its release section as first published)
    /// in the stable channel, or in beta (there 1.0.0 has a model signature of its own).
    func objects(of version: String, in bucket: InMemoryBucket, channel: String = "stable") throws -> [ReleaseObject] {
        let folder = channel == "stable" ? "manifests/" : "manifests/channels/\(channel)/"
        let record = try XCTUnwrap(try bucket.release(folder + "0000000\(version == "1.0.0" ? 1 : 2).json"))
        return record.objects.filter { $0.section == .release }
    }

    /// Every go-live command under test: its name, whether it runs on the rolling target
    /// (2.0.0 rolling out over 1.0.0) or the plain one (2.0.0 live over 1.0.0, with 1.0.0
    /// live on beta), the versions whose objects the release it makes live names (`beta:V`:
    /// the beta channel's record of V), and how it runs.
    func goLiveCommands(_ inputs: Inputs) -> [(name: String, rolling: Bool, versions: [String], run: (TargetCommands) async throws -> Void)] {
        let signing = inputs.keys.signing, epoch = 1_790_000_100
        return [
            ("resign", false, ["2.0.0", "1.0.0"], { try await $0.resign(epoch: epoch, signing: signing) }),
            ("rollback", false, ["1.0.0"], { try await $0.rollback(to: "1.0.0", epoch: epoch, signing: signing) }),
            ("promote", false, ["2.0.0", "beta:1.0.0"], { try await $0.promote(from: "stable", to: "beta", epoch: epoch, signing: signing) }),
            ("publish", false, ["2.0.0"], { try await self.publish($0, inputs.v3, "3.0.0", inputs, epoch: epoch) }),
            ("publish --rollout", false, ["2.0.0"], { commands in
                try await self.publish(commands, inputs.v3, "3.0.0", inputs, epoch: epoch) { $0.options.rolloutPercent = try? Rollout.parsePercent("50") }
            }),
            ("rollout --percent", true, ["2.0.0", "1.0.0"], { try await $0.changeRollout(.percent(try Rollout.parsePercent("50")), epoch: epoch, signing: signing) }),
            ("rollout --halt", true, ["1.0.0"], { try await $0.changeRollout(.halt, epoch: epoch, signing: signing) }),
            ("rollout --complete", true, ["2.0.0"], { try await $0.changeRollout(.complete, epoch: epoch, signing: signing) }),
        ]
    }

    /// The damaged bytes of an object (`Damage.changed`).
    func changed(_ bytes: Data, kind: ReleaseObject.Kind) -> Data {
        var bytes = bytes
        if kind == .artifact { bytes.append(0x21) } else { bytes[bytes.count - 1] ^= 0x01 }
        return bytes
    }

    /// True when the refusal names `key` (the CLI prints this text as the error).
    func names(_ error: Error, _ key: String) -> Bool {
        String(describing: error).contains(key)
    }

    /// Every go-live command × every object kind of the release it names (and of its
    /// rollback section) × missing or changed, on each semantics: refused (exit status 1),
    /// naming the key, and the target left exactly as it was.
    func testEveryGoLiveCommandRefusesAMissingOrChangedObject() async throws {
        let work = try Scratch()
        let inputs = try inputs(work)
        for semantics in [InMemoryStorage.Semantics.objectStore, .directory] {
            let rule: InMemoryBucket.ETagRule = semantics == .objectStore ? .contentMD5 : .perWrite
            let plain = try InMemoryStorage(bucket: InMemoryBucket(etagRule: rule), semantics: semantics)
            let rolling = try InMemoryStorage(bucket: InMemoryBucket(etagRule: rule), semantics: semantics)
            try await makeTarget(plain, inputs, rollout: false)
            try await makeTarget(rolling, inputs, rollout: true)
            var cases = 0
            for command in goLiveCommands(inputs) {
                let storage = command.rolling ? rolling : plain
                let pristine = storage.bucket.snapshot
                for version in command.versions {
                    let (channel, number) = version.hasPrefix("beta:") ? ("beta", String(version.dropFirst(5))) : ("stable", version)
                    for object in try objects(of: number, in: storage.bucket, channel: channel) {
                        for damage in Damage.allCases {
                            cases += 1
                            let label = "\(semantics), \(command.name), \(object.label) (\(object.key)) \(damage.rawValue)"
                            switch damage {
                            case .missing: storage.bucket.remove(object.key)
                            case .changed: storage.bucket.set(object.key, changed(pristine[object.key]!.data, kind: object.kind), contentType: object.contentType)
                            }
                            let damaged = storage.bucket.snapshot
                            do {
                                try await command.run(TargetCommands(try storage.otherWriter("run\(cases)")))
                                XCTFail("\(label): went live")
                            } catch {
                                XCTAssertEqual(ExitStatus(for: error), .refused, "\(label): \(error)")
                                XCTAssertTrue(names(error, object.key), "\(label) is named: \(error)")
                            }
                            XCTAssertEqual(storage.bucket.snapshot, damaged, "\(label): the target changed")
                            storage.bucket.restore(pristine)
                        }
                    }
                }
            }
            XCTAssertEqual(cases, 11 * 3 * 2, "every command, version, object kind and damage")
            // With every object back, each target's commands go live.
            for storage in [plain, rolling] {
                let report = try await TargetCommands(storage).resign(epoch: 1_790_000_200, signing: inputs.keys.signing)
                XCTAssertEqual(report.sequence, 3, "\(semantics): records 1 and 2, then this one")
            }
        }
    }

    /// A publish changing one model of a catalog on an object store takes the others'
    /// artifacts over from the live release: each must be present with its size, checked
    /// against the store's listing (a few requests, not one per model). One deleted is
    /// refused, by key. (Was GoLiveProofTests.testATakeOverOfACatalogOnS3IsCheckedAgainstTheListing.)
    func testATakeOverOfACatalogIsCheckedAgainstTheListing() async throws {
        let work = try Scratch()
        let storage = try InMemoryStorage()
        let count = 30
        func config(changed: Bool) throws -> String {
            var text = "base_url: https://cdn.example.com/cat\nmodels:\n"
            for index in 0..<count {
                let version = changed && index == 0 ? "1.1.0" : "1.0.0"
                let file = try work.write("in/m\(index)-\(version).bin", patternBytes(1000 + index, seed: UInt32(index + (version == "1.1.0" ? 100 : 0))))
                text += "  m\(index):\n    version: \(version)\n    files: [\(file)]\n"
            }
            return try work.write(changed ? "changed.yml" : "catalog.yml", text: text)
        }
        let catalog = try config(changed: false)
        try await TargetCommands(storage).publish([], name: nil, version: nil, baseURL: nil) { $0.configPath = catalog }
        let gone = "models/m7/1.0.0/m7-1.0.0.bin"
        let kept = try XCTUnwrap(storage.bucket.data(gone))
        storage.bucket.remove(gone)
        let before = storage.bucket.snapshot
        let changed = try config(changed: true)
        let runner = try storage.otherWriter()
        do {
            try await TargetCommands(runner).publish([], name: nil, version: nil, baseURL: nil, epoch: 1_790_000_100) { $0.configPath = changed }
            XCTFail("a take-over of a deleted artifact went live")
        } catch {
            XCTAssertEqual(ExitStatus(for: error), .refused)
            XCTAssertTrue(names(error, gone) && String(describing: error).contains("is missing from the target"), "\(error)")
        }
        XCTAssertEqual(storage.bucket.snapshot, before, "nothing written")
        XCTAssertLessThan(runner.operationCounts["head", default: 0], 10, "the taken-over artifacts are not looked up one by one")
        XCTAssertGreaterThan(runner.operationCounts["list", default: 0], 0, "they are checked against the listing")
        // Put back, the change goes live.
        storage.bucket.set(gone, kept)
        let published = try await TargetCommands(storage).publish([], name: nil, version: nil, baseURL: nil, epoch: 1_790_000_100) { $0.configPath = changed }
        XCTAssertEqual(published.sequence, 2)
    }

    /// Publishing the live release's input again restores a deleted segment index or
    /// artifact (with or without --reverify-stored), on each semantics; a segment index
    /// holding other bytes is refused, naming it. (Was
    /// GoLiveProofTests.testAnUnchangedRepublishRestoresWhatItHasTheBytesFor; the CLI's
    /// "restored" line stays in testARepublishWithDefaultFlagsRestoresTheSegmentIndex.)
    func testAnUnchangedRepublishRestoresWhatItHasTheBytesFor() async throws {
        let work = try Scratch()
        let inputs = try inputs(work)
        for semantics in [InMemoryStorage.Semantics.objectStore, .directory] {
            let storage = try InMemoryStorage(bucket: InMemoryBucket(etagRule: semantics == .objectStore ? .contentMD5 : .perWrite), semantics: semantics)
            try await makeTarget(storage, inputs, rollout: false)
            let record = try XCTUnwrap(try storage.bucket.release("manifests/00000002.json"))
            for (kind, reverify) in [(ReleaseObject.Kind.segmentIndex, false), (.artifact, false), (.segmentIndex, true), (.artifact, true)] {
                let object = try XCTUnwrap(record.objects.first { $0.kind == kind && $0.section == .release })
                storage.bucket.remove(object.key)
                let label = "\(semantics), \(object.label) missing\(reverify ? ", --reverify-stored" : "")"
                let commands = TargetCommands(storage)
                let report = try await commands.publish(["m=" + inputs.v2], name: nil, version: "2.0.0", baseURL: base, epoch: 1_790_000_100,
                                                        signing: inputs.keys.signing) { line in
                    line.modelSigning.path = inputs.keys.modelSigningPath
                    line.options.segmentIndexes = .always
                    line.options.reverifyStored = reverify
                }
                XCTAssertTrue(report.unchanged, label)
                XCTAssertTrue(commands.log.all.contains { $0.hasPrefix("restored ") && $0.contains(object.key) }, "\(label): \(commands.log.text)")
                XCTAssertEqual(storage.bucket[object.key]?.sha256.hex, object.sha256, label)
            }
        }
        // Other bytes under the index's key: refused, naming it.
        let storage = try InMemoryStorage()
        try await makeTarget(storage, inputs, rollout: false)
        let index = try XCTUnwrap(try objects(of: "2.0.0", in: storage.bucket).first { $0.kind == .segmentIndex })
        storage.bucket.set(index.key, changed(storage.bucket.data(index.key)!, kind: .segmentIndex), contentType: index.contentType)
        do {
            try await publish(TargetCommands(storage), inputs.v2, "2.0.0", inputs, epoch: 1_790_000_100)
            XCTFail("other bytes under the segment index's key went live")
        } catch {
            XCTAssertEqual(ExitStatus(for: error), .refused)
            XCTAssertTrue(names(error, index.key), "\(error)")
        }
    }
}
