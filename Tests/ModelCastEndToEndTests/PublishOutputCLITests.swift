import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Issue 25, items 13 and 14: output a person and a pipeline can read.
final class PublishOutputCLITests: XCTestCase {
    let base = "https://cdn.example.com/models"

    /// A config with tiny-llm 1.0.0 (unchanged every time) and model `a` at `aVersion`.
    private func writeConfig(_ work: Scratch, _ name: String, aVersion: String, model: String) throws -> String {
        try work.write(name, text: """
            base_url: \(base)
            models:
              tiny-llm:
                version: 1.0.0
                files: [\(repositoryRoot)/examples/models/tiny-llm.gguf]
              a:
                version: \(aVersion)
                files: [\(model)]
            """)
    }

    func testPublishJSONCarriesTheManifestAsAnObjectAndEveryJSONOutputHasASchema() throws {
        let work = try Scratch()
        let site = work.at("site")
        let model = try work.write("a.bin", patternBytes(5000, seed: 3))
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let config = try writeConfig(work, "modelcast.yml", aVersion: "1.0.0", model: model)
        XCTAssertEqual(try modelcast(["publish", "--config", config, "--to", site]).status, 0)
        try work.write("a.bin", patternBytes(6000, seed: 4))
        let next = try writeConfig(work, "modelcast-next.yml", aVersion: "1.1.0", model: model)
        let published = try modelcast(["publish", "--config", next, "--to", site, "--json", "--rollout", "10%"])
        XCTAssertEqual(published.status, 0, published.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(published.stdout.utf8)) as? [String: Any])
        let manifest = try XCTUnwrap(object["manifest"] as? [String: Any], "the manifest is an object: \(published.stdout.prefix(300))")
        XCTAssertEqual(manifest["sequence"] as? Int, 2)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))
        XCTAssertEqual(object["manifest_sha256"] as? String, try SHA256Hasher.digest(bytes).hex)
        let models = try XCTUnwrap(object["models"] as? [[String: Any]])
        XCTAssertEqual(models.map { $0["name"] as? String }, ["a", "tiny-llm"])
        XCTAssertEqual(models.map { $0["version"] as? String }, ["1.1.0", "1.0.0"])
        XCTAssertEqual(models.map { $0["stored"] as? Int }, [1, 0])
        XCTAssertEqual(models.map { $0["reused"] as? Int }, [0, 1])

        // The human report says what was reused: the unchanged model, by name.
        try work.write("a.bin", patternBytes(7000, seed: 5))
        let third = try writeConfig(work, "modelcast-third.yml", aVersion: "1.2.0", model: model)
        XCTAssertEqual(try modelcast(["rollout", site, "--complete"]).status, 0)
        let human = try modelcast(["publish", "--config", third, "--to", site])
        XCTAssertEqual(human.status, 0, human.stderr)
        XCTAssertTrue(human.stdout.contains("unchanged  tiny-llm 1.0.0: 1 file already stored, not uploaded"), human.stdout)

        // rollout, rollout simulate and promote print JSON with a schema, in one style.
        try work.write("a.bin", patternBytes(8000, seed: 6))
        let fourth = try writeConfig(work, "modelcast-fourth.yml", aVersion: "1.3.0", model: model)
        XCTAssertEqual(try modelcast(["publish", "--config", fourth, "--to", site, "--rollout", "5%"]).status, 0)
        let raised = try modelcast(["rollout", site, "--percent", "20", "--json"])
        XCTAssertEqual(raised.status, 0, raised.stderr)
        let simulated = try modelcast(["rollout", "simulate", site, "--json", "--devices", "1000"])
        XCTAssertEqual(simulated.status, 0, simulated.stderr)
        let simulation = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(simulated.stdout.utf8)) as? [String: Any])
        let candidate = try XCTUnwrap(simulation["candidate"] as? [String: Any])
        XCTAssertNil(candidate["share"], "named for what it is")
        XCTAssertEqual(candidate["percent"] as? Double ?? -1, 20, accuracy: 5, "a percent, as the rollout's own: \(simulated.stdout)")
        XCTAssertEqual(try modelcast(["rollout", site, "--complete"]).status, 0)
        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "2.0.0", "--channel", "beta", "--base-url", base, "--to", site]).status, 0)
        let promoted = try modelcast(["promote", site, "--from", "beta", "--to", "stable", "--model", "tiny-llm", "--json"])
        XCTAssertEqual(promoted.status, 0, promoted.stderr)
        try validateAgainstSchema([published.stdout, raised.stdout, promoted.stdout], "publish-report.schema.json")
        try validateAgainstSchema([simulated.stdout], "rollout-simulate.schema.json")
        for output in [published.stdout, raised.stdout, promoted.stdout, simulated.stdout] {
            XCTAssertTrue(output.hasPrefix("{\n  \""), "one style (pretty, two-space indent): \(output.prefix(40))")
        }
    }

    func testCountsAreWordsAndSignatureErrorsNameTheFile() throws {
        let work = try Scratch()
        let site = work.at("site")
        XCTAssertEqual(try modelcast(["publish", repositoryRoot + "/examples/models/tiny-llm.gguf", "--version", "1.0.0", "--base-url", base, "--to", site]).status, 0)
        let verify = try modelcast(["verify", site])
        XCTAssertTrue(verify.stdout.contains("profile modelcast, 1 object\n") || verify.stdout.contains("profile modelcast, 1 object "), verify.stdout)
        XCTAssertTrue(verify.stdout.contains("1 URL under"), verify.stdout)
        XCTAssertFalse(verify.stdout.contains(" 1 objects") || verify.stdout.contains(" 1 URLs"), verify.stdout)

        // resign --expires-in on an unsigned target says it signed nothing.
        let resign = try modelcast(["resign", site, "--expires-in", "30d"])
        XCTAssertEqual(resign.status, 0, resign.stderr)
        XCTAssertTrue(resign.stdout.hasPrefix("unsigned, so nothing was signed: renewed the expiry (expires_at "), resign.stdout)

        // A signature that does not verify is named by its file.
        let keys = (work.at("k.pub"), work.at("k.key"))
        XCTAssertEqual(try modelcast(["keygen", "--unencrypted", "--public-key", keys.0, "--secret-key", keys.1]).status, 0)
        let signed = work.at("signed")
        XCTAssertEqual(try modelcast(["publish", repositoryRoot + "/examples/models/tiny-llm.gguf", "--version", "1.0.0", "--base-url", base, "--to", signed, "--sign", keys.1]).status, 0)
        var signature = try String(contentsOfFile: signed + "/manifest.json.minisig", encoding: .utf8).split(separator: "\n").map(String.init)
        var bytes = Array(Data(base64Encoded: signature[1])!)
        bytes[20] ^= 1
        signature[1] = Data(bytes).base64EncodedString()
        try (signature.joined(separator: "\n") + "\n").write(toFile: signed + "/manifest.json.minisig", atomically: true, encoding: .utf8)
        let (bad, report) = try verifyJSON([signed, "--public-key", keys.0])
        XCTAssertEqual(bad.status, 1)
        let failure = try XCTUnwrap(checks(report, "manifest.signature", .fail).first, bad.stdout)
        XCTAssertTrue(failure.detail.contains("manifest.json.minisig"), failure.detail)
        XCTAssertFalse(failure.detail.contains("manifest.signature"), failure.detail)
    }
}
