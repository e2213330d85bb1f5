import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Failures on the commit path, injected into an in-memory object store (no moto, no
/// proxy): a run deletes only what it saw itself create, and restores nothing that could
/// contradict what is live. Moved from the end-to-end CommitFailureTests; the CLI's side
/// of a failed commit (its exit status and message) stays in S3PublishTests.testFaultsLeaveTheBucketConsistent.
final class CommitFaultTests: XCTestCase {
    let first = repositoryRoot + "/examples/models/tiny-llm.gguf"
    let second = repositoryRoot + "/examples/models/tiny-llm-mmproj.gguf"

    /// A signed target with one release (m 1.0.0) and its keys.
    func makeTarget(_ scratch: Scratch) async throws -> (InMemoryStorage, TestKeys) {
        let storage = try InMemoryStorage()
        let keys = try TestKeys(in: scratch)
        try await publish(first, "1.0.0", storage, keys, epoch: 1_790_000_000)
        return (storage, keys)
    }

    /// Versions swap one example model for another: an intended interface change.
    @discardableResult
    func publish(_ file: String, _ version: String, _ storage: InMemoryStorage, _ keys: TestKeys, epoch: Int) async throws -> PublishReport {
        try await TargetCommands(storage).publish([file], version: version, epoch: epoch, signing: keys.signing) {
            $0.options.interfaceChange = true
            $0.minAppVersion = version
        }
    }

    /// The live manifest and its detached signature agree (minisign's verification, by Core).
    func assertManifestMatchesSignature(_ storage: InMemoryStorage, _ keys: TestKeys, file: StaticString = #filePath, line: UInt = #line) throws {
        let manifest = try XCTUnwrap(storage.bucket.data("manifest.json"), file: file, line: line)
        let signature = try XCTUnwrap(storage.bucket.data("manifest.json.minisig"), file: file, line: line)
        XCTAssertNoThrow(try MinisignSignature.verify(message: Array(manifest), signatureFile: String(decoding: signature, as: UTF8.self),
                                                      publicKeys: [keys.secretKey.publicKey]), "the live manifest and signature disagree", file: file, line: line)
    }

    /// Issue 10, case 8: the history PUT's answer is lost, so its retry finds the record
    /// already there (`unchanged`); the run then fails before the manifest. It did not see
    /// itself create that record, so it must not delete it (an identical concurrent
    /// publish may have written it). (Was CommitFailureTests.testARecordFoundAlreadyThereIsNeverDeleted.)
    func testARecordFoundAlreadyThereIsNeverDeleted() async throws {
        let scratch = try Scratch()
        let (storage, keys) = try await makeTarget(scratch)
        storage.faults.add(.put, keyContaining: "manifests/", .loseAnswer)
        storage.faults.fail(.replace, keyContaining: "manifest.json.minisig", times: 99)
        let logged = storage.bucket.log.count
        do {
            try await publish(second, "1.1.0", storage, keys, epoch: 1_790_000_100)
            XCTFail("the publish went through a store refusing the signature")
        } catch let error as CommitError {
            XCTAssertEqual(error.exitStatus, .io, "the cause, a 503, is an I/O failure")
            // Undoing tries to put the old signature back through the same failing store: a
            // failed undo step is reported in the error, never swallowed.
            XCTAssertTrue(error.message.contains("could not restore manifest.json.minisig"), error.message)
        }
        let restores = storage.bucket.log.dropFirst(logged).filter { $0.operation == .replace && $0.key == "manifest.json.minisig" }
        XCTAssertEqual(restores.count, 2, "the signature write, then its restore")
        XCTAssertNotNil(storage.bucket["manifests/00000002.json"], "a record this run did not see itself create was deleted: \(storage.bucket.keys)")
        XCTAssertEqual(try storage.bucket.release()?.models["m"]?.version, "1.0.0")
        try assertManifestMatchesSignature(storage, keys)
        // The next publish goes on above the orphan record.
        let next = try await publish(second, "1.1.0", try storage.otherWriter(), keys, epoch: 1_790_000_200)
        XCTAssertEqual(next.sequence, 3)
        XCTAssertEqual(try storage.bucket.release()?.sequence, 3)
        try assertManifestMatchesSignature(storage, keys)
    }

    /// Issue 10, case 9: the manifest PUT lands but its answer is lost, and what is live
    /// cannot be read back. The old signature must not be put back beside the new manifest.
    /// (Was CommitFailureTests.testAnUnconfirmedManifestWriteRestoresNothing.)
    func testAnUnconfirmedManifestWriteRestoresNothing() async throws {
        let scratch = try Scratch()
        let (storage, keys) = try await makeTarget(scratch)
        storage.faults.add(.replace, key: "manifest.json", .loseAnswer)
        // The load reads manifest.json and manifest.json.minisig; the read-back after the failed write is the third.
        storage.faults.fail(.get, keyContaining: "manifest.json", skip: 2, times: 99)
        let logged = storage.bucket.log.count
        do {
            try await publish(second, "1.1.0", storage, keys, epoch: 1_790_000_100)
            XCTFail("the unconfirmed manifest write was reported as done")
        } catch let error as CommitError {
            XCTAssertEqual(error.exitStatus, .refused, "the cause: the retried write's precondition failed")
            XCTAssertTrue(error.message.contains("did not confirm the manifest write") && error.message.contains("nothing was restored"), error.message)
        }
        let manifestWrites = storage.bucket.log.dropFirst(logged).filter { $0.operation == .replace && $0.key == "manifest.json" }
        XCTAssertEqual(manifestWrites.count, 1, "the lost-answer write, and no restore")
        XCTAssertEqual(try storage.bucket.release()?.models["m"]?.version, "1.1.0", "the lost-answer PUT did land")
        try assertManifestMatchesSignature(storage, keys)
    }
}
