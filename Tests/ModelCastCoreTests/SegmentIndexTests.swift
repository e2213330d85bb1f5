import Foundation
import XCTest
import ModelCastFormat
@testable import ModelCastCore
import ModelCastTestSupport

/// Issue 27: the segment index (`modelcast-segments-1`, `docs/segment-index.md`). Its
/// bytes survive any hostile value; the cuts are a pure function of the bytes, whatever
/// the read chunking; a GGUF's tensors keep their segments when its header grows.
final class SegmentIndexTests: XCTestCase {
    func sha(_ bytes: some Collection<UInt8>) throws -> [UInt8] { try SHA256Hasher.digest(Array(bytes)).bytes }

    func index(_ segments: [(UInt32, UInt8)], size: Int64? = nil) throws -> SegmentIndex {
        try SegmentIndex(scheme: SegmentScheme.name, artifactSize: size ?? segments.reduce(0) { $0 + Int64($1.0) },
                         artifactSHA256: [UInt8](repeating: 7, count: 32),
                         segments: segments.map { .init(length: $0.0, sha256: [UInt8](repeating: $0.1, count: 32)) })
    }

    func testTheIndexRoundTripsAndMatchesTheDocumentedLayout() throws {
        let original = try index([(1000, 1), (24, 2)])
        let bytes = original.encoded()
        XCTAssertEqual(Array(bytes.prefix(4)), Array("MCSX".utf8))
        XCTAssertEqual(bytes.count, 4 + 2 + 2 + SegmentScheme.name.utf8.count + 8 + 32 + 4 + 2 * 36)
        XCTAssertEqual(try SegmentIndex(decoding: bytes), original)
        XCTAssertEqual(original.offsets, [0, 1000])
        // The documented test vector (docs/segment-index.md) decodes to the values it lists.
        let vector = try String(contentsOfFile: repositoryRoot + "/docs/segment-index.test-vector.hex", encoding: .utf8)
        let decoded = try SegmentIndex(decoding: hexBytes(vector))
        XCTAssertEqual(decoded.scheme, "modelcast-segments-1")
        XCTAssertEqual(decoded.artifactSize, 1_048_579)
        XCTAssertEqual(decoded.segments.map(\.length), [1_048_576, 3])
        // The artifact it describes: byte i is i mod 251; one 1 MiB slice and the rest.
        let artifact = (0..<1_048_579).map { UInt8($0 % 251) }
        XCTAssertEqual(decoded.artifactSHA256, try sha(artifact))
        XCTAssertEqual(decoded.segments.map(\.sha256), [try sha(artifact.prefix(1 << 20)), try sha(artifact.suffix(3))])
        let scratch = try Scratch()
        let cut = try StreamDigester.segmentIndex(ofFileAt: try scratch.write("vector.bin", artifact),
                                                  regions: [.slices(start: 0, end: 1_048_579, slice: SegmentScheme.tensorSlice)])
        XCTAssertEqual(cut, decoded, "cutting the artifact gives the vector")
        XCTAssertEqual(decoded.encoded(), hexBytes(vector))
    }

    /// Every field refuses what the format does not allow, naming it; no cut of the bytes
    /// and no flipped byte crashes the reader.
    func testHostileIndexesAreRefusedNamingTheField() throws {
        let good = try index([(1000, 1), (24, 2)]).encoded()
        func mutated(_ change: (inout [UInt8]) -> Void) -> [UInt8] { var copy = good; change(&copy); return copy }
        let schemeEnd = 8 + SegmentScheme.name.utf8.count
        let countAt = schemeEnd + 40
        let cases: [([UInt8], String)] = [
            (mutated { $0[0] = 0x4e }, "no MCSX magic"),
            (mutated { $0[4] = 2 }, "format version 2"),
            (mutated { $0[6] = 0 }, "scheme length 0"),
            (mutated { $0[6] = 65 }, "scheme length 65"),
            (mutated { $0[8] = 0x2f }, "is not 1...64 ASCII"),
            (mutated { $0[8] = 0x0a }, "is not 1...64 ASCII"),
            (mutated { $0[schemeEnd + 7] = 0x80 }, "exceeds 2^63"),
            (mutated { $0[schemeEnd] &+= 1 }, "the segments cover 1024 bytes, but the artifact has 1025"),
            (mutated { $0[countAt] = 3 }, "3 segments need 108 bytes, but 72 follow"),
            (mutated { $0[countAt + 3] = 0xff }, "segments (at most"),
            (mutated { for i in 0..<4 { $0[countAt + 4 + i] = 0 } }, "segment 0 has length 0"),
            (mutated { $0[countAt + 4 + 3] = 0x01 }, "segment 0 has length 16778216"),
            (mutated { $0.append(0) }, "but 73 follow"),
            (Array(good.prefix(3)), "ends inside its magic"),
            ([], "ends inside its magic"),
        ]
        for (bytes, expected) in cases {
            XCTAssertThrowsError(try SegmentIndex(decoding: bytes), expected) { error in
                XCTAssertTrue("\(error)".contains(expected), "expected '\(expected)', got: \(error)")
            }
        }
        for length in 0..<good.count { XCTAssertThrowsError(try SegmentIndex(decoding: Array(good.prefix(length))), "cut at \(length)") }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let flipped = mutated { $0[Int.random(in: 0..<$0.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            _ = try? SegmentIndex(decoding: flipped)
        }
    }

    /// The cuts do not depend on how the bytes arrive; each segment's hash is its bytes';
    /// content-defined segments keep to their bounds; slices count from their region's start.
    func testCutsArePureFunctionsOfTheBytes() throws {
        let bytes = patternBytes(3_000_000, seed: 9)
        let regions: [SegmentRegion] = [
            .contentDefined(start: 0, end: 1_200_000, cut: .metadata),
            .slices(start: 1_200_000, end: 2_500_001, slice: SegmentScheme.tensorSlice),
            .contentDefined(start: 2_500_001, end: 3_000_000, cut: .bulk),
        ]
        let scratch = try Scratch()
        let path = try scratch.write("bytes.bin", bytes)
        let reference = try StreamDigester.segmentIndex(ofFileAt: path, regions: regions)
        XCTAssertEqual(reference.artifactSHA256, try sha(bytes))
        for chunk in [3, 4099, 65_536, 3_000_000] {
            let hasher = SegmentHasher(regions: regions)
            // Cutting only (what verify does beside its own segment hashing) cuts the same.
            let cutter = SegmentHasher(regions: regions, hashing: false)
            for start in stride(from: 0, to: bytes.count, by: chunk) {
                try bytes[start..<min(bytes.count, start + chunk)].withUnsafeBytes {
                    try hasher.update($0)
                    try cutter.update($0)
                }
            }
            XCTAssertEqual(try hasher.finish(), reference.segments, "chunk \(chunk)")
            XCTAssertEqual(try cutter.finishCuts(), reference.segments.map(\.length), "chunk \(chunk)")
        }
        // A stream that ends early, or runs past its regions, is refused either way.
        for hashing in [true, false] {
            let short = SegmentHasher(regions: regions, hashing: hashing)
            try bytes[0..<2_999_999].withUnsafeBytes { try short.update($0) }
            XCTAssertThrowsError(try short.finishCuts())
            let long = SegmentHasher(regions: regions, hashing: hashing)
            XCTAssertThrowsError(try (bytes + [0]).withUnsafeBytes { try long.update($0) })
        }
        var offset = 0
        var lengths: [Int] = []
        for segment in reference.segments {
            XCTAssertEqual(segment.sha256, try sha(bytes[offset..<offset + Int(segment.length)]))
            offset += Int(segment.length)
            lengths.append(Int(segment.length))
        }
        let metadataCut = ContentDefinedCut.metadata
        var position = 0
        for length in lengths {
            let end = position + length
            if end <= 1_200_000 {
                XCTAssertLessThanOrEqual(Int64(length), metadataCut.maximum)
                if end != 1_200_000 { XCTAssertGreaterThanOrEqual(Int64(length), metadataCut.minimum) }
            } else if position >= 1_200_000 && end <= 2_500_001 {
                XCTAssertTrue(length == 1 << 20 || end == 2_500_001, "slice \(position)..<\(end)")
                XCTAssertEqual((position - 1_200_000) % (1 << 20), 0)
            }
            position = end
        }
        XCTAssertTrue(lengths.count > 20, "\(lengths.count) segments")
    }

    /// The content-defined cuts are the definition's, byte for byte: a gear hash of every
    /// byte (reset at each cut), a cut where its low `maskBits` bits are zero once the
    /// segment holds `minimum` bytes, or at `maximum`. The hasher skips bytes that cannot
    /// matter and tests fewer conditions; this is the plain loop it must agree with, for
    /// the two cuts in use, cuts small enough to hit every edge, and any chunking.
    func testContentDefinedCutsMatchTheirDefinition() throws {
        let cuts = [ContentDefinedCut.metadata, .bulk, ContentDefinedCut(minimum: 64, maskBits: 6, maximum: 300),
                    ContentDefinedCut(minimum: 100, maskBits: 12, maximum: 130), ContentDefinedCut(minimum: 1000, maskBits: 8, maximum: 5000)]
        for (index, cut) in cuts.enumerated() {
            let bytes = patternBytes(cut.maximum > 1 << 20 ? 9_000_000 : 400_000, seed: UInt32(70 + index))
            let expected = cut.definedLengths(bytes)
            for chunk in [1, 63, 64, 65, 1000, 65_536, bytes.count] where chunk > 1 || cut.maximum < 1000 {
                let hasher = SegmentHasher(regions: [.contentDefined(start: 0, end: Int64(bytes.count), cut: cut)])
                for start in stride(from: 0, to: bytes.count, by: chunk) {
                    try bytes[start..<min(bytes.count, start + chunk)].withUnsafeBytes { try hasher.update($0) }
                }
                XCTAssertEqual(try hasher.finish().map { Int($0.length) }, expected, "cut \(index), chunk \(chunk)")
            }
        }
    }

    /// Whatever tensor starts a header claims (unsorted, repeated, negative, at or past the
    /// end, at 0), the regions tile the file from 0 to its size, in order, none empty
    /// once the hasher skips the empty ones.
    func testGGUFRegionsTileTheFileWhateverTheStarts() throws {
        let size: Int64 = 150
        for starts in [[5, 0, 5, 100, 200], [], [150], [-3, 149], [0], [1, 2, 3], [149, 148]] as [[Int64]] {
            let regions = SegmentPlan.gguf(tensorStarts: starts, size: size).filter { $0.end > $0.start }
            var position: Int64 = 0
            for region in regions {
                XCTAssertEqual(region.start, position, "\(starts): \(regions)")
                position = region.end
            }
            XCTAssertEqual(position, size, "\(starts): \(regions)")
        }
        // A file that is not GGUF, or whose header the reader refuses, is cut by content.
        let scratch = try Scratch()
        let notGGUF = try scratch.write("x.gguf", Array("GGUF".utf8) + [UInt8](repeating: 0xff, count: 60))
        XCTAssertEqual(SegmentPlan.regions(path: notGGUF, size: 64), [.contentDefined(start: 0, end: 64, cut: .bulk)])
    }

    /// GGUFs from llama.cpp's own writer: a new chat template grows the header and shifts
    /// every tensor, yet every tensor slice is reused and the changed segments are a few
    /// metadata segments; retrained attention changes those tensors' slices only.
    func testAGrownGGUFHeaderKeepsEveryTensorSegment() throws {
        let work = try Scratch()
        func model(_ name: String, _ flags: [String]) throws -> (path: String, index: SegmentIndex) {
            let path = work.at(name)
            let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_models.py", "gguf", path] + flags)
            XCTAssertEqual(made.status, 0, made.stderr)
            let size = Int64(try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
            return (path, try StreamDigester.segmentIndex(ofFileAt: path, regions: SegmentPlan.regions(path: path, size: size)))
        }
        func fetched(_ old: SegmentIndex, _ new: SegmentIndex) -> Int64 {
            let have = Set(old.segments.map(\.sha256))
            return new.segments.filter { !have.contains($0.sha256) }.reduce(0) { $0 + Int64($1.length) }
        }
        let base = try model("base.gguf", [])
        let template = try model("template.gguf", ["--template", "{% for m in messages %}<|start|>{{ m.role }}\n{{ m.content }}<|end|>{% endfor %}{{ '<|assistant|>' }}"])
        let attention = try model("attention.gguf", ["--retrain-attention"])
        XCTAssertNotEqual(base.index.artifactSize, template.index.artifactSize, "the header grew")
        let templateCost = fetched(base.index, template.index)
        XCTAssertGreaterThan(templateCost, 0)
        XCTAssertLessThanOrEqual(templateCost, 2 * ContentDefinedCut.metadata.maximum, "a new chat template fetches \(templateCost) of \(template.index.artifactSize) bytes")
        // Retrained attention: 4 of 9 tensors per layer, 256×256 F16 (128 KiB) each, 2 layers.
        let attentionCost = fetched(base.index, attention.index)
        XCTAssertEqual(attentionCost, 8 * 256 * 256 * 2, "exactly the retrained tensors' bytes")
        // Same bytes, same index; the whole file hashes as the index says.
        XCTAssertEqual(try model("again.gguf", []).index, base.index)

        // The plans a device makes: built from the old file's bytes and the fetched ranges,
        // each result is the new file; a re-quantization prefers one full download.
        for new in [template, attention] {
            let plan = DeltaPlan(new: new.index, have: DeltaPlan.offsets(of: base.index))
            XCTAssertEqual(plan.fetchedBytes, fetched(base.index, new.index))
            XCTAssertFalse(plan.prefersFullDownload)
            let old = try Data(contentsOf: URL(fileURLWithPath: base.path)), target = try Data(contentsOf: URL(fileURLWithPath: new.path))
            var built = Data()
            for step in plan.steps {
                switch step {
                case .copy(let source, let offset, let length):
                    XCTAssertEqual(Int64(built.count), offset)
                    built.append(old[Int(source)..<Int(source + length)])
                case .fetch(let offset, let length, _):
                    XCTAssertEqual(Int64(built.count), offset)
                    built.append(target[Int(offset)..<Int(offset + length)])
                }
            }
            XCTAssertEqual(try sha(built), new.index.artifactSHA256)
        }
        let requantized = try model("q8.gguf", ["--quantize", "Q8_0"])
        let requant = DeltaPlan(new: requantized.index, have: DeltaPlan.offsets(of: base.index))
        XCTAssertTrue(requant.prefersFullDownload, "\(requant.fetchedBytes) of \(requant.size)")
        // Retrained attention: one request per run of retrained tensors (4 adjacent per layer).
        XCTAssertEqual(DeltaPlan(new: attention.index, have: DeltaPlan.offsets(of: base.index)).requests, 2)
    }

    func hexBytes(_ text: String) -> [UInt8] {
        let digits = Array(text.unicodeScalars.filter { $0.properties.isASCIIHexDigit })
        return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(digits[$0]) + String(digits[$0 + 1]), radix: 16)! }
    }
}
