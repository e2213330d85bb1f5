import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// `publish --model-signing-key`: what modelcast publishes carries an OpenSSF model
/// signature that the reference tool (model_signing, from PyPI) accepts on the files a
/// device installs — a GGUF, a GGUF with its mmproj, a zipped `.mlpackage` once unzipped,
/// a tree — and `verify --model-signing-public-key` fails a release whose files are not
/// the signed ones, naming the file.
final class PublishedModelSignatureTests: XCTestCase {
    /// Publishes `inputs` as model `name` (extra publish `arguments`) into `site`.
    func publish(_ scratch: Scratch, _ inputs: [String], name: String, version: String = "1.0.0", site: String = "site",
                 key: String?, arguments: [String] = [], environment: [String: String]? = nil) throws -> ProcessOutput {
        try modelcast(["publish"] + inputs + ["--name", name, "--version", version, "--base-url", "https://cdn.example.com", "--to", scratch.at(site)]
                      + (key.map { ["--model-signing-key", $0] } ?? []) + arguments, environment: environment)
    }

    func manifest(_ scratch: Scratch, site: String = "site") throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: scratch.at("\(site)/manifest.json")))) as! [String: Any]
    }

    func entry(_ manifest: [String: Any], _ name: String) -> [String: Any] {
        (manifest["models"] as! [String: Any])[name] as! [String: Any]
    }

    /// Lays out what a device installs of model `name` under `destination` (as the client
    /// does: a single file, the files by name, an unzipped package, a tree by its paths)
    /// and returns the path model_signing is given, and the bundle's path.
    func installed(_ scratch: Scratch, _ name: String, into destination: String, site: String = "site") throws -> (model: String, bundle: String) {
        let entry = entry(try manifest(scratch, site: site), name)
        let files = entry["files"] as! [[String: Any]]
        let signature = entry["model_signature"] as! [String: Any]
        let bundle = scratch.at("\(site)/\(signature["key"] as! String)")
        try scratch.mkdir(destination)
        let root = scratch.at(destination)
        for file in files {
            let stored = scratch.at("\(site)/\(file["key"] as! String)")
            if let tree = entry["tree"] as? String, let path = file["path"] as? String {
                try shell("mkdir -p \"$(dirname '\(root)/\(tree)/\(path)')\" && cp '\(stored)' '\(root)/\(tree)/\(path)'")
            } else if (file["name"] as! String).hasSuffix(".zip") {
                try shell("cd '\(root)' && unzip -q '\(stored)'")
            } else {
                try shell("cp '\(stored)' '\(root)/\(file["name"] as! String)'")
            }
        }
        if let tree = entry["tree"] as? String { return (root + "/" + tree, bundle) }
        if files.count == 1, let name = files[0]["name"] as? String {
            return (root + "/" + (name.hasSuffix(".zip") ? String(name.dropLast(4)) : name), bundle)
        }
        return (root, bundle)
    }

    func testPublishedModelsPassModelSigningVerifyAndModelcastVerify() throws {
        let scratch = try Scratch()
        let keys = try modelSigningKeys(scratch)
        let all = try models(scratch)
        let llava = all["directory with a companion"]!
        let shapes: [(name: String, inputs: [String], arguments: [String])] = [
            ("single", [all["single file"]!], []),
            ("llava", [llava + "/tiny-llm.gguf", llava + "/tiny-llm-mmproj.gguf"], []),
            ("classifier", [all["mlpackage"]!], []),
            ("tree", [all["nested tree"]!], ["--no-zip"]),
        ]
        for shape in shapes {
            let site = "site-\(shape.name)"
            let result = try publish(scratch, shape.inputs, name: shape.name, site: site, key: keys.privateKey, arguments: shape.arguments)
            XCTAssertEqual(result.status, 0, "\(shape.name): \(result.stderr)")
            let signature = entry(try manifest(scratch, site: site), shape.name)["model_signature"] as? [String: Any]
            let key = signature?["key"] as? String ?? ""
            let script = "import json, sys, jsonschema; jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))"
            let valid = try runProcess("/usr/bin/env", ["python3", "-c", script, repositoryRoot + "/schema/modelcast-manifest.schema.json", scratch.at("\(site)/manifest.json")])
            XCTAssertEqual(valid.status, 0, "\(shape.name): \(valid.stderr)")
            XCTAssertTrue(key.hasPrefix("models/\(shape.name)/signatures/") && key.hasSuffix(".sigstore.json"), "\(shape.name): \(key)")
            let device = try installed(scratch, shape.name, into: "device-\(shape.name)", site: site)
            let theirs = try modelSigning(["verify", "key", device.model, "--signature", device.bundle, "--public_key", keys.publicKey])
            XCTAssertEqual(theirs.status, 0, "\(shape.name): model_signing refuses what modelcast published: \(theirs.stderr) \(theirs.stdout)")
            // A byte flipped, a file added, a file removed on the device: refused by model_signing.
            for tamper in ["flip", "add", "remove"] {
                let copy = scratch.at("tampered-\(shape.name)-\(tamper)")
                try shell("cp -R '\(scratch.at("device-\(shape.name)"))' '\(copy)'")
                let target = device.model.replacingOccurrences(of: scratch.at("device-\(shape.name)"), with: copy)
                let file = shape.name == "single" ? "'.'" : shape.name == "llava" ? "tiny-llm-mmproj.gguf" : shape.name == "tree" ? "a/b/c/deep.bin" : "Manifest.json"
                if shape.name == "single", tamper != "flip" { continue }
                try apply(tamper, to: target, file: tamper == "add" ? "added.bin" : file)
                let refused = try modelSigning(["verify", "key", target, "--signature", device.bundle, "--public_key", keys.publicKey])
                XCTAssertNotEqual(refused.status, 0, "\(shape.name): model_signing accepts the installed files after \(tamper)")
            }
            let verified = try modelcast(["verify", scratch.at(site), "--model-signing-public-key", keys.publicKey])
            XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr)
            XCTAssertEqual(verified.stdout.components(separatedBy: "PASS  model.signature").count - 1, 1, verified.stdout)
            let unchecked = try modelcast(["verify", scratch.at(site)])
            XCTAssertEqual(unchecked.status, 0, unchecked.stdout)
            XCTAssertTrue(unchecked.stdout.contains("not checked: pass --model-signing-public-key"), unchecked.stdout)
        }
    }

    /// A manifest rewritten to name other bytes (an unsigned manifest, changed by whoever can
    /// write the bucket) passes every artifact check but not the model signature, which
    /// names the file; another key fails with both hints.
    func testVerifyNamesTheFileAManifestChangedUnderTheSignature() throws {
        let scratch = try Scratch()
        let keys = try modelSigningKeys(scratch), other = try modelSigningKeys(scratch, name: "other")
        let all = try models(scratch)
        let llava = all["directory with a companion"]!
        XCTAssertEqual(try publish(scratch, [llava + "/tiny-llm.gguf", llava + "/tiny-llm-mmproj.gguf"], name: "llava", key: keys.privateKey).status, 0)
        XCTAssertEqual(try publish(scratch, [all["mlpackage"]!], name: "classifier", site: "site2", key: keys.privateKey).status, 0)
        let wrongKey = try modelcast(["verify", scratch.at("site"), "--model-signing-public-key", other.publicKey])
        XCTAssertEqual(wrongKey.status, 1)
        XCTAssertTrue(wrongKey.stdout.contains("FAIL  model.signature") && wrongKey.stdout.contains("another key"), wrongKey.stdout)

        // The mmproj's stored bytes replaced and the manifest made to agree.
        try rewrite(scratch, site: "site", model: "llava", file: "tiny-llm-mmproj.gguf") { bytes in bytes[bytes.count - 1] ^= 0xff }
        // A byte of model.mlmodel's stored data flipped inside the package's zip (after its
        // local header, name and extra field), the manifest made to agree.
        try rewrite(scratch, site: "site2", model: "classifier", file: "TinyClassifier.mlpackage.zip") { zip in
            let marker = Array("model.mlmodel".utf8), signature: [UInt8] = [0x50, 0x4b, 0x03, 0x04]
            let named = (0..<(zip.count - marker.count)).first { Array(zip[$0..<($0 + marker.count)]) == marker }!
            let header = (0..<named).last { Array(zip[$0..<($0 + 4)]) == signature }!
            zip[header + 30 + Int(zip[header + 26]) + Int(zip[header + 27]) << 8 + Int(zip[header + 28]) + Int(zip[header + 29]) << 8] ^= 0x01
        }
        for (site, named) in [("site", "'tiny-llm-mmproj.gguf' changed"), ("site2", "'Data/com.apple.CoreML/model.mlmodel' changed")] {
            let result = try modelcast(["verify", scratch.at(site), "--model-signing-public-key", keys.publicKey])
            XCTAssertEqual(result.status, 1, result.stdout)
            let lines = result.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL  model.signature") }
            XCTAssertEqual(lines.count, 1, result.stdout)
            XCTAssertTrue(lines.first?.contains(named) ?? false, result.stdout)
            XCTAssertFalse(result.stdout.contains("FAIL  artifact.sha256"), "the artifacts are what the rewritten manifest says: \(result.stdout)")
        }
    }

    /// A bundle in the target whose key hint holds terminal escapes (whoever can write the
    /// bucket wrote it, and the manifest to match): verify and publish quote it, never print it.
    func testAHostileKeyHintIsNeverPrintedRaw() throws {
        let scratch = try Scratch()
        let keys = try modelSigningKeys(scratch), other = try modelSigningKeys(scratch, name: "other")
        let model = try models(scratch)["single file"]!
        XCTAssertEqual(try publish(scratch, [model], name: "llm", key: keys.privateKey).status, 0)
        var document = try manifest(scratch)
        var models = document["models"] as! [String: Any]
        var entry = models["llm"] as! [String: Any]
        var object = entry["model_signature"] as! [String: Any]
        let path = scratch.at("site/\(object["key"] as! String)")
        var bundle = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
        bundle["verificationMaterial"] = ["publicKey": ["hint": "\u{1B}[31mevil\u{7}"], "tlogEntries": [Any]()]
        let bytes = try JSONSerialization.data(withJSONObject: bundle)
        try bytes.write(to: URL(fileURLWithPath: path))
        object["sha256"] = try SHA256Hasher.digest([UInt8](bytes)).hex
        object["size"] = bytes.count
        entry["model_signature"] = object
        models["llm"] = entry
        document["models"] = models
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: scratch.at("site/manifest.json")))

        let verified = try modelcast(["verify", scratch.at("site")])
        XCTAssertTrue(verified.stdout.contains(#"hint '\u{1b}[31mevil\u{7}'"#), verified.stdout)
        let published = try publish(scratch, [model], name: "llm", version: "1.0.1", key: other.privateKey, arguments: ["--adopt-live"])
        XCTAssertEqual(published.status, 1, published.stderr)
        XCTAssertTrue(published.stderr.contains(#"hint '\u{1b}[31mevil\u{7}'"#), published.stderr)
        for output in [verified.stdout + verified.stderr, published.stdout + published.stderr] {
            XCTAssertFalse(output.contains("\u{1B}") || output.contains("\u{7}"), "a raw control character is printed")
        }
    }

    /// Changes the stored bytes of `file` of `model` and writes the manifest to name them.
    func rewrite(_ scratch: Scratch, site: String, model: String, file: String, _ change: (inout [UInt8]) -> Void) throws {
        var document = try manifest(scratch, site: site)
        var models = document["models"] as! [String: Any]
        var entry = models[model] as! [String: Any]
        var files = entry["files"] as! [[String: Any]]
        let index = files.firstIndex { ($0["name"] as! String) == file }!
        let path = scratch.at("\(site)/\(files[index]["key"] as! String)")
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        change(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        files[index]["sha256"] = try SHA256Hasher.digest(bytes).hex
        files[index]["segments"] = nil
        entry["files"] = files
        models[model] = entry
        document["models"] = models
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: scratch.at("\(site)/manifest.json")))
    }

    /// Re-publishing the same bytes keeps the bundle; another key or none is refused with
    /// nothing written; the key from the environment or a config file is never printed.
    func testKeyChangesAreRefusedAndTheKeyIsNeverPrinted() throws {
        let scratch = try Scratch()
        let keys = try modelSigningKeys(scratch), other = try modelSigningKeys(scratch, name: "other")
        let model = try models(scratch)["single file"]!
        let pem = try String(contentsOfFile: keys.privateKey, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["MODELCAST_MODEL_SIGNING_KEY"] = pem
        let first = try publish(scratch, [model], name: "llm", key: nil, environment: environment)
        XCTAssertEqual(first.status, 0, first.stderr)
        let signature = entry(try manifest(scratch), "llm")["model_signature"] as? [String: Any]
        XCTAssertNotNil(signature, "the key from $MODELCAST_MODEL_SIGNING_KEY signs")
        let before = try snapshot(scratch.at("site"))
        let again = try publish(scratch, [model], name: "llm", key: keys.privateKey)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("unchanged"), again.stdout)
        XCTAssertEqual(try snapshot(scratch.at("site")), before, "an identical re-publish keeps the live bundle")

        let rotated = try publish(scratch, [model], name: "llm", key: other.privateKey)
        XCTAssertEqual(rotated.status, 1)
        XCTAssertTrue(rotated.stderr.contains("--rotate-model-signing-key") && rotated.stderr.contains("hint"), rotated.stderr)
        let dropped = try publish(scratch, [model], name: "llm", version: "1.0.1", key: nil)
        XCTAssertEqual(dropped.status, 1)
        XCTAssertTrue(dropped.stderr.contains("--unsigned-models"), dropped.stderr)
        XCTAssertEqual(try snapshot(scratch.at("site")), before, "a refused publish writes nothing")

        try scratch.write("modelcast.yml", text: "model_signing_key: other.pem\nmodels:\n  llm:\n    version: 1.0.1\n    files: [\(model)]\n")
        let configured = try modelcast(["publish", "--config", scratch.at("modelcast.yml"), "--base-url", "https://cdn.example.com",
                                        "--to", scratch.at("site"), "--rotate-model-signing-key"])
        XCTAssertEqual(configured.status, 0, configured.stderr)
        let rotatedSignature = entry(try manifest(scratch), "llm")["model_signature"] as? [String: Any]
        XCTAssertNotEqual(rotatedSignature?["key"] as? String, signature?["key"] as? String)
        let verified = try modelcast(["verify", scratch.at("site"), "--model-signing-public-key", other.publicKey])
        XCTAssertEqual(verified.status, 0, verified.stdout)
        let unsigned = try publish(scratch, [model], name: "llm", version: "1.0.2", key: nil, arguments: ["--unsigned-models"], environment: environment)
        XCTAssertEqual(unsigned.status, 0, unsigned.stderr)
        XCTAssertNil(entry(try manifest(scratch), "llm")["model_signature"], "--unsigned-models ignores the environment's key")
        let secret = pem.split(separator: "\n").dropFirst().dropLast()
        for output in [first, again, rotated, dropped, configured, unsigned] {
            for line in secret { XCTAssertFalse((output.stdout + output.stderr).contains(line), "the private key is printed") }
        }
    }
}
