import Foundation
import XCTest
import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport

/// Issue 47, item 4, through the binary: hostile config files against a target that holds
/// a release and against a new one. Each is refused with exit 1 and one error line that
/// names the file and the key path (control characters escaped), and neither target
/// changes. `meta: {x: 1e400}` used to crash publish in the manifest writer.
final class ConfigHostileCLITests: XCTestCase {
    static let base = "https://cdn.example.com/m"

    func testHostileConfigFilesAreRefusedWithOneClearLine() throws {
        let work = try Scratch()
        let model = try work.write("m.bin", patternBytes(2000, seed: 7))
        let site = work.at("site")
        let first = try modelcast(["publish", model, "--name", "m", "--version", "1.0.0", "--base-url", Self.base, "--to", site], environment: pinnedEnvironment())
        XCTAssertEqual(first.status, 0, first.stderr)
        let before = try snapshot(site)
        let head = "base_url: \(Self.base)\nmodels:\n  m:\n    version: 1.1.0\n"
        let plain = head + "    files: [\(model)]\n"
        var laughs = "    meta:\n      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1..<9 { laughs += "      l\(level): &l\(level) [" + Array(repeating: "*l\(level - 1)", count: 9).joined(separator: ",") + "]\n" }

        let cases: [(String, [UInt8], [String])] = [
            ("a number JSON cannot carry", Array((plain + "    meta: {accuracy: 1e400}\n").utf8), ["models.m.meta.accuracy: 1e400 is not a finite number"]),
            ("infinity", Array((plain + "    meta: {accuracy: -.inf}\n").utf8), ["models.m.meta.accuracy: -.inf is not a finite number"]),
            ("unknown keys at three levels", Array((head + "    variants:\n      - {name: a, files: [\(model)], requirs: {}, requires: {min_memroy: 1GB}}\nchanel: beta\n").utf8),
             ["'chanel' (did you mean 'channel'?)", "'models.m.variants[0].requirs' (did you mean 'requires'?)", "'models.m.variants[0].requires.min_memroy' (did you mean 'min_memory'?)"]),
            ("a control character in a key", Array((plain + "    \"ver\\u001B[2Jsion\": 1\n").utf8), [#"'models.m."ver\u{1B}[2Jsion"'"#]),
            ("a duplicate key", Array((plain + "    version: 1.2.0\n").utf8), ["duplicate key 'models.m.version' (lines 4 and 6)"]),
            ("bytes that are not UTF-8", Array(plain.utf8) + Array("    meta: {note: \"".utf8) + [0xC3, 0x28] + Array("\"}\n".utf8), ["is not UTF-8 text: byte 0xC3 at line 6"]),
            ("a mapping where a list goes", Array((head + "    variants: {name: a}\n").utf8), ["models.m.variants must be a list of variants"]),
            ("an empty channel", Array((plain + "channel: ''\n").utf8), ["channel: channel '' must be lowercase letters"]),
            ("an app version past 64 bits", Array((plain + "min_app_version: 99999999999999999999.1\n").utf8), ["min_app_version: '99999999999999999999.1' is not an app version"]),
            ("a key at the wrong level", Array((plain + "    requires: {min_memory: 1GB}\n").utf8), ["'models.m.requires' (a key of models.NAME.variants[i], not of models.NAME)"]),
            ("billion laughs", Array((plain + laughs).utf8), ["aliases expand it past 1048576 bytes"]),
            // Issue 50: a licence URL's password is never printed; values out of range are named.
            ("a licence URL with a password", Array((plain + "    licence: {url: \"https://ci:hunter2@example.com/LICENSE\"}\n").utf8),
             ["models.m.licence.url: a URL with a user name or password (host 'example.com'; the rest is not shown)"]),
            ("a storage priority of 101", Array((plain + "    storage: {priority: 101}\n").utf8), ["models.m.storage.priority: '101' is not a storage priority"]),
            ("a negative cellular cap", Array((plain + "    download: {policy: on-demand, cellular_max: -1}\n").utf8), ["models.m.download.cellular_max: '-1' is not a byte count"]),
            ("an unknown network class", Array((plain + "    download: {network: \"sat\\u001B[2J\"}\n").utf8), [#"models.m.download.network 'sat\u{1b}[2J' is not one of any, unmetered"#]),
            ("an unknown key in storage", Array((plain + "    storage: {install_size: 1GB, priorty: 1}\n").utf8), ["'models.m.storage.priorty' (did you mean 'priority'?)"]),
            ("nesting 10,000 deep", Array((plain + "    meta: {a: " + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}\n").utf8),
             ["nested more than 64 levels deep"]),
        ]
        for (index, (name, bytes, fragments)) in cases.enumerated() {
            let path = try work.write("hostile-\(index).yml", bytes)
            for target in [site, work.at("fresh-\(index)")] {
                let result = try modelcast(["publish", "--config", path, "--to", target], environment: pinnedEnvironment())
                XCTAssertFalse(result.stderr.contains("Fatal error") || result.stderr.contains("Swift runtime failure"), "\(name): crashed: \(result.stderr.prefix(1000))")
                XCTAssertEqual(result.status, 1, "\(name): \(result.stderr.prefix(1000))")
                XCTAssertEqual(result.stdout, "", name)
                XCTAssertTrue(result.stderr.contains("config \(path)"), "\(name): names the file: \(result.stderr.prefix(500))")
                for fragment in fragments { XCTAssertTrue(result.stderr.contains(fragment), "\(name): missing '\(fragment)' in \(result.stderr.prefix(1000))") }
                let lines = result.stderr.split(separator: "\n").filter { !$0.hasPrefix("Usage") && !$0.hasPrefix("  See") && !$0.isEmpty }
                XCTAssertEqual(lines.count, 1, "\(name): one line: \(result.stderr.prefix(1000))")
                XCTAssertFalse(result.stderr.contains("hunter2"), "\(name): the password was printed")
                XCTAssertFalse(result.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }, "\(name): a raw control character reached the terminal")
            }
            XCTAssertEqual(try snapshot(site), before, "\(name): the target is as it was")
            XCTAssertFalse(FileManager.default.fileExists(atPath: work.at("fresh-\(index)")), "\(name): nothing made at a new target")
        }

        // A version no semantic version can be: refused by the publish's own rule, naming it.
        let huge = try work.write("huge.yml", text: plain.replacingOccurrences(of: "1.1.0", with: "99999999999999999999999.0.0"))
        let result = try modelcast(["publish", "--config", huge, "--to", site], environment: pinnedEnvironment())
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("version '99999999999999999999999.0.0' of model m is not a semantic version"), result.stderr)
        XCTAssertEqual(try snapshot(site), before)
    }
}
