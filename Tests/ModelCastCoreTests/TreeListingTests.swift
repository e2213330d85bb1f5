import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

/// `TreeListing` hashes a directory's files several at a time: every hash is the file's
/// own, whatever order the workers finish in, and the listing is sorted by path.
final class TreeListingTests: XCTestCase {
    func testEveryFileIsHashedAndListedByPath() throws {
        let scratch = try Scratch()
        var expected: [String: (Int64, String)] = [:]
        // Sizes from empty to several pipeline buffers, so workers finish out of order.
        for index in 0..<30 {
            let size = index == 0 ? 0 : (index * 37_000) % (3 << 20) + index
            let bytes = patternBytes(size, seed: UInt32(index + 1))
            let path = "m/\(index % 3 == 0 ? "a" : "b/c")/file-\(index).bin"
            try scratch.write(path, bytes)
            expected[String(path.dropFirst(2))] = (Int64(size), try SHA256Hasher.digest(Data(bytes)).hex)
        }
        let listing = try TreeListing.make(try ModelInspector.describe(scratch.at("m")))
        XCTAssertEqual(listing.name, "m")
        XCTAssertEqual(listing.format, .tree)
        XCTAssertEqual(listing.files.map(\.path), expected.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        for file in listing.files {
            XCTAssertEqual(file.size, expected[file.path]?.0, file.path)
            XCTAssertEqual(file.sha256.hex, expected[file.path]?.1, file.path)
            XCTAssertEqual(file.diskPath, scratch.at("m/" + file.path))
        }
        XCTAssertEqual(listing.size, expected.values.reduce(0) { $0 + $1.0 })
    }

    /// Files a store uploads in parts get their parts hashed in the listing's own read.
    func testPartsAreHashedForFilesUploadedInParts() throws {
        let scratch = try Scratch()
        let big = patternBytes(2_500_000, seed: 9)
        try scratch.write("m/big.bin", big)
        try scratch.write("m/small.bin", patternBytes(1000, seed: 8))
        let listing = try TreeListing.make(try ModelInspector.describe(scratch.at("m")), parts: { $0 > 1_000_000 ? PartPlan(size: 1_000_000) : nil })
        let files = Dictionary(uniqueKeysWithValues: listing.files.map { ($0.path, $0) })
        let expected = stride(from: 0, to: big.count, by: 1_000_000).map { CRC64NVME(value: referenceCRC64NVME(big[$0..<min($0 + 1_000_000, big.count)])) }
        XCTAssertEqual(files["big.bin"]?.parts, PartDigests(partSize: 1_000_000, crcs: expected))
        XCTAssertNil(files["small.bin"]?.parts)
    }

    func testAFileIsNotATree() throws {
        let scratch = try Scratch()
        let file = try scratch.write("one.bin", [1, 2, 3])
        XCTAssertThrowsError(try TreeListing.make(try ModelInspector.describe(file))) { error in
            XCTAssertTrue("\(error)".contains(file), "\(error)")
        }
    }
}
