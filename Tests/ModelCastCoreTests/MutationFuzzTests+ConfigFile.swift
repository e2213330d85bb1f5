import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport
import Yams

/// The config reader is an untrusted-input parser too (issue 44, item 2): mutants of the
/// config seeds must load or fail with a `ModelCastError` naming the file, quickly. Besides
/// the usual byte mutations, half the cases repeat a slice of the seed hundreds or
/// thousands of times, which grows the hostile shapes from the seeds' own syntax: nested
/// `[`, `{`, `- ` and indentation, chains of anchors and aliases, long values. For every
/// mutant Yams can build, the nesting scan's bound is checked against the built depth.
extension MutationFuzzTests {
    /// One byte mutation (see `mutate`) or one repetition of a slice of 1 to 12 bytes.
    static func mutateConfig(_ seed: [UInt8], rng: inout SplitMix64) -> (bytes: [UInt8], steps: [String]) {
        guard Bool.random(using: &rng), seed.count > 1 else { return mutate(seed, rng: &rng) }
        let start = Int.random(in: 0..<(seed.count - 1), using: &rng)
        let length = Int.random(in: 1...min(12, seed.count - start), using: &rng)
        let times = [2, 10, 70, 300, 3000].randomElement(using: &rng)!
        var bytes = seed
        bytes.insert(contentsOf: Array(repeating: Array(seed[start..<(start + length)]), count: times).joined(), at: start)
        return (bytes, ["repeat \(length)@\(start) x\(times)"])
    }

    private func fuzzConfig(_ name: String, cases: Int, seed rngSeed: UInt64) throws -> Tally {
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: Self.corpus + "/" + name)))
        let scratch = try Scratch()
        let path = scratch.at(name)
        try Data(original).write(to: URL(fileURLWithPath: path))
        XCTAssertNoThrow(try PublishConfigFile.load(path: path), "the seed itself must be valid")
        var rng = SplitMix64(seed: rngSeed &+ Self.seedShift)
        var tally = Tally()
        for index in 0..<(cases * Self.scale) {
            let (bytes, steps) = Self.mutateConfig(original, rng: &rng)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let context = "\(name) case \(index): \(steps.joined(separator: ", "))"
            let start = Date()
            do {
                _ = try PublishConfigFile.load(path: path)
                tally.passed += 1
            } catch let error as ModelCastError {
                tally.refused += 1
                XCTAssertTrue("\(error)".contains("config \(path)"), "\(context): the error names the file: \(error)")
            } catch {
                XCTFail("\(context): not a ModelCastError: \(error)")
            }
            let elapsed = Date().timeIntervalSince(start)
            tally.slowest = max(tally.slowest, elapsed)
            XCTAssertLessThan(elapsed, Self.caseLimit, "\(context): too slow")
            // The scan lets through only what is safe to build; there, its estimate is never
            // below the depth built (and a refusal is never of a text within the limit).
            let text = String(decoding: bytes, as: UTF8.self)
            if YAMLNestingScan.firstLine(deeperThan: 2 * ConfigFileBounds.maxDepth + 1, in: text) == nil, let depth = ConfigFileBoundsTests.builtDepth(text), depth > 0 {
                XCTAssertNotNil(YAMLNestingScan.firstLine(deeperThan: depth - 1, in: text), "\(context): the scan estimates below the built depth \(depth)")
                XCTAssertNil(YAMLNestingScan.firstLine(deeperThan: 2 * depth + 1, in: text), "\(context): the scan estimates above twice the built depth \(depth) plus one")
            }
        }
        return tally
    }

    func testConfigFileMutantsLoadOrThrow() throws {
        let start = Date()
        let yaml = try fuzzConfig("config-catalog.yml", cases: 600, seed: 0x636F_6E66_0001)
        let json = try fuzzConfig("config-flow.json", cases: 300, seed: 0x636F_6E66_0002)
        print("config fuzz: config-catalog.yml \(yaml); config-flow.json \(json); \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
        XCTAssertGreaterThan(yaml.refused + json.refused, 300 * Self.scale)
        XCTAssertGreaterThan(yaml.passed + json.passed, 50 * Self.scale)
    }
}
