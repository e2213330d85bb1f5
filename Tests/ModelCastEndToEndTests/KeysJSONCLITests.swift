import Foundation
import XCTest
import ModelCastTestSupport

/// keygen and sign-model print JSON with --json (what the Python API's keygen and
/// sign_model read), each matching its schema in schema/cli/, and never the secret key;
/// inspect --model-signature --json carries the verified signature, as its schema says.
final class KeysJSONCLITests: XCTestCase {
    func object(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    func testKeygenSignModelAndInspectPrintJSONMatchingTheirSchemas() throws {
        let work = try Scratch()
        var environment = ProcessInfo.processInfo.environment
        environment["MODELCAST_SIGNING_PASSPHRASE"] = "keys json passphrase 0b7e"
        let minisign = try modelcast(["keygen", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key"), "--json"], environment: environment)
        XCTAssertEqual(minisign.status, 0, minisign.stderr)
        let pair = try object(minisign.stdout)
        let publicLines = try String(contentsOfFile: work.at("k.pub"), encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(pair["kind"] as? String, "minisign")
        XCTAssertEqual(pair["encrypted"] as? Bool, true)
        XCTAssertEqual(pair["public_key"] as? String, publicLines.last)
        XCTAssertTrue(publicLines.first?.hasSuffix(" \(pair["key_id"] as? String ?? "?")") ?? false, "\(publicLines) \(pair)")
        XCTAssertEqual(pair["secret_key_path"] as? String, work.at("k.key"))
        let secret = try String(contentsOfFile: work.at("k.key"), encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertFalse(minisign.stdout.contains(secret[1]) || minisign.stderr.contains(secret[1]), "the secret key is never printed")

        let p256 = try modelcast(["keygen", "--model-signing", "--unencrypted", "--public-key", work.at("m.pub"), "--private-key", work.at("m.pem"), "--json"])
        XCTAssertEqual(p256.status, 0, p256.stderr)
        let modelPair = try object(p256.stdout)
        XCTAssertEqual(modelPair["kind"] as? String, "model-signing")
        XCTAssertEqual(modelPair["encrypted"] as? Bool, false)
        XCTAssertNil(modelPair["key_id"])
        let pem = try String(contentsOfFile: work.at("m.pem"), encoding: .utf8)
        let body = pem.split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
        XCTAssertFalse(p256.stdout.contains(body), "the private key is never printed")

        let model = try work.write("model/weights.bin", patternBytes(4096, seed: 3))
        let signed = try modelcast(["sign-model", work.at("model"), "--key", work.at("m.pem"), "--signature", work.at("model.sig"), "--json"])
        XCTAssertEqual(signed.status, 0, signed.stderr)
        let signature = try object(signed.stdout)
        XCTAssertEqual(signature["files"] as? Int, 1)
        XCTAssertEqual(signature["key_hint"] as? String, modelPair["hint"] as? String)
        XCTAssertEqual(signature["signature"] as? String, work.at("model.sig"))
        let inspected = try modelcast(["inspect", work.at("model"), "--model-signature", work.at("model.sig"), "--public-key", work.at("m.pub"), "--json"])
        XCTAssertEqual(inspected.status, 0, inspected.stderr)
        let verified = try XCTUnwrap(try object(inspected.stdout)["model_signature"] as? [String: Any], inspected.stdout)
        XCTAssertEqual(verified["subject_sha256"] as? String, signature["subject_sha256"] as? String)
        _ = model

        try validateAgainstSchema([minisign.stdout, p256.stdout], "keygen.schema.json")
        try validateAgainstSchema([signed.stdout], "sign-model.schema.json")
        try validateAgainstSchema([inspected.stdout], "inspect.schema.json")
        // An error is still the error object.
        let again = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key"), "--json"])
        XCTAssertEqual(again.status, 1)
        try validateAgainstSchema([again.stdout], "error.schema.json")
    }
}
