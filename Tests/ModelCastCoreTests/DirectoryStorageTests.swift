import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

final class DirectoryStorageTests: XCTestCase {
    /// get() reads only a regular file, judges the size of what it opened, and
    /// answers nil for a missing key.
    func testGetReadsOnlyRegularFilesWithinTheLimit() async throws {
        let scratch = try Scratch()
        let storage = DirectoryStorage(root: scratch.path)
        try scratch.write("manifests/1.json", patternBytes(100))
        let record = try await storage.get("manifests/1.json", limit: 100)
        XCTAssertEqual(record, Data(patternBytes(100)))
        try scratch.write("empty.json", [])
        let none = try await storage.get("empty.json", limit: 0)
        XCTAssertEqual(none, Data())
        let missing = try await storage.get("manifests/2.json", limit: 100)
        XCTAssertNil(missing)
        let underAFile = try await storage.get("manifests/1.json/x", limit: 100)
        XCTAssertNil(underAFile)

        do {
            _ = try await storage.get("manifests/1.json", limit: 99)
            XCTFail("a 100-byte file must not be read under a 99-byte limit")
        } catch let error as StorageError {
            XCTAssertEqual(error, .tooLarge(key: "manifests/1.json", size: 100, limit: 99))
        }

        // A link to a large file outside the target would bypass the limit if followed.
        let outside = try Scratch()
        try outside.write("huge.bin", patternBytes(10_000))
        XCTAssertEqual(symlink(outside.at("huge.bin"), scratch.at("manifests/3.json")), 0)
        do {
            _ = try await storage.get("manifests/3.json", limit: 1000)
            XCTFail("a symbolic link must not be read")
        } catch let error as ModelCastError {
            XCTAssertEqual(error, .specialFile(path: scratch.at("manifests/3.json"), kind: "not a regular file where an object belongs"))
        }

        // A FIFO is refused without blocking on it.
        XCTAssertEqual(mkfifo(scratch.at("manifests/4.json"), 0o644), 0)
        do {
            _ = try await storage.get("manifests/4.json", limit: 1000)
            XCTFail("a FIFO must not be read")
        } catch let error as ModelCastError {
            XCTAssertTrue(error.message.contains(scratch.at("manifests/4.json")), error.message)
        }
    }

    /// O_NOFOLLOW: a link swapped in after any check is still refused at open.
    func testOpeningWithoutFollowingLinksRefusesALink() throws {
        let scratch = try Scratch()
        try scratch.write("real", patternBytes(10))
        XCTAssertEqual(symlink(scratch.at("real"), scratch.at("link")), 0)
        XCTAssertThrowsError(try FileDescriptor.openForReading(scratch.at("link"), followLinks: false)) { error in
            XCTAssertEqual(error as? ModelCastError, .specialFile(path: scratch.at("link"), kind: "symbolic link to \(scratch.at("real"))"))
        }
        XCTAssertEqual(try FileDescriptor.openForReading(scratch.at("link")).read(at: 0, count: 10), patternBytes(10))
    }

    /// A replace refused by its version check writes nothing, not even a temporary file.
    func testStaleReplaceWritesNothing() async throws {
        let scratch = try Scratch()
        let storage = DirectoryStorage(root: scratch.path)
        let first = Data("{\"a\": 1}\n".utf8), second = Data("{\"a\": 2}\n".utf8)
        func metadata(_ data: Data) throws -> ObjectMetadata {
            try ObjectMetadata(of: data, cacheControl: CachePolicy.manifestDefault, contentType: "application/json")
        }
        try await storage.replace("manifest.json", data: first, metadata: try metadata(first), ifMatch: "")
        do {
            try await storage.replace("manifest.json", data: second, metadata: try metadata(second), ifMatch: "stale")
            XCTFail("a stale version must be refused")
        } catch let error as StorageError {
            guard case .preconditionFailed(let key, let expected, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(key, "manifest.json")
            XCTAssertEqual(expected, "stale")
        }
        do {
            try await storage.replace("sub/new.json", data: second, metadata: try metadata(second), ifMatch: "stale")
            XCTFail("a version given for a missing key must be refused")
        } catch is StorageError {}
        XCTAssertEqual(scratch.listing(), ["manifest.json"])
        let live = try await storage.get("manifest.json", limit: 1000)
        XCTAssertEqual(live, first)
    }

    /// Discarding an atomic file twice (and then dropping it) removes it once and is harmless.
    func testAtomicFileDiscardIsIdempotent() throws {
        let scratch = try Scratch()
        var file: AtomicFile? = try AtomicFile(destination: scratch.at("out.bin"))
        let temporary = file!.temporaryPath
        XCTAssertTrue(FileManager.default.fileExists(atPath: temporary))
        file!.discard()
        XCTAssertFalse(FileManager.default.fileExists(atPath: temporary))
        // Something else now at that name is not the discarded file's to remove.
        try scratch.write((temporary as NSString).lastPathComponent, patternBytes(3))
        file!.discard()
        file = nil
        XCTAssertTrue(FileManager.default.fileExists(atPath: temporary))
        XCTAssertEqual(scratch.listing(), [(temporary as NSString).lastPathComponent])
    }

    /// proveContent reads the stored file back and hashes it: one byte flipped in place
    /// (same size, same name) is a mismatch naming the key and both digests, even with
    /// `trustStored` (a directory always hashes); intact bytes are `.hashed`; a missing key
    /// is `.missing`; a symbolic link in the key's place is refused, never followed.
    func testProveContentHashesTheStoredFile() async throws {
        let scratch = try Scratch()
        let storage = DirectoryStorage(root: scratch.path)
        let key = "models/m/1.0.0/m.bin"
        let bytes = patternBytes(300_000, seed: 7)
        try scratch.write(key, bytes)
        let digest = try SHA256Hasher.digest(bytes)
        for trust in [false, true] {
            let proof = try await storage.proveContent(key, size: 300_000, sha256: digest, localFile: nil, trustStored: trust)
            XCTAssertEqual(proof, .hashed)
        }

        // One byte flipped in place: same size, same inode.
        var flipped = bytes
        flipped[123_456] ^= 0x01
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: scratch.at(key)))
        try handle.seek(toOffset: 123_456)
        try handle.write(contentsOf: Data([flipped[123_456]]))
        try handle.close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: scratch.at(key))), Data(flipped))
        for trust in [false, true] {
            do {
                _ = try await storage.proveContent(key, size: 300_000, sha256: digest, localFile: scratch.at(key), trustStored: trust)
                XCTFail("a flipped byte must not be proven (trustStored: \(trust))")
            } catch let error as StorageError {
                guard case .contentMismatch(let k, let expectedSize, let expectedSHA, let actualSize, let actualSHA, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(k, key)
                XCTAssertEqual(expectedSize, 300_000)
                XCTAssertEqual(expectedSHA, digest.hex)
                XCTAssertEqual(actualSize, 300_000)
                XCTAssertEqual(actualSHA, try SHA256Hasher.digest(flipped).hex)
                for part in [key, digest.hex, try SHA256Hasher.digest(flipped).hex] {
                    XCTAssertTrue(error.description.contains(part), error.description)
                }
            }
        }

        // Another size: a mismatch naming both sizes.
        do {
            _ = try await storage.proveContent(key, size: 300_001, sha256: digest, localFile: nil, trustStored: true)
            XCTFail("a different size must not be proven")
        } catch let error as StorageError {
            guard case .contentMismatch(_, 300_001, _, 300_000, _, _) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(error.description.contains("300001") && error.description.contains("300000"), error.description)
        }

        // Missing.
        do {
            _ = try await storage.proveContent("models/m/1.0.0/none.bin", size: 1, sha256: digest, localFile: nil, trustStored: false)
            XCTFail("a missing key must not be proven")
        } catch let error as StorageError {
            XCTAssertEqual(error, .missing("models/m/1.0.0/none.bin"))
            XCTAssertTrue(error.description.contains("models/m/1.0.0/none.bin"), error.description)
        }

        // A link to a file with exactly the expected bytes is still refused.
        let outside = try Scratch()
        try outside.write("good.bin", bytes)
        XCTAssertEqual(symlink(outside.at("good.bin"), scratch.at("models/m/1.0.0/link.bin")), 0)
        do {
            _ = try await storage.proveContent("models/m/1.0.0/link.bin", size: 300_000, sha256: digest, localFile: nil, trustStored: false)
            XCTFail("a symbolic link must not be followed")
        } catch let error as ModelCastError {
            XCTAssertTrue(error.message.contains(scratch.at("models/m/1.0.0/link.bin")), error.message)
        }
    }

    /// The protocol allows a store to be given the user's own file (not a temporary copy):
    /// the directory stores a checked copy of it and leaves the file alone, never traps.
    func testTheUsersOwnFileIsCopiedNotLinkedOrMoved() async throws {
        let scratch = try Scratch()
        let storage = DirectoryStorage(root: scratch.at("site"))
        let bytes = patternBytes(3000, seed: 9)
        let own = try scratch.write("own.bin", bytes)
        let metadata = ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: "application/octet-stream", size: 3000, sha256: try SHA256Hasher.digest(Data(bytes)))
        let staged = StagedObject(path: own, metadata: metadata, isTemporary: false)
        let first = try await storage.putIfAbsent("models/m/1.0.0/own.bin", staged: staged)
        XCTAssertEqual(first, .created)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: own)), Data(bytes), "the user's file is left as it was")
        var ownInfo = stat(), storedInfo = stat()
        XCTAssertEqual(stat(own, &ownInfo), 0)
        XCTAssertEqual(stat(scratch.at("site/models/m/1.0.0/own.bin"), &storedInfo), 0)
        XCTAssertNotEqual(ownInfo.st_ino, storedInfo.st_ino, "the store holds its own copy, not a link to the user's file")
        let second = try await storage.putIfAbsent("models/m/1.0.0/own.bin", staged: staged)
        XCTAssertEqual(second, .unchanged)
        // A file that no longer matches what was hashed is refused, and nothing is stored.
        try scratch.write("own.bin", patternBytes(3000, seed: 10))
        do {
            _ = try await storage.putIfAbsent("models/m/1.0.1/own.bin", staged: staged)
            XCTFail("a changed file was stored")
        } catch {
            XCTAssertTrue("\(error)".contains("changed"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.at("site/models/m/1.0.1/own.bin")))
    }

    /// A file a server serves under a changing name (manifest.json) gets a modification time
    /// in a later second than the one it replaces: nginx's ETag and Last-Modified (whole
    /// seconds and the size) would otherwise stay the same for a new manifest of the same
    /// size written within the same second, and a device asking with If-None-Match would be
    /// told 304 until the next publish (found by bench/delta-kept: three publishes in a
    /// second). The old file's time is set an hour ahead, so only the rule can pass.
    func testAReplacedFileIsStampedInALaterSecond() async throws {
        let scratch = try Scratch()
        let storage = DirectoryStorage(root: scratch.path)
        func metadata(_ data: Data) throws -> ObjectMetadata {
            try ObjectMetadata(of: data, cacheControl: CachePolicy.manifestDefault, contentType: "application/json")
        }
        let first = Data(#"{"v":"1.0.0"}"#.utf8), second = Data(#"{"v":"2.0.0"}"#.utf8)
        try await storage.replace("manifest.json", data: first, metadata: try metadata(first), ifMatch: nil)
        let ahead = Int(Date().timeIntervalSince1970) + 3600
        var times = [timespec(tv_sec: ahead, tv_nsec: 500_000_000), timespec(tv_sec: ahead, tv_nsec: 500_000_000)]
        XCTAssertEqual(utimensat(AT_FDCWD, scratch.at("manifest.json"), &times, 0), 0)
        try await storage.replace("manifest.json", data: second, metadata: try metadata(second), ifMatch: nil)
        var info = stat()
        XCTAssertEqual(stat(scratch.at("manifest.json"), &info), 0)
        XCTAssertEqual(info.st_mtim.tv_sec, ahead + 1, "the new file's second follows the old one's")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: scratch.at("manifest.json"))), second)

        // A file written in a later second than the one it replaces keeps its own time.
        XCTAssertEqual(unlink(scratch.at("manifest.json")), 0)
        try await storage.replace("manifest.json", data: first, metadata: try metadata(first), ifMatch: nil)
        var past = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, scratch.at("manifest.json"), &past, 0), 0)
        let before = Int(Date().timeIntervalSince1970)
        try await storage.replace("manifest.json", data: second, metadata: try metadata(second), ifMatch: nil)
        XCTAssertEqual(stat(scratch.at("manifest.json"), &info), 0)
        XCTAssertGreaterThanOrEqual(info.st_mtim.tv_sec, before)
        XCTAssertLessThanOrEqual(info.st_mtim.tv_sec, Int(Date().timeIntervalSince1970))
    }
}
