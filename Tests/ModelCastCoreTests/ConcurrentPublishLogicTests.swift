import Foundation
import XCTest
import ModelCastFormat
import ModelCastCore
import ModelCastTestSupport

/// Two publishers on one object store (two writers on one in-memory bucket), ordered
/// operation by operation with fault hooks instead of timing: a run deletes only what it
/// created and no release names, and the live manifest never names an object another run
/// overwrote or removed. Moved from S3ConcurrentPublishTests and S3SameBytesRaceTests,
/// which raced `modelcast` processes through the fault proxy on moto; what is S3's own
/// (a conditional multipart completion, a conditional delete, the CLI of a lost race)
/// stays there, and identical bytes having identical ETags on S3 is checked by
/// S3StorageContractTests.
final class ConcurrentPublishLogicTests: XCTestCase {
    static let base = "https://cdn.example.com/race"
    var base: String { Self.base }

    /// Every object the live manifest names is stored with the SHA-256 it names, the live
    /// release's record is there, and verify (through the store) passes.
    @discardableResult
    func assertLiveIsWhole(_ storage: InMemoryStorage, modelSigningPublicKey: String? = nil, _ label: String,
                           file: StaticString = #filePath, line: UInt = #line) async throws -> Release {
        let live = try XCTUnwrap(try storage.bucket.release(), "\(label): nothing is live", file: file, line: line)
        for object in live.objects {
            XCTAssertEqual(storage.bucket[object.key]?.sha256.hex, object.sha256, "\(label): the live manifest names \(object.key) (\(object.label))", file: file, line: line)
        }
        let record = String(format: "manifests/%08lld.json", live.sequence)
        XCTAssertNotNil(storage.bucket[record], "\(label): the live release's record \(record) is gone", file: file, line: line)
        let report = try await TargetCommands(try storage.otherWriter("verify")).verify(modelSigningPublicKey: modelSigningPublicKey)
        XCTAssertEqual(report.failures, 0, "\(label): \(report.checks.filter { $0.status == .fail })", file: file, line: line)
        return live
    }

    /// A publish of model m 1.0.0 from `file` by `storage`'s writer.
    static func publish(_ storage: InMemoryStorage, _ file: String, version: String = "1.0.0", epoch: Int = 1_790_000_000,
                        signing: SigningSettings? = nil, configure: @escaping @Sendable (inout PublishCommandLine) -> Void = { _ in }) async throws -> PublishReport {
        try await TargetCommands(storage).publish(["m=" + file], name: nil, version: version, baseURL: base, epoch: epoch, signing: signing, configure: configure)
    }

    /// The operations a publish sends to a fresh target on its own.
    func operationCount(_ file: String, epoch: Int) async throws -> Int {
        let alone = try InMemoryStorage()
        _ = try await Self.publish(alone, file, epoch: epoch)
        return alone.bucket.log.count
    }

    /// For every point of A's run (before each of its operations, and after its last), B
    /// runs whole there, on a fresh target: the outcomes of A and B at each point.
    func interleavings(a: String, aEpoch: Int, b: String, bEpoch: Int) async throws
        -> [(point: Int, storage: InMemoryStorage, a: Result<PublishReport, any Error>, b: Result<PublishReport, any Error>?)] {
        let count = try await operationCount(a, epoch: aEpoch)
        var results: [(Int, InMemoryStorage, Result<PublishReport, any Error>, Result<PublishReport, any Error>?)] = []
        for point in 0...count {
            let storage = try InMemoryStorage()
            let other = try storage.otherWriter()
            let outcome = Outcome()
            storage.faults.add(nil, skip: point, .before({ await outcome.set(await Result { try await Self.publish(other, b, epoch: bEpoch) }) }))
            let first = await Result { try await Self.publish(storage, a, epoch: aEpoch) }
            var second = await outcome.value
            if second == nil, point == count { second = await Result { try await Self.publish(other, b, epoch: bEpoch) } }
            results.append((point, storage, first, second))
        }
        return results
    }

    /// Ten rounds of two identical publishes (same version, same bytes, published a
    /// hundred seconds apart), the second started 0 to 0.45 s after the first, now every
    /// interleaving: whoever wins, the live manifest names only objects that are there
    /// with its SHA-256, and no run fails but by a refusal.
    /// (Was S3ConcurrentPublishTests.testTenRoundsOfIdenticalConcurrentPublishesLeaveAVerifyingTarget.)
    func testIdenticalPublishesAtEveryInterleavingLeaveAVerifyingTarget() async throws {
        let work = try Scratch()
        let model = try work.write("model.bin", patternBytes(20_000, seed: 12))
        let runs = try await interleavings(a: model, aEpoch: 1_790_000_000, b: model, bEpoch: 1_790_000_100)
        XCTAssertGreaterThan(runs.count, 5)
        for run in runs {
            let label = "B at A's operation \(run.point)"
            let b = try XCTUnwrap(run.b, label)
            XCTAssertTrue((try? run.a.get()) != nil || (try? b.get()) != nil, "\(label): one of them publishes")
            for case .failure(let error) in [run.a, b] { XCTAssertEqual(ExitStatus(for: error), .refused, "\(label): \(error)") }
            try await assertLiveIsWhole(run.storage, label)
        }
    }

    /// Two publishes of one version with other bytes (once the larger first, once the
    /// smaller), now every interleaving: exactly one succeeds; the other is refused at the
    /// key another run stored meanwhile or at the version that went live; the live
    /// manifest names only objects that exist with its SHA-256.
    /// (Was S3ConcurrentPublishTests.testConcurrentPublishesOfOneVersionLeaveOneWinner; the
    /// multipart completion that must not overwrite stays on moto in that class.)
    func testPublishesOfOneVersionWithOtherBytesLeaveOneWinnerAtEveryInterleaving() async throws {
        let work = try Scratch()
        let big = try work.write("big/model.bin", patternBytes(64 << 10, seed: 100))
        let small = try work.write("small/model.bin", patternBytes(4096, seed: 6))
        for (first, second) in [(big, small), (small, big)] {
            for run in try await interleavings(a: first, aEpoch: 1_790_000_000, b: second, bEpoch: 1_790_000_000) {
                let label = "\(first == big ? "big" : "small") first, the other at its operation \(run.point)"
                let b = try XCTUnwrap(run.b, label)
                let winners = [run.a, b].compactMap { try? $0.get() }
                XCTAssertEqual(winners.count, 1, label)
                for case .failure(let error) in [run.a, b] {
                    XCTAssertEqual(ExitStatus(for: error), .refused, "\(label): \(error)")
                    XCTAssertTrue(isLostRace(error), "\(label): \(error)")
                }
                let live = try await assertLiveIsWhole(run.storage, label)
                let winner = (try? run.a.get()) != nil ? first : second
                XCTAssertEqual(live.models["m"]?.files.first?.size, winner == big ? 64 << 10 : 4096, label)
            }
        }
    }

    /// How a run that lost a race to another of the same version is refused: the artifact
    /// key holds the other's bytes, or the version went live with other files.
    func isLostRace(_ error: any Error) -> Bool {
        switch error {
        case StorageError.conflict(let key, _, _, _, _): return key == "models/m/1.0.0/model.bin"
        case ModelCastError.versionConflict: return true
        default: return false
        }
    }

    /// Issue 24, item 1: publisher A creates the artifact, then, at its history write,
    /// publisher B (same version, same bytes) finds the object, adopts it and goes live.
    /// A then loses the history write. Identical bytes have identical ETags, so A's
    /// conditional delete of "its" object would succeed: A must see that a release (B's,
    /// live) names the key and leave it, saying so.
    /// (Was S3ConcurrentPublishTests.testALosingPublisherLeavesTheObjectTheWinnerAdopted.)
    func testALosingPublisherLeavesTheObjectTheWinnerAdopted() async throws {
        let work = try Scratch()
        let model = try work.write("model.bin", patternBytes(5000, seed: 9))
        let storage = try InMemoryStorage()
        let other = try storage.otherWriter()
        storage.faults.add(.put, key: "manifests/00000001.json", .before({ _ = try await Self.publish(other, model, epoch: 1_790_000_100) }))
        let a = TargetCommands(storage)
        do {
            try await a.publish(["m=" + model], name: nil, version: "1.0.0", baseURL: base, epoch: 1_790_000_000)
            XCTFail("A went live over B's record")
        } catch {
            XCTAssertEqual(ExitStatus(for: error), .refused, "\(error)")
            guard case StorageError.conflict(let key, _, _, _, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(key, "manifests/00000001.json", "A's record meets B's")
        }
        XCTAssertTrue(a.log.all.contains { $0.contains("models/m/1.0.0/model.bin") && $0.hasPrefix("warning: left") }, "A says which object it left and why: \(a.log.text)")
        let live = try await assertLiveIsWhole(storage, "after A lost")
        XCTAssertEqual(live.sequence, 1)
    }

    /// Issue 24, item 1, the narrow window: A fails (its history write refused) and starts
    /// removing the artifact it created, announcing the removal; its delete is held.
    /// Meanwhile B adopts the object and writes its record. B sees A's announced removal,
    /// waits for it, finds the object gone and refuses; the live release (an earlier one)
    /// still verifies, and running again publishes.
    /// (Was S3ConcurrentPublishTests.testAPublisherDoesNotGoLiveOnAnObjectARemovalTookAway.)
    func testAPublisherDoesNotGoLiveOnAnObjectARemovalTookAway() async throws {
        let work = try Scratch()
        let baseModel = try work.write("base.bin", patternBytes(3000, seed: 1))
        let model = try work.write("model.bin", patternBytes(5000, seed: 9))
        let storage = try InMemoryStorage()
        try await TargetCommands(storage).publish(["base=" + baseModel], name: nil, version: "1.0.0", baseURL: base, epoch: 1_790_000_000)
        let models = ["base=" + baseModel, "m=" + model]
        let a = try storage.otherWriter("A2"), b = try storage.otherWriter("B")
        let bCommands = TargetCommands(b)
        let bWaits = Gate("B waits for A's removal")
        let bOutcome = Outcome()
        a.faults.fail(.put, keyContaining: "manifests/00000002.json", times: 99)
        a.faults.add(.delete, key: "models/m/1.0.0/model.bin", .before({
            // B starts while A's removal is announced, and A's delete waits until B says it is waiting.
            Task {
                await bOutcome.set(await Result { try await bCommands.publish(models, name: nil, version: "1.0.0", baseURL: Self.base, epoch: 1_790_000_100) })
            }
            for _ in 0..<4000 where !bCommands.log.all.contains(where: { $0.hasPrefix("waiting for another run that is removing models/m/1.0.0/model.bin") }) {
                try await Task.sleep(nanoseconds: 5_000_000)
            }
            await bWaits.open()
        }))
        do {
            try await TargetCommands(a).publish(models, name: nil, version: "1.0.0", baseURL: base, epoch: 1_790_000_050)
            XCTFail("A went live without its record")
        } catch {
            XCTAssertEqual(ExitStatus(for: error), .io, "the record write's 503: \(error)")
        }
        let waited = await bWaits.opened
        XCTAssertTrue(waited, "B waited for the removal it saw announced")
        var bResult = await bOutcome.value
        for _ in 0..<4000 where bResult == nil {
            try await Task.sleep(nanoseconds: 5_000_000)
            bResult = await bOutcome.value
        }
        switch try XCTUnwrap(bResult, "B never finished") {
        case .success: XCTFail("B went live on an object A's removal took away")
        case .failure(let error):
            XCTAssertEqual(ExitStatus(for: error), .refused, "\(error)")
            guard case ModelCastError.liveReleaseConflict(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("models/m/1.0.0/model.bin") && message.contains("run again"), message)
        }
        let live = try await assertLiveIsWhole(storage, "after the removal")
        XCTAssertEqual(live.models.keys.sorted(), ["base"], "the earlier release is still live")
        try await TargetCommands(try storage.otherWriter("C")).publish(models, name: nil, version: "1.0.0", baseURL: base, epoch: 1_790_000_100)
        try await assertLiveIsWhole(storage, "after running again")
    }

    // MARK: Identical bytes (moved from S3SameBytesRaceTests)

    /// The reported attack: A and B publish the same version with the same bytes in the
    /// same second (identical artifact, segment index, record and signature). A stores the
    /// artifact and index; B, having read the target before A's record, finds them and A's
    /// record (the same bytes), adopts all of it and goes live; A then loses the
    /// history-index write. A must delete none of it: the live manifest stays whole, and
    /// the next publish needs no --adopt-live.
    /// (Was S3SameBytesRaceTests.testALoserOfTheIndexRaceDeletesNothingAnIdenticalWinnerMadeLive.)
    func testALoserOfTheIndexRaceDeletesNothingAnIdenticalWinnerMadeLive() async throws {
        let work = try Scratch()
        let keys = try TestKeys(in: work)
        let model = try work.write("model.bin", patternBytes(6000, seed: 9))
        let storage = try InMemoryStorage()
        let other = try storage.otherWriter()
        let bAtRecord = Gate("B at its record"), bGoesOn = Gate("B goes on")
        let bOutcome = Outcome()
        let indexed: @Sendable (inout PublishCommandLine) -> Void = { $0.options.segmentIndexes = .always }
        other.faults.add(.put, key: "manifests/00000001.json", .before({
            await bAtRecord.open()
            try await bGoesOn.wait()
        }))
        storage.faults.add(.put, key: "manifests/00000001.json", .before({
            Task { await bOutcome.set(await Result { try await Self.publish(other, model, signing: keys.signing, configure: indexed) }) }
            try await bAtRecord.wait()
        }))
        storage.faults.add(.replace, key: "_modelcast/history-index.json", .before({
            await bGoesOn.open()
            for _ in 0..<4000 where await bOutcome.value == nil { try await Task.sleep(nanoseconds: 5_000_000) }
        }))
        let a = TargetCommands(storage)
        do {
            try await a.publish(["m=" + model], name: nil, version: "1.0.0", baseURL: base, signing: keys.signing, configure: indexed)
            XCTFail("A went live after losing the index")
        } catch {
            XCTAssertEqual(ExitStatus(for: error), .refused, "\(error)")
        }
        let bResult = await bOutcome.value
        guard case .success = try XCTUnwrap(bResult, "B never finished") else { return XCTFail("B adopts A's objects and record and goes live") }
        XCTAssertTrue(a.log.text.contains("prune"), "A says it left what it wrote for prune: \(a.log.text)")
        let live = try await assertLiveIsWhole(storage, "after A lost")
        XCTAssertEqual(Set(live.objects.map(\.kind)), [.artifact, .segmentIndex])
        XCTAssertNotNil(storage.bucket["manifests/00000001.json.minisig"], "the live release's kept signature stays")
        // Nothing is left for the next run to trip over.
        let next = try work.write("next/model.bin", patternBytes(6000, seed: 10))
        _ = try await Self.publish(try storage.otherWriter("C"), next, version: "2.0.0", epoch: 1_790_000_100, signing: keys.signing, configure: indexed)
        try await assertLiveIsWhole(storage, "after the next publish")
    }

    /// The same race where the two releases differ (each run makes its own model-signature
    /// bundle: ECDSA signatures differ): B goes live first with its own record; A's record
    /// write then meets B's. A removes only what no record names — its own bundle — and
    /// never the artifact and index B adopted.
    /// (Was S3SameBytesRaceTests.testALoserOfTheRecordRaceKeepsWhatTheWinnersRecordNames.)
    func testALoserOfTheRecordRaceKeepsWhatTheWinnersRecordNames() async throws {
        let work = try Scratch()
        let keys = try TestKeys(in: work)
        let model = try work.write("model.bin", patternBytes(6000, seed: 19))
        let storage = try InMemoryStorage()
        let other = try storage.otherWriter()
        let signed: @Sendable (inout PublishCommandLine) -> Void = {
            $0.options.segmentIndexes = .always
            $0.modelSigning.path = keys.modelSigningPath
        }
        storage.faults.add(.put, key: "manifests/00000001.json", .before({ _ = try await Self.publish(other, model, configure: signed) }))
        do {
            _ = try await Self.publish(storage, model, configure: signed)
            XCTFail("A went live over B's record")
        } catch {
            XCTAssertEqual(ExitStatus(for: error), .refused, "\(error)")
        }
        let live = try await assertLiveIsWhole(storage, modelSigningPublicKey: keys.modelSigningPublicPath, "after A lost")
        XCTAssertEqual(Set(live.objects.map(\.kind)), [.artifact, .segmentIndex, .modelSignature])
        let bundles = storage.bucket.keys.filter { $0.hasSuffix(".sigstore.json") }
        XCTAssertEqual(bundles, live.objects.filter { $0.kind == .modelSignature }.map(\.key), "A removed its own bundle, which no record names")
    }

    /// What a losing run leaves once its record is written is left for prune, as the run
    /// says: A (other bytes) writes record 1 and its artifact, then loses the index to B,
    /// which read the target after A's record and went live as sequence 2. history shows
    /// record 1 as never live; prune removes it with the artifact only it names, and the
    /// live release still verifies.
    /// (Was S3SameBytesRaceTests.testWhatALoserLeavesIsPrunedWithWhatOnlyItNames.)
    func testWhatALoserLeavesIsPrunedWithWhatOnlyItNames() async throws {
        let work = try Scratch()
        let aFile = try work.write("a.bin", patternBytes(6000, seed: 31)), bFile = try work.write("b.bin", patternBytes(6000, seed: 32))
        let storage = try InMemoryStorage()
        let other = try storage.otherWriter()
        storage.faults.add(.replace, key: "_modelcast/history-index.json", .before({ _ = try await Self.publish(other, bFile, epoch: 1_790_000_100) }))
        let a = TargetCommands(storage)
        do {
            try await a.publish(["m=" + aFile], name: nil, version: "1.0.0", baseURL: base)
            XCTFail("A went live after losing the index")
        } catch {
            XCTAssertEqual(ExitStatus(for: error), .refused, "\(error)")
        }
        XCTAssertTrue(a.log.all.contains { $0.contains("left manifests/00000001.json") && $0.contains("prune") }, a.log.text)
        let live = try await assertLiveIsWhole(storage, "after A lost")
        XCTAssertEqual(live.sequence, 2)
        let left = try XCTUnwrap(try storage.bucket.release("manifests/00000001.json"))
        let leftKey = try XCTUnwrap(left.objects.first?.key)
        XCTAssertNotNil(storage.bucket[leftKey], "A left its artifact for prune")

        let commands = TargetCommands(try storage.otherWriter("C"))
        let history = try await commands.history()
        XCTAssertEqual(history.first { $0.sequence == 1 }?.state, .neverLive)
        let pruned = try await commands.prune(keep: 1)
        XCTAssertEqual(Set(pruned.deleted), [leftKey, "manifests/00000001.json"])
        XCTAssertNil(storage.bucket[leftKey], "prune removes what only the left record names")
        XCTAssertNil(storage.bucket["manifests/00000001.json"], "and the record")
        try await assertLiveIsWhole(storage, "after prune")
    }
}

/// The outcome of a run started in a hook, set once it ends.
actor Outcome {
    private(set) var value: Result<PublishReport, any Error>?

    func set(_ result: Result<PublishReport, any Error>) { value = result }
}

extension Result where Failure == any Error {
    /// The result of an async throwing body.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
