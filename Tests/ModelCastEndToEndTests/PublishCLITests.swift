import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Runs `modelcast publish` as a pipeline would, against real directories.
final class PublishCLITests: XCTestCase {
    let golden = repositoryRoot + "/Tests/ModelCastEndToEndTests/Golden/publish"
    let base = "https://cdn.example.com/models"

    /// A fixed clock, so manifests are reproducible and golden files stable.
    func publish(_ arguments: [String], epoch: Int = 1_790_000_000) throws -> ProcessOutput {
        let environment = pinnedEnvironment(epoch: epoch)
        return try modelcast(["publish"] + arguments, environment: environment)
    }

    @discardableResult
    func publishOK(_ arguments: [String], epoch: Int = 1_790_000_000, file: StaticString = #filePath, line: UInt = #line) throws -> ProcessOutput {
        let result = try publish(arguments, epoch: epoch)
        XCTAssertEqual(result.status, 0, "publish \(arguments) failed: \(result.stderr)", file: file, line: line)
        return result
    }

    func read(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    /// Golden-checks the manifest and, for `hosting`, every hosting file (the
    /// target's absolute path is replaced by <ROOT>).
    func checkGolden(site: Scratch, profile: String, manifest: String = "manifest.json", hosting: Bool = false) throws {
        try assertGolden(try read(site.at(manifest)), named: "\(profile)-manifest.json", in: golden)
        guard hosting else { return }
        for file in ["_headers", "_modelcast/objects.json", "_modelcast/upload-aws.sh", "_modelcast/upload-rclone.sh", "_modelcast/upload-wrangler.sh", "_modelcast/nginx.conf"] {
            let text = try read(site.at(file)).replacingOccurrences(of: realPathOf(site.path), with: "<ROOT>")
            try assertGolden(text, named: "\(profile)-hosting-" + file.replacingOccurrences(of: "_modelcast/", with: ""), in: golden)
        }
    }

    func realPathOf(_ path: String) -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map { _ in path } ?? URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }

    // MARK: - Profiles, byte for byte

    func testModelcastProfileTwoReleasesWithRollbackAndHistory() throws {
        let site = try Scratch()
        try publishOK(["examples/models/tiny-llm.gguf", "examples/models/tiny-llm-mmproj.gguf", "--name", "tiny-llm",
                       "--version", "1.0.0", "--base-url", base, "--to", site.path, "--meta", "description=first"])
        try publishOK(["examples/models/tiny-llm.gguf", "examples/models/tiny-llm-mmproj.gguf", "--name", "tiny-llm",
                       "--version", "1.1.0", "--base-url", base, "--to", site.path, "--meta", "description=second",
                       "--min-app-version", "3.0.0"], epoch: 1_790_003_600)
        try checkGolden(site: site, profile: "modelcast", hosting: true)
        // The history holds both releases; the live manifest is the second one, byte for byte.
        XCTAssertEqual(try read(site.at("manifests/00000002.json")), try read(site.at("manifest.json")))
        let first = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site.at("manifests/00000001.json"))), source: "history")
        XCTAssertEqual(first.models["tiny-llm"]?.version, "1.0.0")
        let live = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site.at("manifest.json"))), source: "live")
        XCTAssertEqual(live.sequence, 2)
        XCTAssertEqual(live.rollback?.sequence, 1)
        XCTAssertEqual(live.rollback?.models["tiny-llm"]?.version, "1.0.0")
        // Every file the manifest names exists with its size and hash.
        for file in live.models.values.flatMap(\.files) + (live.rollback?.models.values.flatMap(\.files) ?? []) {
            let digest = try StreamDigester.digest(ofFileAt: site.at(file.key))
            XCTAssertEqual(digest.sha256.hex, file.sha256)
            XCTAssertEqual(digest.size, file.size)
            XCTAssertEqual(file.url, base + "/" + file.key)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.at(".modelcast-staging")))
    }

    func testNomlensProfile() throws {
        let site = try Scratch()
        let result = try publishOK(["examples/models/TinyClassifier.mlpackage", "--name", "NomLensClassifier", "--version", "1.0.0",
                                    "--profile", "nomlens", "--base-url", "https://api.nomlens.app/model", "--to", site.path,
                                    "--meta", "num_classes=972", "--meta", "class_list_version=v1", "--meta", "training_date=2026-03-27"])
        XCTAssertTrue(result.stderr.contains("unzip step"), "a zipped .mlpackage for nomlens deserves a warning: \(result.stderr)")
        try checkGolden(site: site, profile: "nomlens")
        // Exactly the seed's fields, in the seed's order.
        let keys = try read(site.at("manifest.json")).split(separator: "\n").compactMap { line -> String? in
            let t = line.trimmingCharacters(in: .whitespaces)
            return t.hasPrefix("\"") ? String(t.dropFirst().prefix { $0 != "\"" }) : nil
        }
        XCTAssertEqual(keys, ["version", "url", "sha256", "num_classes", "class_list_version", "training_date", "size_mb"])
    }

    func testTiersProfileFillsRollbackFromHistory() throws {
        let site = try Scratch()
        let common = ["--profile", "tiers", "--base-url", "https://cdn.example.com", "--to", site.path, "--min-app-version", "3.0.0"]
        try publishOK(["1b=examples/models/tiny-llm.gguf", "3b=examples/models/tiny-llm-mmproj.gguf", "--version", "2.0.0",
                       "--meta", "release_notes=Initial release"] + common)
        XCTAssertFalse(try read(site.at("manifest.json")).contains("rollback"), "no previous release, no rollback fields")
        try publishOK(["1b=examples/models/tiny-llm.gguf", "3b=examples/models/tiny-llm-mmproj.gguf", "--version", "2.1.0",
                       "--meta", "1b:release_notes=Improved classification accuracy", "--meta", "3b:release_notes=Better conversation quality"] + common)
        try checkGolden(site: site, profile: "tiers")
        let manifest = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: site.at("manifest.json"))))
        XCTAssertEqual(manifest["current_version"], .string("2.1.0"))
        XCTAssertEqual(manifest["rollback_version"], .string("2.0.0"))
        XCTAssertEqual(manifest["rollback_url_1b"], .string("https://cdn.example.com/models/1b/2.0.0/tiny-llm.gguf"))
        XCTAssertEqual(manifest["rollback_url_3b"], .string("https://cdn.example.com/models/3b/2.0.0/tiny-llm-mmproj.gguf"))
    }

    func testCatalogProfileFromConfigFile() throws {
        let site = try Scratch()
        try publishOK(["--config", "examples/catalog/modelcast.yml", "--to", site.path])
        try checkGolden(site: site, profile: "catalog")
        let manifest = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: site.at("manifest.json"))))
        XCTAssertEqual(manifest["models"]?["tiny-llm"]?["version"], .string("0.3.0"))
        XCTAssertEqual(manifest["models"]?["tiny-classifier"]?["version"], .string("1.2.0"))
        XCTAssertEqual(manifest["prototypes"]?["classes"], .int(3))
    }

    func testLatestProfileUsesAContentDerivedName() throws {
        let site = try Scratch()
        try publishOK(["examples/models/tiny-llm.gguf", "--version", "1.0.0", "--profile", "latest",
                       "--base-url", "https://krausefx.github.io/CoreMLDemo", "--to", site.path, "--manifest-key", "latest_model_details.json"])
        try checkGolden(site: site, profile: "latest", manifest: "latest_model_details.json")
        XCTAssertTrue(FileManager.default.fileExists(atPath: site.at("models/tiny-llm/b67f7c0f-2554-d969-e9bd-3d1e3efbb2fa.gguf")))
        XCTAssertTrue(FileManager.default.fileExists(atPath: site.at("manifests/latest_model_details/00000001.json")))
    }

    // MARK: - Idempotence and version rules

    func testRepublishingTheSameBytesChangesNothing() throws {
        let site = try Scratch()
        let arguments = ["examples/models/TinyClassifier.mlpackage", "--version", "1.0.0", "--base-url", base, "--to", site.path]
        try publishOK(arguments)
        let before = try snapshot(site.path)
        let again = try publishOK(arguments, epoch: 1_800_000_000)
        XCTAssertTrue(again.stdout.contains("unchanged"), again.stdout)
        XCTAssertEqual(try snapshot(site.path), before)
        let json = try publishOK(arguments + ["--json"], epoch: 1_800_000_000)
        XCTAssertTrue(json.stdout.contains("\"unchanged\" : true"), json.stdout)
    }

    /// Only clients that compare version strings (the tiers profile's) are warned about;
    /// the default profile's compare sequences (issue 25, item 14).
    func testStringOrderWarning() throws {
        let site = try Scratch(), tiers = try Scratch()
        let common = ["examples/models/tiny-llm.gguf", "--base-url", base, "--to", site.path]
        try publishOK(common + ["--version", "1.9.0"])
        let result = try publishOK(common + ["--version", "1.10.0"])
        XCTAssertFalse(result.stderr.contains("sorts below"), result.stderr)
        let tiered = ["examples/models/tiny-llm.gguf", "--profile", "tiers", "--meta", "release_notes=n", "--min-app-version", "1.0",
                      "--base-url", base, "--to", tiers.path]
        try publishOK(tiered + ["--version", "1.9.0"])
        let warned = try publishOK(tiered + ["--version", "1.10.0"])
        XCTAssertTrue(warned.stderr.contains("warning: version 1.10.0 of model tiny-llm sorts below the live 1.9.0 as a plain string"), warned.stderr)
    }

    func testDryRunWritesNothing() throws {
        let site = try Scratch()
        try publishOK(["examples/models/tiny-llm.gguf", "--version", "1.0.0", "--base-url", base, "--to", site.path])
        let before = try snapshot(site.path)
        let result = try publishOK(["examples/models/tiny-llm.gguf", "--version", "1.1.0", "--base-url", base, "--to", site.path, "--dry-run"])
        XCTAssertTrue(result.stdout.contains("dry run: would publish sequence 2"), result.stdout)
        XCTAssertTrue(result.stdout.contains("\"version\": \"1.1.0\""), result.stdout)
        XCTAssertEqual(try snapshot(site.path), before)
    }

    // MARK: - Refusals: the message names the value, the target is untouched

    func testRefusalsLeaveTheTargetExactlyAsItWas() throws {
        let site = try Scratch(), src = try Scratch()
        try publishOK(["examples/models/tiny-llm.gguf", "--version", "1.2.0", "--base-url", base, "--to", site.path])
        let before = try snapshot(site.path)
        let changed = try src.write("tiny-llm.gguf", Array(try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/examples/models/tiny-llm.gguf")).dropLast(8)) + [UInt8](repeating: 7, count: 8))
        let cases: [([String], Int32, String)] = [
            (["examples/models/tiny-llm.gguf", "--version", "1.1.0", "--base-url", base, "--to", site.path], 1,
             "version 1.1.0 of model tiny-llm is lower than the live version 1.2.0"),
            ([changed, "--version", "1.2.0", "--base-url", base, "--to", site.path], 1,
             "version 1.2.0 of model tiny-llm is already published with different files"),
            (["examples/models/tiny-llm.gguf", "--version", "1.3.0", "--profile", "nomlens", "--base-url", base, "--to", site.path,
              "--meta", "class_list_version=v1", "--meta", "training_date=2026-01-01"], 1,
             "profile nomlens needs field num_classes (integer) for model tiny-llm"),
            (["examples/models/tiny-llm.gguf", "--version", "1.3.0", "--profile", "nomlens", "--base-url", base, "--to", site.path,
              "--meta", "num_classes=many", "--meta", "class_list_version=v1", "--meta", "training_date=2026-01-01"], 1,
             "num_classes must be a integer, got 'many'"),
            (["examples/models/tiny-llm.gguf", "--version", "1.3.0", "--profile", "android", "--base-url", base, "--to", site.path], 2,
             "android"),
            (["examples/models/tiny-llm.gguf", "--version", "1.3.0", "--base-url", "ftp://cdn.example.com", "--to", site.path], 1,
             "base URL 'ftp://cdn.example.com' must start with https://"),
            (["examples/models/tiny-llm.gguf", "--version", "1.3.0", "--base-url", base, "--to", site.path,
              "--manifest-cache-control", "public, max-age=86400"], 1,
             "manifest Cache-Control 'public, max-age=86400' is refused"),
            (["examples/models/tiny-llm.gguf", "--version", "1.3.0", "--base-url", base, "--to", site.path,
              "--manifest-cache-control", "public, immutable"], 1,
             "must never be immutable"),
            // A manifest key is a file name on a directory target: no control or invisible characters.
            (["examples/models/tiny-llm.gguf", "--version", "1.3.0", "--base-url", base, "--to", site.path, "--manifest-key", "a\u{1B}[31mb.json"], 1,
             "manifest key 'a\\u{1b}[31mb.json' holds a control or invisible character"),
            (["examples/models/tiny-llm.gguf", "--version", "v1.3", "--base-url", base, "--to", site.path], 1,
             "version 'v1.3' of model tiny-llm is not a semantic version"),
            // A path that cannot be read is an input/output failure (docs/output.md: 3).
            (["examples/models/missing.gguf", "--version", "1.3.0", "--base-url", base, "--to", site.path], 3,
             "no such file or directory: examples/models/missing.gguf"),
            (["bad name=examples/models/tiny-llm.gguf", "--version", "1.3.0", "--base-url", base, "--to", site.path], 1,
             "model name 'bad name' may use only"),
            (["examples/models/tiny-llm.gguf", "--version", "1.3.0", "--base-url", base, "--to", site.path, "--meta", "novalue"], 1,
             "--meta novalue: expected key=value"),
            (["examples/models/tiny-llm.gguf", "--base-url", base, "--to", site.path], 2,
             "--version is required"),
        ]
        for (arguments, status, message) in cases {
            let result = try publish(arguments)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): expected '\(message)' in: \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "\(arguments)")
            XCTAssertEqual(try snapshot(site.path), before, "\(arguments) changed the target")
        }
    }

    func testConfigFileErrorsNameTheKey() throws {
        let dir = try Scratch()
        let config = try dir.write("modelcast.yml", text: "profile: catalog\nbase_url: https://x.example\nmodels:\n  a:\n    version: 1.0.0\n    files: [a.bin]\n    colour: red\n")
        let result = try publish(["--config", config, "--to", dir.at("site")])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("config \(config): unknown key 'models.a.colour'"), result.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.at("site")))
    }

    /// A publish killed at any point leaves the previous manifest live, naming valid files.
    func testKilledPublishLeavesThePreviousManifestValid() throws {
        let site = try Scratch(), src = try Scratch()
        try publishOK(["examples/models/tiny-llm.gguf", "--name", "big", "--version", "1.0.0", "--base-url", base, "--to", site.path])
        let liveBefore = try read(site.at("manifest.json"))
        let fd = open(src.at("big.gguf"), O_CREAT | O_WRONLY, 0o644)
        let header = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/examples/models/tiny-llm.gguf"))
        _ = header.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        XCTAssertEqual(ftruncate(fd, 3 << 30), 0)
        close(fd)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: modelcastBinary)
        process.arguments = ["publish", src.at("big.gguf"), "--version", "1.1.0", "--base-url", base, "--to", site.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Artifacts are staged beside the target, outside what gets synced to the host.
        let staging = (site.path as NSString).deletingLastPathComponent + "/.modelcast-staging-" + (site.path as NSString).lastPathComponent
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && process.isRunning
            && ((try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []).isEmpty {
            usleep(2_000)
        }
        XCTAssertTrue(process.isRunning, "publish finished before it could be killed")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()

        XCTAssertEqual(try read(site.at("manifest.json")), liveBefore)
        let live = try Release.decode(Data(liveBefore.utf8), source: "live")
        for file in live.models.values.flatMap(\.files) {
            XCTAssertEqual(try StreamDigester.digest(ofFileAt: site.at(file.key)).sha256.hex, file.sha256)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.at("manifests/00000002.json")))
        // The next publish clears what the killed one left and succeeds.
        try publishOK(["examples/models/tiny-llm-mmproj.gguf", "--name", "big", "--version", "1.1.0", "--base-url", base, "--to", site.path,
                       "--interface-change", "--min-app-version", "1.1"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.at(".modelcast-staging")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: staging))
    }

    // MARK: - The JSON Schema of the modelcast format

    func testGoldenManifestsValidateAgainstTheSchema() throws {
        let schema = repositoryRoot + "/schema/modelcast-manifest.schema.json"
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
            for path in sys.argv[2:]:
                doc = json.load(open(path))
                validator.validate(doc)
                broken = dict(doc); del broken["sequence"]
                assert not validator.is_valid(broken), path + ": the schema must reject a manifest without sequence"
                broken = json.loads(json.dumps(doc)); next(iter(broken["models"].values()))["files"][0]["sha256"] = "ABC"
                assert not validator.is_valid(broken), path + ": the schema must reject a malformed sha256"
            print("valid", len(sys.argv) - 2)
            """
        let site = try Scratch()
        try publishOK(["examples/models/tiny-llm.gguf", "--version", "1.0.0", "--base-url", base, "--to", site.path])
        try publishOK(["--config", "examples/catalog/modelcast.yml", "--to", site.path, "--manifest-key", "catalog.json"])
        let documents = [golden + "/modelcast-manifest.json", site.at("manifests/00000001.json"), site.at("manifests/catalog/00000001.json")]
        let result = try runProcess("/usr/bin/env", ["python3", "-c", script, schema] + documents)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "valid 3")
    }
}
