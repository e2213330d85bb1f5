import Foundation
import XCTest
import ModelCastClient
import ModelCastTestSupport

/// Issue 51, layer 3: a device that ships key set 1 (`ClientConfiguration.trustedKeySet`)
/// follows rotations, refuses a short-signed link and a revoked key's manifest, and recovers
/// from a fast-forward, against a static server on 127.0.0.1 (`misbehaving_server.py`, which
/// serves `keys/` and `.sigs` as files and logs every request) over sites the real CLI wrote
/// (`keys create`/`keys rotate`, `publish --sign` repeated).
final class KeySetClientTests: XCTestCase {
    struct Key { let secret: String; let pub: String; let id: String }

    final class Site {
        let work: Scratch
        let port: Int
        let base: String
        let folder: String
        var root: String { work.at(folder) }
        private var server: BackgroundProcess?
        let r1: Key, r2: Key, k1: Key, k2: Key

        /// A site served under `/FOLDER/`: the folder's name less trailing digits is
        /// `misbehaving_server.py`'s mode ("private": 403 for a missing file).
        init(folder: String = "site") throws {
            self.folder = folder
            work = try Scratch("keyset-client")
            port = try freeLoopbackPort()
            base = "http://127.0.0.1:\(port)/\(folder)"
            let work = self.work
            func keygen(_ name: String) throws -> Key {
                let result = try modelcast(["keygen", "--unencrypted", "--public-key", work.at(name + ".pub"), "--secret-key", work.at(name + ".key"), "--json"])
                XCTAssertEqual(result.status, 0, result.stderr)
                let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
                return Key(secret: work.at(name + ".key"), pub: work.at(name + ".pub"), id: try XCTUnwrap(object["key_id"] as? String))
            }
            r1 = try keygen("r1"); r2 = try keygen("r2"); k1 = try keygen("k1"); k2 = try keygen("k2")
        }

        func publish(_ version: String, _ signers: [Key], _ extra: [String] = []) throws {
            let file = try work.write("in/\(version)/m.bin", patternBytes(5000, seed: UInt32(version.utf8.reduce(0) { $0 &* 31 &+ UInt32($1) } & 0xFFFF)))
            let result = try PublishRun([file], version: version, baseURL: base, to: root, signers.flatMap { ["--sign", $0.secret] } + extra).run()
            XCTAssertEqual(result.status, 0, result.stderr)
        }

        /// `keys create` (roots R1, R2, threshold 2; manifest key K1), signed by both roots.
        func createKeySet() throws {
            let result = try modelcast(["keys", "create", root, "--root", r1.pub, "--root", r2.pub, "--root-threshold", "2",
                                        "--manifest-key", k1.pub, "--sign-root", r1.secret, "--sign-root", r2.secret])
            XCTAssertEqual(result.status, 0, result.stderr)
        }

        /// `keys rotate`: K2 in, K1 revoked, signed by both roots.
        func rotateToK2() throws {
            let result = try modelcast(["keys", "rotate", root, "--manifest-key", k2.pub, "--revoke", k1.id,
                                        "--sign-root", r1.secret, "--sign-root", r2.secret])
            XCTAssertEqual(result.status, 0, result.stderr)
        }

        var pinned: Data { get throws { try Data(contentsOf: URL(fileURLWithPath: root + "/keys/1.json")) } }

        func start() throws {
            guard server == nil else { return }
            server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("."), String(port)])
        }

        /// The paths requested so far, in order (the server's log, less `/FOLDER/`).
        var requests: [String] {
            (server?.standardError ?? "").split(separator: "\n").compactMap { line -> String? in
                let parts = line.split(separator: " ")
                guard parts.count >= 2, parts[0] == "GET" else { return nil }
                return String(parts[1].dropFirst(folder.count + 2))
            }
        }

        /// A device that ships `shipping` (key set 1 when nil), on the clock `now`.
        func device(_ name: String, shipping: Data? = nil, now: @escaping @Sendable () -> Date = { Date() }) throws -> ModelUpdater {
            try ModelUpdater(ClientConfiguration(
                manifestURL: URL(string: base + "/manifest.json")!, directory: URL(fileURLWithPath: work.at(name)), deviceID: name,
                trustedKeySet: try shipping ?? pinned, retries: 0, requestTimeout: 10, now: now))
        }

        /// `modelcast keys SUBCOMMAND` on the site with `arguments`, which must succeed.
        func keys(_ subcommand: String, _ arguments: [String]) throws {
            let result = try modelcast(["keys", subcommand, root] + arguments)
            XCTAssertEqual(result.status, 0, result.stderr)
        }

        /// The key set version device `name`'s `state.json` keeps (nil without one).
        func keptKeySetVersion(_ name: String) throws -> Int? {
            let state = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: work.at(name + "/state.json")))) as? [String: Any]
            return (state?["keySet"] as? [String: Any])?["version"] as? Int
        }

        /// The served manifest's files (to put back what the CLI wrote after a test serves another).
        func save() throws -> [String: Data?] {
            var files: [String: Data?] = [:]
            for name in ["manifest.json", "manifest.json.minisig", "manifest.json.sigs"] {
                files[name] = FileManager.default.contents(atPath: root + "/" + name)
            }
            return files
        }

        func restore(_ files: [String: Data?]) throws {
            for (name, data) in files {
                let path = root + "/" + name
                try? FileManager.default.removeItem(atPath: path)
                if let data { try data.write(to: URL(fileURLWithPath: path)) }
            }
        }

        /// What a holder of `key` can serve: the live manifest, its sequence set to
        /// `sequence` when given, signed by `key` alone with stock minisign (the comment the
        /// CLI wrote, its sequence changed to match).
        func forge(signer key: Key, sequence: Int64? = nil) throws {
            let manifestPath = root + "/manifest.json"
            var text = try String(contentsOfFile: manifestPath, encoding: .utf8)
            let signature = try String(contentsOfFile: manifestPath + ".minisig", encoding: .utf8)
            var comment = String(try XCTUnwrap(signature.split(separator: "\n").first { $0.hasPrefix("trusted comment: ") }).dropFirst("trusted comment: ".count))
            if let sequence {
                let pattern = try NSRegularExpression(pattern: "\"sequence\"(\\s*):(\\s*)[0-9]+")
                text = pattern.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "\"sequence\"$1:$2\(sequence)")
                comment = try NSRegularExpression(pattern: "sequence:[0-9]+").stringByReplacingMatches(
                    in: comment, range: NSRange(comment.startIndex..., in: comment), withTemplate: "sequence:\(sequence)")
                try Data(text.utf8).write(to: URL(fileURLWithPath: manifestPath))
            }
            try? FileManager.default.removeItem(atPath: manifestPath + ".sigs")
            try? FileManager.default.removeItem(atPath: manifestPath + ".minisig")
            let signed = try runProcess("/usr/bin/env", ["minisign", "-S", "-s", key.secret, "-m", manifestPath, "-t", comment])
            XCTAssertEqual(signed.status, 0, signed.stderr)
        }

        func models(_ device: String) -> [String] {
            (try? FileManager.default.contentsOfDirectory(atPath: work.at(device + "/models"))) ?? []
        }
    }

    /// Rotation K1 → K2 is followed after key set 2; a manifest K1 signs after its
    /// revocation is refused; a link signed by one root of 2 is refused; nothing installed.
    func testRotationIsFollowedRevokedKeyAndShortSignedLinkAreRefused() async throws {
        let site = try Site()
        try site.publish("1.0.0", [site.k1])
        try site.createKeySet()
        try site.start()
        let a = try site.device("a")
        _ = try await a.update()
        XCTAssertEqual(a.installed("m")?.version, "1.0.0")

        try site.rotateToK2()
        try site.publish("1.0.1", [site.k2])
        let outcome = try await a.update()
        XCTAssertEqual(outcome, .updated(sequence: 2, models: ["m": "1.0.1"]))
        XCTAssertEqual(a.installed("m")?.version, "1.0.1")
        let state = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site.work.at("a/state.json")))) as? [String: Any])
        XCTAssertEqual((state["keySet"] as? [String: Any])?["version"] as? Int, 2, "the newest verified key set is kept")

        // The leaked, revoked K1 signs the live manifest: refused by the device that walked
        // to key set 2 and by a new one that starts from key set 1.
        let genuine = try site.save()
        try site.forge(signer: site.k1)
        for name in ["a", "b"] {
            let device = try site.device(name)
            do {
                _ = try await device.update()
                XCTFail("\(name): a manifest signed by a revoked key was accepted")
            } catch let error as ClientError {
                guard case .manifestThresholdNotMet(_, let version, let reason) = error else { return XCTFail("\(name): \(error)") }
                XCTAssertEqual(version, 2)
                XCTAssertTrue(reason.contains(site.k1.id.uppercased()) || reason.contains(site.k1.id), reason)
                XCTAssertEqual(error.kind, .refused)
            }
        }
        XCTAssertEqual(site.models("b"), [], "nothing installed")
        try site.restore(genuine)

        // Key set 2 with one root signature (the .minisig as the whole list): refused.
        let sigs = site.root + "/keys/2.json.sigs"
        try FileManager.default.removeItem(atPath: sigs)
        try FileManager.default.copyItem(atPath: site.root + "/keys/2.json.minisig", toPath: sigs)
        let c = try site.device("c")
        do {
            _ = try await c.update()
            XCTFail("a key set signed by one root of 2 was accepted")
        } catch let error as ClientError {
            guard case .keySetRefused(let path, let version, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "keys/2.json")
            XCTAssertEqual(version, 2)
            XCTAssertTrue(reason.contains("signed by 1 of key set 1's root keys"), reason)
        }
        XCTAssertEqual(site.models("c"), [], "nothing installed")
    }

    /// Fast-forward: a leaked K1 serves sequence 2^53, which a device accepts; key set 2
    /// revokes K1 and resets the floor to the genuine live sequence, so the genuine K2
    /// manifest with a lower sequence is accepted, and a replay of an older K2 one is not.
    func testFastForwardByALeakedKeyIsUndoneByTheRotation() async throws {
        let site = try Site()
        try site.publish("1.0.0", [site.k1])
        try site.createKeySet()
        try site.publish("1.0.1", [site.k1])
        try site.start()
        let device = try site.device("d")
        _ = try await device.update()
        XCTAssertEqual(device.installed("m")?.version, "1.0.1")

        let genuine = try site.save()
        let huge: Int64 = 1 << 53
        try site.forge(signer: site.k1, sequence: huge)
        let forged = try await device.update()
        XCTAssertEqual(forged, .upToDate(sequence: huge), "an old client accepts the leaked key's sequence")
        try site.restore(genuine)

        try site.rotateToK2()
        try site.publish("1.0.2", [site.k2])
        let recovered = try await device.update()
        XCTAssertEqual(recovered, .updated(sequence: 3, models: ["m": "1.0.2"]), "the floor was reset by key set 2")
        let older = try site.save()
        try site.publish("1.0.3", [site.k2])
        _ = try await device.update()
        XCTAssertEqual(device.installed("m")?.version, "1.0.3")

        try site.restore(older)
        do {
            _ = try await device.update()
            XCTFail("an older K2 manifest was accepted")
        } catch let error as ClientError {
            guard case .replayed(_, let sequence, let highest) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(sequence, 3)
            XCTAssertEqual(highest, 4)
        }
        XCTAssertEqual(device.installed("m")?.version, "1.0.3")
    }

    /// A floor reset is per channel: a beta device, its channel ahead of stable, takes key
    /// set 2's beta floor (beta's live sequence at the rotation), so a replay of an older beta
    /// manifest signed by a key that stays trusted is still refused (one number for every
    /// channel, stable's, would have let it in).
    func testAFloorResetTakesTheDevicesChannelsFloor() async throws {
        let site = try Site()
        try site.publish("1.0.0", [site.k1])
        let betaFiles = ["channels/beta/manifest.json", "channels/beta/manifest.json.minisig", "channels/beta/manifest.json.sigs"]
        var older: [String: Data] = [:]
        for (index, version) in ["1.1.0", "1.2.0", "1.3.0"].enumerated() {
            let file = try site.work.write("in/beta-\(version)/m.bin", patternBytes(5000, seed: UInt32(100 + index)))
            let result = try PublishRun([file], version: version, baseURL: site.base, to: site.root, ["--sign", site.k2.secret, "--channel", "beta"]).run()
            XCTAssertEqual(result.status, 0, result.stderr)
            if version == "1.2.0" {
                for name in betaFiles { older[name] = FileManager.default.contents(atPath: site.root + "/" + name) }
            }
        }
        let create = try modelcast(["keys", "create", site.root, "--root", site.r1.pub, "--manifest-key", site.k1.pub, "--manifest-key", site.k2.pub,
                                    "--sign-root", site.r1.secret])
        XCTAssertEqual(create.status, 0, create.stderr)
        try site.start()
        let device = try ModelUpdater(ClientConfiguration(
            manifestURL: URL(string: site.base + "/channels/beta/manifest.json")!, directory: URL(fileURLWithPath: site.work.at("beta")),
            deviceID: "beta", trustedKeySet: try site.pinned, retries: 0, requestTimeout: 10))
        _ = try await device.update()
        XCTAssertEqual(device.installed("m")?.version, "1.3.0")

        let rotate = try modelcast(["keys", "rotate", site.root, "--revoke", site.k1.id, "--sign-root", site.r1.secret, "--json"])
        XCTAssertEqual(rotate.status, 0, rotate.stderr)
        let floors = (try JSONSerialization.jsonObject(with: Data(rotate.stdout.utf8)) as? [String: Any])?["sequence_floors"] as? [String: Int]
        XCTAssertEqual(floors, ["stable": 1, "beta": 3], rotate.stdout)
        // Serve beta's 1.2.0 again (sequence 2): exactly the files it had.
        for name in betaFiles { try? FileManager.default.removeItem(atPath: site.root + "/" + name) }
        for (name, data) in older { try data.write(to: URL(fileURLWithPath: site.root + "/" + name)) }
        do {
            let result = try await device.update()
            XCTFail("beta's sequence 2, signed by K2, was accepted after the rotation: \(result)")
        } catch let error as ClientError {
            guard case .replayed(_, let sequence, let highest) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(sequence, 2)
            XCTAssertEqual(highest, 3, "the floor is beta's live sequence at the rotation")
        }
        XCTAssertEqual(device.installed("m")?.version, "1.3.0")
    }

    /// The floor key set 2 sets is what keeps older genuine manifests out once the leaked
    /// key's 2^53 is undone. K2 (the release team's key) was in key set 1 beside K1 (CI's)
    /// and signed release 1; K1 signed release 2, then leaked and fast-forwarded the device.
    /// Key set 2 revokes K1 with the floor `keys rotate` computes (the live sequence, 2): a
    /// replay of release 1, genuinely K2-signed, is refused before any newer release exists
    /// (a reset to 0 would take it: a downgrade), nothing installed; the next genuine release,
    /// far below 2^53, is accepted; the replay stays refused.
    func testAReplayBelowTheRotationsFloorIsRefused() async throws {
        let site = try Site()
        try site.keys("create", ["--root", site.r1.pub, "--root", site.r2.pub, "--root-threshold", "2",
                                 "--manifest-key", site.k1.pub, "--manifest-key", site.k2.pub,
                                 "--sign-root", site.r1.secret, "--sign-root", site.r2.secret])
        try site.publish("1.0.0", [site.k2])
        let release1 = try site.save()
        try site.publish("1.0.1", [site.k1])
        try site.start()
        let device = try site.device("f")
        let first = try await device.update()
        XCTAssertEqual(first, .updated(sequence: 2, models: ["m": "1.0.1"]))

        let genuine = try site.save()
        let huge: Int64 = 1 << 53
        try site.forge(signer: site.k1, sequence: huge)
        let forged = try await device.update()
        XCTAssertEqual(forged, .upToDate(sequence: huge), "the leaked key's sequence is accepted before the rotation")
        try site.restore(genuine)

        try site.keys("rotate", ["--revoke", site.k1.id, "--sign-root", site.r1.secret, "--sign-root", site.r2.secret])
        let keySet2 = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site.root + "/keys/2.json"))) as? [String: Any])
        XCTAssertEqual(keySet2["sequence_floors"] as? [String: Int], ["stable": 2], "keys rotate's floor: the live sequence")

        try site.restore(release1)
        do {
            _ = try await device.update()
            XCTFail("release 1 was accepted below key set 2's floor")
        } catch let error as ClientError {
            XCTAssertEqual(error, .replayed(url: site.base + "/manifest.json", sequence: 1, highestAccepted: 2))
        }
        XCTAssertEqual(device.installed("m")?.version, "1.0.1", "nothing installed")
        XCTAssertEqual(try site.keptKeySetVersion("f"), 2)

        try site.restore(genuine)
        try site.publish("1.0.2", [site.k2])
        let recovered = try await device.update()
        XCTAssertEqual(recovered, .updated(sequence: 3, models: ["m": "1.0.2"]))
        try site.restore(release1)
        do {
            _ = try await device.update()
            XCTFail("release 1 was accepted after release 3")
        } catch let error as ClientError {
            XCTAssertEqual(error, .replayed(url: site.base + "/manifest.json", sequence: 1, highestAccepted: 3))
        }
        XCTAssertEqual(device.installed("m")?.version, "1.0.2", "nothing installed")
    }

    /// A device whose current version was installed from a leaked key's 2^53 manifest keeps
    /// that sequence in the version's record. After the rotation reset the floor, losing
    /// `state.json` (deleted, corrupt, or missing its installs) rebuilds the floor from the
    /// records: capped by the key set's floor for the channel, the genuine manifest is still
    /// accepted, by the app that ships key set 1 and by a newer one that ships key set 2.
    func testAFloorRebuiltFromVersionRecordsIsCappedByTheKeySetFloor() async throws {
        let site = try Site()
        try site.publish("1.0.0", [site.k1])
        try site.createKeySet()
        try site.start()
        let genuine = try site.save()
        let huge: Int64 = 1 << 53
        try site.forge(signer: site.k1, sequence: huge)
        let device = try site.device("e")
        let forged = try await device.update()
        XCTAssertEqual(forged, .updated(sequence: huge, models: ["m": "1.0.0"]), "installed from the leaked key's manifest")
        try site.restore(genuine)

        // Rotation (floor = the live sequence, 1), and the live release re-signed by K2.
        try site.rotateToK2()
        let resigned = try modelcast(["resign", site.root, "--sign", site.k2.secret])
        XCTAssertEqual(resigned.status, 0, resigned.stderr)
        let recovered = try await device.update()
        XCTAssertEqual(recovered, .upToDate(sequence: 2), "the floor was reset by key set 2")

        let statePath = site.work.at("e/state.json")
        let keySet2 = try Data(contentsOf: URL(fileURLWithPath: site.root + "/keys/2.json"))
        var state = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: statePath))) as? [String: Any])
        state["installed"] = [String: Any]()
        let withoutInstalls = try JSONSerialization.data(withJSONObject: state)
        for (label, shipping, damage) in [
            ("state.json without its installs", nil, { try withoutInstalls.write(to: URL(fileURLWithPath: statePath)) }),
            ("state.json deleted, app ships key set 2", keySet2, { try FileManager.default.removeItem(atPath: statePath) }),
            ("state.json corrupt, app ships key set 2", keySet2, { try Data("{not json".utf8).write(to: URL(fileURLWithPath: statePath)) }),
        ] as [(String, Data?, () throws -> Void)] {
            try damage()
            let relaunched = try site.device("e", shipping: shipping)
            do {
                let outcome = try await relaunched.update()
                XCTAssertEqual(outcome, .upToDate(sequence: 2), label)
            } catch {
                XCTFail("\(label): the genuine manifest was refused: \(error)")
            }
            XCTAssertEqual(relaunched.installed("m")?.version, "1.0.0", label)
        }
    }

    /// The example device: `init --trusted-keys FILE` follows the rotation (exit 0) and
    /// exits 1 for a revoked key's manifest; with `--public-key` too, `init` exits 2.
    func testExampleDeviceTrustedKeys() throws {
        let site = try Site()
        let device = modelcastBinary.replacingOccurrences(of: "/modelcast", with: "/modelcast-device")
        try site.publish("1.0.0", [site.k1])
        try site.createKeySet()
        try site.rotateToK2()
        try site.publish("1.0.1", [site.k2])
        try site.start()
        let directory = site.work.at("phone")
        let both = try runProcess(device, ["init", "--dir", directory, "--manifest-url", site.base + "/manifest.json",
                                           "--trusted-keys", site.root + "/keys/1.json", "--public-key", site.k1.pub])
        XCTAssertEqual(both.status, 2, both.stderr)
        let initialized = try runProcess(device, ["init", "--dir", directory, "--manifest-url", site.base + "/manifest.json",
                                                  "--trusted-keys", site.root + "/keys/1.json"])
        XCTAssertEqual(initialized.status, 0, initialized.stderr)
        let updated = try runProcess(device, ["update", "--dir", directory])
        XCTAssertEqual(updated.status, 0, updated.stderr)
        try site.forge(signer: site.k1)
        let refused = try runProcess(device, ["update", "--dir", site.work.at("phone2")])
        XCTAssertNotEqual(refused.status, 0)
        let fresh = try runProcess(device, ["init", "--dir", site.work.at("phone2"), "--manifest-url", site.base + "/manifest.json",
                                            "--trusted-keys", site.root + "/keys/1.json"])
        XCTAssertEqual(fresh.status, 0, fresh.stderr)
        let revoked = try runProcess(device, ["update", "--dir", site.work.at("phone2")])
        XCTAssertEqual(revoked.status, 1, revoked.stderr)
        XCTAssertTrue(revoked.stderr.contains("not signed by enough manifest keys of key set 2"), revoked.stderr)
    }
}
