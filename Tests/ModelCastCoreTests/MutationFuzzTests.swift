import Foundation
import XCTest
@testable import ModelCastCore
@_spi(ModelCastTooling) import ModelCastFormat
import ModelCastTestSupport

/// Deterministic mutation fuzzing of the two readers that parse untrusted bytes
/// (issue #11 item 2). Each seed in `Tests/Fixtures/fuzz/` is mutated a few hundred
/// times with a fixed-seed generator — byte flips, overwrites with boundary values,
/// insertions, deletions, truncations, all in the first 4 KiB — and every mutant
/// must either pass or fail with a thrown `ModelCastError`: a trap would kill the
/// test process, and each case must finish quickly (the readers bound their work by
/// the input's size). A failing case prints its seed, index and mutations, so it can
/// be replayed and turned into a named regression test.
///
/// `MODELCAST_FUZZ_SCALE=N` runs N times as many cases and `MODELCAST_FUZZ_SEED=S`
/// shifts every generator's seed, for a longer campaign outside the suite;
/// `MODELCAST_FUZZ_KEEP=DIR` saves every mutant modelcast accepts there (named by its
/// SHA-256), for independent readers to judge (`bench/fuzz-campaign`).
final class MutationFuzzTests: XCTestCase {
    static let scale = max(1, Int(ProcessInfo.processInfo.environment["MODELCAST_FUZZ_SCALE"] ?? "") ?? 1)
    static let seedShift = UInt64(ProcessInfo.processInfo.environment["MODELCAST_FUZZ_SEED"] ?? "") ?? 0
    static let corpus = repositoryRoot + "/Tests/Fixtures/fuzz"
    static let keep = ProcessInfo.processInfo.environment["MODELCAST_FUZZ_KEEP"].flatMap { $0.isEmpty ? nil : $0 }

    /// Saves an accepted mutant for the campaign's independent readers.
    static func keepAccepted(_ bytes: [UInt8], suffix: String) throws {
        guard let keep else { return }
        try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: keep + "/" + (try SHA256Hasher.digest(Data(bytes))).hex + suffix))
    }
    /// Mutations land in the first 4 KiB (the seeds are smaller, so anywhere in them).
    static let window = 4096
    /// Longest a single case may take in a debug build before it counts as a hang.
    static let caseLimit: TimeInterval = 2

    /// SplitMix64: a small, fast, fixed-seed generator; the same seed gives the same cases everywhere.
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Values that sit on the edges parsers get wrong: zero, one, sign bits, all ones, near 2^32 and 2^64.
    static let boundaryValues: [UInt64] = [
        0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0xFFFF_FFE0,
        0x1_0000_0000, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, 0xFFFF_FFFF_FFFF_FFE0, UInt64.max,
    ]

    /// One to three mutations of `seed` within the first `window` bytes, and what they were.
    static func mutate(_ seed: [UInt8], rng: inout SplitMix64) -> (bytes: [UInt8], steps: [String]) {
        var bytes = seed
        var steps: [String] = []
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            let span = max(1, min(bytes.count, window))
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...2:  // flip bits in one to four bytes
                guard !bytes.isEmpty else { continue }
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let at = Int.random(in: 0..<span, using: &rng), mask = UInt8.random(in: 1...255, using: &rng)
                    bytes[at] ^= mask
                    steps.append("flip \(at) ^ \(mask)")
                }
            case 3...4:  // a boundary value, little-endian, 1, 2, 4 or 8 bytes wide
                let width = [1, 2, 4, 8].randomElement(using: &rng)!
                guard bytes.count >= width else { continue }
                let at = Int.random(in: 0...(min(span, bytes.count - width + 1) - 1), using: &rng)
                let value = boundaryValues.randomElement(using: &rng)!
                for index in 0..<width { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
                steps.append("put \(width)@\(at) = \(value)")
            case 5...6:  // insert one to sixteen random bytes
                let at = Int.random(in: 0...min(bytes.count, window), using: &rng)
                let inserted = (0..<Int.random(in: 1...16, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                bytes.insert(contentsOf: inserted, at: at)
                steps.append("insert \(inserted.count)@\(at)")
            case 7...8:  // delete one to sixteen bytes
                guard !bytes.isEmpty else { continue }
                let at = Int.random(in: 0..<span, using: &rng)
                let count = min(Int.random(in: 1...16, using: &rng), bytes.count - at)
                bytes.removeSubrange(at..<(at + count))
                steps.append("delete \(count)@\(at)")
            default:  // truncate
                let length = Int.random(in: 0..<max(1, min(bytes.count, window)), using: &rng)
                bytes.removeSubrange(length...)
                steps.append("truncate \(length)")
            }
        }
        return (bytes, steps)
    }

    struct Tally: CustomStringConvertible {
        var passed = 0, refused = 0, withProblems = 0
        var slowest: TimeInterval = 0
        var description: String { "\(passed) passed, \(withProblems) returned problems, \(refused) refused; slowest case \(String(format: "%.3f", slowest)) s" }
    }

    private func seed(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: Self.corpus + "/" + name)))
    }

    // MARK: - GGUF

    /// Runs `cases` mutants of the seed through `ModelInspector.describe` (what `inspect`,
    /// `pack` and `publish` call), which reads the GGUF header with `GGUFReader`.
    private func fuzzGGUF(_ name: String, cases: Int, seed rngSeed: UInt64) throws -> Tally {
        let original = try seed(name)
        XCTAssertNoThrow(try GGUFReader.read(path: Self.corpus + "/" + name), "the seed itself must be valid")
        let scratch = try Scratch()
        let path = scratch.at("fuzz.gguf")
        var rng = SplitMix64(seed: rngSeed &+ Self.seedShift)
        var tally = Tally()
        for index in 0..<(cases * Self.scale) {
            let (bytes, steps) = Self.mutate(original, rng: &rng)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let context = "\(name) case \(index): \(steps.joined(separator: ", "))"
            let start = Date()
            do {
                _ = try ModelInspector.describe(path)
                tally.passed += 1
                try Self.keepAccepted(bytes, suffix: ".gguf")
            } catch let error as ModelCastError {
                tally.refused += 1
                guard case .invalidModel(let named, let format, let reason) = error else {
                    XCTFail("\(context): unexpected error kind \(error)")
                    continue
                }
                XCTAssertEqual(named, path, context)
                XCTAssertEqual(format, "GGUF", context)
                XCTAssertFalse(reason.isEmpty, context)
            } catch {
                XCTFail("\(context): not a ModelCastError: \(error)")
            }
            let elapsed = Date().timeIntervalSince(start)
            tally.slowest = max(tally.slowest, elapsed)
            XCTAssertLessThan(elapsed, Self.caseLimit, "\(context): too slow")
        }
        return tally
    }

    func testGGUFMutantsPassOrThrow() throws {
        let start = Date()
        let model = try fuzzGGUF("tiny-llm.gguf", cases: 500, seed: 0x6767_7566_0001)
        let projector = try fuzzGGUF("tiny-llm-mmproj.gguf", cases: 300, seed: 0x6767_7566_0002)
        // gguf-py's writer (llama.cpp's): every metadata type, arrays of strings, F32/F16/Q8_0/Q4_0 tensors.
        let types = try fuzzGGUF("gguf-py-types.gguf", cases: 300, seed: 0x6767_7566_0003)
        print("GGUF fuzz: tiny-llm.gguf \(model); tiny-llm-mmproj.gguf \(projector); gguf-py-types.gguf \(types); \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        // The mutations must reach past the magic: most are refused, some still parse.
        XCTAssertGreaterThan(model.refused + projector.refused + types.refused, 550 * Self.scale)
        XCTAssertGreaterThan(model.passed + projector.passed + types.passed, 20 * Self.scale)
    }

    // MARK: - Zip

    /// An archive in memory.
    struct MemoryBytes: RandomAccessBytes {
        let bytes: [UInt8]
        let name = "fuzz.zip"
        var size: Int64 { Int64(bytes.count) }
        func read(offset: Int64, count: Int) async throws -> [UInt8] {
            guard offset >= 0, count >= 0 else {
                throw ModelCastError.io(operation: "read \(count) bytes at offset \(offset)", path: name, reason: "invalid range")
            }
            let start = Int(min(offset, size)), end = start + min(count, bytes.count - start)
            return Array(bytes[start..<end])
        }
    }

    /// The device's verdict on `bytes`, read as the client reads a downloaded zip
    /// (`ZipScan` in ModelCastFormat, synchronously, with the device's limits): its
    /// problems, or why it could not read it at all.
    static func deviceVerdict(_ bytes: [UInt8]) throws -> Result<[ZipProblem], ZipFailure> {
        do {
            let inspection = try ZipScan.inspect(size: Int64(bytes.count)) { offset, count in
                let start = Int(min(offset, Int64(bytes.count)))
                return Array(bytes[start..<(start + min(count, bytes.count - start))])
            }
            return .success(inspection.problems)
        } catch let failure as ZipFailure {
            return .failure(failure)
        }
    }

    /// Verify's problems that are device rules: all but the limits only verify applies.
    static func deviceRules(_ problems: [ZipProblem]) -> [ZipProblem] {
        problems.filter { if case .compressionRatio = $0 { false } else { true } }
    }

    private func fuzzZip(_ name: String, cases: Int, seed rngSeed: UInt64) async throws -> Tally {
        let original = try seed(name)
        let clean = try await ZipInspector.inspect(MemoryBytes(bytes: original))
        XCTAssertEqual(clean.problems, [], "the seed itself must be clean")
        XCTAssertEqual(try Self.deviceVerdict(original).get(), [], "the device passes the seed")
        var rng = SplitMix64(seed: rngSeed &+ Self.seedShift)
        var tally = Tally()
        for index in 0..<(cases * Self.scale) {
            let (bytes, steps) = Self.mutate(original, rng: &rng)
            let context = "\(name) case \(index): \(steps.joined(separator: ", "))"
            let start = Date()
            // The device reads every mutant too: it must not trap, and its verdict must be
            // verify's on the device's rules: it refuses everything verify refuses on them
            // (else verify could pass a release devices refuse), and nothing else.
            let device = try Self.deviceVerdict(bytes)
            do {
                let inspection = try await ZipInspector.inspect(MemoryBytes(bytes: bytes))
                if inspection.problems.isEmpty { tally.passed += 1 } else { tally.withProblems += 1 }
                if inspection.problems.isEmpty {
                    try Self.keepAccepted(bytes, suffix: ".zip")
                }
                XCTAssertEqual(try? device.get(), Self.deviceRules(inspection.problems), "\(context): the device and verify disagree on the device's rules")
                XCTAssertGreaterThanOrEqual(inspection.totalUncompressedSize, 0, context)
            } catch let error as ModelCastError {
                tally.refused += 1
                guard case .invalidModel(let named, let format, let reason) = error else {
                    XCTFail("\(context): unexpected error kind \(error)")
                    continue
                }
                XCTAssertEqual(named, "fuzz.zip", context)
                XCTAssertEqual(format, "zip", context)
                if case .failure(let failure) = device {
                    XCTAssertTrue(reason.hasPrefix(failure.reason), "\(context): verify says \(reason), the device \(failure.reason)")
                } else {
                    XCTFail("\(context): verify cannot read it (\(reason)), the device reads it: \(device)")
                }
            } catch {
                XCTFail("\(context): not a ModelCastError: \(error)")
            }
            let elapsed = Date().timeIntervalSince(start)
            tally.slowest = max(tally.slowest, elapsed)
            XCTAssertLessThan(elapsed, Self.caseLimit, "\(context): too slow")
        }
        return tally
    }

    func testZipMutantsPassOrThrow() async throws {
        let start = Date()
        var lines: [String] = []
        var total = Tally()
        for (name, cases, seed) in [("packed-store.zip", 1000, UInt64(0x7A69_7001)), ("packed-deflate.zip", 500, 0x7A69_7002), ("python-zip64.zip", 500, 0x7A69_7003), ("infozip-extra.zip", 500, 0x7A69_7004)] {
            let tally = try await fuzzZip(name, cases: cases, seed: seed)
            lines.append("\(name) \(tally)")
            total.passed += tally.passed
            total.refused += tally.refused
            total.withProblems += tally.withProblems
        }
        print("zip fuzz: \(lines.joined(separator: "; ")); \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        XCTAssertGreaterThan(total.refused, 500 * Self.scale)
        XCTAssertGreaterThan(total.withProblems, 500 * Self.scale)
    }
}
