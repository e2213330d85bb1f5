import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport
import Yams

/// Issue 47, item 4: hostile config files, as a table. Each is refused with one
/// error that names the file and the key's path, carries no raw control character and
/// ends the command with status 1; none crashes. The wrong-type cases are generated from
/// the key definitions, so a key added later is covered without another line here.
final class ConfigHostileInputTests: XCTestCase {
    /// The error loading `bytes` gives (failing the test when it loads). How fast a big file
    /// is refused is a ratio test of its own (no wall-clock bound: a loaded machine trips it).
    func refusal(_ bytes: [UInt8], _ context: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let work = try Scratch()
        let path = try work.write("modelcast.yml", bytes)
        do {
            _ = try PublishConfigFile.load(path: path)
            XCTFail("\(context): accepted", file: file, line: line)
            return ""
        } catch let error as ModelCastError {
            let shown = "\(error)"
            XCTAssertTrue(shown.hasPrefix("config \(path)"), "\(context): names the file: \(shown.prefix(300))", file: file, line: line)
            XCTAssertEqual(ExitStatus(for: error), .refused, "\(context): \(shown.prefix(300))", file: file, line: line)
            XCTAssertFalse(containsControlCharacter(shown), "\(context): a raw control character: \(shown.prefix(300).debugDescription)", file: file, line: line)
            XCTAssertLessThan(shown.utf8.count, 12_000, "\(context): the error fits a screen or two", file: file, line: line)
            return shown
        }
    }

    /// Values of the wrong type for each kind of key.
    static func wrongValues(for kind: ConfigKind) -> [String] {
        switch kind {
        case .text, .path: return ["{a: 1}", "[1, 2]", "~", "true", "", "[]"]
        case .choice: return ["{a: 1}", "[zip]", "~", "false", "nonsense", "\"\\u001B[2J\""]
        case .paths, .names: return ["{a: b}", "[[a]]", "[~]", "true", "[{a: b}]"]
        case .memory, .bytes: return ["{a: b}", "[[1]]", "[6GiB]", "[1GB, 2GB]", "lots", "-1", "1e400", ".inf", "99999999999999999999999", "18446744073709551616 B", "8 parsecs"]
        case .versions: return ["[ios]", "5", "{ios: [17]}", "{ios: seventeen}", "{ios: ~}", "{ios: {a: 1}}"]
        case .anyValue: return ["1e400", "-.inf", ".NaN", "123456789012345678901234567890", "{a: .inf}"]
        case .anyMapping: return ["[1]", "5", "text", "~", "{a: 1e999}", "{a: [1, .nan]}"]
        case .section, .named: return ["5", "[a]", "text", "~", "true"]
        case .list: return ["5", "{a: b}", "[5]", "[[a]]", "~"]
        case .choiceOrSection: return ["[zip]", "~", "false", "nonsense", "\"\\u001B[2J\"", "{policy: sometimes}", "{netwrk: any}", "{network: wifi}"]
        }
    }

    /// Every key at every place, given each wrong value in the example file: refused,
    /// naming that key's path.
    func testWrongTypesInEveryKeyAreRefusedNamingThePath() throws {
        let root = try XCTUnwrap(try Yams.compose(yaml: ConfigSchema.example))
        var cases = 0
        for section in ConfigSchema.sections {
            for field in section.fields {
                let at = try XCTUnwrap(ConfigReferenceTests.place(for: field.name, of: section, in: root))
                for wrong in Self.wrongValues(for: field.kind) {
                    let value = try XCTUnwrap(try Yams.compose(yaml: "k: \(wrong)")?.mapping?["k"], wrong)
                    let text = try Yams.serialize(node: ConfigReferenceTests.replacing(root, at: at.steps[...], key: field.name, with: value))
                    let context = "\(at.appending(field.name)): \(wrong)"
                    let shown = try refusal(Array(text.utf8), context)
                    XCTAssertTrue(shown.contains("\(at.appending(field.name))"), "\(context): names the path: \(shown.prefix(400))")
                    cases += 1
                }
            }
        }
        XCTAssertGreaterThan(cases, 180)
    }

    func testHostileFilesGetAClearError() throws {
        let head = "base_url: https://cdn.example.com\nmodels:\n  m:\n    version: 1.0.0\n    files: [m.bin]\n"
        var laughs = "    meta:\n      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1..<9 { laughs += "      l\(level): &l\(level) [" + Array(repeating: "*l\(level - 1)", count: 9).joined(separator: ",") + "]\n" }
        var mergeBomb = "a0: &a0 {k0: x, k1: x, k2: x, k3: x, k4: x, k5: x, k6: x, k7: x}\n"
        for level in 1..<12 { mergeBomb += "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 8).joined(separator: ", ") + "]\n" }
        let manyUnknown = (0..<40_000).map { "k\($0): 1\n" }.joined()
        let cases: [(String, [UInt8], [String])] = [
            // Huge numbers.
            ("min_memory past 64 bits", Array((head.replacingOccurrences(of: "    files: [m.bin]\n", with: "") + "    variants:\n      - {name: a, files: [a], requires: {min_memory: 99999999999999999999999GiB}}\n").utf8),
             ["models.m.variants[0].requires.min_memory: '99999999999999999999999GiB' is not an amount of memory"]),
            ("meta number past 64 bits", Array((head + "    meta: {n: -99999999999999999999}\n").utf8), ["models.m.meta.n: -99999999999999999999 is not a 64-bit integer"]),
            ("classes as infinity", Array((head + "prototypes: {version: 1.0.0, file: p.json, classes: .Inf}\n").utf8), ["prototypes.classes: .Inf is not a finite number"]),
            // Nesting and aliases.
            ("lists nested 100,000 deep", Array((head + "x: " + String(repeating: "[", count: 100_000) + "\n").utf8), ["nested more than 64 levels deep"]),
            ("mappings indented 500 deep", Array((head + "    meta:\n" + (0..<500).map { String(repeating: " ", count: 6 + $0) + "k:\n" }.joined()).utf8), ["nested more than 64 levels deep"]),
            ("billion laughs", Array((head + laughs).utf8), ["aliases expand it past 1048576 bytes"]),
            ("a merge bomb", Array((mergeBomb + head).utf8), ["aliases expand it past 1048576 bytes"]),
            ("an undefined alias", Array((head + "    meta: *nowhere\n").utf8), ["is not valid YAML: line 6, column 11: found undefined alias"]),
            ("an alias to itself", Array((head + "    meta: &x {a: *x}\n").utf8), ["is not valid YAML: line 6, column 18: found undefined alias"]),
            ("merging a scalar", Array((head.replacingOccurrences(of: "    version: 1.0.0\n", with: "    <<: 1.0.0\n")).utf8),
             ["'<<' at models.m (line 4) merges something other than a mapping"]),
            // Encodings and characters.
            ("UTF-16", [0xFF, 0xFE] + Array("b\0a\0".utf8), ["is not UTF-8 text: byte 0xFF at line 1, column 1 (save the file as UTF-8)"]),
            ("Latin-1 in a path", Array("models:\n  m:\n    version: 1.0.0\n    files: [mod".utf8) + [0xE8] + Array("le.bin]\n".utf8), ["is not UTF-8 text: byte 0xE8 at line 4, column 16"]),
            ("a surrogate encoded in UTF-8", Array("channel: ".utf8) + [0xED, 0xA0, 0x80] + [0x0A], ["is not UTF-8 text: byte 0xED at line 1, column 10"]),
            ("a raw escape character", Array("channel: a\u{1B}[2Jb\n".utf8), ["is not valid YAML", "control characters are not allowed", "(0x1B)"]),
            ("NUL in the file", Array("channel: a".utf8) + [0] + Array("b\n".utf8), ["is not valid YAML"]),
            ("an escape in a quoted key", Array("\"chan\\e[2Jnel\": beta\n".utf8), [#"unknown key '"chan\u{1B}[2Jnel"'"#]),
            ("a bidi override in a model name", Array((head + "  \"m\u{202E}lacol\": {version: 1.0.0, files: [a], colour: red}\n").utf8), [#"'models."m\u{202E}lacol".colour'"#]),
            ("a key of 100,000 characters", Array(("? " + String(repeating: "k", count: 100_000) + "\n: 1\n").utf8), ["unknown key '\"" + String(repeating: "k", count: 64) + "\"…'"]),
            // Keys.
            ("duplicate top-level keys", Array((head + "base_url: https://other.example\n").utf8), ["duplicate key 'base_url' (lines 1 and 6)"]),
            ("duplicate requirement", Array((head.replacingOccurrences(of: "    files: [m.bin]\n", with: "") + "    variants:\n      - {name: a, files: [a], requires: {min_memory: 1GB, min_memory: 2GB}}\n").utf8),
             ["duplicate key 'models.m.variants[0].requires.min_memory' (twice on line 6)"]),
            ("a list as a key", Array((head + "? [a, b]\n: c\n").utf8), ["a key that is not text at the top level (line 6)"]),
            ("40,000 unknown keys", Array((head + manyUnknown).utf8), ["unknown keys 'k0', 'k1',", "and 39950 more"]),
            ("files at the top", Array("files: [a.bin]\nversion: 1.0.0\n".utf8),
             ["'files' (a key of models.NAME, models.NAME.variants[i] or prototypes, not of the top level)", "'version' (a key of models.NAME"]),
            ("a variant's key in the model", Array((head + "    name: big\n").utf8), ["'models.m.name' (a key of models.NAME.variants[i], not of models.NAME)"]),
            ("prototypes' classes in a model", Array((head + "    classes: 3\n").utf8), ["'models.m.classes' (a key of prototypes, not of models.NAME)"]),
            // Shapes.
            ("an empty file", [], ["the file must be a mapping of keys"]),
            ("only a comment", Array("# nothing\n".utf8), ["the file must be a mapping of keys"]),
            ("two documents", Array((head + "---\n" + head).utf8), ["is not valid YAML: line 6, column 1: but found another document (expected a single document in the stream at line 1, column 1)"]),
            ("a tab for indentation", Array("models:\n\tm: {}\n".utf8), ["is not valid YAML: line 2, column 1: found character that cannot start any token"]),
        ]
        for (name, bytes, fragments) in cases {
            let shown = try refusal(bytes, name)
            for fragment in fragments { XCTAssertTrue(shown.contains(fragment), "\(name): missing \(fragment) in \(shown.prefix(600))") }
        }
    }

    /// Values the publish request would refuse later are refused as the file is read, so
    /// the error names the file and the key, not a flag the user never typed
    /// (`--min-app-version '…' is not an app version` for a config's min_app_version).
    func testValuesARequestRefusesAreNamedByTheirKey() throws {
        let head = "base_url: https://cdn.example.com\nmodels:\n  m:\n    version: 1.0.0\n    files: [m.bin]\n"
        let cases: [(String, String)] = [
            ("channel: ''\n", "channel: channel '' must be lowercase letters"),
            ("channel: \"Beta\\u0007\"\n", #"channel: channel 'Beta\u{7}' must be"#),
            ("manifest: ''\n", "manifest: invalid object key ''"),
            ("manifest: models/m.json\n", "manifest: manifest key 'models/m.json' must end in .json and not live under models/"),
            ("manifest_cache_control: max-age=31536000\n", "manifest_cache_control: manifest Cache-Control 'max-age=31536000' is refused"),
            ("min_app_version: 99999999999999999999.1\n", "min_app_version: '99999999999999999999.1' is not an app version"),
            ("min_app_version: two\n", "min_app_version: 'two' is not an app version"),
        ]
        for (line, expected) in cases {
            let shown = try refusal(Array((head + line).utf8), line)
            XCTAssertTrue(shown.contains(expected), "\(line): \(shown)")
        }
        let base = try refusal(Array(head.replacingOccurrences(of: "https://cdn.example.com", with: "ftp://cdn.example.com").utf8), "ftp")
        XCTAssertTrue(base.contains("base_url: base URL 'ftp://cdn.example.com' must start with https://"), base)
        let name = try refusal(Array((head + "  \"a b\": {version: 1.0.0, files: [a]}\n").utf8), "name")
        XCTAssertTrue(name.contains(#"models."a b": model name 'a b' may use only letters"#), name)
    }

    /// Issue 50: a model's licence, download conditions and storage, each bad value refused
    /// as the file is read, naming its key (escaped); a licence URL's password never shown.
    func testLicenceDownloadAndStorageValuesAreRefusedNamingTheKey() throws {
        let head = "base_url: https://cdn.example.com\nmodels:\n  m:\n    version: 1.0.0\n    files: [m.bin]\n"
        let cases: [(String, String)] = [
            ("    licence: {spdx: \"MIT\\u001B[2J\", acceptance: required}\n", #"models.m.licence.spdx: 'MIT\u{1b}[2J' is not an SPDX licence identifier"#),
            ("    licence: {spdx: \"MIT  OR Apache-2.0\"}\n", "models.m.licence.spdx: 'MIT  OR Apache-2.0' is not an SPDX"),
            ("    licence: {spdx: " + String(repeating: "A", count: 129) + "}\n", "models.m.licence.spdx:"),
            ("    licence: {url: \"https://user:hunter2@example.com/LICENSE\"}\n", "models.m.licence.url: a URL with a user name or password (host 'example.com'; the rest is not shown) is refused"),
            ("    licence: {url: \"https://:hunter2@example.com/LICENSE\"}\n", "models.m.licence.url: a URL with a user name or password"),
            ("    licence: {url: \"file:///etc/passwd\"}\n", "models.m.licence.url: 'file:///etc/passwd' is not an http or https URL"),
            ("    licence: {spdx: MIT, acceptance: twice}\n", "models.m.licence.acceptance 'twice' is not one of required, none"),
            ("    licence: {spdx: MIT, acceptence: required}\n", "'models.m.licence.acceptence' (did you mean 'acceptance'?)"),
            ("    licence: MIT\n", "models.m.licence must be a mapping with spdx, url and acceptance"),
            ("    download: {network: satellite}\n", "models.m.download.network 'satellite' is not one of any, unmetered"),
            ("    download: {network: \"wifi\\u0007\"}\n", #"models.m.download.network 'wifi\u{7}' is not one of any, unmetered"#),
            ("    download: {policy: on-demand, cellular_max: -1}\n", "models.m.download.cellular_max: '-1' is not a byte count from 0 to 2^53"),
            ("    download: {cellular_max: 9223372036854775808}\n", "models.m.download.cellular_max: '9223372036854775808' is not a byte count"),
            ("    download: {charging: sometimes}\n", "models.m.download.charging 'sometimes' is not one of required, any"),
            ("    download: {polcy: on-demand}\n", "'models.m.download.polcy' (did you mean 'policy'?)"),
            ("    download: sometimes\n", "models.m.download 'sometimes' is not one of essential, prefetch, on-demand"),
            ("    storage: {install_size: -1}\n", "models.m.storage.install_size: '-1' is not a byte count from 0 to 2^53"),
            ("    storage: {install_size: 9223372036854775807}\n", "models.m.storage.install_size: '9223372036854775807' is not a byte count"),
            ("    storage: {install_size: 1GB, priority: 101}\n", "models.m.storage.priority: '101' is not a storage priority (an integer from 0 to 100"),
            ("    storage: {priority: -1}\n", "models.m.storage.priority: '-1' is not a storage priority"),
            ("    storage: {install_size: 1GB, size: 2GB}\n", "unknown key 'models.m.storage.size' (known in storage (models.NAME.storage): install_size, priority)"),
        ]
        for (line, expected) in cases {
            let shown = try refusal(Array((head + line).utf8), line)
            XCTAssertTrue(shown.contains(expected), "\(line): \(shown)")
            XCTAssertFalse(shown.contains("hunter2"), "\(line): the password was printed: \(shown)")
        }
        // Model-level keys: a variant holding them is refused as a key of the wrong place.
        let variant = "base_url: https://cdn.example.com\nmodels:\n  m:\n    version: 1.0.0\n    variants:\n      - {name: a, files: [a], licence: {spdx: MIT}, storage: {priority: 1}}\n"
        let shown = try refusal(Array(variant.utf8), "variant keys")
        XCTAssertTrue(shown.contains("'models.m.variants[0].licence' (a key of models.NAME, not of models.NAME.variants[i])"), shown)
        XCTAssertTrue(shown.contains("'models.m.variants[0].storage' (a key of models.NAME, not of models.NAME.variants[i])"), shown)
    }

    /// 40,000 unknown keys are refused in time linear in their number: well under 30 times
    /// what 4,000 take (10× is linear; a suggestion search per key against every other
    /// would be 100×).
    func testManyUnknownKeysAreRefusedInLinearTime() throws {
        let head = "base_url: https://cdn.example.com\nmodels:\n  m:\n    version: 1.0.0\n    files: [a]\n"
        func refuse(_ keys: Int) throws -> TimeInterval {
            let start = DispatchTime.now().uptimeNanoseconds
            let shown = try refusal(Array((head + (0..<keys).map { "k\($0): 1\n" }.joined()).utf8), "\(keys) unknown keys")
            XCTAssertTrue(shown.contains("and \(keys - 50) more"), shown.prefix(300).description)
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        _ = try refuse(4_000)  // warm-up
        let small = try refuse(4_000), large = try refuse(40_000)
        XCTAssertLessThan(large, 30 * small, "4,000 keys: \(small) s, 40,000 keys: \(large) s")
    }

    /// A big file that is fine stays fine, and loads in time linear in its size: 40,000 meta
    /// keys (about 700 KB) take well under 30 times what 4,000 take (10× is linear, 100×
    /// quadratic). A ratio within one run, not a wall-clock bound: a loaded machine slows both.
    func testALargeValidFileLoadsInLinearTime() throws {
        let work = try Scratch()
        func load(_ keys: Int) throws -> TimeInterval {
            let text = "base_url: https://cdn.example.com\nmodels:\n  m:\n    version: 1.0.0\n    files: [a]\n    meta:\n" + (0..<keys).map { "      k\($0): \($0)\n" }.joined()
            let path = try work.write("modelcast-\(keys).yml", text: text)
            let start = DispatchTime.now().uptimeNanoseconds
            let config = try PublishConfigFile.load(path: path)
            XCTAssertEqual(config.models.first?.meta.count, keys)
            return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        }
        _ = try load(4_000)  // warm-up: the first load pays for one-time setup
        let small = try load(4_000), large = try load(40_000)
        XCTAssertLessThan(large, 30 * small, "4,000 keys: \(small) s, 40,000 keys: \(large) s")
    }
}
