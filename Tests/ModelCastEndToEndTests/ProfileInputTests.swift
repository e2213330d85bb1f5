import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// What fixed-shape profiles need from the user (issue 11, cases 11 and 12).
final class ProfileInputTests: XCTestCase {
    let base = "https://cdn.example.com"
    let catalogFlags = ["tiny-classifier=examples/models/TinyClassifier.mlpackage", "--version", "1.2.0", "--profile", "catalog",
                        "--min-app-version", "2.0.0", "--meta", "features=classification", "--meta", "hardware.neuralEngine=true",
                        "--meta", "hardware.gpu=true", "--meta", "hardware.cpu=true"]

    /// The PE Core client decodes `prototypes` as a required member: a catalog without it
    /// is refused, and --prototypes FILE publishes it as an immutable, checksummed artifact.
    func testCatalogNeedsPrototypesAndTakesThemFromAFlag() throws {
        let site = try Scratch()
        let refused = try modelcast(["publish"] + catalogFlags + ["--base-url", base, "--to", site.path])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("needs field prototypes"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--prototypes FILE"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("config"), refused.stderr)
        XCTAssertEqual(try snapshot(site.path), [:])

        let published = try modelcast(["publish"] + catalogFlags + ["--prototypes", "examples/catalog/prototypes-v2.1.0.json", "--base-url", base, "--to", site.path])
        XCTAssertEqual(published.status, 0, published.stderr)
        let manifest = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: site.at("manifest.json"))))
        XCTAssertEqual(manifest["prototypes"]?["version"], .string("2.1.0"))
        XCTAssertEqual(manifest["prototypes"]?["classes"], .int(3))
        guard case .string(let url)? = manifest["prototypes"]?["url"], case .string(let checksum)? = manifest["prototypes"]?["checksum"] else {
            return XCTFail("prototypes without url or checksum: \(manifest)")
        }
        let key = String(url.dropFirst(base.count + 1))
        let stored = try Data(contentsOf: URL(fileURLWithPath: site.at(key)))
        XCTAssertEqual(stored, try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/examples/catalog/prototypes-v2.1.0.json")))
        XCTAssertEqual(checksum, "sha256:" + (try SHA256Hasher.digest(stored).hex))
        // The seed's client decodes it (every member required, as its Codable struct has them).
        let client = """
            import json, sys
            m = json.load(open(sys.argv[1]))
            for name, model in m["models"].items():
                for k in ["version", "url", "checksum", "size", "minAppVersion", "features", "hardware"]: assert k in model, k
            p = m["prototypes"]
            assert isinstance(p["version"], str) and isinstance(p["url"], str) and p["checksum"].startswith("sha256:") and isinstance(p["classes"], int)
            assert isinstance(m["minAppVersion"], str)
            print("decoded")
            """
        let decoded = try runProcess("/usr/bin/env", ["python3", "-c", client, site.at("manifest.json")])
        XCTAssertEqual(decoded.stdout, "decoded\n", decoded.stderr)

        // A prototypes file that declares no version needs the flag, named.
        let bare = try site.write("../bare-prototypes.json", text: #"{"classes": [1, 2]}"#)
        let noVersion = try modelcast(["publish"] + catalogFlags + ["--prototypes", bare, "--base-url", base, "--to", site.path])
        XCTAssertEqual(noVersion.status, 1)
        XCTAssertTrue(noVersion.stderr.contains("--prototypes-version VERSION"), noVersion.stderr)
        for (flags, message) in [(["--prototypes-classes=-3"], "--prototypes-classes -3 must be a count"),
                                 (["--prototypes-version", "v2"], "--prototypes-version 'v2' is not a semantic version"),
                                 ([String](), "--prototypes \(site.path)/../missing.json")] {
            let path = flags.isEmpty ? site.path + "/../missing.json" : "examples/catalog/prototypes-v2.1.0.json"
            let bad = try modelcast(["publish"] + catalogFlags + ["--prototypes", path] + flags + ["--base-url", base, "--to", site.path])
            // A missing file cannot be read: 3 (docs/output.md); a bad value is refused: 1.
            XCTAssertEqual(bad.status, flags.isEmpty ? 3 : 1, "\(flags): \(bad.stderr)")
            XCTAssertTrue(bad.stderr.contains(message) || (flags.isEmpty && bad.stderr.contains("missing.json")), "\(flags): \(bad.stderr)")
        }
    }

    /// Unknown --meta keys are refused (with a suggestion), never dropped; every missing
    /// field is reported in one run.
    func testMetaKeysAreCheckedAndMissingFieldsReportedTogether() throws {
        let site = try Scratch()
        let nomlens = ["examples/models/tiny-llm.gguf", "--version", "1.0.0", "--profile", "nomlens", "--base-url", base, "--to", site.path]
        let typo = try modelcast(["publish"] + nomlens + ["--meta", "num_clases=3", "--meta", "class_list_version=v1", "--meta", "training_date=2026-01-01"])
        XCTAssertEqual(typo.status, 1)
        XCTAssertTrue(typo.stderr.contains("--meta num_clases=3: profile nomlens has no field num_clases (did you mean num_classes?)"), typo.stderr)
        let computed = try modelcast(["publish"] + nomlens + ["--meta", "sise_mb=5"])
        XCTAssertEqual(computed.status, 1)
        XCTAssertTrue(computed.stderr.contains("size_mb is computed from the artifact"), computed.stderr)
        let latest = try modelcast(["publish", "examples/models/tiny-llm.gguf", "--version", "1.0.0", "--profile", "latest", "--base-url", base, "--to", site.path, "--meta", "notes=x"])
        XCTAssertEqual(latest.status, 1)
        XCTAssertTrue(latest.stderr.contains("it takes no --meta keys"), latest.stderr)

        let missing = try modelcast(["publish"] + nomlens)
        XCTAssertEqual(missing.status, 1)
        for field in ["num_classes", "class_list_version", "training_date"] {
            XCTAssertTrue(missing.stderr.contains(field), "\(field) missing from: \(missing.stderr)")
        }
        XCTAssertTrue(missing.stderr.contains("needs 3 fields"), missing.stderr)
        XCTAssertEqual(try snapshot(site.path), [:])
    }
}
