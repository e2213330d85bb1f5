import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Signed manifests checked by the stock minisign binary, and minisign's own
/// signatures checked by `verify`.
final class SigningCLITests: XCTestCase {
    let base = "https://cdn.example.com/m"

    func minisign(_ arguments: [String], input: String? = nil) throws -> ProcessOutput {
        try runProcess("/usr/bin/env", ["minisign"] + arguments, stdin: input)
    }

    /// An unencrypted key pair made by `modelcast keygen`.
    func keygen(_ scratch: Scratch, name: String = "ci") throws -> (public: String, secret: String, base64: String) {
        let result = try modelcast(["keygen", "--unencrypted", "--public-key", scratch.at("\(name).pub"), "--secret-key", scratch.at("\(name).key")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try String(contentsOfFile: scratch.at("\(name).pub"), encoding: .utf8).split(separator: "\n")
        return (scratch.at("\(name).pub"), scratch.at("\(name).key"), String(lines[1]))
    }

    func secretLine(_ path: String) throws -> String {
        String(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")[1])
    }

    func publish(_ site: String, version: String, profile: String = "nomlens", scratch: Scratch, extra: [String], environment: [String: String]? = nil) throws -> ProcessOutput {
        let file = try scratch.write("in/\(version).bin", patternBytes(2000, seed: UInt32(version.hashValue & 0xffff)))
        let meta = profile == "nomlens" ? ["--meta", "num_classes=3", "--meta", "class_list_version=v1", "--meta", "training_date=2026-01-01"] : []
        return try PublishRun([file], version: version, baseURL: base, to: site, ["--profile", profile] + meta + extra, environment: environment).run()
    }

    func testKeygenWritesMinisignKeysAndNeverPrintsTheSecret() throws {
        let scratch = try Scratch()
        let keys = try keygen(scratch)
        let secret = try secretLine(keys.secret)
        var info = stat()
        XCTAssertEqual(stat(keys.secret, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertTrue(try String(contentsOfFile: keys.secret, encoding: .utf8).hasPrefix("untrusted comment: minisign secret key "))
        XCTAssertTrue(try String(contentsOfFile: keys.secret, encoding: .utf8).contains("UNENCRYPTED"))
        // minisign itself signs with the key modelcast made, and verifies with its public key.
        let message = try scratch.write("message.txt", text: "hello")
        XCTAssertEqual(try minisign(["-S", "-s", keys.secret, "-m", message]).status, 0)
        XCTAssertEqual(try minisign(["-Vm", message, "-p", keys.public]).status, 0)

        let before = try snapshot(scratch.path)
        for force in [[], ["--force"]] {
            let same = try modelcast(["keygen", "--unencrypted", "--public-key", scratch.at("one.key"), "--secret-key", scratch.at("./one.key")] + force)
            XCTAssertEqual(same.status, 2, same.stderr)
            XCTAssertTrue(same.stderr.contains("--public-key and --secret-key are the same file"), same.stderr)
            XCTAssertEqual(try snapshot(scratch.path), before)
        }
        let again = try modelcast(["keygen", "--unencrypted", "--public-key", keys.public, "--secret-key", keys.secret])
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains(keys.secret) || again.stderr.contains(keys.public), again.stderr)
        XCTAssertEqual(try snapshot(scratch.path), before, "an existing key is never overwritten")

        // Without a terminal or $MODELCAST_SIGNING_PASSPHRASE an encrypted key cannot be made.
        let noTTY = try runProcess("/usr/bin/setsid", ["--wait", modelcastBinary, "keygen", "--public-key", scratch.at("x.pub"), "--secret-key", scratch.at("x.key")])
        XCTAssertEqual(noTTY.status, 1, "refused, not a usage error (issue 25 item 6): " + noTTY.stderr)
        XCTAssertTrue(noTTY.stderr.contains("MODELCAST_SIGNING_PASSPHRASE"), noTTY.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.at("x.key")))

        // Encrypted with a passphrase from the environment: minisign opens it with the same passphrase.
        var environment = ProcessInfo.processInfo.environment
        environment["MODELCAST_SIGNING_PASSPHRASE"] = "correct horse battery"
        let encrypted = try modelcast(["keygen", "--public-key", scratch.at("e.pub"), "--secret-key", scratch.at("e.key")], environment: environment)
        XCTAssertEqual(encrypted.status, 0, encrypted.stderr)
        XCTAssertTrue(try minisign(["-S", "-s", scratch.at("e.key"), "-m", message, "-x", scratch.at("e.sig")], input: "correct horse battery\n").status == 0)
        XCTAssertEqual(try minisign(["-Vm", message, "-p", scratch.at("e.pub"), "-x", scratch.at("e.sig")]).status, 0)
        for output in [again, encrypted] {
            XCTAssertFalse(output.stdout.contains(secret) || output.stderr.contains(secret))
            XCTAssertFalse(output.stdout.contains("correct horse") || output.stderr.contains("correct horse"))
        }
    }

    /// Issue 44 item 7d: key files that cannot be written are refused before the passphrase
    /// is asked for and before scrypt runs (seconds), naming the path and why, with nothing
    /// written.
    func testKeygenRefusesAnUnwritableDestinationBeforeMakingTheKey() throws {
        let scratch = try Scratch()
        _ = try scratch.write("file", text: "not a directory")
        try FileManager.default.createDirectory(atPath: scratch.at("dir.key"), withIntermediateDirectories: false)
        var environment = ProcessInfo.processInfo.environment
        environment["MODELCAST_SIGNING_PASSPHRASE"] = "correct horse battery"
        let before = try snapshot(scratch.path)
        let cases: [([String], Int32, String)] = [
            (["--public-key", scratch.at("missing/k.pub"), "--secret-key", scratch.at("missing/k.key")], 3,
             "write the key file failed for \(scratch.at("missing/k.key")): its directory \(scratch.at("missing")) does not exist: create it first; nothing was written"),
            (["--public-key", scratch.at("k.pub"), "--secret-key", scratch.at("file/k.key")], 3, "\(scratch.at("file")) is not a directory; nothing was written"),
            (["--public-key", scratch.at("missing/k.pub"), "--secret-key", scratch.at("k.key")], 3, "its directory \(scratch.at("missing")) does not exist"),
            (["--model-signing", "--public-key", scratch.at("m.pub"), "--private-key", scratch.at("missing/m.pem")], 3, "its directory \(scratch.at("missing")) does not exist"),
            (["--public-key", scratch.at("k.pub"), "--secret-key", scratch.at("dir.key"), "--force"], 1, "\(scratch.at("dir.key")) is a directory; a key file cannot replace it"),
        ]
        for (arguments, status, expected) in cases {
            let started = Date()
            let result = try modelcast(["keygen"] + arguments, environment: environment)
            let seconds = Date().timeIntervalSince(started)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(expected), "\(expected) in \(result.stderr)")
            // scrypt alone takes several seconds in this build.
            XCTAssertLessThan(seconds, 2, "\(arguments): refused before the key was made")
            XCTAssertEqual(try snapshot(scratch.path), before, "\(arguments): nothing written")
        }
        // Without a terminal, the missing directory is what is named, not the passphrase.
        let noTTY = try runProcess("/usr/bin/setsid", ["--wait", modelcastBinary, "keygen", "--public-key", scratch.at("missing/x.pub"), "--secret-key", scratch.at("missing/x.key")])
        XCTAssertEqual(noTTY.status, 3, noTTY.stderr)
        XCTAssertTrue(noTTY.stderr.contains("its directory \(scratch.at("missing")) does not exist"), noTTY.stderr)
    }

    /// Our signature passes `minisign -Vm manifest.json -P KEY`; flipping any single byte
    /// of the manifest or of the trusted comment makes minisign (and verify) refuse it.
    func testMinisignAcceptsOurSignatureAndRejectsEveryByteChange() throws {
        let scratch = try Scratch()
        let keys = try keygen(scratch)
        let site = scratch.at("site")
        for version in ["1.0.0", "1.1.0", "1.2.0"] {
            let result = try publish(site, version: version, scratch: scratch, extra: ["--sign", keys.secret, "--expires-in", "30d"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertFalse(result.stdout.contains(try secretLine(keys.secret)))
        }
        let manifestPath = site + "/manifest.json"
        XCTAssertEqual(try minisign(["-Vm", manifestPath, "-P", keys.base64]).status, 0)
        let signature = try String(contentsOfFile: manifestPath + ".minisig", encoding: .utf8)
        XCTAssertTrue(signature.contains("trusted comment: timestamp:"), signature)
        XCTAssertTrue(signature.contains("\tfile:manifest.json\tsequence:3\tversion:1.2.0\texpires:"), signature)
        let good = try modelcast(["verify", site, "--public-key", keys.public])
        XCTAssertEqual(good.status, 0, good.stdout)
        XCTAssertTrue(good.stdout.contains("good signature by key"), good.stdout)

        let manifest = [UInt8](try Data(contentsOf: URL(fileURLWithPath: manifestPath)))
        let copy = scratch.at("check/manifest.json")
        try FileManager.default.createDirectory(atPath: scratch.at("check"), withIntermediateDirectories: true)
        try signature.write(toFile: copy + ".minisig", atomically: false, encoding: .utf8)
        for index in manifest.indices {
            var changed = manifest
            changed[index] ^= 0x01
            try Data(changed).write(to: URL(fileURLWithPath: copy))
            XCTAssertNotEqual(try minisign(["-Vm", copy, "-P", keys.base64]).status, 0, "byte \(index) of the manifest changed and minisign accepted it")
        }
        let lines = signature.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let comment = Array(lines[2].utf8)
        try Data(manifest).write(to: URL(fileURLWithPath: copy))
        for index in "trusted comment: ".utf8.count..<comment.count {
            var changed = comment
            changed[index] = changed[index] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
            var altered = lines
            altered[2] = String(decoding: changed, as: UTF8.self)
            try altered.joined(separator: "\n").write(toFile: copy + ".minisig", atomically: false, encoding: .utf8)
            XCTAssertNotEqual(try minisign(["-Vm", copy, "-P", keys.base64]).status, 0, "byte \(index) of the trusted comment changed and minisign accepted it")
        }

        // verify refuses the tampered manifest and fetches nothing it names.
        var tampered = manifest
        tampered[manifest.count / 2] ^= 0x01
        try Data(tampered).write(to: URL(fileURLWithPath: manifestPath))
        let bad = try modelcast(["verify", site, "--public-key", keys.public])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stdout.contains("FAIL  manifest.signature"), bad.stdout)
        XCTAssertTrue(bad.stdout.contains("nothing this manifest names is fetched"), bad.stdout)
        XCTAssertFalse(bad.stdout.contains("artifact.sha256"), bad.stdout)
        try Data(manifest).write(to: URL(fileURLWithPath: manifestPath))

        // A trusted comment edited in place: verify names the comment signature.
        var altered = lines
        altered[2] = altered[2].replacingOccurrences(of: "sequence:3", with: "sequence:9")
        try altered.joined(separator: "\n").write(toFile: manifestPath + ".minisig", atomically: false, encoding: .utf8)
        let comment9 = try modelcast(["verify", site, "--public-key", keys.public])
        XCTAssertEqual(comment9.status, 1)
        XCTAssertTrue(comment9.stdout.contains("trusted comment"), comment9.stdout)
        try signature.write(toFile: manifestPath + ".minisig", atomically: false, encoding: .utf8)

        // Wrong key: the error names both key ids. Key rotation: old and new keys both trusted.
        let other = try keygen(scratch, name: "other")
        let wrong = try modelcast(["verify", site, "--public-key", other.public])
        XCTAssertEqual(wrong.status, 1)
        let keyID = String(try String(contentsOfFile: keys.public, encoding: .utf8).split(separator: "\n")[0].split(separator: " ").last!)
        let otherID = String(try String(contentsOfFile: other.public, encoding: .utf8).split(separator: "\n")[0].split(separator: " ").last!)
        XCTAssertTrue(wrong.stdout.contains(keyID) && wrong.stdout.contains(otherID), wrong.stdout)
        let rotation = try modelcast(["verify", site, "--public-key", other.base64, "--public-key", keys.base64])
        XCTAssertEqual(rotation.status, 0, rotation.stdout)
        let malformed = try modelcast(["verify", site, "--public-key", "RWQnotakey"])
        XCTAssertNotEqual(malformed.status, 0)
        XCTAssertTrue(malformed.stderr.contains("RWQnotakey"), malformed.stderr)
        let missingFile = try modelcast(["verify", site, "--public-key", scratch.at("nowhere.pub")])
        XCTAssertNotEqual(missingFile.status, 0)
        XCTAssertTrue(missingFile.stderr.contains("--public-key '\(scratch.at("nowhere.pub"))' is neither a public key file nor a base64 public key"), missingFile.stderr)

        // A malformed signature file fails and says which line is wrong.
        try "untrusted comment: x\nnot base64!\n".write(toFile: manifestPath + ".minisig", atomically: false, encoding: .utf8)
        let garbled = try modelcast(["verify", site, "--public-key", keys.public])
        XCTAssertEqual(garbled.status, 1)
        XCTAssertTrue(garbled.stdout.contains("FAIL  manifest.signature"), garbled.stdout)
        XCTAssertTrue(garbled.stdout.contains("line 2"), garbled.stdout)

        // Missing signature: fails with --public-key, and with --require-signature alone.
        try FileManager.default.removeItem(atPath: manifestPath + ".minisig")
        for flags in [["--public-key", keys.public], ["--require-signature"]] {
            let missing = try modelcast(["verify", site] + flags)
            XCTAssertEqual(missing.status, 1, "\(flags)")
            XCTAssertTrue(missing.stdout.contains("not signed: no manifest.json.minisig"), missing.stdout)
        }
    }

    /// A signature minisign made over our manifest is accepted by verify (interop the other way).
    func testVerifyAcceptsASignatureMadeByMinisign() throws {
        let scratch = try Scratch()
        let site = scratch.at("site")
        XCTAssertEqual(try publish(site, version: "1.0.0", scratch: scratch, extra: []).status, 0)
        XCTAssertEqual(try minisign(["-G", "-W", "-p", scratch.at("mk.pub"), "-s", scratch.at("mk.key")]).status, 0)
        XCTAssertEqual(try minisign(["-S", "-s", scratch.at("mk.key"), "-m", site + "/manifest.json", "-t", "signed by hand"]).status, 0)
        // The hosting files must list the signature for a directory verify to serve it: re-render them with a no-op publish.
        let objects = site + "/_modelcast/objects.json"
        var text = try String(contentsOfFile: objects, encoding: .utf8)
        let signature = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json.minisig"))
        let entry = """
                {
                  "key": "manifest.json.minisig",
                  "role": "signature",
                  "cache_control": "no-cache, no-store",
                  "content_type": "text/plain",
                  "size": \(signature.count),
                  "sha256": "\(try SHA256Hasher.digest(signature).hex)",
                  "sha256_base64": "\(try SHA256Hasher.digest(signature).base64)"
                },
            """
        text = text.replacingOccurrences(of: "  \"objects\": [\n", with: "  \"objects\": [\n" + entry + "\n")
        try text.write(toFile: objects, atomically: false, encoding: .utf8)
        let result = try modelcast(["verify", site, "--public-key", scratch.at("mk.pub")])
        XCTAssertEqual(result.status, 0, result.stdout)
        XCTAssertTrue(result.stdout.contains("trusted comment: signed by hand"), result.stdout)
        let legacy = try minisign(["-S", "-l", "-s", scratch.at("mk.key"), "-m", site + "/manifest.json"])
        if legacy.status == 0 {
            // minisign's legacy (non-prehashed) signatures verify too, when --allow-legacy-signature
            // says to accept them (modelcast writes only prehashed ones; issue #11 item 8).
            let size = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json.minisig")).count
            let sha = try SHA256Hasher.digest(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json.minisig")))
            var updated = try String(contentsOfFile: objects, encoding: .utf8)
            updated = updated.replacingOccurrences(of: "\"size\": \(signature.count),\n      \"sha256\": \"\(try SHA256Hasher.digest(signature).hex)\",\n      \"sha256_base64\": \"\(try SHA256Hasher.digest(signature).base64)\"",
                                                   with: "\"size\": \(size),\n      \"sha256\": \"\(sha.hex)\",\n      \"sha256_base64\": \"\(sha.base64)\"")
            try updated.write(toFile: objects, atomically: false, encoding: .utf8)
            let refused = try modelcast(["verify", site, "--public-key", scratch.at("mk.pub")])
            XCTAssertEqual(refused.status, 1, refused.stdout)
            XCTAssertTrue(refused.stdout.contains("a legacy minisign signature"), refused.stdout)
            let legacyResult = try modelcast(["verify", site, "--public-key", scratch.at("mk.pub"), "--allow-legacy-signature"])
            XCTAssertEqual(legacyResult.status, 0, legacyResult.stdout)
        }
    }

    /// The inline signature's documented rule (cut at the last `,\n  "signature": `,
    /// append `\n}\n`) gives bytes minisign verifies with the member's parts.
    func testInlineSignatureFollowsTheDocumentedCanonicalBytes() throws {
        let scratch = try Scratch()
        let keys = try keygen(scratch)
        let site = scratch.at("site")
        for version in ["1.0.0", "1.1.0"] {
            let result = try publish(site, version: version, profile: "modelcast", scratch: scratch, extra: ["--sign", keys.secret, "--inline-signature"])
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let manifest = try String(contentsOfFile: site + "/manifest.json", encoding: .utf8)
        let cut = try XCTUnwrap(manifest.range(of: ",\n  \"signature\": ", options: .backwards))
        let signed = String(manifest[..<cut.lowerBound]) + "\n}\n"
        let member = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(manifest[cut.upperBound...].dropLast(3).utf8)) as? [String: String])
        XCTAssertEqual(member["format"], "minisign")
        try signed.write(toFile: scratch.at("signed.json"), atomically: false, encoding: .utf8)
        try "untrusted comment: rebuilt\n\(member["signature"]!)\ntrusted comment: \(member["trusted_comment"]!)\n\(member["global_signature"]!)\n"
            .write(toFile: scratch.at("signed.json.minisig"), atomically: false, encoding: .utf8)
        let check = try minisign(["-Vm", scratch.at("signed.json"), "-P", keys.base64])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(member["trusted_comment"]!.contains("sequence:2"), member["trusted_comment"]!)
        // The whole file is also covered by the detached signature, and the second publish
        // found the first live despite its inline signature (sequence 2 replaces 1).
        XCTAssertEqual(try minisign(["-Vm", site + "/manifest.json", "-P", keys.base64]).status, 0)
        XCTAssertTrue(signed.contains("\"replaces\": 1"), signed)
        // A local manifest file with the signature beside it: both signatures check out. (The
        // objects lie outside this loopback base URL, so nothing is fetched.)
        let local = try modelcast(["verify", site + "/manifest.json", "--base-url", "http://127.0.0.1:9/m", "--allow-http", "--public-key", keys.public])
        XCTAssertTrue(local.stdout.contains("outside the expected prefix"), local.stdout)
        XCTAssertTrue(local.stdout.contains("PASS  manifest.inline-signature"), local.stdout)
        XCTAssertTrue(local.stdout.contains("PASS  manifest.signature"), local.stdout)

        // The signed manifest still validates against the published JSON Schema.
        let schema = try runProcess("/usr/bin/env", ["python3", "-c", """
            import json, sys, jsonschema
            validator = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])), format_checker=jsonschema.FormatChecker())
            doc = json.load(open(sys.argv[2]))
            validator.validate(doc)
            doc["signature"]["extra"] = 1
            assert not validator.is_valid(doc)
            print("valid")
            """, repositoryRoot + "/schema/modelcast-manifest.schema.json", site + "/manifest.json"])
        XCTAssertEqual(schema.stdout, "valid\n", schema.stderr)

        let other = try publish(site, version: "1.2.0", profile: "nomlens", scratch: scratch, extra: ["--sign", keys.secret, "--inline-signature"])
        XCTAssertEqual(other.status, 1)
        XCTAssertTrue(other.stderr.contains("--inline-signature needs the modelcast profile"), other.stderr)
    }

    /// expires_at: verify fails an expired manifest and warns near expiry; resign
    /// extends it with the next sequence and no artifact change.
    func testExpiryAndResign() throws {
        let scratch = try Scratch()
        let keys = try keygen(scratch)
        let site = scratch.at("site")
        // A manifest already expired when written is refused, so this one expires 3 s after
        // it is published (published_at 7 days ago, less 3 s), and verify runs once it has.
        var past = ProcessInfo.processInfo.environment
        let expiry = Int(Date().timeIntervalSince1970) + 3
        past["SOURCE_DATE_EPOCH"] = String(expiry - 7 * 86_400)
        XCTAssertEqual(try publish(site, version: "1.0.0", scratch: scratch, extra: ["--sign", keys.secret, "--expires-in", "7d"], environment: past).status, 0)
        while Date().timeIntervalSince1970 <= TimeInterval(expiry) + 0.5 { usleep(100_000) }
        let expired = try modelcast(["verify", site, "--public-key", keys.public])
        XCTAssertEqual(expired.status, 1)
        XCTAssertTrue(expired.stdout.contains("FAIL  manifest.expiry"), expired.stdout)
        XCTAssertTrue(expired.stdout.contains("expired at"), expired.stdout)

        let models = try snapshot(site + "/models")
        let resign = try modelcast(["resign", site, "--sign", keys.secret, "--expires-in", "3d"])
        XCTAssertEqual(resign.status, 0, resign.stderr)
        XCTAssertTrue(resign.stdout.contains("re-signed: published sequence 2"), resign.stdout)
        XCTAssertEqual(try snapshot(site + "/models"), models, "resign changes no artifact")
        let near = try modelcast(["verify", site, "--public-key", keys.public])
        XCTAssertEqual(near.status, 0, near.stdout)
        XCTAssertTrue(near.stdout.contains("WARN  manifest.expiry"), near.stdout)
        XCTAssertTrue(near.stdout.contains("expires soon"), near.stdout)
        XCTAssertEqual(try minisign(["-Vm", site + "/manifest.json", "-P", keys.base64]).status, 0)
        let strict = try modelcast(["verify", site, "--public-key", keys.public, "--strict"])
        XCTAssertEqual(strict.status, 1)

        // refresh (the alias) keeps the period when none is given, and the sequence keeps rising.
        let refresh = try modelcast(["refresh", site, "--sign", keys.secret])
        XCTAssertEqual(refresh.status, 0, refresh.stderr)
        let signature = try String(contentsOfFile: site + "/manifest.json.minisig", encoding: .utf8)
        XCTAssertTrue(signature.contains("sequence:3"), signature)
        let state = scratch.at("state.json")
        XCTAssertEqual(try modelcast(["verify", site, "--public-key", keys.public, "--state", state]).status, 0)
        XCTAssertTrue(try String(contentsOfFile: state, encoding: .utf8).contains("\"sequence\" : 3"))

        // A second version, re-signed twice: prune --keep 2 keeps two versions, not two records.
        XCTAssertEqual(try publish(site, version: "1.1.0", scratch: scratch, extra: ["--sign", keys.secret, "--expires-in", "7d"]).status, 0)
        XCTAssertEqual(try modelcast(["resign", site, "--sign", keys.secret]).status, 0)
        XCTAssertEqual(try modelcast(["resign", site, "--sign", keys.secret]).status, 0)
        let prune = try modelcast(["prune", site, "--keep", "2", "--json"])
        XCTAssertEqual(prune.status, 0, prune.stderr)
        let plan = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(prune.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(plan["kept_sequences"] as? [Int], [3, 6], "the newest record of 1.0.0 and of 1.1.0")
        XCTAssertEqual(plan["deleted"] as? [String], ["manifests/00000001.json", "manifests/00000002.json", "manifests/00000004.json", "manifests/00000005.json"])
        XCTAssertEqual(try modelcast(["verify", site, "--public-key", keys.public]).status, 0)
        XCTAssertEqual(try modelcast(["rollback", site, "--version", "1.0.0", "--sign", keys.secret, "--dry-run"]).status, 0, "1.0.0 can still be rolled back to")

        // Bad input: an expiry that is not a duration, an expiry the nomlens manifest cannot hold unsigned.
        let before = try snapshot(site)
        for (arguments, message) in [
            (["resign", site, "--sign", keys.secret, "--expires-in", "soon"], "duration 'soon' is not a positive whole number"),
            (["resign", site, "--sign", scratch.at("missing.key")], scratch.at("missing.key")),
            (["resign", site], "the live manifest at \(site)/manifest.json is signed"),
            (["resign", site, "--expires-in", "30d", "--unsigned"], "--expires-in needs a signing key with the nomlens profile"),
        ] {
            let result = try modelcast(arguments)
            XCTAssertNotEqual(result.status, 0, "\(arguments)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertEqual(try snapshot(site), before, "\(arguments) changed the target")
        }
    }

    /// A signed target stays signed: an unsigned publish is refused unless --unsigned,
    /// which removes the stale signature. Keys come from the environment too, and an
    /// encrypted key needs its passphrase (which never appears in any output).
    func testSigningKeyFromTheEnvironmentAndUnsignedDowngrade() throws {
        let scratch = try Scratch()
        var environment = ProcessInfo.processInfo.environment
        environment["MODELCAST_SIGNING_PASSPHRASE"] = "hunter2-passphrase"
        XCTAssertEqual(try modelcast(["keygen", "--public-key", scratch.at("e.pub"), "--secret-key", scratch.at("e.key")], environment: environment).status, 0)
        let secretText = try String(contentsOfFile: scratch.at("e.key"), encoding: .utf8)
        environment["MODELCAST_SIGNING_KEY"] = secretText
        let site = scratch.at("site")
        let signed = try publish(site, version: "1.0.0", scratch: scratch, extra: [], environment: environment)
        XCTAssertEqual(signed.status, 0, signed.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: site + "/manifest.json.minisig"))
        XCTAssertEqual(try minisign(["-Vm", site + "/manifest.json", "-p", scratch.at("e.pub")]).status, 0)

        environment["MODELCAST_SIGNING_PASSPHRASE"] = "not-the-right-one"
        let before = try snapshot(site)
        let wrong = try publish(site, version: "1.1.0", scratch: scratch, extra: [], environment: environment)
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stderr.contains("MODELCAST_SIGNING_KEY"), wrong.stderr)
        XCTAssertTrue(wrong.stderr.lowercased().contains("passphrase"), wrong.stderr)
        XCTAssertEqual(try snapshot(site), before)
        // No passphrase and no terminal to ask at (setsid): refused, saying how to give one.
        var noPassphrase = environment
        noPassphrase.removeValue(forKey: "MODELCAST_SIGNING_PASSPHRASE")
        let file = try scratch.write("in/1.1.0.bin", patternBytes(2000, seed: 99))
        let blind = try runProcess("/usr/bin/setsid", ["--wait", modelcastBinary, "publish", file, "--name", "m", "--version", "1.1.0", "--profile", "nomlens",
                                                       "--meta", "num_classes=3", "--meta", "class_list_version=v1", "--meta", "training_date=2026-01-01",
                                                       "--base-url", base, "--to", site], environment: noPassphrase)
        XCTAssertEqual(blind.status, 1)
        XCTAssertTrue(blind.stderr.contains("is encrypted: a passphrase is required (type it at a terminal, or set MODELCAST_SIGNING_PASSPHRASE)"), blind.stderr)
        XCTAssertEqual(try snapshot(site), before)
        let secretLine = String(secretText.split(separator: "\n")[1])
        for output in [signed, wrong] {
            for secret in ["hunter2", "not-the-right-one", secretLine] {
                XCTAssertFalse(output.stdout.contains(secret) || output.stderr.contains(secret), "a secret appeared in the output")
            }
        }

        environment.removeValue(forKey: "MODELCAST_SIGNING_KEY")
        let refused = try publish(site, version: "1.1.0", scratch: scratch, extra: [], environment: environment)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("is signed (manifest.json.minisig)"), refused.stderr)
        XCTAssertEqual(try snapshot(site), before)
        let downgraded = try publish(site, version: "1.1.0", scratch: scratch, extra: ["--unsigned"], environment: environment)
        XCTAssertEqual(downgraded.status, 0, downgraded.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: site + "/manifest.json.minisig"))
        XCTAssertEqual(try modelcast(["verify", site]).status, 0)
        // Nothing to re-sign with: refused, the target untouched.
        let unsignedState = try snapshot(site)
        let nothing = try modelcast(["resign", site], environment: environment)
        XCTAssertEqual(nothing.status, 1)
        XCTAssertTrue(nothing.stderr.contains("resign needs a signing key (--sign KEYFILE or $MODELCAST_SIGNING_KEY)"), nothing.stderr)
        XCTAssertEqual(try snapshot(site), unsignedState)
    }

    /// Signed publish, rollback and verify on S3 (moto, every request's signature checked).
    func testSignedRollbackOnS3() throws {
        let moto = try MotoS3()
        let scratch = try Scratch()
        let keys = try keygen(scratch)
        let target = "s3://\(moto.bucket)/ml"
        for version in ["1.0.0", "1.1.0", "1.2.0"] {
            let result = try publish(target, version: version, profile: "modelcast", scratch: scratch, extra: ["--sign", keys.secret, "--expires-in", "30d"], environment: moto.environment)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let rollback = try modelcast(["rollback", target, "--version", "1.0.0", "--sign", keys.secret], environment: moto.environment)
        XCTAssertEqual(rollback.status, 0, rollback.stderr)
        try moto.download("ml/manifest.json").write(to: URL(fileURLWithPath: scratch.at("manifest.json")))
        try moto.download("ml/manifest.json.minisig").write(to: URL(fileURLWithPath: scratch.at("manifest.json.minisig")))
        XCTAssertEqual(try minisign(["-Vm", scratch.at("manifest.json"), "-P", keys.base64]).status, 0)
        let release = try Release.decode(try Data(contentsOf: URL(fileURLWithPath: scratch.at("manifest.json"))), source: "s3")
        XCTAssertEqual(release.sequence, 4)
        XCTAssertEqual(release.models["m"]?.version, "1.0.0")
        XCTAssertNotNil(release.expiresAt, "a rollback keeps the live manifest's validity period")
        let verify = try modelcast(["verify", target, "--public-key", keys.public], environment: moto.environment)
        XCTAssertEqual(verify.status, 0, verify.stdout)
        XCTAssertTrue(verify.stdout.contains("PASS  manifest.signature"), verify.stdout)
    }
}
