import Foundation
import XCTest
@testable import ModelCastCore

/// `ZipWriter` against the libarchive writer it replaces, case by case (`ZipWriterCase`):
/// the same bytes, or the first offset where they differ. The multi-gigabyte cases run with
/// MODELCAST_ZIP64_TESTS=1.
final class ZipWriterLibArchiveComparisonTests: XCTestCase {
    private struct Output {
        let digest: SHA256Digest
        let size: Int64
        /// The bytes themselves, kept for cases under 64 MiB (to show where two differ).
        let bytes: [UInt8]?
    }

    private final class Collector {
        let hasher: SHA256Hasher
        var size: Int64 = 0
        var bytes: [UInt8]? = []
        init() throws { hasher = try SHA256Hasher() }
        func append(_ chunk: UnsafeRawBufferPointer) {
            hasher.update(chunk)
            size += Int64(chunk.count)
            if bytes != nil {
                if size > 64 << 20 { bytes = nil } else { bytes! += chunk }
            }
        }
    }

    private func viaZipWriter(_ testCase: ZipWriterCase) throws -> Output {
        let collector = try Collector()
        let writer = try ZipWriter(compression: testCase.compression, displayPath: testCase.label, sink: collector.append)
        try testCase.write(addDirectory: { try writer.addDirectory(name: $0) },
                           addFile: { try writer.addFile(name: $0, size: $1, executable: $2, read: $3, buffer: $4) },
                           finish: { try writer.finish() })
        return Output(digest: collector.hasher.finalize(), size: collector.size, bytes: collector.bytes)
    }

    private func viaLibArchive(_ testCase: ZipWriterCase) throws -> Output {
        let collector = try Collector()
        let writer = try LibArchiveZipWriter(compression: testCase.compression, displayPath: testCase.label, sink: collector.append)
        try testCase.write(addDirectory: { try writer.addDirectory(name: $0) },
                           addFile: { try writer.addFile(name: $0, size: $1, executable: $2, read: $3, buffer: $4) },
                           finish: { try writer.finish() })
        return Output(digest: collector.hasher.finalize(), size: collector.size, bytes: collector.bytes)
    }

    func testEveryCaseIsByteIdenticalToLibArchive() throws {
        let large = ProcessInfo.processInfo.environment["MODELCAST_ZIP64_TESTS"] == "1"
        var compared: [String] = []
        for testCase in ZipWriterCase.all where large || !testCase.large {
            let start = Date()
            let old = try viaLibArchive(testCase)
            let new = try viaZipWriter(testCase)
            if let a = old.bytes, let b = new.bytes, a != b {
                let at = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
                XCTFail("\(testCase.label): first difference at byte \(at) (libarchive \(a.count) bytes, ZipWriter \(b.count)): libarchive \(a[at..<min(a.count, at + 16)].map { String($0, radix: 16) }), ZipWriter \(b[at..<min(b.count, at + 16)].map { String($0, radix: 16) })")
                continue
            }
            XCTAssertEqual(new.size, old.size, testCase.label)
            XCTAssertEqual(new.digest, old.digest, testCase.label)
            compared.append("\(testCase.label) \(old.size) bytes \(old.digest) (\(String(format: "%.1f", Date().timeIntervalSince(start))) s)")
        }
        print("compared with libarchive:\n" + compared.joined(separator: "\n"))
    }
}
