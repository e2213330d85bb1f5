import Foundation
import ModelCastCore
import XCTest

/// The semantics every `Storage` shares, checked the same way against each store
/// (`InMemoryStorage`, `DirectoryStorage`, `S3Storage` on moto), so the in-memory fake the
/// logic tests run on cannot drift from the stores it stands for.
package struct StorageContract {
    /// How the store's ETags relate to bytes.
    package enum ETags {
        /// S3: the quoted MD5 of the bytes of an object stored whole. Identical bytes have
        /// identical ETags, so a matching ETag never tells which writer stored an object.
        case contentMD5
        /// A directory: a new version for every write, whatever the bytes.
        case perWrite
    }

    /// The store under test: a writer, and a second writer on the same target.
    package let storage: any Storage
    package let otherWriter: any Storage
    package let etags: ETags
    /// What `proveContent` answers for an object stored with a checksum.
    package let proof: ContentProof
    /// True when a delete by the writer that created a key leaves it once another writer
    /// replaced it (an object store's conditional delete); a directory deletes it.
    package let deleteIsConditional: Bool
    /// Where the checks write their local files.
    package let scratch: Scratch

    package init(storage: any Storage, otherWriter: any Storage, etags: ETags, proof: ContentProof, deleteIsConditional: Bool, scratch: Scratch) {
        self.storage = storage
        self.otherWriter = otherWriter
        self.etags = etags
        self.proof = proof
        self.deleteIsConditional = deleteIsConditional
        self.scratch = scratch
    }

    static func metadata(_ data: Data, contentType: String = "application/octet-stream") throws -> ObjectMetadata {
        ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: contentType, size: Int64(data.count), sha256: try SHA256Hasher.digest(data))
    }

    /// Runs every check, each on keys of its own under `prefix/`.
    package func checkAll(file: StaticString = #filePath, line: UInt = #line) async throws {
        try await missingKeys(file: file, line: line)
        try await putIfAbsent(file: file, line: line)
        try await stagedFiles(file: file, line: line)
        try await reads(file: file, line: line)
        try await listing(file: file, line: line)
        try await conditionalReplace(file: file, line: line)
        try await etagsOfIdenticalBytes(file: file, line: line)
        try await proofs(file: file, line: line)
        try await deletes(file: file, line: line)
        try await invalidKeys(file: file, line: line)
    }

    /// A missing key: nil from head and get, `missing` from read and proveContent, and a delete that succeeds.
    package func missingKeys(file: StaticString = #filePath, line: UInt = #line) async throws {
        let key = "contract/missing/none.bin"
        let head = try await storage.head(key)
        XCTAssertNil(head, file: file, line: line)
        // S3Storage reads a 404's error body (about 350 bytes) under the limit of the read, so
        // here every limit and range leaves room for it: a smaller one throws S3ResponseTooLarge.
        let got = try await storage.getWithInfo(key, limit: 4096)
        XCTAssertNil(got?.data, file: file, line: line)
        await assertThrows(StorageError.missing(key), file: file, line: line) { _ = try await storage.read(key, range: 0...4095) }
        await assertThrows(StorageError.missing(key), file: file, line: line) {
            _ = try await storage.proveContent(key, size: 1, sha256: try SHA256Hasher.digest([1]), localFile: nil, trustStored: false)
        }
        try await storage.delete(key)
    }

    /// Put-if-absent: `.created`, then `.unchanged` for the same bytes, and a conflict
    /// naming the key, both sizes and the new SHA-256 for other bytes, which writes nothing.
    package func putIfAbsent(file: StaticString = #filePath, line: UInt = #line) async throws {
        let key = "contract/put/record.json"
        let data = Data("{\"sequence\": 1}\n".utf8), other = Data("{\"sequence\": 22}\n".utf8), same = Data("{\"sequence\": 2}\n".utf8)
        let first = try await storage.putIfAbsent(key, data: data, metadata: try Self.metadata(data, contentType: "application/json"))
        XCTAssertEqual(first, .created, file: file, line: line)
        let again = try await otherWriter.putIfAbsent(key, data: data, metadata: try Self.metadata(data, contentType: "application/json"))
        XCTAssertEqual(again, .unchanged, "the same bytes, from any writer", file: file, line: line)
        for (bytes, existingSHA256) in [(other, nil), (same, try SHA256Hasher.digest(data).hex)] {
            do {
                _ = try await otherWriter.putIfAbsent(key, data: bytes, metadata: try Self.metadata(bytes))
                XCTFail("other bytes under \(key) were accepted", file: file, line: line)
            } catch let error as StorageError {
                // Of another size, the stored bytes need not be read; of the same size, they are named.
                XCTAssertEqual(error, .conflict(key: key, existingSize: Int64(data.count), newSize: Int64(bytes.count),
                                                existingSHA256: existingSHA256, newSHA256: try SHA256Hasher.digest(bytes).hex), file: file, line: line)
            }
        }
        let stored = try await storage.get(key, limit: 1000)
        XCTAssertEqual(stored, data, "a conflict writes nothing", file: file, line: line)
        let info = try await storage.head(key)
        XCTAssertEqual(info?.size, Int64(data.count), file: file, line: line)
        XCTAssertNotNil(info?.etag, file: file, line: line)
        if let type = info?.contentType { XCTAssertEqual(type.split(separator: ";").first.map(String.init), "application/json", file: file, line: line) }
        if let cacheControl = info?.cacheControl { XCTAssertEqual(cacheControl, CachePolicy.immutable, file: file, line: line) }
    }

    /// A staged temporary file is consumed by the put; the user's own file stays where it is.
    package func stagedFiles(file: StaticString = #filePath, line: UInt = #line) async throws {
        for temporary in [true, false] {
            let bytes = patternBytes(3000, seed: temporary ? 41 : 42)
            let staging = temporary ? try storage.capabilities.staging.directory() : scratch.path
            let path = staging + "/contract-\(temporary ? "staged" : "own").bin"
            XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(bytes)), file: file, line: line)
            let staged = StagedObject(path: path, metadata: try Self.metadata(Data(bytes)), isTemporary: temporary)
            let key = "contract/staged/\(temporary ? "temporary" : "own").bin"
            let outcome = try await storage.putIfAbsent(key, staged: staged)
            XCTAssertEqual(outcome, .created, file: file, line: line)
            XCTAssertEqual(FileManager.default.fileExists(atPath: path), !temporary, "temporary: \(temporary)", file: file, line: line)
            let stored = try await storage.read(key, range: 0...Int64(bytes.count - 1))
            XCTAssertEqual(stored, Data(bytes), file: file, line: line)
            if !temporary { unlink(path) }
        }
    }

    /// get within and over its limit; ranged reads inside, across and past the end.
    package func reads(file: StaticString = #filePath, line: UInt = #line) async throws {
        let key = "contract/read/blob.bin"
        let bytes = Data(patternBytes(1000, seed: 5))
        _ = try await storage.putIfAbsent(key, data: bytes, metadata: try Self.metadata(bytes))
        let whole = try await storage.getWithInfo(key, limit: 1000)
        XCTAssertEqual(whole?.data, bytes, file: file, line: line)
        let etag = try await storage.head(key)?.etag
        XCTAssertEqual(whole?.info.etag, etag, "get names the version head names", file: file, line: line)
        await assertThrows(StorageError.tooLarge(key: key, size: 1000, limit: 999), file: file, line: line) { _ = try await storage.get(key, limit: 999) }
        let inside = try await storage.read(key, range: 10...19)
        XCTAssertEqual(inside, bytes.subdata(in: 10..<20), file: file, line: line)
        let across = try await storage.read(key, range: 990...1009)
        XCTAssertEqual(across, bytes.subdata(in: 990..<1000), file: file, line: line)
        // Past the end (S3's 416, whose error body needs the room of a 4 KiB range).
        let past = try await storage.read(key, range: 2000...6095)
        XCTAssertEqual(past, Data(), file: file, line: line)
    }

    /// Keys under a prefix, sorted; a prefix may end inside a name.
    package func listing(file: StaticString = #filePath, line: UInt = #line) async throws {
        let keys = ["contract/list/b/2.json", "contract/list/a/1.json", "contract/list/a/10.json", "contract/list/ab.json", "contract/listed.json"]
        for key in keys { _ = try await storage.putIfAbsent(key, data: Data(key.utf8), metadata: try Self.metadata(Data(key.utf8))) }
        let all = try await storage.list(prefix: "contract/list/")
        XCTAssertEqual(all, ["contract/list/a/1.json", "contract/list/a/10.json", "contract/list/ab.json", "contract/list/b/2.json"], file: file, line: line)
        let partial = try await storage.list(prefix: "contract/list/a")
        XCTAssertEqual(partial, ["contract/list/a/1.json", "contract/list/a/10.json", "contract/list/ab.json"], file: file, line: line)
        let folder = try await storage.list(prefix: "contract/list/a/")
        XCTAssertEqual(folder, ["contract/list/a/1.json", "contract/list/a/10.json"], file: file, line: line)
        let none = try await storage.list(prefix: "contract/nothing/")
        XCTAssertEqual(none, [], file: file, line: line)
    }

    /// replace: `ifMatch: ""` creates only where nothing is; a stale ETag is refused and
    /// writes nothing; the current ETag (from head or get) replaces; nil replaces whatever is there.
    package func conditionalReplace(file: StaticString = #filePath, line: UInt = #line) async throws {
        let key = "contract/replace/manifest.json"
        let one = Data("{\"v\": 1}".utf8), two = Data("{\"v\": 2}".utf8), three = Data("{\"v\": 3}".utf8)
        try await storage.replace(key, data: one, metadata: try Self.metadata(one), ifMatch: "")
        let first = try await storage.getWithInfo(key, limit: 100)
        let firstETag = try XCTUnwrap(first?.info.etag, file: file, line: line)
        await assertPreconditionFailed(key, file: file, line: line) { try await otherWriter.replace(key, data: two, metadata: try Self.metadata(two), ifMatch: "") }
        try await otherWriter.replace(key, data: two, metadata: try Self.metadata(two), ifMatch: firstETag)
        await assertPreconditionFailed(key, file: file, line: line) { try await storage.replace(key, data: three, metadata: try Self.metadata(three), ifMatch: firstETag) }
        let kept = try await storage.get(key, limit: 100)
        XCTAssertEqual(kept, two, "a stale writer writes nothing", file: file, line: line)
        let current = try await storage.head(key)?.etag
        XCTAssertNotEqual(current, firstETag, file: file, line: line)
        try await storage.replace(key, data: three, metadata: try Self.metadata(three), ifMatch: current)
        try await otherWriter.replace(key, data: one, metadata: try Self.metadata(one), ifMatch: nil)
        let last = try await storage.get(key, limit: 100)
        XCTAssertEqual(last, one, file: file, line: line)
    }

    /// Identical bytes under two keys, or written again under one: an object store gives
    /// them one ETag (it names bytes, not a writer); a directory a new one per write.
    package func etagsOfIdenticalBytes(file: StaticString = #filePath, line: UInt = #line) async throws {
        let bytes = Data("the same bytes".utf8)
        _ = try await storage.putIfAbsent("contract/etag/a.bin", data: bytes, metadata: try Self.metadata(bytes))
        _ = try await otherWriter.putIfAbsent("contract/etag/b.bin", data: bytes, metadata: try Self.metadata(bytes))
        let a = try await storage.head("contract/etag/a.bin")?.etag, b = try await storage.head("contract/etag/b.bin")?.etag
        try await otherWriter.replace("contract/etag/a.bin", data: bytes, metadata: try Self.metadata(bytes), ifMatch: a)
        let rewritten = try await storage.head("contract/etag/a.bin")?.etag
        switch etags {
        case .contentMD5:
            XCTAssertEqual(a, b, "identical bytes, identical ETags", file: file, line: line)
            XCTAssertEqual(rewritten, a, "written again by another writer: the same ETag", file: file, line: line)
            XCTAssertEqual(a?.replacingOccurrences(of: "\"", with: ""), "\(md5Hex(bytes))", "the MD5 of the bytes", file: file, line: line)
        case .perWrite:
            XCTAssertNotEqual(rewritten, a, "every write a new version", file: file, line: line)
        }
    }

    /// proveContent: the bytes named prove; another size is a mismatch naming no SHA-256
    /// (not read); the same size with other bytes a mismatch naming the stored SHA-256.
    package func proofs(file: StaticString = #filePath, line: UInt = #line) async throws {
        let key = "contract/prove/model.bin"
        let bytes = Data(patternBytes(2048, seed: 9))
        let digest = try SHA256Hasher.digest(bytes)
        _ = try await storage.putIfAbsent(key, data: bytes, metadata: try Self.metadata(bytes))
        let proven = try await storage.proveContent(key, size: 2048, sha256: digest, localFile: nil, trustStored: false)
        XCTAssertEqual(proven, proof, file: file, line: line)
        do {
            _ = try await storage.proveContent(key, size: 2049, sha256: digest, localFile: nil, trustStored: false)
            XCTFail("another size was proven", file: file, line: line)
        } catch StorageError.contentMismatch(let k, let expectedSize, let expectedSHA256, let actualSize, let actualSHA256, _) {
            XCTAssertEqual([k, expectedSHA256], [key, digest.hex], file: file, line: line)
            XCTAssertEqual([expectedSize, actualSize], [2049, 2048], file: file, line: line)
            XCTAssertNil(actualSHA256, file: file, line: line)
        }
        var other = bytes
        other[100] ^= 0xFF
        try await otherWriter.replace(key, data: other, metadata: try Self.metadata(other), ifMatch: nil)
        do {
            _ = try await storage.proveContent(key, size: 2048, sha256: digest, localFile: nil, trustStored: false)
            XCTFail("other bytes were proven", file: file, line: line)
        } catch StorageError.contentMismatch(let k, _, _, let actualSize, let actualSHA256, _) {
            XCTAssertEqual(k, key, file: file, line: line)
            XCTAssertEqual(actualSize, 2048, file: file, line: line)
            XCTAssertEqual(actualSHA256, try SHA256Hasher.digest(other).hex, file: file, line: line)
        }
    }

    /// A delete removes the key; the writer that created a key another writer then replaced
    /// leaves it on an object store (a run deletes only what it created), not on a directory.
    package func deletes(file: StaticString = #filePath, line: UInt = #line) async throws {
        let key = "contract/delete/own.bin"
        let mine = Data("mine".utf8), theirs = Data("theirs".utf8)
        _ = try await storage.putIfAbsent(key, data: mine, metadata: try Self.metadata(mine))
        try await storage.delete(key)
        let gone = try await storage.head(key)
        XCTAssertNil(gone, file: file, line: line)
        _ = try await storage.putIfAbsent(key, data: mine, metadata: try Self.metadata(mine))
        try await otherWriter.replace(key, data: theirs, metadata: try Self.metadata(theirs), ifMatch: nil)
        try await storage.delete(key)
        let left = try await storage.get(key, limit: 100)
        XCTAssertEqual(left, deleteIsConditional ? theirs : nil, file: file, line: line)
    }

    /// Keys that could leave the target root are refused by every operation tried.
    package func invalidKeys(file: StaticString = #filePath, line: UInt = #line) async throws {
        for key in ["", "/abs.json", "a/../b.json", "a//b.json", "./a.json"] {
            await assertThrows(StorageError.invalidKey(key), file: file, line: line) { _ = try await storage.head(key) }
            await assertThrows(StorageError.invalidKey(key), file: file, line: line) {
                _ = try await storage.putIfAbsent(key, data: Data([1]), metadata: try Self.metadata(Data([1])))
            }
        }
    }

    private func assertPreconditionFailed(_ key: String, file: StaticString, line: UInt, _ body: () async throws -> Void) async {
        do {
            try await body()
            XCTFail("a stale conditional replace of \(key) went through", file: file, line: line)
        } catch StorageError.preconditionFailed(let k, _, _) {
            XCTAssertEqual(k, key, file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }
}

/// Fails unless `body` throws exactly `expected`.
package func assertThrows<E: Error & Equatable>(_ expected: E, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void) async {
    do {
        try await body()
        XCTFail("expected \(expected), nothing was thrown", file: file, line: line)
    } catch let error as E {
        XCTAssertEqual(error, expected, file: file, line: line)
    } catch {
        XCTFail("expected \(expected), got \(error)", file: file, line: line)
    }
}
