import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport
import Yams

/// Issue 44, item 2: a config file is bounded before it is parsed. 5,000 nested `[` (10 KB)
/// crashed publish with SIGSEGV inside Yams, and 453 bytes of aliases stood for 34 MB of
/// meta. Each hostile shape is refused with an error naming the file and the limit.
final class ConfigFileBoundsTests: XCTestCase {
    static let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
    static let head = "base_url: https://cdn.example.com/m\nmodels:\n  m:\n    version: 1.0.0\n    files: [\(gguf)]\n"

    /// The error `PublishConfigFile.load` throws for `text` (failing the test if it loads).
    func refusal(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let work = try Scratch()
        let path = try work.write("modelcast.yml", text: text)
        do {
            _ = try PublishConfigFile.load(path: path)
            XCTFail("accepted", file: file, line: line)
            return ""
        } catch let error as ModelCastError {
            let shown = "\(error)"
            XCTAssertTrue(shown.contains("config \(path)"), "names the file: \(shown)", file: file, line: line)
            XCTAssertEqual(ExitStatus(for: error), .refused, shown, file: file, line: line)
            return shown
        }
    }

    /// Nine levels of nine: each level's alias stands for nine of the level below.
    static func laughs(levels: Int) -> String {
        var text = "    meta:\n      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1..<levels {
            text += "      l\(level): &l\(level) [" + Array(repeating: "*l\(level - 1)", count: 9).joined(separator: ", ") + "]\n"
        }
        return text
    }

    func testHostileShapesAreRefusedNamingTheFileAndTheLimit() throws {
        let deep = "lists and mappings nested more than 64 levels deep"
        let cases: [(String, String, [String])] = [
            ("5,000 nested [ under an unknown key", Self.head + "extra: " + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "\n", [deep, "(line 6)"]),
            ("5,000 nested { in meta", Self.head + "    meta: " + String(repeating: "{a: ", count: 5000) + "x" + String(repeating: "}", count: 5000) + "\n", [deep]),
            ("3,000 block sequences on one line", Self.head + "extra: " + String(repeating: "- ", count: 3000) + "x\n", [deep]),
            ("block mappings indented 300 deep", Self.head + "    meta:\n" + (0..<300).map { String(repeating: " ", count: 6 + $0) + "k:\n" }.joined() + String(repeating: " ", count: 306) + "k: x\n", [deep]),
            ("flow meta nested 100 deep", Self.head + "    meta: {a: " + String(repeating: "[", count: 99) + String(repeating: "]", count: 99) + "}\n", [deep]),
            ("billion laughs (9 levels of 9)", Self.head + Self.laughs(levels: 9), ["aliases expand it past 1048576 bytes", "'models.m.meta.l"]),
            ("aliases nesting each other 20 times", Self.head + "    meta:\n      d0: &d0 [[[[[[[[[[x]]]]]]]]]]\n" + (1..<20).map { "      d\($0): &d\($0) [[[[[[[[[[*d\($0 - 1)]]]]]]]]]]\n" }.joined(),
             [deep, "(aliases expanded)", "'models.m.meta.d6"]),
            ("a 5 MiB meta value", Self.head + "    meta:\n      blob: " + String(repeating: "x", count: 5 << 20) + "\n", ["is larger than 1048576 bytes (1 MiB)"]),
        ]
        for (name, text, fragments) in cases {
            let start = Date()
            let shown = try refusal(text)
            for fragment in fragments { XCTAssertTrue(shown.contains(fragment), "\(name): missing '\(fragment)' in \(shown.prefix(400))") }
            XCTAssertLessThan(Date().timeIntervalSince(start), 5, "\(name): refused quickly")
        }
    }

    /// What configs really use still loads: aliases that share a value, nesting up to the limit.
    func testSharedValuesAndNestingWithinTheLimitsStillLoad() throws {
        let work = try Scratch()
        let shared = try work.write("shared.yml", text: """
            base_url: https://cdn.example.com/m
            models:
              a: {version: 1.0.0, files: [a.bin], meta: &hardware {neuralEngine: true, features: [x, y]}}
              b:
                version: 1.0.0
                files: [b.bin]
                meta: *hardware
            """)
        let config = try PublishConfigFile.load(path: shared)
        XCTAssertEqual(config.models.map(\.meta), Array(repeating: ["neuralEngine": .bool(true), "features": .array([.string("x"), .string("y")])], count: 2))

        // The top mapping, models, m, meta, then 60 lists: 64 levels.
        let nested = try work.write("nested.yml", text: Self.head + "    meta: {a: " + String(repeating: "[", count: 60) + String(repeating: "]", count: 60) + "}\n")
        XCTAssertNoThrow(try PublishConfigFile.load(path: nested))
        let over = try refusal(Self.head + "    meta: {a: " + String(repeating: "[", count: 61) + String(repeating: "]", count: 61) + "}\n")
        XCTAssertTrue(over.contains("more than 64 levels deep, at 'models.m.meta.a[0][0]…'"), over)
    }

    func testAFileAtTheSizeLimitIsReadAndOneByteMoreIsNot() throws {
        let filler = { (total: Int) in Self.head + "    meta:\n      pad: " + String(repeating: "x", count: total - Self.head.utf8.count - 22) + "\n" }
        let work = try Scratch()
        let exact = try work.write("exact.yml", text: filler(ConfigFileBounds.maxBytes))
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: exact)[.size] as? Int, ConfigFileBounds.maxBytes)
        XCTAssertNoThrow(try PublishConfigFile.load(path: exact))
        XCTAssertTrue(try refusal(filler(ConfigFileBounds.maxBytes + 1)).contains("larger than 1048576 bytes"))
        XCTAssertTrue("\(try XCTUnwrap(Result { try PublishConfigFile.load(path: work.path) }.failure))".contains("is a directory"))
    }

    // MARK: - The nesting scan against what Yams builds

    /// The nesting of what Yams builds from `text` (aliases not followed), without recursion.
    static func builtDepth(_ text: String) -> Int? {
        guard let root = try? Yams.compose(yaml: text) else { return nil }
        var deepest = 0
        var pending = [(root, 0)]
        while let (node, depth) = pending.popLast() {
            switch node {
            case .scalar: deepest = max(deepest, depth)
            case .mapping(let mapping): deepest = max(deepest, depth + 1); pending += mapping.flatMap { [($0.key, depth + 1), ($0.value, depth + 1)] }
            case .sequence(let sequence): deepest = max(deepest, depth + 1); pending += sequence.map { ($0, depth + 1) }
            }
        }
        return deepest
    }

    /// The scan's bound holds for every construct that opens or hides a collection: it is
    /// never below the depth Yams builds, and at most twice it plus one.
    func testTheNestingScanBoundsTheBuiltDepth() throws {
        let texts = [
            "a: 1\n", "- a\n- b\n", "a:\n- b\n- c\nd: e\n", "a:\n  - - - x\n", "- - - - x\n",
            "a:\n  b:\n    c:\n      d: [e, {f: g}]\n", "[a: b, c: [d: e]]\n", "[[[[a]: b]: c]: d]\n", "{? [a, b] : c}\n",
            "? - a\n  - b\n: - c\n", "&x [*y]\n", "a: &x {b: c}\nd: *x\n", "a: !!map {b: c}\nd: !<tag:x,[]> [e]\n",
            "a: 'it''s [not] {a} list'\nb: \"esc \\\" [x\"\n", "a: |\n  [[[[\n  }}}}\nb: [c]\n", "a: >-\n  ]]]\n\n  [[[\nb: {c: d}\n",
            "a: b # [[[[\nc: [d] # ]]]\n", "a: plain [not a list\n  continued ] here\nb: c\n", "a: x#[y\nb: [z]\n",
            "[a, # ]]]\n b]\n", "{a: [b, c], d: {e: [f, [g]]}}\n", "---\na: [b]\n...\n", "%YAML 1.1\n---\n- [a]\n",
            "a:\n\t- b\n", "\u{FEFF}a: [b]\n", "a: \"line\n  [two]\"\nb: [c]\n", "- a: b\n  c:\n  - d\n  - e: [f]\n",
            "key: [a, b]\n[c]: d\n", "a:\n  b: [\n    c, [d,\n  e]]\nf: g\n", "a: \u{2028}[b]\n", "a: b\r\nc: [d, [e]]\r\n",
        ]
        var checked = 0
        for text in texts {
            guard let depth = Self.builtDepth(text) else { continue }
            checked += 1
            XCTAssertNotNil(YAMLNestingScan.firstLine(deeperThan: depth - 1, in: text), "below the built depth \(depth): \(text.debugDescription)")
            XCTAssertNil(YAMLNestingScan.firstLine(deeperThan: 2 * depth + 1, in: text), "above twice the built depth \(depth) plus one: \(text.debugDescription)")
        }
        XCTAssertGreaterThan(checked, texts.count - 5, "Yams builds nearly all of them")
    }

    // MARK: - Manifests past what devices read

    func testServedLimitsNameWhereTheBulkAndTheDepthAre() throws {
        func manifest(meta: String) -> Data {
            Data(#"{"models":{"a":{"version":"1.0.0"},"m":{"meta":\#(meta),"version":"1.0.0"}},"sequence":1}"#.utf8)
        }
        let small = Data("{}".utf8)
        XCTAssertNoThrow(try ServedLimits.check(manifest: manifest(meta: #"{"blob":"x"}"#), record: small, manifestKey: "manifest.json"))
        let big = manifest(meta: #"{"blob":""# + String(repeating: "x", count: ManifestLimits.maxBytes) + #"","other":1}"#)
        let tooBig = "\(try XCTUnwrap(Result { try ServedLimits.check(manifest: big, record: small, manifestKey: "manifest.json") }.failure))"
        XCTAssertTrue(tooBig.contains("manifest manifest.json (to publish): \(big.count) bytes (models.m.meta.blob takes \(ManifestLimits.maxBytes + 2) of them), more than the 4194304 that devices and verify read (4 MiB); nothing was written"), tooBig)

        // 64 levels pass (the top object, models, m, then 61 in meta), 65 do not.
        let levels = { (count: Int) in String(repeating: #"{"a":"#, count: count) + "1" + String(repeating: "}", count: count) }
        XCTAssertNoThrow(try ServedLimits.check(manifest: manifest(meta: levels(61)), record: small, manifestKey: "manifest.json"))
        let deep = "\(try XCTUnwrap(Result { try ServedLimits.check(manifest: manifest(meta: levels(62)), record: small, manifestKey: "channels/beta/manifest.json") }.failure))"
        XCTAssertTrue(deep.contains("manifest channels/beta/manifest.json (to publish): it nests arrays and objects more than 64 levels deep, at models.m.meta.a.a.a.a.a… (64 keys), deeper than devices and verify read"), deep)

        // The history record is held to what modelcast reads back.
        let record = "\(try XCTUnwrap(Result { try ServedLimits.check(manifest: small, record: manifest(meta: levels(62)), manifestKey: "manifest.json") }.failure))"
        XCTAssertTrue(record.contains("manifest manifest.json (to publish): its history record would nest arrays and objects more than 64 levels deep"), record)
        let hugeRecord = Data(repeating: 0x20, count: TargetLayout.recordLimit + 1)
        XCTAssertTrue("\(try XCTUnwrap(Result { try ServedLimits.check(manifest: small, record: hugeRecord, manifestKey: "manifest.json") }.failure))".contains("its history record would be 16777217 bytes, more than the 16777216 that modelcast reads back (16 MiB)"))
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
