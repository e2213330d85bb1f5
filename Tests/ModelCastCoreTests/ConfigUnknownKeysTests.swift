import Foundation
import XCTest
import ModelCastFormat
import ModelCastCore
import ModelCastTestSupport

/// Issue 47, item 4: every unknown key of a config file, at every level, is named in one
/// error with the closest known key at that place; paths are written one way
/// (`models.llm.variants[0].requires.min_memory`). Before, a variant's keys were checked
/// only in a second round (after the top and the models passed), without a suggestion,
/// requirements one at a time, and paths inside a list read `variants.Index 0.requires`.
final class ConfigUnknownKeysTests: XCTestCase {
    /// The error loading `text` gives (failing the test when it loads).
    func refusal(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let work = try Scratch()
        let path = try work.write("modelcast.yml", text: text)
        do {
            _ = try PublishConfigFile.load(path: path)
            XCTFail("accepted:\n\(text)", file: file, line: line)
            return ""
        } catch {
            let shown = "\(error)"
            XCTAssertTrue(shown.hasPrefix("config \(path)"), "names the file first: \(shown)", file: file, line: line)
            XCTAssertEqual(ExitStatus(for: error), .refused, shown, file: file, line: line)
            XCTAssertFalse(containsControlCharacter(shown), "no raw control character: \(shown.debugDescription)", file: file, line: line)
            return shown
        }
    }

    func assertContains(_ shown: String, _ fragments: [String], file: StaticString = #filePath, line: UInt = #line) {
        for fragment in fragments {
            XCTAssertTrue(shown.contains(fragment), "missing \(fragment) in: \(shown)", file: file, line: line)
        }
    }

    /// One file with a mistake at each level: all five in one error, each with its suggestion.
    func testEveryUnknownKeyAtEveryLevelInOneError() throws {
        let shown = try refusal("""
            base_ur: https://cdn.example.com
            models:
              llm:
                versoin: 2.0.0
                variants:
                  - name: big
                    files: [big.gguf]
                    requirs: {min_memory: 6GiB}
                  - name: small
                    files: [small.gguf]
                    requires:
                      min_memroy: 2GiB
                      platforms: {mac_os: "14.0"}
            """)
        assertContains(shown, [
            "'base_ur' (did you mean 'base_url'?)",
            "'models.llm.versoin' (did you mean 'version'?)",
            "'models.llm.variants[0].requirs' (did you mean 'requires'?)",
            "'models.llm.variants[1].requires.min_memroy' (did you mean 'min_memory'?)",
            "'models.llm.variants[1].requires.platforms.mac_os' (did you mean 'macos'?)",
        ])
        XCTAssertTrue(shown.contains("unknown keys "), shown)
        // Listed in the order they appear, the top's first.
        let order = ["'base_ur'", "'models.llm.versoin'", "'models.llm.variants[0].requirs'", "'models.llm.variants[1].requires.min_memroy'"]
        let positions = try order.map { try XCTUnwrap(shown.range(of: $0)?.lowerBound, $0) }
        XCTAssertEqual(positions, positions.sorted(), shown)
    }

    /// A key far from every known one gets no suggestion, only the known keys of its place.
    func testNoSuggestionWhenNothingIsClose() throws {
        let shown = try refusal("""
            models:
              m:
                variants:
                  - {name: a, files: [a.bin], colour: red}
            """)
        XCTAssertTrue(shown.contains("unknown key 'models.m.variants[0].colour' ("), shown)
        XCTAssertFalse(shown.contains("did you mean"), shown)
        XCTAssertTrue(shown.contains("known in a variant (models.NAME.variants[i]): name, version, files, file, requires, meta, layout"), shown)
    }

    /// A key known elsewhere says where it goes.
    func testAKeyAtTheWrongLevelSaysWhereItBelongs() throws {
        let shown = try refusal("""
            version: 1.0.0
            models:
              llm:
                requires: {min_memory: 6GiB}
                variants:
                  - {name: a, files: [a.bin], default_variant: a}
            """)
        assertContains(shown, [
            "'version' (a key of models.NAME, models.NAME.variants[i] or prototypes, not of the top level)",
            "'models.llm.requires' (a key of models.NAME.variants[i], not of models.NAME)",
            "'models.llm.variants[0].default_variant' (a key of models.NAME, not of models.NAME.variants[i])",
        ])
    }

    /// Paths in value errors use the same form as unknown keys: `[i]` for list items.
    func testValueErrorsInsideListsUseIndexPaths() throws {
        let cases: [(String, String)] = [
            ("requires: {min_memory: lots}", "models.llm.variants[0].requires.min_memory: 'lots' is not an amount of memory"),
            ("requires: {accelerators: {gpu: true}}", "models.llm.variants[0].requires.accelerators must list names"),
            ("requires: {platforms: {ios: seventeen}}", "models.llm.variants[0].requires.platforms.ios: 'seventeen' is not an OS version"),
            ("requires: [6GiB]", "models.llm.variants[0].requires must be a mapping of requirements"),
            ("layout: flat", "models.llm.variants[0].layout 'flat' is not one of zip, tree"),
            ("meta: [1]", "models.llm.variants[0].meta must be a mapping"),
        ]
        for (extra, expected) in cases {
            let shown = try refusal("models:\n  llm:\n    version: 1.0.0\n    variants:\n      - {name: a, files: [a.bin], \(extra)}\n")
            XCTAssertTrue(shown.contains(expected), "\(extra): \(shown)")
            XCTAssertFalse(shown.contains("Index"), shown)
        }
    }

    /// A key that is not a plain name is quoted in a path, its control characters escaped.
    func testKeysThatAreNotPlainNamesAreQuotedAndEscaped() throws {
        let shown = try refusal("""
            models:
              "llama 3.2":
                version: 1.0.0
                files: [a.bin]
                "col\\u001B[31mour": red
              "bell\\u0007":
                version: 1.0.0
                files: [a.bin]
                "\\u0007": x
            """)
        assertContains(shown, [
            #"'models."bell\u{7}"."\u{7}"'"#,
            #"'models."llama 3.2"."col\u{1B}[31mour"'"#,
        ])
    }

    /// Duplicate keys are refused where they are (YAML forbids them; the last one silently won).
    func testDuplicateKeysAreRefusedNamingBothLines() throws {
        assertContains(try refusal("channel: a\nbase_url: x\nchannel: b\n"), ["duplicate key 'channel' (lines 1 and 3)"])
        assertContains(try refusal("models:\n  m:\n    version: 1.0.0\n    files: [a]\n    meta: {x: 1, x: 2}\n"), ["duplicate key 'models.m.meta.x' (twice on line 5)"])
        assertContains(try refusal("models:\n  m: {version: 1.0.0, files: [a]}\n  m: {version: 2.0.0, files: [b]}\n"), ["duplicate key 'models.m' (lines 2 and 3)"])
    }

    /// A merge (`<<`) still lets a mapping's own keys override the merged ones.
    func testMergedKeysAreNotDuplicates() throws {
        let work = try Scratch()
        let path = try work.write("modelcast.yml", text: """
            models:
              m:
                <<: {version: 1.0.0, layout: tree}
                version: 2.0.0
                files: [a.bin]
            """)
        let config = try PublishConfigFile.load(path: path)
        XCTAssertEqual(config.models.first?.version, "2.0.0")
        XCTAssertEqual(config.models.first?.layout, .tree)
    }

    /// A key that is a list or a mapping was silently ignored; now it is named.
    func testKeysThatAreNotTextAreRefused() throws {
        assertContains(try refusal("? [a, b]\n: c\nbase_url: x\n"), ["a key that is not text at the top level (line 1)"])
        assertContains(try refusal("models:\n  m:\n    version: 1.0.0\n    files: [a]\n    meta: {[x]: 1}\n"), ["a key that is not text at models.m.meta (line 5)"])
    }

    /// Bytes that are not UTF-8 were replaced with U+FFFD without a word, so a path in the
    /// file named another file.
    func testAFileThatIsNotUTF8IsRefusedNamingTheByte() throws {
        let work = try Scratch()
        let path = try work.write("modelcast.yml", Array("models:\n  m:\n    version: 1.0.0\n    files: [mod".utf8) + [0xFF, 0xFE] + Array("el.bin]\n".utf8))
        let shown = "\(try XCTUnwrap(Result { try PublishConfigFile.load(path: path) }.failure))"
        XCTAssertTrue(shown.contains("config \(path) is not UTF-8 text: byte 0xFF at line 4, column 16"), shown)
    }

    /// Numbers JSON cannot carry are refused in meta: before, `1e400` or `.inf` reached the
    /// manifest writer and crashed publish (a precondition), and an integer past 64 bits
    /// silently became a string.
    func testNumbersJSONCannotCarryAreRefused() throws {
        for (value, expected) in [("1e400", "models.m.meta.x: 1e400 is not a finite number"), (".inf", "models.m.meta.x: .inf is not a finite number"),
                                  (".nan", "models.m.meta.x: .nan is not a finite number"),
                                  ("123456789012345678901234567890", "models.m.meta.x: 123456789012345678901234567890 is not a 64-bit integer")] {
            let shown = try refusal("models:\n  m:\n    version: 1.0.0\n    files: [a]\n    meta: {x: \(value)}\n")
            XCTAssertTrue(shown.contains(expected), "\(value): \(shown)")
        }
        let quoted = try Scratch()
        let path = try quoted.write("modelcast.yml", text: "models:\n  m:\n    version: 1.0.0\n    files: [a]\n    meta: {x: \"1e400\"}\n")
        XCTAssertEqual(try PublishConfigFile.load(path: path).models.first?.meta["x"], .string("1e400"), "quoted, it is text")
    }

    /// A YAML syntax error is one line with its place, however long the offending line is.
    func testSyntaxErrorsAreOneLineWithThePlace() throws {
        let shown = try refusal("base_url: x\nmodels: [" + String(repeating: "a, ", count: 50_000) + "\n: :\n")
        XCTAssertTrue(shown.contains("is not valid YAML: line "), shown.prefix(300).description)
        XCTAssertLessThan(shown.count, 400, "the 150 KB line is not printed: \(shown.prefix(300))")
        XCTAssertFalse(shown.contains("\n"), shown.prefix(300).description)
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
