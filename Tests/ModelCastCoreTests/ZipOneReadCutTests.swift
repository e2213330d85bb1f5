import Foundation
import XCTest
import ModelCastFormat
@testable import ModelCastCore
import ModelCastTestSupport

/// Issue 49: a stored zip is laid out before it is written (`ZipLayoutImage`) and cut in
/// the read that writes it, not in a second read of the written zip; its index is the one
/// cutting the written zip gives, byte for byte.
extension ZipSegmentPlanTests {
    /// Trees with every kind of entry the plan looks at: weight files (under `weights/` and
    /// elsewhere), a file that starts like one but is not, files shorter than the 128 bytes
    /// the plan reads, empty files and directories, files cut with the metadata and the bulk
    /// parameters, thousands of entries, one file zipped on its own. Staged and dry-run, the
    /// one-read index is the written zip's; a deflated zip (cut in a second read) is too.
    func testTheOneReadCutIsTheWrittenZipsCut() throws {
        let scratch = try Scratch()
        let weights = weightFile([3_000_000, 1_536, 100, 0, 5])
        var notWeights = weightFile([700])
        notWeights[64] = 0  // no sentinel: cut by content
        try scratch.write("mixed/model/Data/com.apple.CoreML/weights/weight.bin", weights)
        try scratch.write("mixed/model/Data/com.apple.CoreML/model.mlmodel", patternBytes(3000, seed: 7))
        try scratch.write("mixed/model/Data/other.bin", weightFile([5000, 64], seed: 9))
        try scratch.write("mixed/model/Data/not-weights.bin", notWeights)
        try scratch.write("mixed/model/short-127", patternBytes(127, seed: 3))
        try scratch.write("mixed/model/short-128", Array(weights.prefix(128)))
        try scratch.write("mixed/model/zero-length", [])
        try scratch.mkdir("mixed/model/Data/empty")
        try scratch.write("mixed/model/bulk.bin", patternBytes(17 << 20, seed: 11))
        for index in 0..<3000 { try scratch.write("many/model/files/f\(index)", patternBytes(index % 300, seed: UInt32(index))) }
        try scratch.write("single/model.bin", weightFile([9000, 100]))

        let cases: [(String, String, Bool?)] = [
            ("mixed", scratch.at("mixed/model"), nil), ("many", scratch.at("many/model"), nil),
            ("single file zipped", scratch.at("single/model.bin"), true),
        ]
        for (label, model, zip) in cases {
            let description = try ModelInspector.describe(model)
            for compression in [ZipCompression.store, .deflate] {
                let staged = try Packer().stage(description, in: try scratch.mkdir("\(label)-\(compression)-staging"), zip: zip, compression: compression,
                                                segments: true)
                let written = try segmentIndex(staged.path)
                XCTAssertEqual(staged.sha256.bytes, written.artifactSHA256, "\(label), \(compression)")
                XCTAssertEqual(staged.segments?.map(\.length), written.segments.map(\.length), "\(label), \(compression): staged")
                XCTAssertTrue(staged.segments == written.segments, "\(label), \(compression): staged, the digests differ")
                let dryRun = try Packer().digest(description, zip: zip, compression: compression, segments: true)
                XCTAssertEqual(dryRun.sha256, staged.sha256, "\(label), \(compression): dry run")
                XCTAssertTrue(dryRun.segments == written.segments, "\(label), \(compression): dry run")
            }
        }
        // The mixed tree's weight files are cut per blob: the plan read their headers.
        let mixed = try Packer().stage(try ModelInspector.describe(scratch.at("mixed/model")), in: try scratch.mkdir("slices"), segments: true)
        let plan = SegmentPlan.regions(path: mixed.path, size: mixed.size)
        XCTAssertEqual(plan.filter { if case .slices = $0 { return true } else { return false } }.count, 4 + 2,
                       "weight.bin's 4 blobs with data, other.bin's 2 (the 128-byte copy's blob claims data past its end): \(plan)")
    }

    /// A file that changes between the plan's read and the zip's is refused, naming it: the
    /// bytes the plan read (a weight file's headers; the zip's last 64 KiB, where the end
    /// records are looked for) must be the bytes zipped. Bytes it did not read may change
    /// (the zip and its index then hold the new ones, consistently).
    func testAFileChangedAfterTheLayoutWasPlannedIsRefused() throws {
        let scratch = try Scratch()
        let weights = weightFile([200_000, 700])
        let path = try scratch.write("model/weights/weight.bin", weights)
        let entries = try XCTUnwrap(try ModelInspector.describe(scratch.at("model")).tree).entries
        let index = try XCTUnwrap(entries.firstIndex { $0.diskPath == path })
        let layout = try ZipLayoutImage(entries: entries, displayPath: "model")
        XCTAssertTrue(layout.regions().contains { if case .slices = $0 { return true } else { return false } })
        try weights.withUnsafeBytes { try layout.check(entry: index, at: 0, $0) }
        var changed = weights
        changed[64 + 8] &+= 1  // the first blob's size, in its header
        XCTAssertThrowsError(try changed.withUnsafeBytes { try layout.check(entry: index, at: 0, $0) }) { error in
            XCTAssertTrue("\(error)".contains(path) && "\(error)".contains("offset 72"), "\(error)")
        }
        // Checked in pieces, at their offsets in the file, as the zip reads it.
        XCTAssertThrowsError(try changed[72...].withUnsafeBytes { try layout.check(entry: index, at: 72, $0) })
        XCTAssertNoThrow(try changed[73...].withUnsafeBytes { try layout.check(entry: index, at: 73, $0) })
        var data = weights
        data[64 + 64 + 10] &+= 1  // blob data the plan never read
        XCTAssertNoThrow(try data.withUnsafeBytes { try layout.check(entry: index, at: 0, $0) })
    }
}
