import Foundation
import XCTest
import ModelCastFormat
import ModelCastCore
import ModelCastTestSupport

/// Issue 27: a stored-zip Core ML package is cut at its entries, its `weight.bin` per
/// weight blob (`docs/segment-index.md`), so a retrained head costs a device the head's
/// bytes; whatever the bytes, the regions tile the file from 0 to its size, in order.
final class ZipSegmentPlanTests: XCTestCase {
    // MARK: Helpers

    /// The regions must tile [0, size) in order, none empty, every slice positive.
    func assertTiles(_ regions: [SegmentRegion], size: Int64, _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        var position: Int64 = 0
        for region in regions {
            XCTAssertEqual(region.start, position, "\(label): a gap or overlap at \(position) in \(regions.prefix(40))", file: file, line: line)
            XCTAssertGreaterThan(region.end, region.start, "\(label): an empty region \(region)", file: file, line: line)
            if case .slices(_, _, let slice) = region { XCTAssertEqual(slice, SegmentScheme.tensorSlice, file: file, line: line) }
            position = region.end
        }
        XCTAssertEqual(position, size, "\(label): the regions end at \(position), the file at \(size)", file: file, line: line)
    }

    func regions(_ bytes: [UInt8]) -> [SegmentRegion] {
        SegmentPlan.regions(of: SegmentPlan.Bytes(bytes))
    }

    func size(_ path: String) throws -> Int64 {
        Int64(try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
    }

    func contents(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// A MIL weight file (the layout coremltools writes): a 64-byte storage header (count,
    /// version 2), then per blob a 64-byte metadata header (0xDEADBEEF, dtype, size, offset)
    /// and the data at the next multiple of 64; no padding after the last blob.
    func weightFile(_ sizes: [Int], seed: UInt32 = 1) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 64)
        put(UInt64(sizes.count), 4, &bytes, at: 0)
        put(2, 4, &bytes, at: 4)
        for (index, size) in sizes.enumerated() {
            while bytes.count % 64 != 0 { bytes.append(0) }
            var header = [UInt8](repeating: 0, count: 64)
            put(0xDEAD_BEEF, 4, &header, at: 0)
            put(1, 4, &header, at: 4)
            put(UInt64(size), 8, &header, at: 8)
            put(UInt64(bytes.count + 64), 8, &header, at: 16)
            bytes += header + patternBytes(size, seed: seed + UInt32(index))
        }
        return bytes
    }

    func put(_ value: UInt64, _ width: Int, _ bytes: inout [UInt8], at offset: Int) {
        for index in 0..<width { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }

    func u16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
    func u32(_ bytes: [UInt8], _ at: Int) -> Int { u16(bytes, at) | u16(bytes, at + 2) << 16 }

    /// Where each central directory header starts (signature PK\1\2, walked by lengths).
    func centralHeaders(_ zip: [UInt8]) -> [Int] {
        let end = zip.count - 22
        var position = u32(zip, end + 16)
        var found: [Int] = []
        while position + 46 <= end, u32(zip, position) == 0x0201_4b50 {
            found.append(position)
            position += 46 + u16(zip, position + 28) + u16(zip, position + 30) + u16(zip, position + 32)
        }
        return found
    }

    /// The segments a device holding `old` fetches for `new`: those whose hash it lacks.
    func fetched(_ old: SegmentIndex, _ new: SegmentIndex) -> Int64 {
        let have = Set(old.segments.map(\.sha256))
        return new.segments.filter { !have.contains($0.sha256) }.reduce(0) { $0 + Int64($1.length) }
    }

    /// Packs `tree` (a directory) into a stored zip with modelcast's own writer.
    func pack(_ tree: String, to output: String) throws -> String {
        try Packer().pack(tree, options: PackOptions(output: output)).path
    }

    func segmentIndex(_ path: String) throws -> SegmentIndex {
        try StreamDigester.segmentIndex(ofFileAt: path, regions: SegmentPlan.regions(path: path, size: try size(path)))
    }

    // MARK: Real Core ML packages

    /// Makes `Model.mlpackage` with bench/delta_coreml.py (coremltools' MIL builder).
    func coreML(_ scratch: Scratch, _ name: String, _ flags: [String] = []) throws -> String {
        let directory = try scratch.mkdir(name)
        let package = directory + "/Model.mlpackage"
        let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_coreml.py", package] + flags)
        XCTAssertEqual(made.status, 0, made.stderr)
        return package
    }

    /// (a) Packages coremltools writes, zipped by modelcast: a region per entry, the
    /// weight file's blobs as slices that start at each blob's metadata header, and the
    /// regions tile the zip; publishing (stage and dry-run digest) cuts it the same way.
    func testRealCoreMLPackagesAreCutAtTheirEntriesAndBlobs() throws {
        let scratch = try Scratch()
        for (label, flags) in [("default", []), ("no-hidden-layers", ["--layers", "0", "--classes", "10"]), ("wide", ["--layers", "2", "--width", "1100"])] {
            let package = try coreML(scratch, label, flags)
            let zip = try pack(package, to: scratch.at(label + ".zip"))
            let size = try size(zip)
            let regions = SegmentPlan.regions(path: zip, size: size)
            assertTiles(regions, size: size, label)
            // The blobs: one slices region per blob's data, right after its 0xDEADBEEF header,
            // which is a 64-byte region of its own.
            let bytes = try contents(zip)
            let weights = try contents(package + "/Data/com.apple.CoreML/weights/weight.bin")
            let blobCount = u32(weights, 0)
            let blobs = regions.filter { if case .slices = $0 { return true } else { return false } }
            XCTAssertEqual(blobs.count, blobCount, "\(label): \(regions)")
            for blob in blobs {
                XCTAssertEqual(Array(bytes[Int(blob.start) - 64..<Int(blob.start) - 60]), [0xef, 0xbe, 0xad, 0xde], "\(label): \(blob)")
                let header = try XCTUnwrap(regions.firstIndex(of: blob)).advanced(by: -1)
                XCTAssertEqual(regions[header], .contentDefined(start: blob.start - 64, end: blob.start, cut: .metadata))
            }
            // The storage header ends the region before the first blob's header.
            let first = try XCTUnwrap(blobs.first)
            XCTAssertEqual(Array(bytes[Int(first.start) - 128..<Int(first.start) - 64]), Array(weights.prefix(64)))
            // The last region is the central directory and the end records.
            let directory = Int64(u32(bytes, bytes.count - 22 + 16))
            XCTAssertEqual(regions.last?.start, directory, label)
                XCTAssertGreaterThanOrEqual(regions.count, 2 * blobCount + 4, "header, the other entries, the directory: \(regions)")

            // Publishing cuts the zip as the plan says, staged or only hashed (dry run).
            let description = try ModelInspector.describe(package)
            let index = try segmentIndex(zip)
            let staged = try Packer().stage(description, in: try scratch.mkdir(label + "-staging"), segments: true)
            XCTAssertEqual(staged.sha256.bytes, index.artifactSHA256, "\(label): the same zip")
            XCTAssertEqual(staged.segments, index.segments, "\(label): staged")
            XCTAssertEqual(try Packer().digest(description, segments: true).segments, index.segments, "\(label): dry run")
        }
    }

    /// (b) A retrained classifier head (same shapes): every segment of the other blobs is
    /// reused; a device fetches the head's blobs and a little metadata (the entries coremltools
    /// rewrites, the data descriptor's CRC, the central directory).
    func testARetrainedHeadReusesEveryOtherBlobsSegments() throws {
        let scratch = try Scratch()
        let (width, classes) = (768, 1000)
        let flags = ["--layers", "4", "--width", "\(width)", "--classes", "\(classes)"]
        let base = try pack(try coreML(scratch, "base", flags), to: scratch.at("base.zip"))
        let head = try pack(try coreML(scratch, "head", flags + ["--retrain-head"]), to: scratch.at("head.zip"))
        let baseIndex = try segmentIndex(base), headIndex = try segmentIndex(head)
        let headRegions = SegmentPlan.regions(path: head, size: headIndex.artifactSize)
        assertTiles(headRegions, size: headIndex.artifactSize, "head")

        // The head's blobs' data: weight (classes × width FP16) and bias (classes FP16), each
        // padded to a multiple of 64 unless it ends the file. (Their headers are the same.)
        let headBlobSizes = [Int64(classes * width * 2), Int64(classes * 2)]
        let blobs = headRegions.filter { if case .slices = $0 { return true } else { return false } }
        let headBlobs = blobs.filter { blob in headBlobSizes.contains { (0..<64).contains(blob.end - blob.start - $0) } }
        XCTAssertEqual(headBlobs.count, 2, "\(blobs)")
        let headBlobBytes = headBlobs.reduce(0) { $0 + $1.end - $1.start }
        let have = Set(baseIndex.segments.map(\.sha256))
        var offset: Int64 = 0
        var otherBlobSegments = 0
        for segment in headIndex.segments {
            let end = offset + Int64(segment.length)
            if blobs.contains(where: { $0.start <= offset && end <= $0.end }), !headBlobs.contains(where: { $0.start <= offset && end <= $0.end }) {
                otherBlobSegments += 1
                XCTAssertTrue(have.contains(segment.sha256), "the segment at \(offset) (\(segment.length) bytes) of an unchanged blob is reused")
            }
            offset = end
        }
        XCTAssertGreaterThan(otherBlobSegments, 8)

        // Changed bytes: the head's blobs, plus small metadata outside the weight file's blobs.
        let changed = fetched(baseIndex, headIndex)
        let outsideBlobs = headIndex.artifactSize - blobs.reduce(0) { $0 + $1.end - $1.start }
        XCTAssertGreaterThanOrEqual(changed, headBlobBytes)
        XCTAssertLessThanOrEqual(changed, headBlobBytes + outsideBlobs, "changed \(changed), head blobs \(headBlobBytes), outside the blobs \(outsideBlobs)")
        XCTAssertLessThanOrEqual(changed - headBlobBytes, 64 << 10, "the metadata a device fetches besides the head")
        // What the previous rule (the whole zip cut by content) cost, for comparison.
        let bulk: [SegmentRegion] = [.contentDefined(start: 0, end: headIndex.artifactSize, cut: .bulk)]
        let bulkChanged = fetched(try StreamDigester.segmentIndex(ofFileAt: base, regions: bulk), try StreamDigester.segmentIndex(ofFileAt: head, regions: bulk))
        print("retrained head: fetch \(changed) of \(headIndex.artifactSize) bytes (head blobs \(headBlobBytes), \(headIndex.segments.count) segments); whole zip cut by content: \(bulkChanged)")

        // The device's plan builds the new zip from the old one and the fetched ranges.
        let plan = DeltaPlan(new: headIndex, have: DeltaPlan.offsets(of: baseIndex))
        XCTAssertEqual(plan.fetchedBytes, changed)
        XCTAssertFalse(plan.prefersFullDownload)
        let old = try contents(base), target = try contents(head)
        var built: [UInt8] = []
        for step in plan.steps {
            switch step {
            case .copy(let source, let at, let length):
                XCTAssertEqual(Int64(built.count), at)
                built += old[Int(source)..<Int(source + length)]
            case .fetch(let at, let length, _):
                XCTAssertEqual(Int64(built.count), at)
                built += target[Int(at)..<Int(at + length)]
            }
        }
        XCTAssertEqual(built, target)
    }

    /// The regions as bench/segment_regions.py prints them: [kind, start, end].
    func described(_ regions: [SegmentRegion]) -> [[String]] {
        regions.map { region in
            switch region {
            case .slices(let start, let end, _): return ["slices", "\(start)", "\(end)"]
            case .contentDefined(let start, let end, let cut): return [cut == .metadata ? "metadata" : "bulk", "\(start)", "\(end)"]
            }
        }
    }

    /// bench/segment_regions.py, written from docs/segment-index.md alone, finds the same
    /// regions for real packages, a bare weight file and hostile zips: the specification is
    /// enough for a client in another language.
    func testTheSpecificationAloneReproducesTheRegions() throws {
        let scratch = try Scratch()
        var files = [try pack(try coreML(scratch, "wide", ["--layers", "2", "--width", "1100", "--classes", "30"]), to: scratch.at("wide.zip"))]
        files.append(try scratch.write("weight.bin", weightFile([3_000_000, 1_536, 100, 0, 5])))
        let small = try packedPackage(scratch, "small", weights: weightFile([5000, 700, 70_000]))
        files.append(try scratch.write("small.zip", small))
        var generator = SystemRandomNumberGenerator()
        let directory = centralHeaders(small).first ?? 0
        for round in 0..<60 {
            var copy = small
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                copy[Int.random(in: (round % 2 == 0 ? directory : 0)..<small.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            files.append(try scratch.write("mutated-\(round).zip", copy))
        }
        let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/segment_regions.py"] + files)
        XCTAssertEqual(made.status, 0, made.stderr)
        let lines = made.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, files.count)
        for (path, line) in zip(files, lines) {
            let expected = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [[Any]]).map { $0.map { "\($0)" } }
            XCTAssertEqual(described(SegmentPlan.regions(path: path, size: try size(path))), expected, path)
        }
    }

    // MARK: A bare weight file

    /// (d) A `weight.bin` published on its own (a tree publish) is cut per blob too: its
    /// storage header, then per blob its 64-byte header and its data's slices.
    func testABareWeightFileIsCutPerBlob() throws {
        let sizes = [3_000_000, 1_536, 100, 2_100_000, 0, 5]
        let bytes = weightFile(sizes)
        let plan = regions(bytes)
        assertTiles(plan, size: Int64(bytes.count), "weight.bin")
        var expected: [SegmentRegion] = [.contentDefined(start: 0, end: 64, cut: .metadata)]
        var header: Int64 = 64
        for size in sizes {
            expected.append(.contentDefined(start: header, end: header + 64, cut: .metadata))
            let next = min(Int64(bytes.count), (header + 64 + Int64(size) + 63) / 64 * 64)
            // The empty blob has no data region.
            if size > 0 { expected.append(.slices(start: header + 64, end: next, slice: SegmentScheme.tensorSlice)) }
            header = next
        }
        XCTAssertEqual(plan, expected)
        // The first blob grows by 4 KiB: its last slice and the headers it moves (which hold
        // absolute offsets) change; every later blob's data keeps its segments.
        let scratch = try Scratch()
        let before = try segmentIndex(try scratch.write("a/weight.bin", bytes))
        let grown = try segmentIndex(try scratch.write("b/weight.bin", weightFile([3_000_000 + 4096] + sizes.dropFirst())))
        let lastSlice: Int64 = 3_000_000 + 4096 - 2 * (1 << 20)
        XCTAssertEqual(fetched(before, grown), lastSlice + 6 * 64, "the grown blob's last slice and 6 blob headers")
        // Read through a path it is cut the same.
        XCTAssertEqual(SegmentPlan.regions(path: scratch.at("a/weight.bin"), size: Int64(bytes.count)), plan)
    }

    // MARK: Hostile input

    /// A small package: model.mlmodel, a weight.bin of `weights`, Manifest.json, zipped by modelcast.
    func packedPackage(_ scratch: Scratch, _ name: String, weights: [UInt8]) throws -> [UInt8] {
        try scratch.write(name + "/M.mlpackage/Data/com.apple.CoreML/model.mlmodel", patternBytes(3000, seed: 7))
        try scratch.write(name + "/M.mlpackage/Data/com.apple.CoreML/weights/weight.bin", weights)
        try scratch.write(name + "/M.mlpackage/Manifest.json", text: """
            {"fileFormatVersion": "1.0.0", "rootModelIdentifier": "A", "itemInfoEntries": {
             "A": {"author": "com.apple.CoreML", "name": "model.mlmodel", "path": "com.apple.CoreML/model.mlmodel"}}}
            """)
        try scratch.mkdir(name + "/M.mlpackage/Data/empty")
        try scratch.write(name + "/M.mlpackage/zero-length", [])
        return try contents(try pack(scratch.at(name + "/M.mlpackage"), to: scratch.at(name + ".zip")))
    }

    /// (c) Truncated zips, bad sentinels, blobs claiming sizes past the end, offsets before
    /// their header or at 2^63, a huge count, zero-length entries, local-header offsets
    /// that overlap or point anywhere: the regions tile the file, in order, and the hasher
    /// cuts it, whatever the bytes.
    func testHostileZipsAndWeightFilesAlwaysTile() throws {
        let scratch = try Scratch()
        let good = weightFile([5000, 700, 70_000])
        // Offsets of the blob headers in `good`: 64, then aligned after each blob.
        let headers = [64, (64 + 64 + 5000 + 63) / 64 * 64]
        let third = (headers[1] + 64 + 700 + 63) / 64 * 64
        func weights(_ change: (inout [UInt8]) -> Void) -> [UInt8] { var copy = good; change(&copy); return copy }
        let weightCases: [(String, [UInt8])] = [
            ("good", good),
            ("bad sentinel on the second blob", weights { $0[headers[1]] = 0 }),
            ("bad sentinel on the first blob", weights { $0[64] = 0xee }),
            ("a size past the end", weights { put(1 << 40, 8, &$0, at: headers[1] + 8) }),
            ("a size one past the end", weights { put(UInt64(good.count - third - 64 + 1), 8, &$0, at: third + 8) }),
            ("an offset before its header", weights { put(UInt64(headers[1]), 8, &$0, at: headers[1] + 16) }),
            ("an offset of 0", weights { put(0, 8, &$0, at: 64 + 16) }),
            ("an offset of 2^63", weights { put(1 << 63, 8, &$0, at: headers[1] + 16) }),
            ("an offset of 2^64 - 1", weights { put(.max, 8, &$0, at: headers[1] + 16) }),
            ("a size of 2^64 - 1", weights { put(.max, 8, &$0, at: headers[1] + 8) }),
            ("a huge count", weights { put(0xFFFF_FFFF, 4, &$0, at: 0) }),
            ("a count of 0", weights { put(0, 4, &$0, at: 0) }),
            ("a count of 1", weights { put(1, 4, &$0, at: 0) }),
            ("version 3", weights { put(3, 4, &$0, at: 4) }),
            ("an offset past the end", weights { put(UInt64(good.count + 64), 8, &$0, at: third + 16) }),
            ("cut inside the last blob", Array(good.prefix(good.count - 100))),
            ("cut inside a header", Array(good.prefix(third + 20))),
            ("only the storage header and a sentinel", Array(good.prefix(68))),
            ("a storage header alone", Array(good.prefix(64))),
            ("empty", []),
        ]
        for (label, bytes) in weightCases {
            let plan = regions(bytes)
            assertTiles(plan, size: Int64(bytes.count), "weight.bin, \(label)")
            try assertHashes(bytes, plan, label)
            // Inside a zip, the same weight file.
            let zip = try packedPackage(scratch, label.replacingOccurrences(of: " ", with: "-"), weights: bytes)
            assertTiles(regions(zip), size: Int64(zip.count), "zip, \(label)")
        }
        // A bad sentinel stops the blobs there: the rest is cut by content.
        XCTAssertEqual(regions(weightCases[1].1), [
            .contentDefined(start: 0, end: 64, cut: .metadata),
            .contentDefined(start: 64, end: 128, cut: .metadata),
            .slices(start: 128, end: Int64(headers[1]), slice: SegmentScheme.tensorSlice),
            .contentDefined(start: Int64(headers[1]), end: Int64(good.count), cut: .metadata),
        ])
        XCTAssertEqual(regions(weightCases[2].1), [.contentDefined(start: 0, end: Int64(good.count), cut: .bulk)], "not a weight file: a file of no known structure")

        let zip = try packedPackage(scratch, "base", weights: good)
        try assertZipMutationsTile(zip)
    }

    func assertHashes(_ bytes: [UInt8], _ regions: [SegmentRegion], _ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let hasher = SegmentHasher(regions: regions)
        try bytes.withUnsafeBytes { try hasher.update($0) }
        let segments = try hasher.finish()
        XCTAssertEqual(segments.reduce(0) { $0 + Int64($1.length) }, Int64(bytes.count), label, file: file, line: line)
    }

    /// Truncations (every length near a header or the end, every 509th elsewhere), every
    /// local-header offset patched to overlap, repeat, point past the directory or at
    /// 2^32 - 1, every name length stretched, and random byte changes.
    func assertZipMutationsTile(_ zip: [UInt8]) throws {
        let planned = regions(zip)
        assertTiles(planned, size: Int64(zip.count), "packed")
        XCTAssertTrue(planned.contains { if case .slices = $0 { return true } else { return false } }, "the weight file is cut per blob: \(planned)")
        let central = centralHeaders(zip)
        XCTAssertGreaterThanOrEqual(central.count, 8, "the directories and the 4 files")
        let offsets = central.map { u32(zip, $0 + 42) }
        var lengths = Set(stride(from: 0, through: zip.count, by: 509)).union(max(0, zip.count - 200)...zip.count)
        for header in central + offsets { lengths.formUnion(max(0, header - 4)...min(zip.count, header + 40)) }
        for length in lengths.sorted() {
            assertTiles(regions(Array(zip.prefix(length))), size: Int64(length), "cut at \(length)")
        }
        var cases: [(String, [UInt8])] = []
        for (index, header) in central.enumerated() {
            for (what, value) in [("the previous entry's", offsets[max(0, index - 1)]), ("the next entry's", offsets[min(central.count - 1, index + 1)]),
                                  ("inside the previous entry", offsets[max(0, index - 1)] + 40), ("0", 0), ("past the directory", zip.count - 10),
                                  ("2^32 - 1", 0xFFFF_FFFF)] {
                var copy = zip
                put(UInt64(value), 4, &copy, at: header + 42)
                cases.append(("entry \(index) at \(what) offset", copy))
            }
            var stretched = zip
            put(0xFFFF, 2, &stretched, at: header + 28)
            cases.append(("entry \(index) with a 65535-byte name", stretched))
            var local = zip
            put(0xFFFF, 2, &local, at: offsets[index] + 28)
            cases.append(("entry \(index) with a 65535-byte local extra field", local))
            var deflated = zip
            put(8, 2, &deflated, at: header + 10)
            cases.append(("entry \(index) said to be deflated", deflated))
            var huge = zip
            put(0xFFFF_FFFE, 4, &huge, at: header + 20)
            cases.append(("entry \(index) with a 4 GiB compressed size", huge))
        }
        var every = zip
        for header in central { put(UInt64(offsets[2]), 4, &every, at: header + 42) }
        cases.append(("every entry at one offset", every))
        var generator = SystemRandomNumberGenerator()
        for round in 0..<800 {
            var copy = zip
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                // Mostly the structure: the central directory, the end record, the headers.
                let at = round % 2 == 0 ? Int.random(in: central[0]..<zip.count, using: &generator) : Int.random(in: 0..<zip.count, using: &generator)
                copy[at] = UInt8.random(in: 0...255, using: &generator)
            }
            cases.append(("random change \(round)", copy))
        }
        for (label, bytes) in cases {
            let plan = regions(bytes)
            assertTiles(plan, size: Int64(bytes.count), label)
            if label.hasPrefix("entry") || label.hasPrefix("every") { try assertHashes(bytes, plan, label) }
        }
    }

    /// A zip whose end records are fine but whose central directory claims more entries
    /// than the limit, or sits past the end, is cut as bulk; a zip64 archive by its entries.
    func testZipsTheReaderCannotFollowAreCutByContent() throws {
        let scratch = try Scratch()
        let zip = try packedPackage(scratch, "base", weights: weightFile([5000, 700]))
        var far = zip
        put(UInt64(zip.count), 4, &far, at: zip.count - 22 + 16)
        XCTAssertEqual(regions(far), [.contentDefined(start: 0, end: Int64(zip.count), cut: .bulk)])
        // Zip64 end records (Python's zipfile writes them when forced).
        let made = try runProcess("/usr/bin/env", ["python3", "-c", """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as z:
                for name, data in [("a.bin", b"a" * 70000), ("weights/weight.bin", open(sys.argv[2], "rb").read())]:
                    with z.open(name, "w", force_zip64=True) as f: f.write(data)
            """, scratch.at("zip64.zip"), try scratch.write("w.bin", weightFile([5000, 70_000]))])
        XCTAssertEqual(made.status, 0, made.stderr)
        let zip64 = try contents(scratch.at("zip64.zip"))
        let plan = regions(zip64)
        assertTiles(plan, size: Int64(zip64.count), "zip64")
        XCTAssertEqual(plan.filter { if case .slices = $0 { return true } else { return false } }.count, 2, "\(plan)")
    }
}
