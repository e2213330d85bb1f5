import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 51: root keys held by different people. `keys rotate --out` writes a pending
/// version with the signatures one person can make, `keys sign` adds another person's,
/// and `keys push` uploads it only once the link to the target's newest key set is
/// proven — through the real CLI on a directory and on moto, with the hostile cases.
final class KeySetOfflineSigningTests: XCTestCase {
    struct Key { let secret: String; let pub: String; let id: String }

    static let passphrase = "offline root passphrase 3c9e"

    /// Encrypted keys, as root keys are kept: the passphrase comes from the environment.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["MODELCAST_SIGNING_PASSPHRASE"] = Self.passphrase
        return environment
    }

    /// Whether root keys (`r…`) are made encrypted, as they are kept. Only the directory drill
    /// does: each use of an encrypted key costs a scrypt derivation (about a second here), and
    /// the other tests are about what is signed, not how the key file is kept.
    var encryptRoots = false

    func keygen(_ work: Scratch, _ name: String) throws -> Key {
        let encrypted = encryptRoots && name.hasPrefix("r")
        let result = try modelcast(["keygen", "--public-key", work.at(name + ".pub"), "--secret-key", work.at(name + ".key"), "--json"]
                                   + (encrypted ? [] : ["--unencrypted"]), environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["encrypted"] as? Bool, encrypted)
        return Key(secret: work.at(name + ".key"), pub: work.at(name + ".pub"), id: try XCTUnwrap(object["key_id"] as? String))
    }

    func run(_ arguments: [String], _ extra: [String: String] = [:]) throws -> ProcessOutput {
        try modelcast(arguments, environment: environment.merging(extra) { $1 })
    }

    func publish(_ work: Scratch, _ target: String, _ version: String, _ key: Key, _ extra: [String: String] = [:]) throws -> ProcessOutput {
        let file = try work.write("in/\(version).bin", patternBytes(1500, seed: UInt32(version.utf8.reduce(0) { $0 &* 31 &+ UInt32($1) } & 0xFFFF)))
        return try PublishRun(["m=" + file], name: nil, version: version, baseURL: "https://cdn.example.com/m", to: target,
                              ["--sign", key.secret], environment: environment.merging(extra) { $1 }).run()
    }

    func object(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// The key ids of a `.sigs` file, in file order.
    func signers(_ path: String) throws -> [String] {
        let lines = String(decoding: try bytes(path), as: UTF8.self).split(separator: "\n")
        return lines.enumerated().filter { $0.offset % 4 == 0 }.map { String($0.element.split(separator: " ").last ?? "") }
    }

    /// A target with key set 1 (roots R1, R2, threshold 2; manifest key K1) and one release.
    func siteWithKeySet(_ work: Scratch, _ target: String, _ extra: [String: String] = [:]) throws -> (r1: Key, r2: Key, k1: Key, k2: Key) {
        let r1 = try keygen(work, "r1"), r2 = try keygen(work, "r2"), k1 = try keygen(work, "k1"), k2 = try keygen(work, "k2")
        XCTAssertEqual(try publish(work, target, "1.0.0", k1, extra).status, 0)
        let created = try run(["keys", "create", target, "--root", r1.pub, "--root", r2.pub, "--root-threshold", "2", "--manifest-key", k1.pub,
                               "--sign-root", r1.secret, "--sign-root", r2.secret], extra)
        XCTAssertEqual(created.status, 0, created.stderr)
        return (r1, r2, k1, k2)
    }

    // MARK: The drill, on a directory

    func testTwoPeopleRotateSignAndPushToADirectoryAndVerifyFollows() throws {
        encryptRoots = true
        let work = try Scratch()
        let site = work.at("site")
        let (r1, r2, k1, k2) = try siteWithKeySet(work, site)
        let pinned = try work.write("pinned.json", [UInt8](try bytes(site + "/keys/1.json")))

        // Person 1, with R1 only: a pending version under --out; the target is untouched.
        let before = try snapshot(site)
        let packet = work.at("packet")
        let rotated = try run(["keys", "rotate", site, "--manifest-key", k2.pub, "--revoke", k1.id, "--sign-root", r1.secret, "--out", packet])
        XCTAssertEqual(rotated.status, 0, rotated.stderr)
        XCTAssertTrue(rotated.stdout.contains("pending: signed by 1 of the 2 root keys key set 1 requires and 1 of 2 its own root keys require"), rotated.stdout)
        XCTAssertTrue(rotated.stdout.contains("modelcast keys sign"), "says what to run next: \(rotated.stdout)")
        XCTAssertEqual(try snapshot(site), before, "--out leaves the target alone")
        for name in ["2.json", "2.json.minisig", "2.json.sigs", "1.json"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: packet + "/keys/" + name), name)
        }
        XCTAssertEqual(try bytes(packet + "/keys/1.json"), try bytes(site + "/keys/1.json"), "the version it follows goes with it, for keys sign")
        let document = try bytes(packet + "/keys/2.json")
        let minisig = try bytes(packet + "/keys/2.json.minisig")

        // Written straight to the target, the same under-signed version is refused.
        let direct = try run(["keys", "rotate", site, "--manifest-key", k2.pub, "--revoke", k1.id, "--sign-root", r1.secret])
        XCTAssertEqual(direct.status, 1, direct.stderr)
        XCTAssertTrue(direct.stderr.contains("needs 2"), direct.stderr)
        XCTAssertEqual(try snapshot(site), before)

        // Person 2, elsewhere, with R2: adds a signature, never changes the document.
        let signed = try run(["keys", "sign", packet + "/keys/2.json", "--sign-root", r2.secret, "--json"])
        XCTAssertEqual(signed.status, 0, signed.stderr)
        let summary = try object(signed.stdout)
        XCTAssertEqual(summary["pending"] as? Bool, false, signed.stdout)
        XCTAssertEqual(summary["added"] as? [String], [r2.id])
        XCTAssertEqual(Set(summary["signed_by"] as? [String] ?? []), [r1.id, r2.id])
        let thresholds = try XCTUnwrap(summary["thresholds"] as? [[String: Any]], signed.stdout)
        XCTAssertEqual(thresholds.map { $0["key_set"] as? Int }, [1, 2])
        XCTAssertEqual(thresholds.map { ($0["signed_by"] as? [String])?.count }, [2, 2])
        try validateAgainstSchema([signed.stdout], "keys.schema.json")
        XCTAssertEqual(try bytes(packet + "/keys/2.json"), document, "keys sign never changes the document")
        XCTAssertEqual(try bytes(packet + "/keys/2.json.minisig"), minisig, "the .minisig stays the first root key's")
        XCTAssertEqual(try signers(packet + "/keys/2.json.sigs"), [r1.id, r2.id].sorted { UInt64($0, radix: 16)! < UInt64($1, radix: 16)! },
                       "the .sigs are in key-id order")
        // Again with the same key: nothing to add, nothing written.
        let packetBefore = try snapshot(packet)
        let again = try run(["keys", "sign", packet + "/keys/2.json", "--sign-root", r2.secret])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("already signed by \(r2.id)"), again.stdout)
        XCTAssertTrue(again.stdout.contains("ready to push"), again.stdout)
        XCTAssertEqual(try snapshot(packet), packetBefore)

        // Push: proven against the target's key set 1, then uploaded.
        let pushed = try run(["keys", "push", site, packet + "/keys/2.json", "--json"])
        XCTAssertEqual(pushed.status, 0, pushed.stderr)
        try validateAgainstSchema([pushed.stdout], "keys.schema.json")
        for name in ["2.json", "2.json.minisig", "2.json.sigs"] {
            XCTAssertEqual(try bytes(site + "/keys/" + name), try bytes(packet + "/keys/" + name), name)
        }
        let stock = try runProcess("/usr/bin/env", ["minisign", "-Vm", site + "/keys/2.json", "-p", r1.pub])
        XCTAssertEqual(stock.status, 0, "the .minisig verifies with the stock tool: \(stock.stderr)")
        let twice = try run(["keys", "push", site, packet + "/keys/2.json"])
        XCTAssertEqual(twice.status, 1, "a version the target has is not pushed again: \(twice.stderr)")
        XCTAssertTrue(twice.stderr.contains("must be 3"), twice.stderr)

        // What a device does: K1 is refused, K2 publishes, and verify walks 1 → 2.
        XCTAssertEqual(try publish(work, site, "1.0.1", k1).status, 1)
        XCTAssertEqual(try publish(work, site, "1.0.1", k2).status, 0)
        let verified = try run(["verify", site, "--trusted-keys", pinned])
        XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr)
        XCTAssertTrue(verified.stdout.contains("key set 2:"), verified.stdout)
        XCTAssertTrue(verified.stdout.contains("signed by"), verified.stdout)
    }

    /// No root key at hand at all (a release engineer prepares the document on a machine
    /// that holds none): the document alone, signed later by each person in turn.
    func testAPendingVersionWithNoSignatureIsSignedInTurn() throws {
        let work = try Scratch()
        let site = work.at("site")
        let (r1, r2, _, k2) = try siteWithKeySet(work, site)
        let packet = work.at("packet")
        let prepared = try run(["keys", "rotate", site, "--manifest-key", k2.pub, "--out", packet, "--json"])
        XCTAssertEqual(prepared.status, 0, prepared.stderr)
        XCTAssertEqual(try object(prepared.stdout)["pending"] as? Bool, true)
        XCTAssertEqual(try object(prepared.stdout)["signed_by"] as? [String], [])
        try validateAgainstSchema([prepared.stdout], "keys.schema.json")
        XCTAssertFalse(FileManager.default.fileExists(atPath: packet + "/keys/2.json.minisig"))
        let noKey = try run(["keys", "rotate", site, "--manifest-key", k2.pub])
        XCTAssertEqual(noKey.status, 2, "a target is written only with --sign-root keys: \(noKey.stderr)")

        let first = try run(["keys", "sign", packet + "/keys/2.json", "--sign-root", r2.secret])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.contains("pending: signed by 1 of the 2 root keys key set 1 requires and 1 of 2 its own root keys require"), first.stdout)
        let stock = try runProcess("/usr/bin/env", ["minisign", "-Vm", packet + "/keys/2.json", "-p", r2.pub])
        XCTAssertEqual(stock.status, 0, "the first key to sign writes the .minisig: \(stock.stderr)")
        // The previous version from elsewhere: --previous.
        try FileManager.default.moveItem(atPath: packet + "/keys/1.json", toPath: work.at("one.json"))
        let missing = try run(["keys", "sign", packet + "/keys/2.json", "--sign-root", r1.secret])
        XCTAssertEqual(missing.status, 2, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("--previous"), missing.stderr)
        let second = try run(["keys", "sign", packet + "/keys/2.json", "--sign-root", r1.secret, "--previous", work.at("one.json")])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertTrue(second.stdout.contains("ready to push"), second.stdout)
        XCTAssertEqual(try runProcess("/usr/bin/env", ["minisign", "-Vm", packet + "/keys/2.json", "-p", r2.pub]).status, 0, "the .minisig is kept")
        let pushed = try run(["keys", "push", site, packet + "/keys/2.json"])
        XCTAssertEqual(pushed.status, 0, pushed.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: site + "/keys/2.json"))
    }

    // MARK: Hostile

    func testHostileSigningAndPushingIsRefusedAndChangesNothing() throws {
        let work = try Scratch()
        let site = work.at("site")
        let (r1, r2, k1, k2) = try siteWithKeySet(work, site)
        let stranger = try keygen(work, "r3")
        let packet = work.at("packet")
        XCTAssertEqual(try run(["keys", "rotate", site, "--manifest-key", k2.pub, "--revoke", k1.id, "--sign-root", r1.secret, "--out", packet]).status, 0)
        let file = packet + "/keys/2.json"
        let siteBefore = try snapshot(site)

        // --out naming the target itself would put a pending version where devices read.
        for out in [site, site + "/", site + "/../site"] {
            let intoTarget = try run(["keys", "rotate", site, "--expires-in", "30d", "--sign-root", r1.secret, "--out", out])
            XCTAssertEqual(intoTarget.status, 1, intoTarget.stderr)
            XCTAssertTrue(intoTarget.stderr.contains("--out"), intoTarget.stderr)
            XCTAssertEqual(try snapshot(site), siteBefore)
        }

        // An under-signed version is not pushed, and the refusal names what is missing.
        let underSigned = try run(["keys", "push", site, file])
        XCTAssertEqual(underSigned.status, 1, underSigned.stderr)
        XCTAssertTrue(underSigned.stderr.contains("keys/2.json is signed by 1 of key set 1's root keys (\(r1.id)); it needs 2"), underSigned.stderr)
        XCTAssertEqual(try snapshot(site), siteBefore)

        // Keys that are no root key of version 2 or 1: a manifest key, a stranger.
        let packetBefore = try snapshot(packet)
        for key in [k1, stranger] {
            let refused = try run(["keys", "sign", file, "--sign-root", key.secret])
            XCTAssertEqual(refused.status, 1, refused.stderr)
            XCTAssertTrue(refused.stderr.contains(key.id) && refused.stderr.contains("not a root key"), refused.stderr)
            XCTAssertEqual(try snapshot(packet), packetBefore)
        }

        // A path with control characters: named, escaped, nothing written.
        let escape = "\u{1B}[31m"
        let oddMissing = try run(["keys", "sign", work.at("no\(escape)where/2.json"), "--sign-root", r2.secret])
        XCTAssertEqual(oddMissing.status, 3, oddMissing.stderr)
        XCTAssertTrue(oddMissing.stderr.contains("\\u{1b}"), oddMissing.stderr)
        XCTAssertFalse(oddMissing.stderr.contains("\u{1B}"), oddMissing.stderr)
        let oddName = try work.write("odd/two\(escape).json", [UInt8](try bytes(file)))
        let misnamed = try run(["keys", "sign", oddName, "--sign-root", r2.secret])
        XCTAssertEqual(misnamed.status, 1, misnamed.stderr)
        XCTAssertTrue(misnamed.stderr.contains("\\u{1b}") && misnamed.stderr.contains("2.json"), misnamed.stderr)
        XCTAssertFalse(misnamed.stderr.contains("\u{1B}"), misnamed.stderr)
        let pushedOdd = try run(["keys", "push", site, oddName])
        XCTAssertEqual(pushedOdd.status, 1, pushedOdd.stderr)
        XCTAssertFalse(pushedOdd.stderr.contains("\u{1B}"), pushedOdd.stderr)
        XCTAssertEqual(try snapshot(site), siteBefore)

        // Fully signed, then tampered with (root threshold lowered to 1): sign and push refuse.
        XCTAssertEqual(try run(["keys", "sign", file, "--sign-root", r2.secret]).status, 0)
        let tampered = work.at("tampered")
        try FileManager.default.copyItem(atPath: packet, toPath: tampered)
        let text = String(decoding: try bytes(tampered + "/keys/2.json"), as: UTF8.self)
        let lowered = text.replacingOccurrences(of: "\"threshold\": 2", with: "\"threshold\": 1")
        XCTAssertNotEqual(lowered, text)
        try Data(lowered.utf8).write(to: URL(fileURLWithPath: tampered + "/keys/2.json"))
        let pushedTampered = try run(["keys", "push", site, tampered + "/keys/2.json"])
        XCTAssertEqual(pushedTampered.status, 1, pushedTampered.stderr)
        XCTAssertTrue(pushedTampered.stderr.contains("keys/2.json is signed by 0 of key set 1's root keys"), pushedTampered.stderr)
        XCTAssertEqual(try snapshot(site), siteBefore)
        let tamperedBefore = try snapshot(tampered)
        let signedTampered = try run(["keys", "sign", tampered + "/keys/2.json", "--sign-root", r1.secret])
        XCTAssertEqual(signedTampered.status, 1, signedTampered.stderr)
        XCTAssertTrue(signedTampered.stderr.contains("changed after"), signedTampered.stderr)
        XCTAssertEqual(try snapshot(tampered), tamperedBefore)

        // No signature list: refused, naming it.
        let bare = work.at("bare")
        try FileManager.default.createDirectory(atPath: bare, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: file, toPath: bare + "/2.json")
        let pushedBare = try run(["keys", "push", site, bare + "/2.json"])
        XCTAssertEqual(pushedBare.status, 1, pushedBare.stderr)
        XCTAssertTrue(pushedBare.stderr.contains("2.json.sigs"), pushedBare.stderr)

        // A version gap: version 3, fully signed, pushed to a target whose newest is 1.
        let ahead = work.at("ahead")
        try FileManager.default.copyItem(atPath: site, toPath: ahead)
        XCTAssertEqual(try run(["keys", "push", ahead, file]).status, 0)
        let gap = work.at("gap")
        XCTAssertEqual(try run(["keys", "rotate", ahead, "--expires-in", "30d", "--sign-root", r1.secret, "--sign-root", r2.secret, "--out", gap]).status, 0)
        let gapped = try run(["keys", "push", site, gap + "/keys/3.json"])
        XCTAssertEqual(gapped.status, 1, gapped.stderr)
        XCTAssertTrue(gapped.stderr.contains("newest key set is 1") && gapped.stderr.contains("must be 2"), gapped.stderr)
        XCTAssertEqual(try snapshot(site), siteBefore)

        // An expired version is not pushed: every device would stop at it.
        let stale = work.at("stale")
        XCTAssertEqual(try run(["keys", "rotate", site, "--expires-in", "1s", "--sign-root", r1.secret, "--sign-root", r2.secret, "--out", stale]).status, 0)
        Thread.sleep(forTimeInterval: 2)
        let expired = try run(["keys", "push", site, stale + "/keys/2.json"])
        XCTAssertEqual(expired.status, 1, expired.stderr)
        XCTAssertTrue(expired.stderr.contains("expired"), expired.stderr)
        XCTAssertEqual(try snapshot(site), siteBefore)

        // The JSON error object, for pipelines.
        let json = try run(["keys", "push", site, file + ".missing", "--json"])
        XCTAssertEqual(json.status, 3, json.stderr)
        try validateAgainstSchema([json.stdout], "error.schema.json")
    }

    // MARK: The drill, on S3 (moto)

    func testTwoPeopleRotateSignAndPushToS3AndVerifyFollows() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let target = "s3://\(moto.bucket)/ml"
        let (r1, r2, k1, k2) = try siteWithKeySet(work, target, moto.environment)
        let pinned = try work.write("pinned.json", [UInt8](try moto.download("ml/keys/1.json")))
        let packet = work.at("packet")
        let rotated = try run(["keys", "rotate", target, "--manifest-key", k2.pub, "--revoke", k1.id, "--sign-root", r1.secret, "--out", packet], moto.environment)
        XCTAssertEqual(rotated.status, 0, rotated.stderr)
        let listing = try moto.listing()
        XCTAssertFalse(listing.keys.contains("ml/keys/2.json"))

        let underSigned = try run(["keys", "push", target, packet + "/keys/2.json"], moto.environment)
        XCTAssertEqual(underSigned.status, 1, underSigned.stderr)
        XCTAssertTrue(underSigned.stderr.contains("needs 2"), underSigned.stderr)
        XCTAssertEqual(try moto.listing(), listing, "a refused push leaves the bucket as it was")

        // Offline: no bucket, no credentials.
        let signed = try run(["keys", "sign", packet + "/keys/2.json", "--sign-root", r2.secret], ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""])
        XCTAssertEqual(signed.status, 0, signed.stderr)
        let pushed = try run(["keys", "push", target, packet + "/keys/2.json"], moto.environment)
        XCTAssertEqual(pushed.status, 0, pushed.stderr)
        for name in ["2.json", "2.json.minisig", "2.json.sigs"] {
            XCTAssertEqual(try moto.download("ml/keys/" + name), try bytes(packet + "/keys/" + name), name)
        }
        XCTAssertEqual(try publish(work, target, "1.0.1", k2, moto.environment).status, 0)
        let verified = try run(["verify", target, "--trusted-keys", pinned], moto.environment)
        XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr)
        XCTAssertTrue(verified.stdout.contains("key set 2:"), verified.stdout)
    }
}
