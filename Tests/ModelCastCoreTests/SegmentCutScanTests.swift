import Foundation
import XCTest
import ModelCastFormat
@testable import ModelCastCore
import ModelCastTestSupport

/// Issue 49: the content-defined cut scans 64 positions at a time (AVX-512 VBMI) and the
/// segment hasher runs beside the whole-file hasher in publish's one read. Both must give
/// the index the definition gives, byte for byte.
final class SegmentCutScanTests: XCTestCase {
    /// The definition's hash after every byte of `bytes`, never reset: from byte 63 on it is
    /// the hash of the 64 bytes ending there, which is what a segment's hash is there.
    private func rollingHashes(_ bytes: [UInt8]) -> [UInt64] {
        var hash: UInt64 = 0
        return bytes.map { byte in
            hash = (hash << 1) &+ ContentDefinedCut.gear[Int(byte)]
            return hash
        }
    }

    /// The vector scan, the byte-at-a-time scan and the definition find the same first
    /// candidate, for masks narrower and wider than the 16 bits the vector path tests
    /// first (wider ones confirm each 16-bit hit), from any start and to any end: ranges
    /// shorter than a 64-byte block, ends inside a block, hits on block edges.
    func testTheVectorScanFindsWhatTheDefinitionFinds() throws {
        print("vector scan available: \(ContentDefinedCut.vectorScanAvailable)")
        for (index, maskBits) in [0, 1, 6, 8, 12, 15, 16, 17, 18, 20, 24].enumerated() {
            let cut = ContentDefinedCut(minimum: 64, maskBits: maskBits, maximum: 1 << 30)
            let bytes = patternBytes(maskBits >= 15 ? 1_500_000 : 200_000, seed: UInt32(300 + index))
            let hashes = rollingHashes(bytes)
            let candidates = hashes.indices.filter { $0 >= 63 && hashes[$0] & cut.mask == 0 }
            func definition(_ from: Int, _ to: Int) -> Int? {
                var (low, high) = (0, candidates.count)
                while low < high {
                    let middle = (low + high) / 2
                    if candidates[middle] < from { low = middle + 1 } else { high = middle }
                }
                return low < candidates.count && candidates[low] < to ? candidates[low] : nil
            }
            var starts = [64, 65, 127, 128, 129, 191]
            var from = 64
            var checked = 0
            try bytes.withUnsafeBytes { raw in
                while from < bytes.count, checked < 400 {
                    let expected = definition(from, bytes.count)
                    XCTAssertEqual(cut.firstCandidate(in: raw, from: from, to: bytes.count, vector: true), expected, "\(maskBits) bits from \(from)")
                    XCTAssertEqual(cut.firstCandidate(in: raw, from: from, to: bytes.count, vector: false), expected, "\(maskBits) bits from \(from)")
                    // Ends short of the hit, at it, and just past it; ranges of every length up to two blocks.
                    let hit = expected ?? bytes.count - 1
                    for to in [hit, hit + 1, min(bytes.count, hit + 2), min(bytes.count, from + checked % 130)] where to >= from {
                        XCTAssertEqual(cut.firstCandidate(in: raw, from: from, to: to), definition(from, to), "\(maskBits) bits \(from)..<\(to)")
                    }
                    checked += 1
                    from = starts.isEmpty ? (expected ?? bytes.count) + 1 + checked % 67 : starts.removeFirst()
                }
            }
            XCTAssertGreaterThan(checked, maskBits >= 18 ? 6 : 10, "\(maskBits) bits")
        }
    }

    /// The segments the definition gives (a plain loop over each region, the hash reset at
    /// every cut) and each one's SHA-256: what any reading of the bytes must reproduce.
    private func definedSegments(_ bytes: [UInt8], _ regions: [SegmentRegion]) throws -> [SegmentIndex.Segment] {
        var lengths: [Int] = []
        for region in regions where region.end > region.start {
            switch region {
            case .slices(let start, let end, let slice):
                var position = start
                while position < end {
                    lengths.append(Int(min(slice, end - position)))
                    position += slice
                }
            case .contentDefined(let start, let end, let cut):
                lengths += cut.definedLengths(bytes[Int(start)..<Int(end)])
            }
        }
        var offset = 0
        return try lengths.map { length in
            defer { offset += length }
            return SegmentIndex.Segment(length: UInt32(length), sha256: try SHA256Hasher.digest(bytes[offset..<offset + length]).bytes)
        }
    }

    /// Publish's read (the file through the chunk pipeline, the segment hasher on its own
    /// thread beside the whole-file hasher) gives the index the definition gives, and so
    /// does the segment hasher fed on the calling thread in odd chunks: for an empty file,
    /// one byte, sizes at the scan's window and block, at a bulk segment's minimum and
    /// maximum, at and around the 8 MiB where publish starts indexing and the pipeline's
    /// buffer size, with bulk cuts only and with metadata, slices and bulk mixed.
    func testThePipelinedCutIsTheSequentialCut() throws {
        let scratch = try Scratch()
        let bulk = ContentDefinedCut.bulk
        let content = patternBytes(9_000_123, seed: 49)
        let sizes = [0, 1, 63, 64, 65, 127, 128, Int(bulk.minimum) - 1, Int(bulk.minimum), Int(bulk.maximum), Int(bulk.maximum) + 1,
                     ChunkPipeline.defaultBufferSize + 1, (8 << 20) - 1, 8 << 20, (8 << 20) + 1, content.count]
        for size in sizes {
            let bytes = Array(content.prefix(size))
            let path = try scratch.write("artifact-\(size).bin", bytes)
            let end = Int64(size)
            var plans: [[SegmentRegion]] = [[.contentDefined(start: 0, end: end, cut: .bulk)]]
            if size > 200_000 {
                let a = end / 5, b = end / 2
                plans.append([.contentDefined(start: 0, end: a, cut: .metadata), .slices(start: a, end: b, slice: SegmentScheme.tensorSlice),
                              .contentDefined(start: b, end: end, cut: .bulk)])
            }
            for (plan, regions) in plans.enumerated() {
                let expected = try definedSegments(bytes, regions)
                let pipelined = try StreamDigester.segmentIndex(ofFileAt: path, regions: regions)
                // Lengths first: a wrong cut then reads as a short list, not pages of digests.
                XCTAssertEqual(pipelined.segments.map(\.length), expected.map(\.length), "size \(size), plan \(plan)")
                XCTAssertTrue(pipelined.segments == expected, "size \(size), plan \(plan): the segments' digests differ")
                XCTAssertEqual(pipelined.artifactSize, end)
                XCTAssertEqual(pipelined.artifactSHA256, try SHA256Hasher.digest(bytes).bytes)
                let sequential = SegmentHasher(regions: regions)
                for start in stride(from: 0, to: size, by: 1_000_003) {
                    try bytes[start..<min(size, start + 1_000_003)].withUnsafeBytes { try sequential.update($0) }
                }
                let fed = try sequential.finish()
                XCTAssertEqual(fed.map(\.length), expected.map(\.length), "size \(size), plan \(plan), sequential")
                XCTAssertTrue(fed == expected, "size \(size), plan \(plan), sequential: the segments' digests differ")
            }
        }
    }
}
