import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

/// OpenSSF model signatures: P-256 keys, the DSSE encoding, the statement model_signing
/// signs, and bundles that are hostile input (every refusal names the field and value).
final class ModelSigningTests: XCTestCase {
    static let key = try! P256PrivateKey.generate()

    /// A two-file model in a scratch directory, signed.
    func signedModel(_ scratch: Scratch) throws -> (model: String, bundle: ModelSignatureBundle, statement: ModelSigningStatement) {
        try scratch.write("m/weights.bin", patternBytes(4000))
        try scratch.write("m/config/labels.txt", text: "cat\ndog\n")
        let signed = try ModelSigning.sign(model: scratch.at("m"), key: Self.key, signaturePath: nil)
        return (scratch.at("m"), signed.bundle, signed.statement)
    }

    /// `text` signed as a DSSE payload by `key`, in a bundle.
    func bundle(payload text: String, key: P256PrivateKey = key) throws -> ModelSignatureBundle {
        let payload = Array(text.utf8)
        let signature = try key.sign(DSSE.preAuthenticationEncoding(payloadType: DSSE.inTotoPayloadType, payload: payload))
        return ModelSignatureBundle(keyHint: key.publicKey.hint, payload: payload, signature: signature)
    }

    /// Asserts that parsing or verifying `data` fails with `invalidModelSignature` whose
    /// message contains every one of `fragments`.
    func assertRefused(_ data: Data, _ fragments: [String], file: StaticString = #filePath, line: UInt = #line) {
        do {
            let bundle = try ModelSignatureBundle(parsing: data, source: "hostile.sig")
            _ = try bundle.verifiedStatement(publicKey: Self.key.publicKey, source: "hostile.sig")
            XCTFail("accepted: \(String(decoding: data.prefix(200), as: UTF8.self))", file: file, line: line)
        } catch let error as FormatError {
            guard case .invalidModelSignature(let source, _) = error else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(source, "hostile.sig", file: file, line: line)
            for fragment in fragments { XCTAssertTrue(error.message.contains(fragment), "\(error.message) lacks \(fragment)", file: file, line: line) }
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    /// The bundle JSON with one edit applied to its parsed form.
    func edited(_ bundle: ModelSignatureBundle, _ edit: (inout [String: Any]) -> Void) throws -> Data {
        var object = try JSONSerialization.jsonObject(with: bundle.json) as! [String: Any]
        edit(&object)
        return try JSONSerialization.data(withJSONObject: object)
    }

    func testSignedModelsVerifyAndNameEveryDifference() throws {
        let scratch = try Scratch()
        let (model, bundle, statement) = try signedModel(scratch)
        XCTAssertEqual(statement.resources.map(\.path.rawValue), ["config/labels.txt", "weights.bin"])
        let verification = try ModelSigning.verify(model: model, bundle: bundle.json, source: "m.sig", signaturePath: nil, publicKey: Self.key.publicKey)
        XCTAssertEqual(verification.statement, statement)
        XCTAssertTrue(verification.summary.contains("2 files"), verification.summary)

        try scratch.write("m/weights.bin", patternBytes(4000, seed: 2))
        try FileManager.default.removeItem(atPath: scratch.at("m/config/labels.txt"))
        try scratch.write("m/extra.bin", [1])
        XCTAssertThrowsError(try ModelSigning.verify(model: model, bundle: bundle.json, source: "m.sig", signaturePath: nil, publicKey: Self.key.publicKey)) { error in
            guard case .modelSignatureMismatch(_, _, let differences)? = error as? ModelCastError else { return XCTFail("\(error)") }
            XCTAssertEqual(differences.count, 3)
            XCTAssertTrue(differences[0].hasPrefix("'weights.bin' changed (signed sha256 "), differences[0])
            XCTAssertEqual(differences[1], "missing 'config/labels.txt' (signed, not in the model)")
            XCTAssertEqual(differences[2], "extra 'extra.bin' (in the model, not signed)")
        }
    }

    func testSymbolicLinksAndEmptyModelsAreRefused() throws {
        let scratch = try Scratch()
        try scratch.write("m/.git/HEAD", text: "ref\n")
        XCTAssertThrowsError(try ModelSigning.sign(model: scratch.at("m"), key: Self.key, signaturePath: nil)) {
            XCTAssertTrue("\($0)".contains("no file to sign"), "\($0)")
        }
        try scratch.write("m/w.bin", [1, 2, 3])
        XCTAssertEqual(symlink("../w.bin", scratch.at("m/.git/link")), 0)
        XCTAssertThrowsError(try ModelSigning.sign(model: scratch.at("m"), key: Self.key, signaturePath: nil)) {
            guard case .symlink(let path, _)? = $0 as? ModelCastError else { return XCTFail("\($0)") }
            XCTAssertEqual(path, scratch.at("m/.git/link"))
        }
    }

    func testBundleBytesHaveModelSigningsShape() throws {
        let scratch = try Scratch()
        let bundle = try signedModel(scratch).bundle
        let text = String(decoding: bundle.json, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix(#"{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":""#), text)
        XCTAssertTrue(text.contains(#""tlogEntries":[]},"dsseEnvelope":{"payload":""#), text)
        XCTAssertTrue(text.hasSuffix(#"","keyid":""}]}}"#), text)
        XCTAssertEqual(bundle.signature.first, 0x30, "a DER SEQUENCE")
        XCTAssertEqual(try ModelSignatureBundle(parsing: bundle.json, source: "s"), bundle)
    }

    func testPreAuthenticationEncodingMatchesTheDSSEExample() {
        // The example in DSSE's protocol.md.
        XCTAssertEqual(String(decoding: DSSE.preAuthenticationEncoding(payloadType: "http://example.com/HelloWorld", payload: Array("hello world".utf8)), as: UTF8.self),
                       "DSSEv1 29 http://example.com/HelloWorld 11 hello world")
    }

    func testFilesSortAsModelSigningSortsThem() throws {
        let names = try ["a.txt", "é.bin", "a/b", "z/x", "a-b", "B"].map(ModelFilePath.init)
        XCTAssertEqual(names.sorted().map(\.rawValue), ["B", "a/b", "a-b", "a.txt", "z/x", "é.bin"])
    }

    func testTruncatedAndNonJSONBundlesAreRefused() throws {
        let scratch = try Scratch()
        let json = try signedModel(scratch).bundle.json
        assertRefused(json.prefix(json.count / 2), ["not JSON"])
        assertRefused(Data(), ["not JSON"])
        assertRefused(Data("[]".utf8), ["bundle", "is not a JSON object"])
    }

    func testWrongTypesAreRefusedByField() throws {
        let scratch = try Scratch()
        let bundle = try signedModel(scratch).bundle
        assertRefused(try edited(bundle) { $0["mediaType"] = 3 }, ["bundle.mediaType", "is not a string"])
        assertRefused(try edited(bundle) { $0["mediaType"] = "application/vnd.dev.sigstore.bundle.v0.2+json" }, ["bundle.mediaType", "v0.2"])
        assertRefused(try edited(bundle) { var e = $0["dsseEnvelope"] as! [String: Any]; e["payload"] = 1; $0["dsseEnvelope"] = e },
                      ["bundle.dsseEnvelope.payload", "is not a string"])
        assertRefused(try edited(bundle) { var e = $0["dsseEnvelope"] as! [String: Any]; e["payloadType"] = "application/json"; $0["dsseEnvelope"] = e },
                      ["bundle.dsseEnvelope.payloadType", "'application/json'"])
        assertRefused(try edited(bundle) { var e = $0["dsseEnvelope"] as! [String: Any]; e["signatures"] = "MEUC"; $0["dsseEnvelope"] = e },
                      ["bundle.dsseEnvelope.signatures", "is not an array"])
        assertRefused(try edited(bundle) { $0["extra"] = true }, ["'extra'", "is not a member"])
        assertRefused(try edited(bundle) { var m = $0["verificationMaterial"] as! [String: Any]; m["certificate"] = ["rawBytes": "AA=="]; $0["verificationMaterial"] = m },
                      ["certificate", "not supported"])
        assertRefused(try edited(bundle) { var m = $0["verificationMaterial"] as! [String: Any]; m["publicKey"] = ["hint": String(repeating: "0", count: 64)]; $0["verificationMaterial"] = m },
                      ["another key"])
    }

    func testBadBase64IsRefused() throws {
        let scratch = try Scratch()
        let bundle = try signedModel(scratch).bundle
        func withEnvelope(_ key: String, _ value: String) throws -> Data {
            try edited(bundle) { object in
                var envelope = object["dsseEnvelope"] as! [String: Any]
                if key == "sig" {
                    envelope["signatures"] = [["sig": value, "keyid": ""]]
                } else {
                    envelope[key] = value
                }
                object["dsseEnvelope"] = envelope
            }
        }
        let sig = encodeBase64(bundle.signature)
        assertRefused(try withEnvelope("payload", "not base64!"), ["bundle.dsseEnvelope.payload", "is not standard padded base64"])
        assertRefused(try withEnvelope("sig", String(sig.dropLast())), ["signatures[0].sig", "base64"])
        assertRefused(try withEnvelope("sig", sig.prefix(20) + "\n" + sig.dropFirst(20)), ["signatures[0].sig", "base64"])
        assertRefused(try withEnvelope("sig", sig.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_") + (sig.contains("+") || sig.contains("/") ? "" : "-===")), ["signatures[0].sig"])
        // "QQ==" is "A"; "QR==" decodes to the same byte with stray bits: not canonical.
        assertRefused(try withEnvelope("payload", "QR=="), ["bundle.dsseEnvelope.payload", "base64"])
    }

    func testASignatureOverAnotherPayloadIsRefused() throws {
        let scratch = try Scratch()
        let (model, bundle, _) = try signedModel(scratch)
        try scratch.write("m/weights.bin", patternBytes(10))
        let other = try ModelSigning.sign(model: model, key: Self.key, signaturePath: nil).bundle
        let swapped = ModelSignatureBundle(keyHint: bundle.keyHint, payload: other.payload, signature: bundle.signature)
        assertRefused(swapped.json, ["does not verify"])
        let otherKey = try P256PrivateKey.generate()
        let foreign = ModelSignatureBundle(keyHint: nil, payload: bundle.payload, signature: try otherKey.sign(DSSE.preAuthenticationEncoding(payloadType: DSSE.inTotoPayloadType, payload: bundle.payload)))
        assertRefused(foreign.json, ["does not verify"])
    }

    func testHugeInputsAreRefusedBeforeParsing() throws {
        assertRefused(Data(repeating: 0x20, count: ModelSignatureBundle.maximumSize + 1), ["larger than"])
        assertRefused(Data((String(repeating: "[", count: 100) + String(repeating: "]", count: 100)).utf8), ["deeper than 8"])
        let scratch = try Scratch()
        let bundle = try signedModel(scratch).bundle
        let longSignature = try edited(bundle) { object in
            var envelope = object["dsseEnvelope"] as! [String: Any]
            envelope["signatures"] = [["sig": encodeBase64([UInt8](repeating: 7, count: 5000)), "keyid": ""]]
            object["dsseEnvelope"] = envelope
        }
        assertRefused(longSignature, ["signatures[0].sig", "longer than"])
        let oversized = scratch.at("big.sig")
        FileManager.default.createFile(atPath: oversized, contents: nil)
        XCTAssertEqual(truncate(oversized, off_t(ModelSignatureBundle.maximumSize + 1)), 0)
        XCTAssertThrowsError(try ModelSignatureBundle.readFile(oversized)) { XCTAssertTrue("\($0)".contains("larger than"), "\($0)") }
    }

    /// Statements signed with the right key but malformed: each refusal names the field.
    func testMalformedStatementsAreRefusedEvenWhenSigned() throws {
        let digest = String(repeating: "ab", count: 32)
        func statement(subjectDigest: String? = nil, serialization: String = #"{"method": "files", "hash_type": "sha256", "allow_symlinks": false}"#,
                       resources: String) throws -> String {
            let root = try subjectDigest ?? SHA256Hasher.digest(SHA256Digest(hex: digest)!.bytes).hex
            return #"{"_type": "https://in-toto.io/Statement/v1", "subject": [{"name": "m", "digest": {"sha256": "\#(root)"}}], "predicateType": "https://model_signing/signature/v1.0", "predicate": {"serialization": \#(serialization), "resources": \#(resources)}}"#
        }
        let one = #"[{"name": "w.bin", "algorithm": "sha256", "digest": "\#(digest)"}]"#
        // The well-formed statement passes, so each refusal below is for its one change.
        let valid = try bundle(payload: try statement(resources: one)).verifiedStatement(publicKey: Self.key.publicKey, source: "s")
        XCTAssertEqual(valid.resources.map(\.path.rawValue), ["w.bin"])
        func refused(_ payload: String, _ fragments: [String], line: UInt = #line) throws {
            assertRefused(try bundle(payload: payload).json, fragments, line: line)
        }
        try refused(try statement(subjectDigest: String(repeating: "0", count: 64), resources: one), ["subject[0].digest.sha256", "inconsistent"])
        try refused(try statement(resources: #"[{"name": "../etc/passwd", "algorithm": "sha256", "digest": "\#(digest)"}]"#), ["resources[0].name", "'../etc/passwd'", ".."])
        try refused(try statement(resources: #"[{"name": "/abs", "algorithm": "sha256", "digest": "\#(digest)"}]"#), ["resources[0].name", "absolute"])
        try refused(try statement(resources: #"[{"name": "w.bin", "algorithm": "sha256", "digest": "\#(digest.uppercased())"}]"#), ["resources[0].digest", "lowercase hex"])
        try refused(try statement(resources: #"[{"name": "w.bin", "algorithm": "blake3", "digest": "\#(digest)"}]"#), ["resources[0].algorithm", "'blake3'"])
        try refused(try statement(resources: #"[{"name": "w.bin", "algorithm": "sha256", "digest": "\#(digest)"}, {"name": "w.bin", "algorithm": "sha256", "digest": "\#(digest)"}]"#),
                    ["resources[1].name", "listed twice"])
        try refused(try statement(serialization: #"{"method": "shards", "hash_type": "sha256", "shard_size": 1000, "allow_symlinks": false}"#, resources: one), ["serialization.method", "'shards'"])
        try refused(try statement(serialization: #"{"method": "files", "hash_type": "sha256", "allow_symlinks": "no"}"#, resources: one), ["allow_symlinks", "true or false"])
        try refused(#"{"_type": "https://in-toto.io/Statement/v1", "subject": [], "predicateType": "https://model_signing/Digests/v0.1", "predicate": {}}"#, ["predicateType", "0.2"])
        try refused("not json", ["payload", "not JSON"])
    }

    func testKeysAreReadOnlyAsP256PEMAndErrorsHoldNoSecret() throws {
        let scratch = try Scratch()
        let pem = try Self.key.pkcs8PEM(passphrase: "s3cret-phrase")
        XCTAssertTrue(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        XCTAssertTrue(try P256PrivateKey.isEncrypted(pem: pem, source: "k"))
        XCTAssertEqual(try P256PrivateKey(pem: pem, passphrase: "s3cret-phrase", source: "k").publicKey.hint, Self.key.publicKey.hint)
        XCTAssertThrowsError(try P256PrivateKey(pem: pem, passphrase: nil, source: "k.pem")) {
            XCTAssertEqual($0 as? ModelCastError, .passphraseRequired(source: "k.pem"))
        }
        XCTAssertThrowsError(try P256PrivateKey(pem: pem, passphrase: "wrong", source: "k.pem")) {
            XCTAssertTrue("\($0)".contains("wrong passphrase"), "\($0)")
            XCTAssertFalse("\($0)".contains("s3cret"))
        }
        XCTAssertThrowsError(try P256PrivateKey(pem: Self.key.publicKey.pem, passphrase: nil, source: "k.pub")) {
            XCTAssertTrue("\($0)".contains("this is a public key"), "\($0)")
        }
        XCTAssertThrowsError(try P256PublicKey(pem: try Self.key.pkcs8PEM(passphrase: nil), source: "k.pem")) {
            XCTAssertTrue("\($0)".contains("this is a private key"), "\($0)")
            XCTAssertFalse("\($0)".contains("MII"), "no key material in the error")
        }
        try shell("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out '\(scratch.at("p384.pem"))' && openssl genpkey -algorithm ed25519 -out '\(scratch.at("ed.pem"))'")
        XCTAssertThrowsError(try P256PrivateKey.load(path: scratch.at("p384.pem"), passphrase: nil)) { XCTAssertTrue("\($0)".contains("secp384r1"), "\($0)") }
        XCTAssertThrowsError(try P256PrivateKey.load(path: scratch.at("ed.pem"), passphrase: nil)) { XCTAssertTrue("\($0)".contains("ED25519"), "\($0)") }
        // OpenSSL's legacy encrypted SEC 1 form (Proc-Type: 4,ENCRYPTED) opens with its passphrase.
        try shell("openssl ecparam -name prime256v1 -genkey -noout | openssl ec -aes256 -passout pass:legacy-pass -out '\(scratch.at("legacy.pem"))'")
        XCTAssertTrue(try P256PrivateKey.isEncrypted(path: scratch.at("legacy.pem")))
        XCTAssertNoThrow(try P256PrivateKey.load(path: scratch.at("legacy.pem"), passphrase: "legacy-pass"))
        XCTAssertFalse("\(Self.key)".contains("BEGIN"))
        XCTAssertEqual(Self.key.publicKey.hint, try SHA256Hasher.digest(Array(Self.key.publicKey.pem.utf8)).hex)
        // Keys saved with Windows line endings read the same (the hint is the canonical PEM's).
        let crlf = { (text: String) in text.replacingOccurrences(of: "\n", with: "\r\n") }
        XCTAssertEqual(try P256PublicKey(pem: crlf(Self.key.publicKey.pem), source: "k.pub").hint, Self.key.publicKey.hint)
        XCTAssertEqual(try P256PrivateKey(pem: crlf(try Self.key.pkcs8PEM(passphrase: nil)), passphrase: nil, source: "k.pem").publicKey.hint,
                       Self.key.publicKey.hint)
    }
}
