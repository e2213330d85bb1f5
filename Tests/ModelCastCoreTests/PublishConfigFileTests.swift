import Foundation
import XCTest
import ModelCastFormat
import ModelCastCore
import ModelCastTestSupport

/// Issue 26, item 6: a config file is decoded into typed keys, each scalar kept as
/// written. Every field survives every hostile value with an error naming the file and
/// the key, never a crash or a silently changed value.
final class PublishConfigFileTests: XCTestCase {
    func load(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> (path: String, result: Result<PublishConfigFile, Error>) {
        let work = try Scratch()
        let path = try work.write("modelcast.yml", text: text)
        return (path, Result { try PublishConfigFile.load(path: path) })
    }

    func message(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let (path, result) = try load(text)
        switch result {
        case .success: XCTFail("accepted:\n\(text)", file: file, line: line); return ""
        case .failure(let error):
            let shown = "\(error)"
            XCTAssertTrue(shown.contains("config \(path)"), "the error names the file: \(shown)", file: file, line: line)
            return shown
        }
    }

    /// Scalars with no string field to go to keep the type YAML's plain rules give them;
    /// a timestamp keeps every character written (it lost its time of day before).
    func testMetaValuesKeepTheirTypesAndTimestampsTheirText() throws {
        let config = try load("""
            meta:
              released: 2026-03-27T10:15:00Z
              day: 2026-03-27
              accuracy: 0.950
              classes: 10
              quoted: "10"
              enabled: true
              nothing: ~
              nested: {list: [1, "two", 3.5], deep: {x: null}}
            """).result.get()
        XCTAssertEqual(config.meta["released"], .string("2026-03-27T10:15:00Z"))
        XCTAssertEqual(config.meta["day"], .string("2026-03-27"))
        XCTAssertEqual(config.meta["accuracy"], .double(0.95))
        XCTAssertEqual(config.meta["classes"], .int(10))
        XCTAssertEqual(config.meta["quoted"], .string("10"))
        XCTAssertEqual(config.meta["enabled"], .bool(true))
        XCTAssertEqual(config.meta["nothing"], .null)
        XCTAssertEqual(config.meta["nested"], .object([
            .init("deep", .object([.init("x", .null)])),
            .init("list", .array([.int(1), .string("two"), .double(3.5)])),
        ]))
    }

    /// String fields take the text as written, whatever YAML would type it as.
    func testStringFieldsKeepTheTextAsWritten() throws {
        let config = try load("""
            min_app_version: 2.10
            channel: 2026-03-27
            models:
              m:
                version: 1.10
                files: [a.bin, 7]
            """).result.get()
        XCTAssertEqual(config.minAppVersion, "2.10")
        XCTAssertEqual(config.channel, "2026-03-27")
        XCTAssertEqual(config.models.first?.version, "1.10")
        XCTAssertEqual(config.models.first?.files.map { PathText.lastComponent($0) }, ["a.bin", "7"])
    }

    /// Each string field refuses a mapping, a list, a bare null and a bool, naming the key.
    func testEveryStringFieldRefusesNonStringsNamingTheKey() throws {
        let fields = ["profile", "base_url", "to", "manifest", "manifest_cache_control", "channel", "min_app_version"]
        for field in fields {
            for value in ["{a: 1}", "[1, 2]", "~", "true"] {
                let shown = try message("\(field): \(value)\n")
                XCTAssertTrue(shown.contains("\(field) must be a string"), "\(field): \(value) → \(shown)")
                // The value is named: the scalar as written, else its shape.
                XCTAssertTrue(shown.contains(value.hasPrefix("{") || value.hasPrefix("[") ? "not a mapping or a list" : "not '\(value)'"), "\(field): \(value) → \(shown)")
            }
        }
        for (key, value) in [("version", "{a: 1}"), ("version", "[1]"), ("version", "~"), ("layout", "[zip]"), ("layout", "false")] {
            let shown = try message("models:\n  m:\n    files: [a.bin]\n    \(key): \(value)\n" + (key == "version" ? "" : "    version: 1.0.0\n"))
            XCTAssertTrue(shown.contains("models.m.\(key) must be a string"), "\(key): \(value) → \(shown)")
        }
    }

    /// Sections of the wrong shape are refused naming the section.
    func testSectionsOfTheWrongShapeAreRefused() throws {
        let cases: [(String, String)] = [
            ("", "must be a mapping of keys"),
            ("- a\n- b\n", "must be a mapping of keys"),
            ("just text\n", "must be a mapping of keys"),
            ("models: 5\n", "models must be a mapping"),
            ("models: [a, b]\n", "models must be a mapping"),
            ("models:\n  m: 1.0.0\n", "models.m must be a mapping"),
            ("models:\n  m:\n    version: 1.0.0\n    files: {a: b}\n", "models.m.files must list file paths"),
            ("models:\n  m:\n    version: 1.0.0\n    files: [[a]]\n", "models.m.files must list file paths"),
            ("models:\n  m:\n    version: 1.0.0\n    files: [~]\n", "models.m.files must list file paths"),
            ("models:\n  m:\n    version: 1.0.0\n    files: []\n", "models.m.files is missing"),
            ("models:\n  m:\n    files: [a.bin]\n", "models.m.version is missing"),
            ("models:\n  m:\n    version: 1.0.0\n    files: [a]\n    meta: [1]\n", "models.m.meta must be a mapping"),
            ("models:\n  m:\n    version: 1.0.0\n    files: [a]\n    layout: flat\n", "models.m.layout 'flat' is not one of zip, tree"),
            ("meta: 3\n", "meta must be a mapping"),
            ("prototypes: [a]\n", "prototypes must be a mapping"),
            ("prototypes:\n  version: 1.0.0\n  file: p.json\n  layout: tree\n", "unknown key 'prototypes.layout'"),
            ("profile: nope\n", "unknown profile 'nope'"),
            ("a: [unclosed\n", "is not valid YAML"),
        ]
        for (text, expected) in cases {
            let shown = try message(text)
            XCTAssertTrue(shown.contains(expected), "\(text.debugDescription) → \(shown)")
        }
    }

    /// Every unknown key, at the top and in every model, in one error.
    func testUnknownKeysAreReportedTogether() throws {
        let shown = try message("""
            base_ur: x
            chanel: beta
            models:
              b:
                versoin: 1.0.0
                files: [a]
              a:
                colour: red
                version: 1.0.0
                files: [a]
            """)
        for fragment in ["'base_ur' (did you mean 'base_url'?)", "'chanel' (did you mean 'channel'?)", "'models.b.versoin' (did you mean 'version'?)", "'models.a.colour'"] {
            XCTAssertTrue(shown.contains(fragment), "missing \(fragment): \(shown)")
        }
        XCTAssertLessThan(try XCTUnwrap(shown.range(of: "models.a.colour")).lowerBound, try XCTUnwrap(shown.range(of: "models.b.versoin")).lowerBound, "models in name order")
    }

    /// Prototypes: `file` or `files`, and `classes` kept as a number in its meta.
    func testPrototypesSection() throws {
        let config = try load("prototypes:\n  version: 2.1.0\n  file: p/v2.json\n  classes: 150\n").result.get()
        let prototypes = try XCTUnwrap(config.prototypes)
        XCTAssertEqual(prototypes.version, "2.1.0")
        XCTAssertEqual(prototypes.files.map { PathText.lastComponent($0) }, ["v2.json"])
        XCTAssertEqual(prototypes.meta["classes"], .int(150))
    }

    /// A missing file is named by the key the reference calls required: `file` for the
    /// prototypes (`files` is its other spelling), `files` for a model or a variant.
    func testAMissingFileIsNamedByItsRequiredKey() throws {
        XCTAssertTrue(try message("prototypes:\n  version: 2.1.0\n").contains("prototypes.file is missing"))
        XCTAssertTrue(try message("prototypes:\n  version: 2.1.0\n  files: []\n").contains("prototypes.file is missing"))
        XCTAssertTrue(try message("models:\n  m: {version: 1.0.0}\n").contains("models.m.files is missing"))
        XCTAssertTrue(try message("models:\n  m:\n    version: 1.0.0\n    variants: [{name: a, file: []}]\n").contains("models.m.variants[0].files is missing"))
    }

    /// Hostile YAML: duplicate keys, anchors and merges, deep nesting, control characters.
    func testHostileYAMLNeverCrashes() throws {
        for text in [
            "channel: a\nchannel: b\n",
            "base: &b {version: 1.0.0, files: [a]}\nmodels:\n  m: *b\n",
            "models:\n  m:\n    <<: {version: 1.0.0}\n    files: [a]\n",
            "meta: " + String(repeating: "[", count: 400) + String(repeating: "]", count: 400) + "\n",
            "channel: \"a\\u0007b\"\n",
            "\u{1}\n",
        ] {
            _ = try load(text)   // an error or a value; never a crash
        }
    }
}
