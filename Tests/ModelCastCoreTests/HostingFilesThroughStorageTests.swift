import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// A directory target's hosting files (`_headers`, `_modelcast/…`) are written through the
/// target (`StorageCapabilities.hosting`), as its objects are: the target decides how, and
/// a failed write is one more write a commit undoes.
final class HostingFilesThroughStorageTests: XCTestCase {
    let first = repositoryRoot + "/examples/models/tiny-llm.gguf"
    let second = repositoryRoot + "/examples/models/tiny-llm-mmproj.gguf"

    func publish(_ file: String, _ version: String, _ storage: InMemoryStorage, epoch: Int) async throws {
        try await TargetCommands(storage).publish([file], version: version, epoch: epoch) {
            $0.options.interfaceChange = true
            $0.minAppVersion = version
        }
    }

    func headers(_ storage: InMemoryStorage) throws -> String {
        try String(contentsOfFile: XCTUnwrap(storage.hostingRoot) + "/_headers", encoding: .utf8)
    }

    func testEveryHostingFileIsOneWriteOfTheTarget() async throws {
        let storage = try InMemoryStorage(semantics: .directory, hostingFiles: true)
        try await publish(first, "1.0.0", storage, epoch: 1_790_000_000)
        let written = storage.bucket.log.filter { $0.operation == .hosting }.map(\.key)
        XCTAssertTrue(written.contains("_headers"), "\(written)")
        XCTAssertTrue(written.contains { $0.hasPrefix("_modelcast/") }, "\(written)")
        for path in written {
            XCTAssertTrue(FileManager.default.fileExists(atPath: try XCTUnwrap(storage.hostingRoot) + "/" + path), path)
        }
        let headers = try headers(storage)
        XCTAssertTrue(headers.contains("/m/1.0.0/tiny-llm.gguf"), headers)
    }

    func testAFailedHostingWriteLeavesTheLiveReleaseAndItsHostingFiles() async throws {
        let storage = try InMemoryStorage(semantics: .directory, hostingFiles: true)
        try await publish(first, "1.0.0", storage, epoch: 1_790_000_000)
        let manifest = storage.bucket.data("manifest.json")
        let before = try headers(storage)
        storage.faults.fail(.hosting, keyContaining: "_headers")
        do {
            try await publish(second, "1.1.0", storage, epoch: 1_790_000_100)
            XCTFail("the publish went through a target refusing its hosting files")
        } catch {
            // Undone whole (nothing left over), so the store's own failure is what is thrown.
            XCTAssertTrue("\(error)".contains("_headers"), "\(error)")
        }
        XCTAssertEqual(storage.bucket.data("manifest.json"), manifest, "the live manifest changed")
        XCTAssertNil(storage.bucket["manifests/00000002.json"], "the failed release's record stayed: \(storage.bucket.keys)")
        XCTAssertFalse(storage.bucket.keys.contains { $0.contains("mmproj") }, "the failed release's artifact stayed: \(storage.bucket.keys)")
        XCTAssertEqual(try headers(storage), before, "the hosting files do not describe the live release")
    }
}
