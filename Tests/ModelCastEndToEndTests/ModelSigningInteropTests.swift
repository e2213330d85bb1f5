import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// OpenSSF model signatures checked against the reference implementation, model_signing
/// (PyPI `model-signing`, installed by scripts/setup), in both directions: what `modelcast
/// sign-model` writes `model_signing verify key` accepts, what `model_signing sign key`
/// writes `modelcast inspect --model-signature` accepts, and a changed, added or removed
/// file is refused by both.
final class ModelSigningInteropTests: XCTestCase {
    func testModelcastSignaturesPassModelSigningVerify() throws {
        let scratch = try Scratch()
        let keys = try modelSigningKeys(scratch)
        for (label, model) in try models(scratch).sorted(by: { $0.key < $1.key }) {
            let signature = scratch.at("\(PathText.lastComponent(model)).sig")
            let signed = try modelcast(["sign-model", model, "--key", keys.privateKey, "--signature", signature])
            XCTAssertEqual(signed.status, 0, "\(label): \(signed.stderr)")
            XCTAssertTrue(signed.stdout.contains("signed "), signed.stdout)
            let verified = try modelSigning(["verify", "key", model, "--signature", signature, "--public_key", keys.publicKey])
            XCTAssertEqual(verified.status, 0, "\(label): model_signing refuses modelcast's signature: \(verified.stderr) \(verified.stdout)")
            // modelcast checks its own signature too.
            let inspected = try modelcast(["inspect", model, "--no-hash", "--model-signature", signature, "--public-key", keys.publicKey])
            XCTAssertEqual(inspected.status, 0, "\(label): \(inspected.stderr)")
        }
    }

    func testASignatureKeptInsideItsModelIsLeftOutByBoth() throws {
        let scratch = try Scratch()
        let keys = try modelSigningKeys(scratch)
        let model = try models(scratch)["nested tree"]!
        let inside = model + "/model.sig"
        XCTAssertEqual(try modelcast(["sign-model", model, "--key", keys.privateKey, "--signature", inside]).status, 0)
        XCTAssertEqual(try modelSigning(["verify", "key", model, "--signature", inside, "--public_key", keys.publicKey]).status, 0)
        try FileManager.default.removeItem(atPath: inside)
        XCTAssertEqual(try modelSigning(["sign", "key", model, "--private_key", keys.privateKey, "--signature", inside]).status, 0)
        let inspected = try modelcast(["inspect", model, "--no-hash", "--model-signature", inside, "--public-key", keys.publicKey])
        XCTAssertEqual(inspected.status, 0, inspected.stderr)
    }

    func testModelSigningSignaturesPassModelcastInspect() throws {
        let scratch = try Scratch()
        let keys = try modelSigningKeys(scratch)
        for (label, model) in try models(scratch).sorted(by: { $0.key < $1.key }) {
            let signature = scratch.at("\(PathText.lastComponent(model)).ms.sig")
            let signed = try modelSigning(["sign", "key", model, "--private_key", keys.privateKey, "--signature", signature])
            XCTAssertEqual(signed.status, 0, "\(label): \(signed.stderr)")
            let inspected = try modelcast(["inspect", model, "--model-signature", signature, "--public-key", keys.publicKey])
            XCTAssertEqual(inspected.status, 0, "\(label): modelcast refuses model_signing's signature: \(inspected.stderr)")
            XCTAssertTrue(inspected.stdout.contains("model signature verified"), inspected.stdout)
            let json = try modelcast(["inspect", model, "--no-hash", "--json", "--model-signature", signature, "--public-key", keys.publicKey])
            XCTAssertEqual(json.status, 0, json.stderr)
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            let verification = object?["model_signature"] as? [String: Any]
            XCTAssertEqual(verification?["verified"] as? Bool, true, json.stdout)
            XCTAssertNotNil(object?["kind"], "the usual report is still there: \(json.stdout)")
        }
    }

    /// A flipped byte, an added file and a removed file, each refused by both tools whoever signed.
    func testTamperedModelsFailBothWays() throws {
        let scratch = try Scratch()
        let keys = try modelSigningKeys(scratch)
        let all = try models(scratch)
        for signer in ["modelcast", "model_signing"] {
            for (model, tamper, named) in [(all["nested tree"]!, "flip", "a/b/c/deep.bin"), (all["mlpackage"]!, "add", "Data/notes.txt"),
                                           (all["directory with a companion"]!, "remove", "tiny-llm-mmproj.gguf"), (all["single file"]!, "flip", "'.'")] {
                let copy = scratch.at("copy-\(signer)-\(tamper)-\(PathText.lastComponent(model))")
                try shell("cp -R '\(model)' '\(copy)'")
                let signature = copy + ".sig"
                let signed = signer == "modelcast"
                    ? try modelcast(["sign-model", copy, "--key", keys.privateKey, "--signature", signature])
                    : try modelSigning(["sign", "key", copy, "--private_key", keys.privateKey, "--signature", signature])
                XCTAssertEqual(signed.status, 0, signed.stderr)
                try apply(tamper, to: copy, file: named)
                let theirs = try modelSigning(["verify", "key", copy, "--signature", signature, "--public_key", keys.publicKey])
                XCTAssertNotEqual(theirs.status, 0, "model_signing accepts a model after \(tamper) (\(signer) signed)")
                let ours = try modelcast(["inspect", copy, "--no-hash", "--model-signature", signature, "--public-key", keys.publicKey])
                XCTAssertEqual(ours.status, 1, "modelcast accepts a model after \(tamper) (\(signer) signed): \(ours.stdout)")
                let word = ["flip": "changed", "add": "extra", "remove": "missing"][tamper]!
                XCTAssertTrue(ours.stderr.contains(word) && ours.stderr.contains(named.hasPrefix("'") ? named : "'\(named)'"),
                              "\(tamper) (\(signer) signed): \(ours.stderr)")
            }
        }
    }

    func testAnotherKeyIsRefusedBothWays() throws {
        let scratch = try Scratch()
        let keys = try modelSigningKeys(scratch), other = try modelSigningKeys(scratch, name: "other")
        let model = try models(scratch)["directory with a companion"]!
        let signature = scratch.at("llava.sig")
        XCTAssertEqual(try modelcast(["sign-model", model, "--key", keys.privateKey, "--signature", signature]).status, 0)
        XCTAssertNotEqual(try modelSigning(["verify", "key", model, "--signature", signature, "--public_key", other.publicKey]).status, 0)
        let ours = try modelcast(["inspect", model, "--no-hash", "--model-signature", signature, "--public-key", other.publicKey])
        XCTAssertEqual(ours.status, 1)
        XCTAssertTrue(ours.stderr.contains("another key"), ours.stderr)
    }

    /// A passphrase-protected key from keygen signs with either tool, and a SEC 1 key from
    /// openssl signs with modelcast; the passphrase never shows in any output.
    func testEncryptedAndOpenSSLKeysSignWithEitherTool() throws {
        let scratch = try Scratch()
        let passphrase = "correct horse \(UInt32.random(in: 1000...9999))"
        var environment = ProcessInfo.processInfo.environment
        environment[Passphrase.environmentVariable] = passphrase
        let made = try modelcast(["keygen", "--model-signing", "--private-key", scratch.at("e.pem"), "--public-key", scratch.at("e.pub")], environment: environment)
        XCTAssertEqual(made.status, 0, made.stderr)
        XCTAssertTrue(try String(contentsOfFile: scratch.at("e.pem"), encoding: .utf8).hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        let model = try models(scratch)["mlpackage"]!
        let ours = try modelcast(["sign-model", model, "--key", scratch.at("e.pem"), "--signature", scratch.at("e1.sig")], environment: environment)
        XCTAssertEqual(ours.status, 0, ours.stderr)
        XCTAssertEqual(try modelSigning(["verify", "key", model, "--signature", scratch.at("e1.sig"), "--public_key", scratch.at("e.pub")]).status, 0)
        // model_signing 1.1.1's `sign key --password` hands cryptography a str and always fails
        // ("Cannot convert <class 'str'> instance to a buffer"), so its Python API signs here,
        // with the passphrase as bytes, in a subprocess.
        let script = "import sys, model_signing; model_signing.signing.Config().use_elliptic_key_signer(private_key=sys.argv[1], password=sys.argv[2].encode()).sign(sys.argv[3], sys.argv[4])"
        let theirs = try runProcess("/usr/bin/env", ["python3", "-c", script, scratch.at("e.pem"), passphrase, model, scratch.at("e2.sig")])
        XCTAssertEqual(theirs.status, 0, "model_signing cannot read keygen's encrypted key: \(theirs.stderr)")
        let inspected = try modelcast(["inspect", model, "--no-hash", "--model-signature", scratch.at("e2.sig"), "--public-key", scratch.at("e.pub")])
        XCTAssertEqual(inspected.status, 0, inspected.stderr)
        let wrong = try modelcast(["sign-model", model, "--key", scratch.at("e.pem"), "--signature", scratch.at("e3.sig")],
                                  environment: environment.merging([Passphrase.environmentVariable: "wrong"]) { $1 })
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stderr.contains("wrong passphrase"), wrong.stderr)
        for output in [made, ours, wrong] { XCTAssertFalse((output.stdout + output.stderr).contains(passphrase)) }

        try shell("openssl ecparam -name prime256v1 -genkey -noout -out '\(scratch.at("sec1.pem"))' && openssl ec -in '\(scratch.at("sec1.pem"))' -pubout -out '\(scratch.at("sec1.pub"))'")
        XCTAssertEqual(try modelcast(["sign-model", model, "--key", scratch.at("sec1.pem"), "--signature", scratch.at("s.sig")]).status, 0)
        XCTAssertEqual(try modelSigning(["verify", "key", model, "--signature", scratch.at("s.sig"), "--public_key", scratch.at("sec1.pub")]).status, 0)
    }

    func testKeygenWritesAPrivateKeyOnlyItsOwnerReadsAndNeverOverwrites() throws {
        let scratch = try Scratch()
        let keys = try modelSigningKeys(scratch)
        var info = stat()
        XCTAssertEqual(stat(keys.privateKey, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        let text = try String(contentsOfFile: keys.privateKey, encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("-----BEGIN PRIVATE KEY-----"), "PKCS#8")
        XCTAssertTrue(try String(contentsOfFile: keys.publicKey, encoding: .utf8).hasPrefix("-----BEGIN PUBLIC KEY-----"))
        let before = try snapshot(scratch.path)
        let again = try modelcast(["keygen", "--model-signing", "--unencrypted", "--private-key", keys.privateKey, "--public-key", scratch.at("new.pub")])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains(keys.privateKey) && again.stderr.contains("--force"), again.stderr)
        XCTAssertEqual(try snapshot(scratch.path), before, "an existing key is never overwritten")
        let secretLines = text.split(separator: "\n").dropFirst().dropLast()
        for line in secretLines { XCTAssertFalse(again.stdout.contains(line) || again.stderr.contains(line)) }
        let mixed = try modelcast(["keygen", "--model-signing", "--secret-key", scratch.at("x.key")])
        XCTAssertEqual(mixed.status, 2)
        XCTAssertTrue(mixed.stderr.contains("--private-key"), mixed.stderr)
    }
}

/// The fixtures of the model-signing tests: the real model_signing tool, keys from
/// keygen, models in the four shapes a device installs, and the three tamperings.
extension XCTestCase {
    /// `model_signing ARGUMENTS`, the real tool.
    func modelSigning(_ arguments: [String]) throws -> ProcessOutput {
        guard let tool = which("model_signing") else {
            XCTFail("model_signing is not installed: run scripts/setup")
            throw CocoaError(.executableNotLoadable)
        }
        return try runProcess(tool, arguments)
    }

    /// An unencrypted P-256 pair made by `modelcast keygen --model-signing`.
    func modelSigningKeys(_ scratch: Scratch, name: String = "k") throws -> (privateKey: String, publicKey: String) {
        let pair = (scratch.at("\(name).pem"), scratch.at("\(name).pub"))
        let result = try modelcast(["keygen", "--model-signing", "--unencrypted", "--private-key", pair.0, "--public-key", pair.1])
        XCTAssertEqual(result.status, 0, result.stderr)
        return pair
    }

    /// The models a device installs, in four shapes: a single GGUF file and a GGUF with its
    /// mmproj companion (the repository's example models, which inspect validates), the
    /// example `.mlpackage`, and a nested tree whose names sort differently by component than
    /// as strings (plus git files model_signing leaves out at the top and keeps below it).
    func models(_ scratch: Scratch) throws -> [String: String] {
        let examples = repositoryRoot + "/examples/models"
        try scratch.mkdir("single")
        try scratch.mkdir("llava")
        try shell("cp '\(examples)/tiny-llm.gguf' '\(scratch.at("single"))/' && cp '\(examples)/tiny-llm.gguf' '\(examples)/tiny-llm-mmproj.gguf' '\(scratch.at("llava"))/'"
                  + " && cp -R '\(examples)/TinyClassifier.mlpackage' '\(scratch.path)/'")
        for (index, name) in ["a/b/c/deep.bin", "a-b", "a.txt", "B", "é.bin", "z/x", "sub/.gitignore", "empty"].enumerated() {
            try scratch.write("tree/\(name)", name == "empty" ? [] : patternBytes(100 + index, seed: UInt32(index)))
        }
        try scratch.write("tree/.git/HEAD", text: "ref: refs/heads/main\n")
        try scratch.write("tree/.gitattributes", text: "*.bin filter=lfs\n")
        return ["single file": scratch.at("single/tiny-llm.gguf"), "directory with a companion": scratch.at("llava"),
                "mlpackage": scratch.at("TinyClassifier.mlpackage"), "nested tree": scratch.at("tree")]
    }

    func apply(_ tamper: String, to model: String, file: String) throws {
        var isDirectory: ObjCBool = false
        FileManager.default.fileExists(atPath: model, isDirectory: &isDirectory)
        let path = isDirectory.boolValue ? model + "/" + file : model
        switch tamper {
        case "flip":
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            bytes[bytes.count / 2] ^= 0x01
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        case "add":
            try Data("not signed".utf8).write(to: URL(fileURLWithPath: path))
        default:
            try FileManager.default.removeItem(atPath: path)
        }
    }
}
