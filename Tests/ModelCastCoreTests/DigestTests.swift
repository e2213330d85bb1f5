import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

final class DigestTests: XCTestCase {
    // FIPS 180-2 / NIST example vectors.
    func testKnownVectors() throws {
        XCTAssertEqual(try SHA256Hasher.digest([UInt8]()).hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(try SHA256Hasher.digest(Array("abc".utf8)).hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(
            try SHA256Hasher.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hex,
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(
            try SHA256Hasher.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)).hex,
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testBase64AndHexForms() throws {
        let empty = try SHA256Hasher.digest([UInt8]())
        XCTAssertEqual(empty.base64, "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
        XCTAssertEqual(SHA256Digest(hex: empty.hex), empty)
        XCTAssertEqual(SHA256Digest(hex: empty.hex.uppercased()), empty)
        XCTAssertNil(SHA256Digest(hex: "abc"))
        XCTAssertNil(SHA256Digest(hex: String(repeating: "g", count: 64)))
        XCTAssertNil(SHA256Digest(bytes: [1, 2, 3]))
    }

    func testIncrementalUpdatesMatchOneShot() throws {
        let data = patternBytes(100_003)
        let hasher = try SHA256Hasher()
        var index = 0
        var step = 1
        while index < data.count {
            let end = min(data.count, index + step)
            hasher.update(data[index..<end])
            index = end
            step = step * 3 + 1
        }
        XCTAssertEqual(hasher.finalize(), try SHA256Hasher.digest(data))
    }

    /// Sizes around the pipeline's buffer boundaries, hashed from a file, must match a one-shot digest.
    func testFileDigestAcrossBufferBoundaries() throws {
        let scratch = try Scratch()
        let chunk = ChunkPipeline.defaultBufferSize
        for size in [0, 1, chunk - 1, chunk, chunk + 1, 2 * chunk + 7] {
            let bytes = patternBytes(size, seed: UInt32(size % 97))
            let path = try scratch.write("f\(size)", bytes)
            let result = try StreamDigester.digest(ofFileAt: path)
            XCTAssertEqual(result.size, Int64(size))
            XCTAssertEqual(result.sha256, try SHA256Hasher.digest(bytes), "size \(size)")
        }
    }

    func testCopyWhileHashingWritesIdenticalBytes() throws {
        let scratch = try Scratch()
        let bytes = patternBytes(3 * ChunkPipeline.defaultBufferSize + 123)
        let source = try scratch.write("src.bin", bytes)
        let fd = open(scratch.at("copy.bin"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        let destination = FileDescriptor(fd: fd, path: scratch.at("copy.bin"))
        let result = try StreamDigester.digestFile(at: source, copyingTo: destination)
        try destination.close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: scratch.at("copy.bin"))), Data(bytes))
        XCTAssertEqual(result.sha256, try SHA256Hasher.digest(bytes))
    }

    func testSeveralFilesHashConcurrentlyInOrder() throws {
        let scratch = try Scratch()
        var paths: [String] = []
        var expected: [SHA256Digest] = []
        for i in 0..<5 {
            let bytes = patternBytes(10_000 * (i + 1), seed: UInt32(i))
            paths.append(try scratch.write("m\(i)", bytes))
            expected.append(try SHA256Hasher.digest(bytes))
        }
        XCTAssertEqual(try StreamDigester.digest(ofFilesAt: paths).map(\.sha256), expected)
    }

    func testConsumerErrorStopsTheProducer() throws {
        struct Boom: Error {}
        let pipeline = ChunkPipeline(bufferSize: 16, bufferCount: 2) { _ in throw Boom() }
        var thrown: Error?
        do {
            let block = [UInt8](repeating: 1, count: 16)
            for _ in 0..<100 { try block.withUnsafeBytes { try pipeline.append($0) } }
            try pipeline.finish()
        } catch { thrown = error }
        pipeline.close()
        XCTAssertTrue(thrown is Boom)
    }

    /// The parts' checksums come out of the same read as the whole file's SHA-256 (what an
    /// S3 multipart upload then sends without reading the file again): each is the
    /// SHA-256 (or, by default, the CRC-64/NVME) of that part alone, whatever the buffer
    /// and part boundaries; the composite is the SHA-256 of the digests concatenated, and
    /// the CRC parts combine into the whole file's CRC, as S3 computes them.
    func testPartDigestsComeFromTheSameRead() throws {
        let scratch = try Scratch()
        let chunk = ChunkPipeline.defaultBufferSize
        for (size, partSize) in [(0, 5), (1, 5), (5, 5), (11, 5), (2 * chunk + 7, chunk / 3), (3 * chunk, chunk), (3 * chunk + 1, 5 << 20)] {
            let bytes = patternBytes(size, seed: UInt32(size % 89))
            let path = try scratch.write("f\(size)-\(partSize)", bytes)
            let result = try StreamDigester.digestFile(at: path, parts: PartPlan(size: Int64(partSize), algorithm: .sha256))
            XCTAssertEqual(result.sha256, try SHA256Hasher.digest(bytes))
            let parts = try XCTUnwrap(result.parts)
            let expected = try stride(from: 0, to: size, by: partSize).map { try SHA256Hasher.digest(bytes[$0..<min($0 + partSize, size)]) }
            XCTAssertEqual(parts, PartDigests(partSize: Int64(partSize), digests: expected), "size \(size), part size \(partSize)")
            XCTAssertTrue(parts.fit(size: Int64(size), partSize: Int64(partSize), algorithm: .sha256))
            XCTAssertFalse(parts.fit(size: Int64(size), partSize: Int64(partSize), algorithm: .crc64nvme))
            XCTAssertFalse(parts.fit(size: Int64(size + partSize), partSize: Int64(partSize), algorithm: .sha256))
            XCTAssertEqual(try parts.composite(), try SHA256Hasher.digest(expected.flatMap(\.bytes)))
            XCTAssertNil(parts.fullObjectCRC(size: Int64(size)))
            // The default: CRC-64/NVME parts (S3's CRC64NVME), whose combination is the whole file's.
            let crcResult = try StreamDigester.digestFile(at: path, parts: PartPlan(size: Int64(partSize)))
            XCTAssertEqual(crcResult.sha256, result.sha256)
            let crcs = stride(from: 0, to: size, by: partSize).map { CRC64NVME(value: referenceCRC64NVME(bytes[$0..<min($0 + partSize, size)])) }
            let crcParts = try XCTUnwrap(crcResult.parts)
            XCTAssertEqual(crcParts, PartDigests(partSize: Int64(partSize), crcs: crcs), "size \(size), part size \(partSize)")
            XCTAssertEqual(crcParts.fullObjectCRC(size: Int64(size))?.value, referenceCRC64NVME(bytes))
        }
        // A zip made for staging hashes its parts in the same pass.
        let model = repositoryRoot + "/examples/models/TinyClassifier.mlpackage"
        let staged = try Packer().stage(ModelInspector.describe(model), in: try scratch.mkdir("staging"), parts: PartPlan(size: 5000))
        let zip = try Data(contentsOf: URL(fileURLWithPath: staged.path))
        let zipParts = stride(from: 0, to: zip.count, by: 5000).map { CRC64NVME(value: referenceCRC64NVME(Array(zip[$0..<min($0 + 5000, zip.count)]))) }
        XCTAssertGreaterThan(zipParts.count, 2)
        XCTAssertEqual(staged.parts, PartDigests(partSize: 5000, crcs: zipParts))
        XCTAssertNil(try Packer().digest(ModelInspector.describe(model)).parts, "no part size, no parts")
    }

    func testMD5OfAByteRange() throws {
        let scratch = try Scratch()
        let path = try scratch.write("f.bin", Array("xxThe quick brown fox jumps over the lazy dogyy".utf8))
        XCTAssertEqual(try MD5Hasher.hex(ofFile: path, offset: 2, length: 43), "9e107d9d372bb6826bd81d3542a419d6")
    }

    func testMissingFileNamesThePath() {
        XCTAssertThrowsError(try StreamDigester.digest(ofFileAt: "/nonexistent/model.gguf")) { error in
            XCTAssertEqual(error as? ModelCastError, .notFound(path: "/nonexistent/model.gguf"))
        }
    }
}
