import Foundation
import XCTest
import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport

/// Issue 50 through the binary: a gated model's licence, download conditions and storage
/// from a config file and from flags, written to the manifest (valid against its schema,
/// read back by verify), shown by history, the release page, `rollout simulate` and
/// `publish --json`; a licence change noted; every bad value refused by name with the
/// target as it was; and one publish to S3 (moto).
final class ModelPoliciesCLITests: XCTestCase {
    static let base = "https://cdn.example.com/m"

    func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    /// docs/publishing.md's worked example: a gated 3B model for devices with 8 GB, unmetered
    /// only, with a 1B fallback variant.
    func writeExample(_ work: Scratch, licenceURL: String = "https://example.com/LICENSE.txt", version: String = "1.0.0") throws -> String {
        _ = try work.write("assistant-3b.bin", patternBytes(3000, seed: 1))
        _ = try work.write("assistant-1b.bin", patternBytes(1000, seed: 2))
        return try work.write("modelcast-\(version).yml", text: """
            base_url: \(Self.base)
            models:
              assistant:
                version: \(version)
                licence: {spdx: Llama-3.2-Community, url: "\(licenceURL)", acceptance: required}
                download: {policy: on-demand, network: unmetered, charging: required}
                storage: {install_size: 5000, priority: 10}
                variants:
                  - name: 3b
                    files: [assistant-3b.bin]
                    requires: {min_memory: 8GB}
                  - name: 1b
                    files: [assistant-1b.bin]

            """)
    }

    func testAGatedModelFromAConfigFileIsWrittenAndShownEverywhere() throws {
        let work = try Scratch()
        let site = work.at("site")
        let published = try modelcast(["publish", "--config", try writeExample(work), "--to", site, "--json"], environment: pinnedEnvironment())
        XCTAssertEqual(published.status, 0, published.stderr)

        // The manifest: model-level licence and conditions, each variant's own storage, the model's its default's.
        let manifest = try json(try String(contentsOfFile: site + "/manifest.json", encoding: .utf8))
        let assistant = try XCTUnwrap((manifest["models"] as? [String: Any])?["assistant"] as? [String: Any])
        XCTAssertEqual(assistant["licence"] as? [String: String], ["spdx": "Llama-3.2-Community", "url": "https://example.com/LICENSE.txt", "acceptance": "required"])
        XCTAssertEqual(assistant["download"] as? String, "on-demand", "the policy stays a string: clients before 1.2.0 read it so")
        XCTAssertEqual(assistant["download_conditions"] as? [String: String], ["network": "unmetered", "charging": "required"])
        let variants = try XCTUnwrap(assistant["variants"] as? [[String: Any]])
        XCTAssertEqual(variants.map { ($0["storage"] as? [String: Int])?["install_size"] }, [5000, 5000], "raised to the stated size")
        XCTAssertEqual(assistant["storage"] as? [String: Int], ["install_size": 5000, "priority": 10])
        XCTAssertNil(variants[0]["licence"])
        let schema = try runProcess("/usr/bin/env", ["python3", "-c", """
            import json, sys, jsonschema
            jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))
            """, repositoryRoot + "/schema/modelcast-manifest.schema.json", site + "/manifest.json"])
        XCTAssertEqual(schema.status, 0, schema.stderr)
        // publish --json carries the manifest with them.
        let report = try json(published.stdout)
        XCTAssertNotNil(((report["manifest"] as? [String: Any])?["models"] as? [String: [String: Any]])?["assistant"]?["licence"])

        let verify = try modelcast(["verify", site])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)

        let history = try modelcast(["history", site])
        XCTAssertTrue(history.stdout.contains("assistant: licence Llama-3.2-Community (https://example.com/LICENSE.txt), acceptance required; network unmetered, charging required"), history.stdout)
        let historyJSON = try modelcast(["history", site, "--json"])
        XCTAssertTrue(historyJSON.stdout.contains("\"install_size\" : 5000"), historyJSON.stdout)
        try validateAgainstSchema([historyJSON.stdout], "history.schema.json")

        let simulate = try modelcast(["rollout", "simulate", site + "/manifest.json", "--device", "memory=8GB"])
        XCTAssertEqual(simulate.status, 0, simulate.stderr)
        XCTAssertTrue(simulate.stdout.contains("assistant  variant 3b 1.0.0"), simulate.stdout)
        XCTAssertTrue(simulate.stdout.contains("before downloading, devices check:\n  assistant: licence Llama-3.2-Community (https://example.com/LICENSE.txt), acceptance required; network unmetered, charging required; installs 5000 bytes (4.9 KiB), priority 10"), simulate.stdout)
        let simulateJSON = try modelcast(["rollout", "simulate", site + "/manifest.json", "--device", "memory=8GB", "--json"])
        XCTAssertEqual(((try json(simulateJSON.stdout)["policies"] as? [String: Any])?["assistant"] as? [String: Any])?["licence"] as? [String: String],
                       ["spdx": "Llama-3.2-Community", "url": "https://example.com/LICENSE.txt", "acceptance": "required"])
        try validateAgainstSchema([simulateJSON.stdout], "rollout-simulate-device.schema.json")

        let page = try modelcast(["report", site, "--json"])
        XCTAssertEqual(page.status, 0, page.stderr)
        XCTAssertTrue(page.stdout.contains("\"acceptance\" : \"required\""), page.stdout)
        try validateAgainstSchema([page.stdout], "report.schema.json")
        let html = try modelcast(["report", site, "-o", work.at("page.html")])
        XCTAssertEqual(html.status, 0, html.stderr)
        let text = try String(contentsOfFile: work.at("page.html"), encoding: .utf8)
        XCTAssertTrue(text.contains("licence Llama-3.2-Community (https://example.com/LICENSE.txt), acceptance required"), "the release page names the licence")
        XCTAssertTrue(text.contains("downloads on network unmetered, charging required"))

        // The same version, the licence's URL changed: devices ask again, and the run says so.
        let changed = try modelcast(["publish", "--config", try writeExample(work, licenceURL: "https://example.com/v2/LICENSE.txt", version: "1.0.1"), "--to", site, "--json"],
                                    environment: pinnedEnvironment(epoch: 1_790_000_100))
        XCTAssertEqual(changed.status, 0, changed.stderr)
        let warnings = try XCTUnwrap(try json(changed.stdout)["warnings"] as? [String])
        XCTAssertTrue(warnings.contains { $0.hasPrefix("licence changed for assistant: devices ask for acceptance again") }, "\(warnings)")
        XCTAssertTrue(changed.stderr.contains("licence changed for assistant: devices ask for acceptance again"), changed.stderr)
    }

    func testFlagsAndTheShorthandKeepWorking() throws {
        let work = try Scratch()
        let model = try work.write("m.bin", patternBytes(2000, seed: 7))
        let site = work.at("site")
        let result = try modelcast(["publish", model, "--name", "m", "--version", "1.0.0", "--base-url", Self.base, "--to", site, "--download", "on-demand",
                                    "--licence", "MIT", "--licence-acceptance", "none", "--cellular-max", "500MB", "--charging", "any",
                                    "--install-size", "3000", "--storage-priority", "0"], environment: pinnedEnvironment())
        XCTAssertEqual(result.status, 0, result.stderr)
        let entry = try XCTUnwrap((try json(try String(contentsOfFile: site + "/manifest.json", encoding: .utf8))["models"] as? [String: [String: Any]])?["m"])
        XCTAssertEqual(entry["download"] as? String, "on-demand")
        XCTAssertEqual(entry["licence"] as? [String: String], ["spdx": "MIT", "acceptance": "none"])
        let conditions = try XCTUnwrap(entry["download_conditions"] as? [String: Any])
        XCTAssertEqual(conditions.keys.sorted(), ["cellular_max", "charging"])
        XCTAssertEqual(conditions["cellular_max"] as? Int, 500_000_000)
        XCTAssertEqual(conditions["charging"] as? String, "any")
        XCTAssertEqual(entry["storage"] as? [String: Int], ["install_size": 3000, "priority": 0])
    }

    func testBadValuesAreRefusedByNameAndTheTargetIsUntouched() throws {
        let work = try Scratch()
        let model = try work.write("m.bin", patternBytes(2000, seed: 7))
        let site = work.at("site")
        let first = try modelcast(["publish", model, "--name", "m", "--version", "1.0.0", "--base-url", Self.base, "--to", site], environment: pinnedEnvironment())
        XCTAssertEqual(first.status, 0, first.stderr)
        let before = try snapshot(site)
        let next = ["publish", model, "--name", "m", "--version", "1.0.1", "--base-url", Self.base, "--to", site]
        // Exit 2: ArgumentParser's (a word not among the choices); 1: a value a rule refuses (docs/output.md).
        let cases: [([String], Int32, String)] = [
            (["--network", "satellite"], 2, "The value 'satellite' is invalid for '--network"),
            (["--charging", "sometimes"], 2, "The value 'sometimes' is invalid for '--charging"),
            (["--licence-acceptance", "maybe"], 2, "The value 'maybe' is invalid for '--licence-acceptance"),
            (["--network", "unmetered", "--cellular-max", "100MB"], 1, "model m: network unmetered and cellular_max 100000000 contradict"),
            (["--licence", "MIT\u{1B}[2J"], 1, #"--licence: 'MIT\u{1b}[2J' is not an SPDX licence identifier or expression"#),
            (["--licence-url", "https://ci:hunter2@example.com/LICENSE"], 1, "--licence-url: a URL with a user name or password (host 'example.com'; the rest is not shown) is refused"),
            (["--licence-url", "ftp://example.com/LICENSE"], 1, "--licence-url: 'ftp://example.com/LICENSE' is not an http or https URL"),
            (["--cellular-max", "-1"], 1, "--cellular-max: '-1' is not a byte count from 0 to 2^53"),
            (["--install-size", "9223372036854775808"], 1, "--install-size: '9223372036854775808' is not a byte count from 0 to 2^53"),
            (["--storage-priority", "101"], 1, "--storage-priority: '101' is not a storage priority (an integer from 0 to 100"),
            (["--install-size", "1999"], 1, "model m: install_size 1999 is less than the 2000 bytes its files take installed"),
            (["--licence-acceptance", "required"], 1, "model m: licence acceptance required names no licence"),
            (["--licence", "MIT", "--profile", "latest"], 1, "profile latest cannot carry licence/download conditions/storage (model m); use the modelcast profile"),
        ]
        for (flags, status, expected) in cases {
            let result = try modelcast(next + flags, environment: pinnedEnvironment())
            XCTAssertEqual(result.status, status, "\(flags): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(expected), "\(flags): \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("hunter2") || result.stdout.contains("hunter2"), "\(flags): the password was printed")
            XCTAssertFalse(result.stderr.unicodeScalars.contains { $0.value == 0x1B }, "\(flags): a raw escape reached the terminal")
            XCTAssertEqual(try snapshot(site), before, "\(flags): the target is as it was")
        }
        // Another profile refuses the config keys too, naming it.
        let nomlens = try work.write("nomlens.yml", text: """
            profile: nomlens
            base_url: \(Self.base)
            models:
              m: {version: 1.0.0, files: [m.bin], meta: {num_classes: 3, class_list_version: 1, training_date: "2026-01-01"}, storage: {priority: 10}}

            """)
        let refused = try modelcast(["publish", "--config", nomlens, "--to", work.at("nomlens-site")], environment: pinnedEnvironment())
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("profile nomlens cannot carry licence/download conditions/storage (model m)"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.at("nomlens-site")))
    }

    func testOnS3() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let model = try work.write("m.bin", patternBytes(2000, seed: 3))
        let result = try modelcast(["publish", model, "--name", "m", "--version", "1.0.0", "--base-url", Self.base, "--to", "s3://\(moto.bucket)/ml",
                                    "--licence", "Apache-2.0", "--licence-url", "https://example.com/LICENSE", "--licence-acceptance", "required",
                                    "--network", "unmetered", "--storage-priority", "80"], environment: pinnedEnvironment(moto.environment))
        XCTAssertEqual(result.status, 0, result.stderr)
        let live = try Release.decode(try moto.download("ml/manifest.json"), source: "live")
        XCTAssertEqual(live.models["m"]?.licence, ReleaseLicence(spdx: "Apache-2.0", url: "https://example.com/LICENSE", acceptance: "required"))
        XCTAssertEqual(live.models["m"]?.downloadConditions, ReleaseDownloadConditions(network: "unmetered"))
        XCTAssertEqual(live.models["m"]?.storage, ReleaseStorage(installSize: 2000, priority: 80))
        let verify = try modelcast(["verify", "s3://\(moto.bucket)/ml"], environment: moto.environment)
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }
}
