import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Models with variants through the CLI: the config file and the flags, the manifest they
/// write (schema, keys), version rules and immutability per variant, verify, rollback,
/// prune, history, the tiers profile written from variants, `rollout simulate --device`,
/// and every bad value refused by name with the target left as it was.
final class VariantsCLITests: XCTestCase {
    let base = "https://cdn.example.com/m"

    func manifest(_ path: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    /// A config file with a three-variant model: 3b (6 GiB, iOS 17 / macOS 14), coreml
    /// (Neural Engine, iOS), 1b (anything), and a plain model beside it.
    func writeConfig(_ scratch: Scratch, version: String, seed: UInt32, defaultVariant: String? = nil) throws -> String {
        _ = try scratch.write("\(version)/llm-3b.bin", patternBytes(3000, seed: seed))
        _ = try scratch.write("\(version)/llm-1b.bin", patternBytes(1000, seed: seed + 1))
        _ = try scratch.write("\(version)/classifier-ane/config.json", Array("{}".utf8))
        _ = try scratch.write("\(version)/classifier-ane/weights.bin", patternBytes(500, seed: seed + 2))
        _ = try scratch.write("\(version)/tokenizer.json", patternBytes(100, seed: 9))
        return try scratch.write("\(version)/modelcast.yml", text: """
            base_url: \(base)
            models:
              llm:
                version: \(version)
                download: prefetch
            \(defaultVariant.map { "    default_variant: \($0)\n" } ?? "")    meta: {release_notes: "v\(version)"}
                variants:
                  - name: 3b
                    files: [llm-3b.bin]
                    requires:
                      min_memory: 6GiB
                      platforms: {ios: "17.0", macos: "14.0"}
                  - name: coreml
                    files: [classifier-ane]
                    requires: {accelerators: [neural-engine], platforms: {ios: "17.0"}}
                  - name: 1b
                    files: [llm-1b.bin]
              tokenizer:
                version: 1.0.0
                download: essential
                files: [tokenizer.json]
            """)
    }

    func testConfigFileVariantsPublishVerifyAndFollowVersionRules() throws {
        let scratch = try Scratch()
        let target = scratch.at("out")
        let v1 = try writeConfig(scratch, version: "1.0.0", seed: 1)
        let first = try modelcast(["publish", "--config", v1, "--to", target], environment: pinnedEnvironment())
        XCTAssertEqual(first.status, 0, first.stderr)
        for key in ["models/llm/variants/3b/1.0.0/llm-3b.bin", "models/llm/variants/1b/1.0.0/llm-1b.bin",
                    "models/llm/variants/coreml/1.0.0/classifier-ane.zip", "models/tokenizer/1.0.0/tokenizer.json"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: target + "/" + key), key)
        }
        let json = try manifest(target + "/manifest.json")
        let llm = try XCTUnwrap((json["models"] as? [String: Any])?["llm"] as? [String: Any])
        XCTAssertEqual(llm["variant"] as? String, "1b", "the last variant is the default: what clients without variants install")
        XCTAssertEqual(llm["download"] as? String, "prefetch")
        let variants = try XCTUnwrap(llm["variants"] as? [[String: Any]])
        XCTAssertEqual(variants.map { $0["name"] as? String }, ["3b", "coreml", "1b"], "preference order kept")
        let requires = try XCTUnwrap(variants[0]["requires"] as? [String: Any])
        XCTAssertEqual(requires["min_memory"] as? Int, 6 << 30)
        XCTAssertEqual(requires["platforms"] as? [String: String], ["ios": "17.0", "macos": "14.0"])
        XCTAssertEqual((variants[1]["requires"] as? [String: Any])?["accelerators"] as? [String], ["neural-engine"])
        XCTAssertEqual(((llm["files"] as? [[String: Any]])?.first?["key"] as? String), "models/llm/variants/1b/1.0.0/llm-1b.bin")
        XCTAssertEqual(((variants[2]["meta"] as? [String: Any])?["release_notes"] as? String), "v1.0.0", "model meta reaches each variant")
        try validateManifest(target + "/manifest.json")
        // Old clients: the model's own fields decode as before (a plain model).
        let decoded = try JSONDecoder().decode(PreviousManifest.self, from: Data(contentsOf: URL(fileURLWithPath: target + "/manifest.json")))
        XCTAssertEqual(decoded.models["llm"]?.files.map(\.name), ["llm-1b.bin"])

        let verify = try modelcast(["verify", target, "--base-url", base])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        XCTAssertTrue(verify.stdout.contains("llm@3b 1.0.0/llm-3b.bin"), verify.stdout)
        XCTAssertTrue(verify.stdout.contains("llm@coreml 1.0.0/classifier-ane.zip"), verify.stdout)
        for file in ["_modelcast/objects.json", "_modelcast/upload-aws.sh"] {
            XCTAssertTrue(try String(contentsOfFile: target + "/" + file, encoding: .utf8).contains("models/llm/variants/3b/1.0.0/llm-3b.bin"), file)
        }

        // The same version of a variant with other bytes is refused, naming the variant; nothing changes.
        let before = try snapshot(target)
        _ = try scratch.write("1.0.0/llm-3b.bin", patternBytes(3001, seed: 5))
        let changed = try modelcast(["publish", "--config", v1, "--to", target], environment: pinnedEnvironment())
        XCTAssertNotEqual(changed.status, 0)
        XCTAssertTrue(changed.stderr.contains("version 1.0.0 of model llm@3b is already published with different files"), changed.stderr)
        XCTAssertEqual(try snapshot(target), before)

        // 1.1.0: every variant moves on; history shows each variant's version.
        let v2 = try writeConfig(scratch, version: "1.1.0", seed: 11)
        XCTAssertEqual(try modelcast(["publish", "--config", v2, "--to", target], environment: pinnedEnvironment(epoch: 1_790_000_100)).status, 0)
        let history = try modelcast(["history", target])
        XCTAssertTrue(history.stdout.contains("llm@1b 1.1.0, llm@3b 1.1.0, llm@coreml 1.1.0, tokenizer 1.0.0"), history.stdout)
        // A lower version of a variant is refused.
        let lower = try writeConfig(scratch, version: "1.0.5", seed: 21)
        let refused = try modelcast(["publish", "--config", lower, "--to", target], environment: pinnedEnvironment(epoch: 1_790_000_200))
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("version 1.0.5 of model llm@3b is lower than the live version 1.1.0"), refused.stderr)

        // Rollback returns every variant; prune keeps what the rollback section names.
        let rollback = try modelcast(["rollback", target, "--version", "1.0.0"], environment: pinnedEnvironment(epoch: 1_790_000_300))
        XCTAssertEqual(rollback.status, 0, rollback.stderr)
        let rolled = try XCTUnwrap((try manifest(target + "/manifest.json")["models"] as? [String: Any])?["llm"] as? [String: Any])
        XCTAssertEqual((rolled["variants"] as? [[String: Any]])?.compactMap { $0["version"] as? String }, ["1.0.0", "1.0.0", "1.0.0"])
        let prune = try modelcast(["prune", target, "--keep", "1"], environment: pinnedEnvironment(epoch: 1_790_000_400))
        XCTAssertEqual(prune.status, 0, prune.stderr)
        for variant in ["3b", "coreml", "1b"] {
            let folder = target + "/models/llm/variants/\(variant)/"
            XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "1.0.0"), "the live variant \(variant) is kept")
            XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "1.1.0"), "no kept release names variant \(variant) 1.1.0: pruned")
        }
        XCTAssertEqual(try modelcast(["verify", target, "--base-url", base]).status, 0)
    }

    func testFlagsTiersFromVariantsAndSimulate() throws {
        let scratch = try Scratch()
        let a = try scratch.write("a/model-3b-q4.bin", patternBytes(3000, seed: 1))
        let b = try scratch.write("a/model-1b-q4.bin", patternBytes(1000, seed: 2))
        let target = scratch.at("tiers")
        let tiers = try modelcast(["publish", "--profile", "tiers", "--name", "llm", "--version", "2.1.0", "--variant", "3b=\(a)", "--variant", "1b=\(b)",
                                   "--requires", "3b:min_memory=6GiB", "--meta", "release_notes=Better", "--min-app-version", "3.0.0",
                                   "--base-url", base, "--to", target], environment: pinnedEnvironment())
        XCTAssertEqual(tiers.status, 0, tiers.stderr)
        // The seed's own client shape (OTA article): current_version, models[selectedTier].
        struct Tier: Decodable { let url: String; let sizeBytes: Int; let sha256: String; let minAppVersion: String; let releaseNotes: String }
        struct ModelManifest: Decodable { let currentVersion: String; let models: [String: Tier] }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let seed = try decoder.decode(ModelManifest.self, from: Data(contentsOf: URL(fileURLWithPath: target + "/manifest.json")))
        XCTAssertEqual(seed.currentVersion, "2.1.0")
        XCTAssertEqual(seed.models.keys.sorted(), ["1b", "3b"])
        XCTAssertEqual(seed.models["3b"]?.url, "\(base)/models/llm/variants/3b/2.1.0/model-3b-q4.bin")
        XCTAssertEqual(seed.models["1b"]?.sizeBytes, 1000)
        XCTAssertEqual(seed.models["1b"]?.releaseNotes, "Better")
        XCTAssertEqual(try modelcast(["verify", target, "--base-url", base]).status, 0)

        // Variants of different versions cannot share tiers' one current_version.
        let mixed = try scratch.write("mixed.yml", text: """
            profile: tiers
            base_url: \(base)
            min_app_version: "3.0.0"
            models:
              llm:
                meta: {release_notes: x}
                variants:
                  - {name: 3b, version: 2.2.0, files: [a/model-3b-q4.bin]}
                  - {name: 1b, version: 2.1.1, files: [a/model-1b-q4.bin]}
            """)
        let refused = try modelcast(["publish", "--config", mixed, "--to", scratch.at("mixed")])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("one current_version for every tier"), refused.stderr)

        // The modelcast profile with the same flags; simulate devices against it.
        let own = scratch.at("own")
        XCTAssertEqual(try modelcast(["publish", "--name", "llm", "--version", "1.0.0", "--variant", "3b=\(a)", "--variant", "1b=\(b)",
                                      "--requires", "3b:min_memory=6GiB", "--requires", "3b:platforms=ios:17.0",
                                      "--base-url", base, "--to", own]).status, 0)
        let small = try modelcast(["rollout", "simulate", own, "--device", "memory=4GiB,platform=ios,os=17.4"])
        XCTAssertEqual(small.status, 0, small.stderr)
        XCTAssertTrue(small.stdout.contains("llm  variant 1b 1.0.0"), small.stdout)
        XCTAssertTrue(small.stdout.contains("skipped 3b: needs 6 GiB of memory; the device has 4 GiB"), small.stdout)
        let old = try modelcast(["rollout", "simulate", own, "--device", "memory=8GiB,platform=ios,os=16.4"])
        XCTAssertTrue(old.stdout.contains("needs ios 17.0 or later; the device runs 16.4"), old.stdout)
        let big = try modelcast(["rollout", "simulate", own, "--device", "memory=8GiB,platform=ios,os=17.4", "--json"])
        try validateAgainstSchema([big.stdout, try modelcast(["rollout", "simulate", own, "--device", "memory=1GiB", "--json"]).stdout],
                                  "rollout-simulate-device.schema.json")
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(big.stdout.utf8)) as? [String: Any])
        let pick = try XCTUnwrap(((report["candidate"] as? [String: Any])?["models"] as? [[String: Any]])?.first)
        XCTAssertEqual(pick["variant"] as? String, "3b")
        XCTAssertEqual(pick["version"] as? String, "1.0.0")
        let unknown = try modelcast(["rollout", "simulate", own, "--device", "ram=8GiB"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.stderr.contains("unknown field 'ram'"), unknown.stderr)
    }

    /// Issue 44 item 7b: the model's top-level `version` and `files` are its default
    /// variant's, which clients that predate variants install on every device. When every
    /// variant has requirements that default must be chosen on purpose, not fall to the last.
    func testEveryVariantWithRequirementsNeedsADefaultChosenOnPurpose() throws {
        let scratch = try Scratch()
        let a = try scratch.write("a.bin", patternBytes(300, seed: 1))
        let b = try scratch.write("b.bin", patternBytes(300, seed: 2))
        let target = scratch.at("out")
        let both = ["publish", "--name", "llm", "--version", "1.0.0", "--variant", "3b=\(a)", "--variant", "1b=\(b)",
                    "--requires", "3b:min_memory=6GiB", "--requires", "1b:architectures=arm64", "--base-url", base, "--to", target]
        let refused = try modelcast(both)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        for text in ["model llm: every variant has requirements, so the default one — 1b, the last — would be installed by clients that predate variants on every device, whatever it has (1b requires architectures)",
                     "--default-variant VARIANT"] {
            XCTAssertTrue(refused.stderr.contains(text), "\(text) in \(refused.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: target), "nothing written")
        let config = try scratch.write("llm.yml", text: """
            base_url: \(base)
            models:
              llm:
                version: 1.0.0
                variants:
                  - {name: 3b, files: [a.bin], requires: {min_memory: 6GiB}}
                  - {name: 1b, files: [b.bin], requires: {architectures: [arm64]}}
            """)
        let fromConfig = try modelcast(["publish", "--config", config, "--to", target])
        XCTAssertEqual(fromConfig.status, 1, fromConfig.stderr)
        XCTAssertTrue(fromConfig.stderr.contains("every variant has requirements"), fromConfig.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target), "nothing written")
        // Chosen on purpose, it goes through and is the model's own.
        let chosen = try modelcast(both + ["--default-variant", "1b"])
        XCTAssertEqual(chosen.status, 0, chosen.stderr)
        XCTAssertEqual((try manifest(target + "/manifest.json")["models"] as? [String: Any])?["llm"].flatMap { ($0 as? [String: Any])?["variant"] as? String }, "1b")
        // The tiers profile writes each tier by name, with no default.
        let tiers = try modelcast(Array(both.dropLast()) + [scratch.at("tiers"), "--profile", "tiers", "--min-app-version", "3.0.0", "--meta", "release_notes=Better"])
        XCTAssertEqual(tiers.status, 0, tiers.stderr)
    }

    /// Each bad value is refused before anything is written, naming it.
    func testBadVariantInputsAreRefusedByName() throws {
        let scratch = try Scratch()
        let a = try scratch.write("a.bin", patternBytes(300, seed: 1))
        let b = try scratch.write("b.bin", patternBytes(300, seed: 2))
        let target = scratch.at("out")
        func refused(_ arguments: [String], _ expected: String, file: StaticString = #filePath, line: UInt = #line) throws {
            let result = try modelcast(["publish", "--base-url", base, "--to", target] + arguments)
            XCTAssertNotEqual(result.status, 0, file: file, line: line)
            XCTAssertTrue(result.stderr.contains(expected), "\(expected) in \(result.stderr)", file: file, line: line)
            XCTAssertFalse(FileManager.default.fileExists(atPath: target), "nothing written", file: file, line: line)
        }
        let both = ["--name", "llm", "--version", "1.0.0", "--variant", "big=\(a)", "--variant", "small=\(b)"]
        try refused(both + ["--requires", "big:min_memory=lots"], "'lots' is not an amount of memory")
        try refused(both + ["--requires", "big:ram=6GiB"], "unknown requirement 'ram'")
        try refused(both + ["--requires", "huge:min_memory=6GiB"], "no --variant named 'huge'")
        try refused(both + ["--requires", "big:accelerators=tpu"], "'tpu' is not an accelerator")
        try refused(both + ["--requires", "big:platforms=ios:seventeen"], "'seventeen' is not an OS version for ios")
        try refused(both + ["--requires", "big:platforms=palmos:1"], "'palmos' is not a platform")
        try refused(both + ["--default-variant", "medium"], "default_variant 'medium' of model llm is not one of its variants")
        try refused(["--name", "llm", "--version", "1.0.0", "--variant", "x=\(a)", "--variant", "X=\(b)"], "model llm has two variants named X")
        try refused(["--name", "llm", "--version", "1.0.0", "--variant", "../up=\(a)"], "variant name '../up' of model llm")
        try refused(both + ["--profile", "nomlens"], "only the modelcast profile (and tiers")
        try refused(["--version", "1.0.0", "--variant", "x=\(a)"], "--variant needs --name")
        try refused([a, "--name", "llm", "--version", "1.0.0", "--variant", "x=\(b)"], "and --variant both give files of model llm")
        try refused([a, "--name", "llm", "--version", "1.0.0", "--requires", "x:min_memory=1GB"], "--requires needs --variant")
        let config = try scratch.write("bad.yml", text: """
            base_url: \(base)
            models:
              llm:
                version: 1.0.0
                variants:
                  - {name: a, files: [a.bin], requires: {min_memroy: 6GiB}}
            """)
        try refused(["--config", config], "unknown key 'models.llm.variants[0].requires.min_memroy' (did you mean 'min_memory'?)")
        let misplaced = try scratch.write("bad2.yml", text: """
            base_url: \(base)
            models:
              llm:
                version: 1.0.0
                files: [a.bin]
                variants:
                  - {name: a, files: [a.bin]}
            """)
        try refused(["--config", misplaced], "a model with variants lists its files in each variant")
        let policy = try scratch.write("bad3.yml", text: """
            base_url: \(base)
            models:
              llm: {version: 1.0.0, files: [a.bin], download: later}
            """)
        try refused(["--config", policy], "download 'later' is not one of essential, prefetch, on-demand")
    }

    /// `--download` marks the models given on the command line (plain paths named after the
    /// first, NAME=PATH, the --variant model), not the config file's; `rollout simulate
    /// --device` during a rollout without `--device-id` shows both sides.
    func testDownloadFlagAndSimulateDuringARollout() throws {
        let scratch = try Scratch()
        let a = try scratch.write("a.bin", patternBytes(300, seed: 1)), b = try scratch.write("a-extra.bin", patternBytes(300, seed: 2))
        let c = try scratch.write("c.bin", patternBytes(300, seed: 3))
        let config = try scratch.write("other.yml", text: """
            base_url: \(base)
            models:
              other: {version: 1.0.0, files: [c.bin]}
            """)
        let target = scratch.at("out")
        let published = try modelcast(["publish", a, b, "other2=\(c)", "--version", "1.0.0", "--download", "essential", "--config", config, "--to", target])
        XCTAssertEqual(published.status, 0, published.stderr)
        let models = try XCTUnwrap(try manifest(target + "/manifest.json")["models"] as? [String: [String: Any]])
        XCTAssertEqual(models["a"]?["download"] as? String, "essential", "the plain paths' model, named after the first")
        XCTAssertEqual(models["other2"]?["download"] as? String, "essential")
        XCTAssertNil(models["other"]?["download"], "the config file's model keeps its own")
        let onlyConfig = try modelcast(["publish", "--config", config, "--to", scratch.at("x"), "--download", "essential"])
        XCTAssertEqual(onlyConfig.status, 1)
        XCTAssertTrue(onlyConfig.stderr.contains("--download essential applies to the models given on the command line, and there are none"), onlyConfig.stderr)

        let own = scratch.at("own")
        func variants(_ version: String, _ extra: [String] = []) throws {
            let result = try modelcast(["publish", "--name", "llm", "--version", version, "--variant", "big=\(version == "1.0.0" ? a : b)", "--variant", "small=\(c)",
                                        "--requires", "big:min_memory=6GiB", "--base-url", base, "--to", own] + extra)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        try variants("1.0.0")
        try variants("1.1.0", ["--rollout", "10%"])
        let both = try modelcast(["rollout", "simulate", own, "--device", "memory=8GiB"])
        XCTAssertEqual(both.status, 0, both.stderr)
        XCTAssertTrue(both.stdout.hasPrefix("during the rollout (give --device-id to see which side this device is on):"), both.stdout)
        XCTAssertTrue(both.stdout.contains("on the candidate (sequence 2):\n  llm  variant big 1.1.0"), both.stdout)
        XCTAssertTrue(both.stdout.contains("on the fallback (sequence 1):\n  llm  variant big 1.0.0"), both.stdout)
        let json = try modelcast(["rollout", "simulate", own, "--device", "memory=8GiB", "--json"])
        try validateAgainstSchema([json.stdout], "rollout-simulate-device.schema.json")
        let badRequires = try scratch.write("bad.yml", text: """
            base_url: \(base)
            models:
              llm:
                version: 1.0.0
                variants:
                  - {name: a, files: [a.bin], requires: {accelerators: {gpu: true}}}
            """)
        let refused = try modelcast(["publish", "--config", badRequires, "--to", scratch.at("y")])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("requires.accelerators must list names (one, or a list)"), refused.stderr)
    }

    /// The manifest against schema/modelcast-manifest.schema.json.
    func validateManifest(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let script = """
            import json, sys, jsonschema
            jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))
            """
        let result = try runProcess("/usr/bin/env", ["python3", "-c", script, repositoryRoot + "/schema/modelcast-manifest.schema.json", path])
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
    }
}

/// The manifest as a client from before variants decodes it (the fields it knew).
private struct PreviousManifest: Decodable {
    struct File: Decodable { let name: String; let key: String; let url: String; let sha256: String; let size: Int64 }
    struct Model: Decodable { let version: String; let files: [File] }
    let sequence: Int64
    let models: [String: Model]
}
