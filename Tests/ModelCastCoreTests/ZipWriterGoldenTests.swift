import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

/// The SHA-256 and size of every zip `ZipWriter` makes from the cases in `ZipWriterCase`,
/// against Golden/zip-writer.txt. Those values are the zips modelcast has always published
/// (they were checked byte for byte against the libarchive writer it used before, the large
/// cases included): a change here changes published artifacts, and every device would
/// download an unchanged model again. The multi-gigabyte Zip64 cases run with
/// MODELCAST_ZIP64_TESTS=1 (minutes); the others always.
final class ZipWriterGoldenTests: XCTestCase {
    private static let goldenDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden").path

    /// `store/mlpackage 3159841 sha256:…`: one line per case.
    static func line(_ testCase: ZipWriterCase) throws -> String {
        let hasher = try SHA256Hasher()
        var size: Int64 = 0
        let writer = try ZipWriter(compression: testCase.compression, displayPath: testCase.label) { chunk in
            hasher.update(chunk)
            size += Int64(chunk.count)
        }
        try testCase.write(addDirectory: { try writer.addDirectory(name: $0) },
                           addFile: { try writer.addFile(name: $0, size: $1, executable: $2, read: $3, buffer: $4) },
                           finish: { try writer.finish() })
        return "\(testCase.label) \(size) \(hasher.finalize())"
    }

    func testZipsMatchTheGoldenDigests() throws {
        let large = ProcessInfo.processInfo.environment["MODELCAST_ZIP64_TESTS"] == "1"
        let goldenPath = Self.goldenDirectory + "/zip-writer.txt"
        let golden = (try? String(contentsOfFile: goldenPath, encoding: .utf8)) ?? ""
        let expected = Dictionary(golden.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            (String(line.split(separator: " ")[0]), String(line))
        }, uniquingKeysWith: { first, _ in first })
        var lines: [String] = []
        for testCase in ZipWriterCase.all {
            guard large || !testCase.large else {
                lines.append(try XCTUnwrap(expected[testCase.label], "no golden line for \(testCase.label)"))
                continue
            }
            lines.append(try Self.line(testCase))
        }
        let header = golden.split(separator: "\n").prefix { $0.hasPrefix("#") }.map { $0 + "\n" }.joined()
        try assertGolden(header + lines.joined(separator: "\n") + "\n", named: "zip-writer.txt", in: Self.goldenDirectory)
    }

    /// Reads of any size give the same zip (the odd-reads case is the same tree read in odd pieces).
    func testReadSizesDoNotChangeTheBytes() throws {
        for compression in ZipCompression.allCases {
            let cases = ZipWriterCase.all.filter { $0.compression == compression }
            let whole = try XCTUnwrap(cases.first { $0.name == "mlpackage" })
            let odd = try XCTUnwrap(cases.first { $0.name == "mlpackage-odd-reads" })
            XCTAssertEqual(try Self.line(whole).split(separator: " ").dropFirst(), try Self.line(odd).split(separator: " ").dropFirst(), compression.rawValue)
        }
    }
}
