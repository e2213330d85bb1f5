import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Issue 44, item 2, through the binary: a 10 KB config of 5,000 nested `[` killed publish
/// with SIGSEGV; a 453-byte alias file ("billion laughs") was published as a 34 MB manifest
/// that verify and every device refuse; so were a meta value nested 100 deep and one of
/// several MiB. Each is now refused with an error naming the file (or the manifest) and
/// the limit, exit 1 like every config error, and the target is left as it was.
final class ConfigBoundsCLITests: XCTestCase {
    static let base = "https://cdn.example.com/m"

    /// A runtime trap or a signal (SIGSEGV is 139 from a shell, a negative status or 11 here).
    func assertNoCrash(_ result: ProcessOutput, _ context: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(result.stderr.contains("Fatal error") || result.stderr.contains("Swift runtime failure"), "\(context): \(result.stderr.prefix(2000))", file: file, line: line)
        XCTAssertTrue([0, 1, 2, 3].contains(result.status), "\(context): status \(result.status) \(result.stderr.prefix(2000))", file: file, line: line)
    }

    /// A target holding release 1.0.0 of model m, and the model file.
    func publishedTarget(_ work: Scratch) throws -> (site: String, model: String) {
        let model = try work.write("m.bin", patternBytes(2000, seed: 7))
        let site = work.at("site")
        let first = try modelcast(["publish", model, "--name", "m", "--version", "1.0.0", "--base-url", Self.base, "--to", site], environment: pinnedEnvironment())
        XCTAssertEqual(first.status, 0, first.stderr)
        return (site, model)
    }

    func config(_ model: String, meta: String = "", extra: String = "") -> String {
        "base_url: \(Self.base)\nmodels:\n  m:\n    version: 1.1.0\n    files: [\(model)]\n" + meta + extra
    }

    /// The two reports of the issue, reproduced: the crash and the 34 MB manifest.
    func testNestedBracketsAndAliasBombAreRefusedNotCrashedOrPublished() throws {
        let work = try Scratch()
        let (site, model) = try publishedTarget(work)
        let before = try snapshot(site)

        // Each of these ended publish with SIGSEGV (status 139 from a shell) before any check ran.
        let crashes = [
            ("5,000 nested [ in meta", config(model, meta: "    meta: {a: " + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "}\n"), 6),
            ("20,000 nested [ under an unknown key", config(model, extra: "extra: " + String(repeating: "[", count: 20000) + String(repeating: "]", count: 20000) + "\n"), 6),
            ("5,000 nested { under an unknown key", config(model, extra: "extra: " + String(repeating: "{a: ", count: 5000) + "x" + String(repeating: "}", count: 5000) + "\n"), 6),
        ]
        for (index, (name, text, line)) in crashes.enumerated() {
            let path = try work.write("nested-\(index).yml", text: text)
            let result = try modelcast(["publish", "--config", path, "--to", site], environment: pinnedEnvironment())
            assertNoCrash(result, name)
            XCTAssertEqual(result.status, 1, "\(name): \(result.stderr.prefix(500))")
            XCTAssertTrue(result.stderr.contains("config \(path): lists and mappings nested more than 64 levels deep (line \(line))"), "\(name): \(result.stderr.prefix(500))")
        }

        var laughs = "    meta:\n      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1..<7 { laughs += "      l\(level): &l\(level) [" + Array(repeating: "*l\(level - 1)", count: 9).joined(separator: ",") + "]\n" }
        let bomb = try work.write("laughs.yml", text: config(model, meta: laughs))
        XCTAssertLessThan(try Data(contentsOf: URL(fileURLWithPath: bomb)).count, 1000)
        let published = try modelcast(["publish", "--config", bomb, "--to", site], environment: pinnedEnvironment())
        assertNoCrash(published, "billion laughs")
        XCTAssertEqual(published.status, 1, "a manifest verify refuses went live: \(published.stderr.suffix(500))")
        XCTAssertTrue(published.stderr.contains("config \(bomb): its aliases expand it past 1048576 bytes (1 MiB) of values"), published.stderr)
        XCTAssertEqual(try snapshot(site), before, "the target is as it was")
    }

    /// Every hostile shape: a clear error, exit 1, nothing written to an existing target or a new one.
    func testHostileConfigFilesLeaveTheTargetUntouched() throws {
        let work = try Scratch()
        let (site, model) = try publishedTarget(work)
        let before = try snapshot(site)
        let variants = (0..<12).map { "      - {name: v\($0), files: [\(model)]}\n" }.joined()
        let cases: [(String, String, [String])] = [
            ("5,000 nested [ under an unknown key", config(model, extra: "extra: " + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + "\n"),
             ["lists and mappings nested more than 64 levels deep"]),
            ("3,000 block sequences", config(model, extra: "extra:\n" + String(repeating: "- ", count: 3000) + "x\n"), ["nested more than 64 levels deep"]),
            ("block mappings indented 200 deep", config(model, meta: "    meta:\n" + (0..<200).map { String(repeating: " ", count: 6 + $0) + "k:\n" }.joined()), ["nested more than 64 levels deep"]),
            ("aliases nesting each other", config(model, meta: "    meta:\n      d0: &d0 [[[[[[[[[[x]]]]]]]]]]\n" + (1..<20).map { "      d\($0): &d\($0) [[[[[[[[[[*d\($0 - 1)]]]]]]]]]]\n" }.joined()),
             ["nested more than 64 levels deep, at 'models.m.meta.d6", "(aliases expanded)"]),
            ("meta nested 100 deep", config(model, meta: "    meta: {a: " + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}\n"), ["nested more than 64 levels deep"]),
            ("a 5 MiB meta value", config(model, meta: "    meta:\n      blob: " + String(repeating: "x", count: 5 << 20) + "\n"), ["is larger than 1048576 bytes (1 MiB)"]),
            // Within the config's own limit (64 levels), but a variant's copy of the model's meta sits two levels deeper in the manifest.
            ("meta the manifest nests past 64", "base_url: \(Self.base)\nmodels:\n  m:\n    version: 1.1.0\n    meta: {a: " + String(repeating: "[", count: 60) + "x" + String(repeating: "]", count: 60) + "}\n    variants:\n" + variants,
             ["manifest manifest.json (to publish): it nests arrays and objects more than 64 levels deep, at models.m.variants[0].meta.a[0][0]", "nothing was written"]),
            // 400 KB of meta, shared by twelve variants: a 5 MB manifest.
            ("meta the manifest repeats past 4 MiB", "base_url: \(Self.base)\nmodels:\n  m:\n    version: 1.1.0\n    meta: {notes: " + String(repeating: "y", count: 400_000) + "}\n    variants:\n" + variants,
             ["manifest manifest.json (to publish): ", "bytes (models.m.variants takes", "more than the 4194304 that devices and verify read (4 MiB)"]),
        ]
        for (index, (name, text, fragments)) in cases.enumerated() {
            let path = try work.write("hostile-\(index).yml", text: text)
            for target in [site, work.at("fresh-\(index)")] {
                let start = Date()
                let result = try modelcast(["publish", "--config", path, "--to", target], environment: pinnedEnvironment())
                assertNoCrash(result, name)
                XCTAssertEqual(result.status, 1, "\(name): \(result.stderr.prefix(1000))")
                XCTAssertEqual(result.stdout, "", name)
                for fragment in fragments { XCTAssertTrue(result.stderr.contains(fragment), "\(name): missing '\(fragment)' in \(result.stderr.prefix(1000))") }
                XCTAssertTrue(result.stderr.contains("config \(path)") || result.stderr.contains("manifest manifest.json (to publish): "), "\(name): names the file or the manifest: \(result.stderr.prefix(500))")
                XCTAssertLessThan(Date().timeIntervalSince(start), 30, "\(name): refused without working through the expansion")
            }
            XCTAssertEqual(try snapshot(site), before, "\(name): the target is as it was")
            XCTAssertFalse(FileManager.default.fileExists(atPath: work.at("fresh-\(index)/manifest.json")), "\(name): nothing published to a new target")
        }
    }

    /// The same limits hold when the value comes from `--meta` flags rather than a config file.
    func testMetaFromFlagsPastTheDeviceLimitsIsRefused() throws {
        let work = try Scratch()
        let (site, model) = try publishedTarget(work)
        let before = try snapshot(site)
        let deep = Array(repeating: "a", count: 100).joined(separator: ".")
        let nested = try modelcast(["publish", model, "--name", "m", "--version", "1.1.0", "--meta", "\(deep)=x", "--base-url", Self.base, "--to", site], environment: pinnedEnvironment())
        assertNoCrash(nested, "--meta nested 100 deep")
        XCTAssertEqual(nested.status, 1, "a manifest verify refuses went live: \(nested.stderr.suffix(500))")
        XCTAssertTrue(nested.stderr.contains("manifest manifest.json (to publish): it nests arrays and objects more than 64 levels deep, at models.m.meta.a.a.a.a.a… (64 keys), deeper than devices and verify read"), nested.stderr)
        XCTAssertEqual(try snapshot(site), before)

        // Twelve 120 KB values for every model of three: 4.3 MB of meta.
        let models = try (1...2).map { try work.write("m\($0).bin", patternBytes(100, seed: UInt32($0))) }
        let flags = (0..<12).flatMap { ["--meta", "k\($0)=" + String(repeating: "z", count: 120_000)] }
        let big = try modelcast(["publish", "m=" + model, "n=" + models[0], "o=" + models[1], "--version", "1.1.0"] + flags + ["--base-url", Self.base, "--to", site], environment: pinnedEnvironment())
        assertNoCrash(big, "--meta past 4 MiB")
        XCTAssertEqual(big.status, 1, "a manifest verify refuses went live: \(big.stderr.suffix(500))")
        XCTAssertTrue(big.stderr.contains("more than the 4194304 that devices and verify read (4 MiB)"), big.stderr)
        XCTAssertEqual(try snapshot(site), before)
    }

    /// Aliases that share a value are still fine, and what goes live passes verify.
    func testSharedMetaThroughAliasesPublishesAndVerifies() throws {
        let work = try Scratch()
        let model = try work.write("m.bin", patternBytes(2000, seed: 7))
        let other = try work.write("n.bin", patternBytes(2000, seed: 8))
        let path = try work.write("shared.yml", text: """
            base_url: \(Self.base)
            models:
              m: {version: 1.0.0, files: [\(model)], meta: &shared {features: [a, b], hardware: {gpu: true}}}
              n: {version: 1.0.0, files: [\(other)], meta: *shared}
            """)
        let site = work.at("site")
        let published = try modelcast(["publish", "--config", path, "--to", site], environment: pinnedEnvironment())
        XCTAssertEqual(published.status, 0, published.stderr)
        let verified = try modelcast(["verify", site])
        XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr)
    }
}
