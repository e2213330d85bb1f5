import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 51, layer 2: `keys create`, `keys rotate`, `publish --sign` repeated under a key
/// set, and `verify --trusted-keys`, through the real CLI on a directory and on moto.
final class KeySetCLITests: XCTestCase {
    struct Key { let secret: String; let pub: String; let id: String }

    func keygen(_ work: Scratch, _ name: String) throws -> Key {
        let result = try modelcast(["keygen", "--unencrypted", "--public-key", work.at(name + ".pub"), "--secret-key", work.at(name + ".key"), "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return Key(secret: work.at(name + ".key"), pub: work.at(name + ".pub"), id: try XCTUnwrap(object["key_id"] as? String))
    }

    func publish(_ work: Scratch, _ site: String, _ version: String, _ signers: [Key], environment: [String: String]? = nil) throws -> ProcessOutput {
        let file = try work.write("in/\(version).bin", patternBytes(2000, seed: UInt32(version.hashValue & 0xFFFF)))
        return try PublishRun(["m=" + file], name: nil, version: version, baseURL: "https://cdn.example.com/m", to: site,
                              signers.flatMap { ["--sign", $0.secret] }, environment: environment).run()
    }

    /// Every file under `root`, with its bytes: a refused command must leave it as it was.
    func snapshot(_ root: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return files }
        for case let path as String in walker {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[path] = try Data(contentsOf: URL(fileURLWithPath: root + "/" + path))
            }
        }
        return files
    }

    func testCreateRotateWithRevocationPublishTwoOfThreeAndVerify() throws {
        let work = try Scratch()
        let r1 = try keygen(work, "r1"), r2 = try keygen(work, "r2"), r3 = try keygen(work, "r3")
        let k1 = try keygen(work, "k1"), k2 = try keygen(work, "k2"), k3 = try keygen(work, "k3"), k4 = try keygen(work, "k4")
        let site = work.at("site")
        XCTAssertEqual(try publish(work, site, "1.0.0", [k1]).status, 0)
        XCTAssertEqual(try publish(work, site, "1.0.1", [k1]).status, 0)

        // create: one root key of a threshold of 2 is refused and writes nothing.
        let createArguments = ["keys", "create", site, "--root", r1.pub, "--root", r2.pub, "--root-threshold", "2", "--manifest-key", k1.pub]
        let before = try snapshot(site)
        let short = try modelcast(createArguments + ["--sign-root", r1.secret])
        XCTAssertEqual(short.status, 1, short.stderr)
        XCTAssertTrue(short.stderr.contains("needs 2"), short.stderr)
        XCTAssertEqual(try snapshot(site), before)
        let created = try modelcast(createArguments + ["--sign-root", r1.secret, "--sign-root", r2.secret])
        XCTAssertEqual(created.status, 0, created.stderr)
        for name in ["1.json", "1.json.minisig", "1.json.sigs"] { XCTAssertTrue(FileManager.default.fileExists(atPath: site + "/keys/" + name), name) }
        let stock = try runProcess("/usr/bin/env", ["minisign", "-Vm", site + "/keys/1.json", "-p", r1.pub])
        XCTAssertEqual(stock.status, 0, "the first root key's signature verifies with the stock tool: \(stock.stderr)")
        let again = try modelcast(createArguments + ["--sign-root", r1.secret, "--sign-root", r2.secret])
        XCTAssertEqual(again.status, 1, "a target that has a key set is refused: \(again.stderr)")
        try FileManager.default.copyItem(atPath: site + "/keys/1.json", toPath: work.at("pinned.json"))

        // rotate: K1 revoked for K2; one root of two is refused; the floor is the live sequence (2).
        let rotateArguments = ["keys", "rotate", site, "--manifest-key", k2.pub, "--revoke", k1.id, "--json"]
        let oneRoot = try modelcast(rotateArguments + ["--sign-root", r1.secret])
        XCTAssertEqual(oneRoot.status, 1, oneRoot.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: site + "/keys/2.json"))
        let rotated = try modelcast(rotateArguments + ["--sign-root", r1.secret, "--sign-root", r2.secret])
        XCTAssertEqual(rotated.status, 0, rotated.stderr)
        let two = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site + "/keys/2.json"))) as? [String: Any])
        XCTAssertEqual(two["sequence_floors"] as? [String: Int], ["stable": 2])
        XCTAssertEqual(((two["manifest"] as? [String: Any])?["keys"] as? [String])?.count, 1)

        // Under key set 2, K1 is refused by publish; K2 publishes.
        let revoked = try publish(work, site, "1.0.2", [k1])
        XCTAssertEqual(revoked.status, 1, revoked.stderr)
        XCTAssertTrue(revoked.stderr.contains(k1.id), revoked.stderr)
        XCTAssertEqual(try publish(work, site, "1.0.2", [k2]).status, 0)

        // Offline rotation to a copy (--out): 2-of-3 manifest keys, a third root, threshold 2 kept.
        let out = work.at("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let offline = try modelcast(["keys", "rotate", site, "--manifest-key", k3.pub, "--manifest-key", k4.pub, "--manifest-threshold", "2",
                                     "--root", r3.pub, "--sign-root", r1.secret, "--sign-root", r2.secret, "--out", out])
        XCTAssertEqual(offline.status, 0, offline.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: site + "/keys/3.json"), "--out leaves the target alone")
        for name in ["3.json", "3.json.minisig", "3.json.sigs"] {
            try FileManager.default.copyItem(atPath: out + "/keys/" + name, toPath: site + "/keys/" + name)
        }

        // 2-of-3: one key is refused, two publish, and verify walks 1 → 3.
        let alone = try publish(work, site, "1.0.3", [k3])
        XCTAssertEqual(alone.status, 1, alone.stderr)
        XCTAssertTrue(alone.stderr.contains("needs 2"), alone.stderr)
        let pair = try publish(work, site, "1.0.3", [k2, k4])
        XCTAssertEqual(pair.status, 0, pair.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: site + "/manifest.json.sigs"))
        let verified = try modelcast(["verify", site, "--trusted-keys", work.at("pinned.json")])
        XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr)
        for line in ["key set 1:", "key set 2:", "key set 3:", "manifest signed by 2 of key set 3's manifest keys", "days left"] {
            XCTAssertTrue(verified.stdout.contains(line), "\(line)\n\(verified.stdout)")
        }

        // verify refuses a manifest signed by one of 2-of-3 (the list cut to the .minisig)…
        let oneSig = work.at("one-sig")
        try FileManager.default.copyItem(atPath: site, toPath: oneSig)
        try FileManager.default.removeItem(atPath: oneSig + "/manifest.json.sigs")
        let refusedManifest = try modelcast(["verify", oneSig, "--trusted-keys", work.at("pinned.json")])
        XCTAssertEqual(refusedManifest.status, 1, refusedManifest.stderr)
        XCTAssertTrue(refusedManifest.stderr.contains("needs 2"), refusedManifest.stderr)
        // …and a link signed by one root key when the threshold is 2.
        let oneRootLink = work.at("one-root")
        try FileManager.default.copyItem(atPath: site, toPath: oneRootLink)
        try FileManager.default.removeItem(atPath: oneRootLink + "/keys/2.json.sigs")
        try FileManager.default.copyItem(atPath: oneRootLink + "/keys/2.json.minisig", toPath: oneRootLink + "/keys/2.json.sigs")
        let refusedLink = try modelcast(["verify", oneRootLink, "--trusted-keys", work.at("pinned.json")])
        XCTAssertEqual(refusedLink.status, 1, refusedLink.stderr)
        XCTAssertTrue(refusedLink.stderr.contains("keys/2.json is signed by 1 of key set 1's root keys"), refusedLink.stderr)
    }

    /// Each channel has its own sequence, so a rotation that removes a manifest key writes
    /// each channel's live sequence as its floor (one number would refuse the channel behind
    /// or let the one ahead replay); an add-only rotation carries the floors forward (clients
    /// cap a floor rebuilt after a lost state by them); `--sequence-floor beta=N` sets one.
    func testRotationsWriteEachChannelsFloorAndCarryThemForward() throws {
        let work = try Scratch()
        let r1 = try keygen(work, "r1"), k1 = try keygen(work, "k1"), k2 = try keygen(work, "k2"), k3 = try keygen(work, "k3")
        let site = work.at("site")
        XCTAssertEqual(try publish(work, site, "1.0.0", [k1]).status, 0)
        for version in ["1.0.0", "1.1.0", "1.2.0"] {
            let file = try work.write("in/beta-\(version).bin", patternBytes(2000, seed: UInt32(version.count * 7 + version.utf8.reduce(0) { $0 + Int($1) })))
            let beta = try PublishRun(["m=" + file], name: nil, version: version, baseURL: "https://cdn.example.com/m", to: site,
                                      ["--sign", k1.secret, "--channel", "beta"]).run()
            XCTAssertEqual(beta.status, 0, beta.stderr)
        }
        XCTAssertEqual(try modelcast(["keys", "create", site, "--root", r1.pub, "--manifest-key", k1.pub, "--sign-root", r1.secret]).status, 0)
        func floors(_ version: Int) throws -> [String: Int]? {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site + "/keys/\(version).json"))) as? [String: Any]
            return object?["sequence_floors"] as? [String: Int]
        }
        func rotate(_ arguments: [String]) throws {
            let result = try modelcast(["keys", "rotate", site, "--sign-root", r1.secret] + arguments)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        try rotate(["--manifest-key", k2.pub])
        XCTAssertNil(try floors(2), "an add-only rotation of a set without floors writes none")
        try rotate(["--revoke", k1.id])
        XCTAssertEqual(try floors(3), ["stable": 1, "beta": 3])
        try rotate(["--manifest-key", k3.pub])
        XCTAssertEqual(try floors(4), ["stable": 1, "beta": 3], "an add-only rotation carries the floors forward")
        try rotate(["--revoke", k2.id, "--sequence-floor", "beta=2"])
        XCTAssertEqual(try floors(5), ["stable": 1, "beta": 2])
    }

    /// A rotation that removes no manifest key keeps the current floors: clients do
    /// not reset their floor on it, but they cap a floor rebuilt from version records by the
    /// newest key set's floor for the channel, so losing it would lift that cap.
    func testAddOnlyRotationKeepsTheSequenceFloorAndARevocationSetsTheLiveOne() throws {
        let work = try Scratch()
        let r1 = try keygen(work, "r1"), k1 = try keygen(work, "k1"), k2 = try keygen(work, "k2"), k3 = try keygen(work, "k3")
        let site = work.at("site")
        XCTAssertEqual(try publish(work, site, "1.0.0", [k1]).status, 0)
        let created = try modelcast(["keys", "create", site, "--root", r1.pub, "--manifest-key", k1.pub, "--sequence-floor", "7", "--sign-root", r1.secret])
        XCTAssertEqual(created.status, 0, created.stderr)
        func floor(_ version: Int) throws -> Int? {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site + "/keys/\(version).json"))) as? [String: Any]
            return (object?["sequence_floors"] as? [String: Int])?["stable"]
        }
        let added = try modelcast(["keys", "rotate", site, "--manifest-key", k2.pub, "--sign-root", r1.secret])
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertEqual(try floor(2), 7, "an add-only rotation carries the floor forward")
        let renewed = try modelcast(["keys", "rotate", site, "--expires-in", "30d", "--sign-root", r1.secret])
        XCTAssertEqual(renewed.status, 0, renewed.stderr)
        XCTAssertEqual(try floor(3), 7, "a renewal carries the floor forward")
        let raised = try modelcast(["keys", "rotate", site, "--sequence-floor", "9", "--sign-root", r1.secret])
        XCTAssertEqual(raised.status, 0, raised.stderr)
        XCTAssertEqual(try floor(4), 9, "an explicit --sequence-floor wins")
        let revoked = try modelcast(["keys", "rotate", site, "--revoke", k1.id, "--manifest-key", k3.pub, "--sign-root", r1.secret])
        XCTAssertEqual(revoked.status, 0, revoked.stderr)
        XCTAssertEqual(try floor(5), 1, "removing a manifest key sets the live release's sequence")
    }

    /// `verify --json --trusted-keys` carries the chain it walked, as the text output shows it.
    func testVerifyJSONCarriesTheChainItWalked() throws {
        let work = try Scratch()
        let r1 = try keygen(work, "r1"), r2 = try keygen(work, "r2"), k1 = try keygen(work, "k1"), k2 = try keygen(work, "k2"), k3 = try keygen(work, "k3")
        let site = work.at("site")
        XCTAssertEqual(try publish(work, site, "1.0.0", [k1]).status, 0)
        XCTAssertEqual(try modelcast(["keys", "create", site, "--root", r1.pub, "--manifest-key", k1.pub, "--sign-root", r1.secret]).status, 0)
        try FileManager.default.copyItem(atPath: site + "/keys/1.json", toPath: work.at("pinned.json"))
        let rotated = try modelcast(["keys", "rotate", site, "--root", r2.pub, "--root-threshold", "2", "--manifest-key", k2.pub, "--manifest-key", k3.pub,
                                     "--revoke", k1.id, "--manifest-threshold", "2", "--expires-in", "30d", "--sign-root", r1.secret, "--sign-root", r2.secret])
        XCTAssertEqual(rotated.status, 0, rotated.stderr)
        XCTAssertEqual(try publish(work, site, "1.0.1", [k3, k2]).status, 0)

        let result = try modelcast(["verify", site, "--trusted-keys", work.at("pinned.json"), "--json"])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        try validateAgainstSchema([result.stdout], "verify-report.schema.json")
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let keySets = try XCTUnwrap(report["key_sets"] as? [String: Any], result.stdout)
        XCTAssertEqual(keySets["truncated"] as? Bool, false)
        XCTAssertEqual(keySets["manifest_threshold"] as? Int, 2)
        XCTAssertEqual(Set(keySets["manifest_signers"] as? [String] ?? []), [k2.id, k3.id])
        let chain = try XCTUnwrap(keySets["chain"] as? [[String: Any]])
        XCTAssertEqual(chain.map { $0["version"] as? Int }, [1, 2])
        XCTAssertEqual(chain.map { $0["pinned"] as? Bool }, [true, false])
        XCTAssertEqual(chain[0]["signed_by"] as? [String], [], "the pinned set is trusted as given")
        XCTAssertEqual(Set(chain[1]["signed_by"] as? [String] ?? []), [r1.id, r2.id])
        let root = try XCTUnwrap(chain[1]["root"] as? [String: Any]), manifest = try XCTUnwrap(chain[1]["manifest"] as? [String: Any])
        XCTAssertEqual(root["threshold"] as? Int, 2)
        XCTAssertEqual(root["keys"] as? [String], [r1.id, r2.id])
        XCTAssertEqual(manifest["threshold"] as? Int, 2)
        XCTAssertEqual(manifest["keys"] as? [String], [k2.id, k3.id])
        XCTAssertEqual(chain[1]["sequence_floors"] as? [String: Int], ["stable": 1])
        XCTAssertNil(chain[0]["sequence_floors"])
        let expires = try XCTUnwrap(chain[1]["expires_at"] as? String)
        XCTAssertEqual(expires, String(data: try Data(contentsOf: URL(fileURLWithPath: site + "/keys/2.json")), encoding: .utf8).flatMap { text in
            text.split(separator: "\"").drop { $0 != "expires_at" }.dropFirst(2).first.map(String.init) })
        let days = try XCTUnwrap(chain[1]["days_left"] as? Double)
        XCTAssertTrue((29.0...30.0).contains(days), "\(days)")
        XCTAssertTrue(result.stderr.contains("key set 2:"), "the text lines go to standard error with --json: \(result.stderr)")
    }

    /// Devices refuse every manifest while the newest key set has expired, so publish refuses
    /// to go live under it (exit 1, the target unchanged) and names the remedy; after a
    /// renewal (`keys rotate` with no change) it publishes.
    func testPublishUnderAnExpiredKeySetIsRefusedUntilItIsRenewed() throws {
        let work = try Scratch()
        let r1 = try keygen(work, "r1"), k1 = try keygen(work, "k1")
        let site = work.at("site")
        XCTAssertEqual(try publish(work, site, "1.0.0", [k1]).status, 0)
        let created = try modelcast(["keys", "create", site, "--root", r1.pub, "--manifest-key", k1.pub, "--sign-root", r1.secret, "--expires-in", "1s"])
        XCTAssertEqual(created.status, 0, created.stderr)
        Thread.sleep(forTimeInterval: 2)
        let before = try snapshot(site)
        let refused = try publish(work, site, "1.0.1", [k1])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("keys/1.json, expired at") && refused.stderr.contains("keys rotate"), refused.stderr)
        XCTAssertEqual(try snapshot(site), before, "nothing written")
        let renewed = try modelcast(["keys", "rotate", site, "--sign-root", r1.secret])
        XCTAssertEqual(renewed.status, 0, renewed.stderr)
        let published = try publish(work, site, "1.0.1", [k1])
        XCTAssertEqual(published.status, 0, published.stderr)
    }

    /// A `--trusted-keys` file that is no key set is refused naming the file (escaped) and
    /// the field, exit 1; one that is missing is an I/O failure naming it, exit 3.
    func testVerifyNamesATrustedKeysFileThatIsNoKeySet() throws {
        let work = try Scratch()
        let k1 = try keygen(work, "k1")
        let site = work.at("site")
        XCTAssertEqual(try publish(work, site, "1.0.0", [k1]).status, 0)
        let bad = try work.write("bad\u{1b}[2J.json", Array("{\"format\": \"modelcast-keys\"}".utf8))
        let refused = try modelcast(["verify", site, "--trusted-keys", bad])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("bad\\u{1b}[2J.json"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("\u{1b}"), "no raw escape: \(refused.stderr)")
        let missing = try modelcast(["verify", site, "--trusted-keys", work.at("missing.json")])
        XCTAssertEqual(missing.status, 3, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("missing.json"), missing.stderr)
    }

    /// The first publish after `keys create`, as a newcomer runs it: no `--sign`. Refused,
    /// naming the key set and its manifest keys, the target unchanged (devices would refuse
    /// an unsigned manifest); `keys create` without `--sign-root` is a usage error.
    func testPublishWithoutSignUnderAKeySetAndCreateWithoutSignRootAreRefused() throws {
        let work = try Scratch()
        let r1 = try keygen(work, "r1"), k1 = try keygen(work, "k1")
        let site = work.at("site")
        XCTAssertEqual(try publish(work, site, "1.0.0", [k1]).status, 0)
        let unsignedCreate = try modelcast(["keys", "create", site, "--root", r1.pub, "--manifest-key", k1.pub])
        XCTAssertEqual(unsignedCreate.status, 2, unsignedCreate.stderr)
        XCTAssertTrue(unsignedCreate.stderr.contains("--sign-root"), unsignedCreate.stderr)
        XCTAssertEqual(try modelcast(["keys", "create", site, "--root", r1.pub, "--manifest-key", k1.pub, "--sign-root", r1.secret]).status, 0)
        let before = try snapshot(site)
        let unsigned = try publish(work, site, "1.0.1", [])
        XCTAssertEqual(unsigned.status, 1, unsigned.stderr)
        XCTAssertTrue(unsigned.stderr.contains("key set 1") && unsigned.stderr.contains(k1.id), unsigned.stderr)
        XCTAssertEqual(try snapshot(site), before, "nothing written")
    }

    /// A release signed by two keys keeps `manifests/N.json.minisig` and `.sigs` beside its
    /// record; prune removes both with the record (not the list alone left behind), and
    /// keeps those of the releases it keeps.
    func testPruneRemovesARecordsKeptSignatureList() throws {
        let work = try Scratch()
        let k1 = try keygen(work, "k1"), k2 = try keygen(work, "k2")
        let site = work.at("site")
        for version in ["1.0.0", "1.0.1", "1.0.2"] { XCTAssertEqual(try publish(work, site, version, [k1, k2]).status, 0) }
        let kept = (1...3).map { site + "/manifests/0000000\($0).json" }
        for record in kept { XCTAssertTrue(FileManager.default.fileExists(atPath: record + ".sigs"), record) }
        let pruned = try modelcast(["prune", site, "--keep", "1"])
        XCTAssertEqual(pruned.status, 0, pruned.stderr)
        // --keep 1 keeps the live release and its rollback target (release 2): release 1 goes.
        for record in kept.prefix(1) {
            XCTAssertFalse(FileManager.default.fileExists(atPath: record), record)
            XCTAssertFalse(FileManager.default.fileExists(atPath: record + ".minisig"), record)
            XCTAssertFalse(FileManager.default.fileExists(atPath: record + ".sigs"), "a pruned record's signature list stays behind: \(record).sigs")
        }
        for record in kept.suffix(2) { XCTAssertTrue(FileManager.default.fileExists(atPath: record + ".sigs"), "a kept release keeps its list: \(record)") }
    }

    func testHostileFlagValuesAreRefusedWithTheirExitStatusAndWriteNothing() throws {
        let work = try Scratch()
        let r1 = try keygen(work, "r1"), k1 = try keygen(work, "k1")
        let site = work.at("site")
        try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
        let base = ["keys", "create", site, "--root", r1.pub, "--manifest-key", k1.pub, "--sign-root", r1.secret]
        let cases: [(arguments: [String], status: Int32, fragment: String)] = [
            (["keys", "create", site, "--manifest-key", k1.pub, "--sign-root", r1.secret], 2, "--root"),
            (base + ["--root-threshold", "2"], 1, "root.threshold"),
            (base + ["--root-threshold", "0"], 1, "root.threshold"),
            (base + ["--manifest-threshold", "x"], 2, "manifest-threshold"),
            (base + ["--expires-in", "0d"], 1, "0d"),
            (base + ["--expires-in=-5d"], 1, "-5d"),
            (base + ["--sequence-floor", "9007199254740993"], 1, "sequence_floors.stable"),
            (base + ["--sequence-floor", "Beta\u{1b}[2J=3"], 2, "'Beta\\u{1b}[2J'"),
            (base + ["--sequence-floor", "beta=x"], 2, "'beta=x'"),
            (base + ["--sequence-floor", "beta=1", "--sequence-floor", "beta=2"], 2, "beta twice"),
            (["keys", "create", site, "--root", r1.pub, "--manifest-key", r1.pub, "--sign-root", r1.secret], 1, "also a root key"),
            (["keys", "create", site, "--root", r1.pub, "--manifest-key", k1.pub, "--sign-root", k1.secret], 1, "not a root key"),
            (["keys", "create", site, "--root", work.at("missing.pub"), "--manifest-key", k1.pub, "--sign-root", r1.secret], 3, "missing.pub"),
            (["keys", "rotate", site, "--sign-root", r1.secret], 1, "no key set"),
        ]
        for item in cases {
            let result = try modelcast(item.arguments)
            let label = item.arguments.joined(separator: " ") + "\nexit \(result.status)\n" + result.stderr
            XCTAssertEqual(result.status, item.status, label)
            XCTAssertTrue(result.stderr.contains(item.fragment), label)
            XCTAssertEqual(try snapshot(site), [:], label)
        }
        XCTAssertEqual(try modelcast(base).status, 0)
        let rotateCases: [(arguments: [String], status: Int32, fragment: String)] = [
            (["--revoke", "zz\u{1B}[31m"], 1, "\\u{1b}"),
            (["--revoke", "ABCDEF"], 1, "ABCDEF"),
            (["--revoke", k1.id], 1, "manifest.keys"),
        ]
        let keysBefore = try snapshot(site)
        for item in rotateCases {
            let result = try modelcast(["keys", "rotate", site, "--sign-root", r1.secret] + item.arguments)
            let label = item.arguments.joined(separator: " ") + "\nexit \(result.status)\n" + result.stderr
            XCTAssertEqual(result.status, item.status, label)
            XCTAssertTrue(result.stderr.contains(item.fragment), label)
            XCTAssertFalse(result.stderr.contains("\u{1B}"), "control characters are escaped: \(label)")
            XCTAssertEqual(try snapshot(site), keysBefore, label)
        }
    }

    func testCreateRotateAndPublishOnS3() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let r1 = try keygen(work, "r1"), r2 = try keygen(work, "r2"), k1 = try keygen(work, "k1"), k2 = try keygen(work, "k2")
        let target = "s3://\(moto.bucket)/ml"
        XCTAssertEqual(try publish(work, target, "1.0.0", [k1], environment: moto.environment).status, 0)
        let created = try modelcast(["keys", "create", target, "--root", r1.pub, "--root", r2.pub, "--root-threshold", "2", "--manifest-key", k1.pub,
                                     "--sign-root", r1.secret, "--sign-root", r2.secret], environment: moto.environment)
        XCTAssertEqual(created.status, 0, created.stderr)
        let rotated = try modelcast(["keys", "rotate", target, "--manifest-key", k2.pub, "--revoke", k1.id, "--sign-root", r1.secret, "--sign-root", r2.secret],
                                    environment: moto.environment)
        XCTAssertEqual(rotated.status, 0, rotated.stderr)
        let keys = Set(try moto.listing().keys)
        for name in ["1.json", "1.json.minisig", "1.json.sigs", "2.json", "2.json.minisig", "2.json.sigs"] { XCTAssertTrue(keys.contains("ml/keys/" + name), name) }
        XCTAssertEqual(try publish(work, target, "1.0.1", [k1], environment: moto.environment).status, 1)
        XCTAssertEqual(try publish(work, target, "1.0.1", [k2], environment: moto.environment).status, 0)
        let pinned = try work.write("pinned.json", [UInt8](try moto.download("ml/keys/1.json")))
        let verified = try modelcast(["verify", target, "--trusted-keys", pinned], environment: moto.environment)
        XCTAssertEqual(verified.status, 0, verified.stdout + verified.stderr)
        XCTAssertTrue(verified.stdout.contains("key set 2:"), verified.stdout)
    }
}
