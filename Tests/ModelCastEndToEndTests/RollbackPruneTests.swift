import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// A device as each seed app keeps it: what it installed and how it decides to update.
struct Device {
    enum Rule {
        /// NomLens: download when `version` differs from the stored one.
        case equality
        /// ContextSDK: download when the url's file name is not on the device.
        case latest
        /// The OTA article's client: `current_version > stored`, compared as strings.
        case tiers(tier: String)
        /// The same client also acting on the rollback fields: if the server's
        /// current_version is below its own, install rollback_url_<tier>.
        case tiersRollbackAware(tier: String)
        /// PE Core catalog: each model's version compared with the cached one.
        case catalog(model: String)
        /// modelcast format: accept only a higher sequence, then install changed models.
        case sequence(model: String)
    }

    let rule: Rule
    var version: String?
    var sequence: Int64 = 0
    var fileNames: Set<String> = []
    /// SHA-256 of the model bytes installed (checked against the manifest before install).
    var installed: String?

    init(_ rule: Rule) { self.rule = rule }

    /// Fetches the manifest and acts on it as the app would.
    mutating func check(manifestURL: String, fetch: (String) throws -> Data) throws {
        let manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: try fetch(manifestURL)) as? [String: Any])
        func install(url: String, sha256: String, version: String?) throws {
            let bytes = try fetch(url)
            let digest = try SHA256Hasher.digest(bytes).hex
            guard digest == sha256 else { throw NSError(domain: "Device", code: 1, userInfo: [NSLocalizedDescriptionKey: "hash mismatch for \(url)"]) }
            installed = digest
            self.version = version
            fileNames.insert((url as NSString).lastPathComponent)
        }
        switch rule {
        case .equality:
            let version = manifest["version"] as! String
            if version != self.version { try install(url: manifest["url"] as! String, sha256: manifest["sha256"] as! String, version: version) }
        case .latest:
            let url = manifest["url"] as! String
            if !fileNames.contains((url as NSString).lastPathComponent) {
                let bytes = try fetch(url)
                installed = try SHA256Hasher.digest(bytes).hex
                // The app then deletes every other model file (deleteAllOutdatedModels).
                fileNames = [(url as NSString).lastPathComponent]
            }
        case .tiers(let tier), .tiersRollbackAware(let tier):
            let current = manifest["current_version"] as! String
            let stored = version ?? "0.0.0"
            let model = (manifest["models"] as! [String: Any])[tier] as! [String: Any]
            if current > stored {
                try install(url: model["url"] as! String, sha256: model["sha256"] as! String, version: current)
            } else if case .tiersRollbackAware = rule, stored > current, let rollback = manifest["rollback_version"] as? String,
                      let url = manifest["rollback_url_\(tier)"] as? String, rollback != stored {
                // The rollback fields carry no hash; the current entry names the same version's.
                let sha = rollback == current ? model["sha256"] as! String : try SHA256Hasher.digest(try fetch(url)).hex
                try install(url: url, sha256: sha, version: rollback)
            }
        case .catalog(let name):
            let model = (manifest["models"] as! [String: Any])[name] as! [String: Any]
            let version = model["version"] as! String
            if version != self.version {
                try install(url: model["url"] as! String, sha256: String((model["checksum"] as! String).dropFirst("sha256:".count)), version: version)
            }
        case .sequence(let name):
            let sequence = manifest["sequence"] as! Int64
            guard sequence > self.sequence else { return }
            self.sequence = sequence
            let model = (manifest["models"] as! [String: Any])[name] as! [String: Any]
            let version = model["version"] as! String
            if version != self.version {
                let file = (model["files"] as! [[String: Any]])[0]
                try install(url: file["url"] as! String, sha256: file["sha256"] as! String, version: version)
            }
        }
    }
}

final class RollbackPruneTests: XCTestCase {
    static let versions = ["1.0.0", "1.1.0", "1.2.0"]

    /// Three distinct model files, one per version.
    func models(in scratch: Scratch) throws -> [String: (path: String, sha256: String)] {
        var result: [String: (String, String)] = [:]
        for (index, version) in Self.versions.enumerated() {
            let bytes = patternBytes(4096 + index, seed: UInt32(index + 7))
            result[version] = (try scratch.write("in/\(version)/m.bin", bytes), try SHA256Hasher.digest(bytes).hex)
        }
        return result
    }

    /// Profile-specific publish arguments for model `m` (tier `m` for tiers).
    func publishArguments(profile: String, file: String, version: String) -> [String] {
        let model = profile == "tiers" || profile == "catalog" ? ["m=" + file] : [file, "--name", "m"]
        var arguments = model + ["--version", version, "--profile", profile]
        switch profile {
        case "nomlens": arguments += ["--meta", "num_classes=3", "--meta", "class_list_version=v1", "--meta", "training_date=2026-01-01"]
        case "tiers": arguments += ["--meta", "release_notes=notes \(version)", "--min-app-version", "2.0.0"]
        case "catalog": arguments += ["--meta", "features=vision", "--meta", "hardware.neuralEngine=true", "--meta", "hardware.gpu=true",
                                      "--meta", "hardware.cpu=true", "--min-app-version", "2.0.0",
                                      "--prototypes", repositoryRoot + "/examples/catalog/prototypes-v2.1.0.json"]
        default: break
        }
        return arguments
    }

    func rules(for profile: String) -> [Device.Rule] {
        switch profile {
        case "nomlens": return [.equality]
        case "latest": return [.latest]
        case "tiers": return [.tiers(tier: "m"), .tiersRollbackAware(tier: "m")]
        case "catalog": return [.catalog(model: "m")]
        default: return [.sequence(model: "m")]
        }
    }

    /// In every profile, a device on 1.2.0 ends up running 1.0.0's bytes after
    /// `rollback --to 1.0.0` (tiers' string-> client only with --bump), and a fresh
    /// device installs 1.0.0 too.
    func testRollbackMovesEveryProfilesClientsInADirectory() throws {
        let scratch = try Scratch()
        let inputs = try models(in: scratch)
        let base = "https://cdn.example.com/m"
        for profile in ["modelcast", "nomlens", "tiers", "catalog", "latest"] {
            let site = scratch.at("site-\(profile)")
            let fetch: (String) throws -> Data = { url in
                XCTAssertTrue(url.hasPrefix(base + "/"), url)
                return try Data(contentsOf: URL(fileURLWithPath: site + "/" + url.dropFirst(base.count + 1)))
            }
            var devices = rules(for: profile).map(Device.init)
            for (index, version) in Self.versions.enumerated() {
                let result = try modelcast(["publish"] + publishArguments(profile: profile, file: inputs[version]!.path, version: version)
                                           + ["--base-url", base, "--to", site], environment: epoch(index))
                XCTAssertEqual(result.status, 0, "\(profile) \(version): \(result.stderr)")
                for index in devices.indices { try devices[index].check(manifestURL: base + "/manifest.json", fetch: fetch) }
            }
            for device in devices { XCTAssertEqual(device.installed, inputs["1.2.0"]!.sha256, "\(profile) \(device.rule) before rollback") }

            let rollback = try modelcast(["rollback", site, "--version", "1.0.0"], environment: epoch(3))
            XCTAssertEqual(rollback.status, 0, "\(profile): \(rollback.stderr)")
            XCTAssertTrue(rollback.stdout.contains("rolled back to 1.0.0: published sequence 4"), rollback.stdout)
            for index in devices.indices { try devices[index].check(manifestURL: base + "/manifest.json", fetch: fetch) }
            var fresh = Device(rules(for: profile)[0])
            try fresh.check(manifestURL: base + "/manifest.json", fetch: fetch)
            XCTAssertEqual(fresh.installed, inputs["1.0.0"]!.sha256, "\(profile): a new install gets the rollback version")

            for device in devices {
                if case .tiers = device.rule {
                    // The stock tiers client never goes down: that is what --bump is for.
                    XCTAssertEqual(device.installed, inputs["1.2.0"]!.sha256, "tiers string > client without --bump")
                    XCTAssertTrue(rollback.stderr.contains("--bump republishes 1.0.0's bytes"), rollback.stderr)
                } else {
                    XCTAssertEqual(device.installed, inputs["1.0.0"]!.sha256, "\(profile) \(device.rule) after rollback")
                }
            }
            if profile == "tiers" {
                let bump = try modelcast(["rollback", site, "--version", "1.0.0", "--bump"], environment: epoch(4))
                XCTAssertEqual(bump.status, 0, bump.stderr)
                XCTAssertTrue(bump.stderr.contains("republishing the bytes of 1.0.0 as version 1.2.1"), bump.stderr)
                for index in devices.indices { try devices[index].check(manifestURL: base + "/manifest.json", fetch: fetch) }
                for device in devices { XCTAssertEqual(device.installed, inputs["1.0.0"]!.sha256, "tiers \(device.rule) after --bump") }
                let manifest = try String(contentsOfFile: site + "/manifest.json", encoding: .utf8)
                XCTAssertTrue(manifest.contains("\"current_version\": \"1.2.1\""), manifest)
                XCTAssertTrue(manifest.contains("\"rollback_version\": \"1.0.0\""), manifest)
                // A bump never copies: the manifest names 1.0.0's immutable objects.
                XCTAssertFalse(FileManager.default.fileExists(atPath: site + "/models/m/1.2.1"))
            }
            if profile == "modelcast" {
                let manifest = try Release.decode(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), source: "live")
                XCTAssertEqual(manifest.sequence, 4)
                XCTAssertEqual(manifest.replaces, 3)
                XCTAssertEqual(manifest.models["m"]?.version, "1.0.0")
                XCTAssertEqual(manifest.rollback?.sequence, 1, "the rollback fields name the release returned to")
            }
            // The rollback went through the publish path: it verifies, and its record is in the history.
            let verify = try modelcast(["verify", site])
            XCTAssertEqual(verify.status, 0, "\(profile): \(verify.stdout)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: site + "/manifests/00000004.json"))
        }
    }

    /// Bad rollbacks fail, name the value, and leave the target exactly as it was.
    func testRollbackRefusals() throws {
        let scratch = try Scratch()
        let inputs = try models(in: scratch)
        let site = scratch.at("site")
        let base = "https://cdn.example.com/m"
        // Nothing there: every command says so by name, and none creates the directory.
        for (arguments, message) in [
            (["rollback", site, "--version", "1.0.0"], "nothing is published at \(site)/manifest.json: there is nothing to roll back"),
            (["prune", site, "--keep", "1"], "no manifest at \(site)/manifest.json"),
            (["resign", site, "--expires-in", "1d"], "nothing is published at \(site)/manifest.json: there is nothing to re-sign"),
            (["history", site], "no release history at \(site)/manifests/: nothing is published there"),
        ] {
            let result = try modelcast(arguments)
            XCTAssertEqual(result.status, 1, "\(arguments)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: site), "\(arguments) created the target")
        }
        for (index, version) in Self.versions.enumerated() {
            let result = try modelcast(["publish", inputs[version]!.path, "--name", "m", "--version", version, "--base-url", base, "--to", site], environment: epoch(index))
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        // A record whose manifest never went live (its publish died before the manifest write).
        var orphan = try Release.decode(try Data(contentsOf: URL(fileURLWithPath: site + "/manifests/00000003.json")), source: "r")
        orphan.sequence = 4
        orphan.models["m"]!.version = "1.3.0"
        orphan.replaces = 3
        try scratch.write("site/manifests/00000004.json", text: orphan.jsonValue().serialized())
        try FileManager.default.removeItem(atPath: site + "/models/m/1.1.0/m.bin")
        let before = try snapshot(site)

        // history shows what rollback can return to.
        let history = try modelcast(["history", site, "--json"])
        XCTAssertEqual(history.status, 0, history.stderr)
        let entries = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any])?["releases"] as? [[String: Any]])
        XCTAssertEqual(entries.map { $0["sequence"] as? Int }, [4, 3, 2, 1])
        XCTAssertEqual(entries.map { $0["state"] as? String }, ["pending", "live", "went live", "went live"])
        XCTAssertEqual(entries.map { ($0["versions"] as? [String: String])?["m"] }, ["1.3.0", "1.2.0", "1.1.0", "1.0.0"])
        let table = try modelcast(["history", site])
        XCTAssertTrue(table.stdout.contains("       3  2026-09-21T16:13:20Z  live        m 1.2.0"), table.stdout)

        let cases: [([String], String)] = [
            (["--version", "2.0.0"], "version 2.0.0 is not in the publish history of \(site) (never published there, or pruned); versions that went live: 1.0.0, 1.1.0, 1.2.0"),
            (["--version", "1.0"], "--version '1.0' is not a semantic version"),
            (["--version", "1.3.0"], "version 1.3.0 was recorded as sequence 4 but never went live"),
            (["--version", "1.1.0"], "cannot roll back to 1.1.0: \(site)/models/m/1.1.0/m.bin (model m 1.1.0) is gone from the target"),
            (["--version", "1.0.0", "--model", "x"], "model x is not in the live release at \(site) (it has m)"),
            (["--version", "1.0.0", "--bump-to", "1.2.0"], "--bump-to 1.2.0 must be higher than the live version 1.2.0 of model m"),
            (["--version", "1.0.0", "--bump-to", "1.10.0"], "--bump-to 1.10.0 must be higher than the live version 1.2.0 of model m, both as a semantic version and as a string"),
            (["--version", "1.0.0", "--manifest-cache-control", "max-age=86400"], "manifest Cache-Control 'max-age=86400' is refused"),
            (["--version", "1.0.0", "--bump-to", "1.3.0"], "--bump-to 1.3.0: that version was already published; pick one never used"),
            (["--version", "1.0.0", "--bump-to", "2.0"], "--bump-to '2.0' is not a semantic version"),
            (["--version", "1.0.0", "--base-url", "ftp://x"], "base URL 'ftp://x' must start with https://"),
        ]
        for (arguments, message) in cases {
            let result = try modelcast(["rollback", site] + arguments)
            XCTAssertEqual(result.status, 1, "\(arguments): \(result.stdout)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertEqual(try snapshot(site), before, "\(arguments) changed the target")
        }
        // Rolling back to what is live writes nothing; a dry run writes nothing either.
        let same = try modelcast(["rollback", site, "--version", "1.2.0"])
        XCTAssertEqual(same.status, 0, same.stderr)
        // Said once, on stdout (issue 47: it was said on both streams).
        XCTAssertTrue(same.stdout.contains("unchanged: \(site) already serves this release (sequence 3); nothing was written"), same.stdout)
        XCTAssertEqual((same.stdout + same.stderr).components(separatedBy: "nothing was written").count - 1, 1, same.stdout + same.stderr)
        let dry = try modelcast(["rollback", site, "--version", "1.0.0", "--dry-run"])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        XCTAssertTrue(dry.stdout.contains("dry run: would roll back to 1.0.0 with sequence 5"), dry.stdout)
        XCTAssertEqual(try snapshot(site), before)
    }

    /// After a rollback, a version that went live before still means its files: publishing
    /// it again with other bytes is refused (equality clients that have it would never update).
    /// Bad command-line values are refused before anything is written.
    func testVersionsKeepTheirFilesAcrossRollbacksAndBadOptionsAreRefusedEarly() throws {
        let scratch = try Scratch()
        let inputs = try models(in: scratch)
        let site = scratch.at("site")
        let base = "https://cdn.example.com/m"
        for (index, version) in ["1.0.0", "1.1.0"].enumerated() {
            XCTAssertEqual(try modelcast(["publish", inputs[version]!.path, "--name", "m", "--version", version, "--base-url", base, "--to", site], environment: epoch(index)).status, 0)
        }
        XCTAssertEqual(try modelcast(["rollback", site, "--version", "1.0.0"], environment: epoch(2)).status, 0)
        let before = try snapshot(site)
        let other = inputs["1.2.0"]!.path
        for (arguments, message) in [
            (["publish", other, "--name", "m", "--version", "1.1.0", "--base-url", base, "--to", site],
             "version 1.1.0 of model m is already published with different files; publish a new version instead"),
            (["publish", other, "--name", "m", "--version", "1.2.0", "--base-url", base, "--to", site, "--verify-url", "cdn.example.com"],
             "base URL 'cdn.example.com' must start with https://"),
            (["publish", other, "--name", "m", "--version", "1.2.0", "--base-url", base, "--to", site, "--templates", scratch.at("no-templates")],
             scratch.at("no-templates")),
            (["rollback", site, "--version", "1.1.0", "--manifest-key", "catalog"], "manifest key 'catalog' must end in .json"),
            (["prune", site, "--keep", "1", "--manifest-key", "models/x.json"], "manifest key 'models/x.json' must end in .json and not live under models/"),
            (["history", site, "--manifest-key", "../x.json"], "invalid object key '../x.json'"),
        ] {
            let result = try modelcast(arguments, environment: epoch(3))
            XCTAssertNotEqual(result.status, 0, "\(arguments)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertEqual(try snapshot(site), before, "\(arguments) changed the target")
        }
        // The same bytes under that version are a re-publish the history accepts.
        let same = try modelcast(["publish", inputs["1.1.0"]!.path, "--name", "m", "--version", "1.1.0", "--base-url", base, "--to", site], environment: epoch(3))
        XCTAssertEqual(same.status, 0, same.stderr)
    }

    /// A multi-model release: --model rolls back one model and leaves the other live;
    /// without it, a version only one model had is refused with a pointer to --model.
    func testRollbackOneModelOfSeveral() throws {
        let scratch = try Scratch()
        let site = scratch.at("site")
        let base = "https://cdn.example.com/m"
        var digests: [String: String] = [:]
        for (index, (versionA, versionB)) in [("1.0.0", "2.0.0"), ("1.1.0", "2.1.0")].enumerated() {
            let a = patternBytes(3000, seed: UInt32(10 + index)), b = patternBytes(3000, seed: UInt32(20 + index))
            digests["a" + versionA] = try SHA256Hasher.digest(a).hex
            digests["b" + versionB] = try SHA256Hasher.digest(b).hex
            let config = """
                base_url: \(base)
                models:
                  a:
                    version: \(versionA)
                    files: [\(try scratch.write("in/\(index)/a.bin", a))]
                  b:
                    version: \(versionB)
                    files: [\(try scratch.write("in/\(index)/b.bin", b))]
                """
            let result = try modelcast(["publish", "--config", try scratch.write("c\(index).yml", text: config), "--to", site], environment: epoch(index))
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let before = try snapshot(site)
        let ambiguous = try modelcast(["rollback", site, "--version", "1.0.0"])
        XCTAssertEqual(ambiguous.status, 1)
        XCTAssertTrue(ambiguous.stderr.contains("version 1.0.0 went live only for model a (the release had other versions too); roll back one model with --model a"), ambiguous.stderr)
        XCTAssertEqual(try snapshot(site), before)

        let one = try modelcast(["rollback", site, "--version", "1.0.0", "--model", "a"], environment: epoch(2))
        XCTAssertEqual(one.status, 0, one.stderr)
        let live = try Release.decode(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), source: "live")
        XCTAssertEqual(live.models["a"]?.version, "1.0.0")
        XCTAssertEqual(live.models["a"]?.files.first?.sha256, digests["a1.0.0"])
        XCTAssertEqual(live.models["b"]?.version, "2.1.0", "the other model stays as it was live")
        XCTAssertEqual(live.models["b"]?.files.first?.sha256, digests["b2.1.0"])
        XCTAssertEqual(live.rollback?.models.keys.sorted(), ["a"])
        var device = Device(.sequence(model: "a"))
        device.sequence = 2
        device.version = "1.1.0"
        try device.check(manifestURL: base + "/manifest.json") { url in
            try Data(contentsOf: URL(fileURLWithPath: site + "/" + url.dropFirst(base.count + 1)))
        }
        XCTAssertEqual(device.installed, digests["a1.0.0"])
    }

    /// prune keeps the live release, its rollback target and the kept window; a
    /// rollback target older than the window survives, and both manifests still verify.
    func testPruneKeepsTheLiveReleaseAndItsRollbackTarget() throws {
        let scratch = try Scratch()
        let inputs = try models(in: scratch)
        let site = scratch.at("site")
        let base = "https://cdn.example.com/m"
        for (index, version) in Self.versions.enumerated() {
            let result = try modelcast(["publish", inputs[version]!.path, "--name", "m", "--version", version, "--base-url", base, "--to", site], environment: epoch(index))
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        XCTAssertEqual(try modelcast(["rollback", site, "--version", "1.0.0"], environment: epoch(3)).status, 0)
        let before = try snapshot(site)

        let dry = try modelcast(["prune", site, "--keep", "1", "--dry-run", "--json"])
        XCTAssertEqual(dry.status, 0, dry.stderr)
        let plan = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(dry.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(plan["kept_sequences"] as? [Int], [1, 4], "the live release (4) and its rollback target (1)")
        XCTAssertEqual(plan["deleted"] as? [String], [
            "models/m/1.1.0/m.bin", "models/m/1.2.0/m.bin", "manifests/00000002.json", "manifests/00000003.json",
        ])
        XCTAssertEqual(try snapshot(site), before, "a dry run deletes nothing")

        for (bad, message) in [
            (["--keep", "0"], "--keep 0 would delete the live release: keep at least 1"),
            (["--keep=-1"], "--keep -1 would delete the live release: keep at least 1"),
            (["--keep", "1", "--abort-uploads-older-than", "1d"], "--abort-uploads-older-than applies to s3:// targets, not the directory \(site)"),
        ] {
            let result = try modelcast(["prune", site] + bad)
            XCTAssertNotEqual(result.status, 0, "\(bad)")
            XCTAssertTrue(result.stderr.contains(message), "\(bad): \(result.stderr)")
            XCTAssertEqual(try snapshot(site), before)
        }

        let pruned = try modelcast(["prune", site, "--keep", "1"])
        XCTAssertEqual(pruned.status, 0, pruned.stderr)
        XCTAssertTrue(pruned.stdout.contains("deleted 4 objects, \(4097 + 4098) bytes of artifacts"), pruned.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: site + "/models/m/1.0.0/m.bin"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: site + "/models/m/1.2.0"), "emptied directories go too")
        let objects = try String(contentsOfFile: site + "/_modelcast/objects.json", encoding: .utf8)
        XCTAssertFalse(objects.contains("1.2.0"), "the hosting files no longer list pruned objects")
        let verify = try modelcast(["verify", site])
        XCTAssertEqual(verify.status, 0, verify.stdout)
        // Rolling back again to the kept rollback target still works; to a pruned one it is refused by name.
        XCTAssertEqual(try modelcast(["rollback", site, "--version", "1.2.0"]).stderr.contains("not in the publish history"), true)

        // Pruning again changes nothing.
        let again = try modelcast(["prune", site, "--keep", "1"])
        XCTAssertTrue(again.stdout.contains("deleted 0 objects"), again.stdout)

        let hand = try scratch.write("site/manifest.json", text: "{\"version\": \"9\"}\n")
        let refused = try modelcast(["prune", site, "--keep", "1"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("the live manifest at \(site)/manifest.json matches no history record"), refused.stderr)
        _ = hand
    }

    /// An object prune keeps only because a kept record's rollback section names it
    /// (the release before the oldest kept one) is still listed in the hosting files, so
    /// serve serves it and the upload scripts upload it.
    func testObjectsAKeptRollbackSectionNamesStayListed() throws {
        let scratch = try Scratch()
        let inputs = try models(in: scratch)
        let site = scratch.at("site")
        for (index, version) in Self.versions.enumerated() {
            let result = try modelcast(["publish", inputs[version]!.path, "--name", "m", "--version", version,
                                        "--base-url", "https://cdn.example.com/m", "--to", site], environment: epoch(index))
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let pruned = try modelcast(["prune", site, "--keep", "2"])
        XCTAssertEqual(pruned.status, 0, pruned.stderr)
        let kept = "models/m/\(Self.versions[0])/m.bin"
        XCTAssertTrue(FileManager.default.fileExists(atPath: site + "/" + kept), "record 2's rollback section names it")
        let objects = try String(contentsOfFile: site + "/_modelcast/objects.json", encoding: .utf8)
        XCTAssertTrue(objects.contains("\"\(kept)\"") || objects.contains("\"\(kept.replacingOccurrences(of: "/", with: "\\/"))\""), objects)
        XCTAssertEqual(try modelcast(["verify", site]).status, 0)
    }

    /// The same on S3: three publishes, rollback, a device reading through the public
    /// URL, prune with the rollback target present, and a stale multipart upload aborted.
    func testRollbackAndPruneOnS3() throws {
        let moto = try MotoS3(checkSignatures: false)  // anonymous GETs for the device
        try moto.allowPublicReads()
        let scratch = try Scratch()
        let inputs = try models(in: scratch)
        let target = "s3://\(moto.bucket)/ml"
        let base = "\(moto.endpoint)/\(moto.bucket)/ml"
        func run(_ arguments: [String], _ index: Int = 0) throws -> ProcessOutput {
            let environment = pinnedEnvironment(moto.environment, epoch: 1_790_000_000 + index * 3600)
            return try modelcast(arguments, environment: environment)
        }
        let fetch: (String) throws -> Data = { url in
            let file = scratch.at("download")
            let result = try runProcess("/usr/bin/env", ["curl", "-sf", "-o", file, url])
            guard result.status == 0 else { throw NSError(domain: "curl", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: url]) }
            return try Data(contentsOf: URL(fileURLWithPath: file))
        }
        // Every profile, each under its own prefix; the modelcast one (ml) is pruned below.
        for profile in ["modelcast", "nomlens", "tiers", "catalog", "latest"] {
            let prefix = profile == "modelcast" ? "ml" : "ml-\(profile)"
            let base = "\(moto.endpoint)/\(moto.bucket)/\(prefix)"
            var devices = rules(for: profile).map(Device.init)
            for (index, version) in Self.versions.enumerated() {
                let result = try run(["publish"] + publishArguments(profile: profile, file: inputs[version]!.path, version: version)
                                     + ["--base-url", base, "--to", "s3://\(moto.bucket)/\(prefix)"], index)
                XCTAssertEqual(result.status, 0, "\(profile): \(result.stderr)")
                for index in devices.indices { try devices[index].check(manifestURL: base + "/manifest.json", fetch: fetch) }
            }
            for device in devices { XCTAssertEqual(device.installed, inputs["1.2.0"]!.sha256, "\(profile) \(device.rule)") }
            // Gated like a publish: the staged rollback is verified through the public URL first.
            let rollback = try run(["rollback", "s3://\(moto.bucket)/\(prefix)", "--version", "1.0.0", "--verify-url", base] + (profile == "tiers" ? ["--bump"] : []), 3)
            XCTAssertEqual(rollback.status, 0, "\(profile): \(rollback.stderr)")
            XCTAssertTrue(rollback.stderr.contains("verified the staged release through \(base)"), rollback.stderr)
            for index in devices.indices {
                try devices[index].check(manifestURL: base + "/manifest.json", fetch: fetch)
                XCTAssertEqual(devices[index].installed, inputs["1.0.0"]!.sha256, "\(profile) \(devices[index].rule) after rollback")
            }
            if profile == "modelcast" { XCTAssertEqual(devices[0].sequence, 4) }
        }

        // A publish killed mid-upload leaves a multipart upload behind.
        let upload = try moto.awsCLI(["s3api", "create-multipart-upload", "--bucket", moto.bucket, "--key", "ml/models/m/9.9.9/m.bin"])
        XCTAssertTrue(upload.contains("UploadId"), upload)

        let pruned = try run(["prune", target, "--keep", "1", "--abort-uploads-older-than", "1s", "--json"])
        XCTAssertEqual(pruned.status, 0, pruned.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(pruned.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["kept_sequences"] as? [Int], [1, 4])
        XCTAssertEqual((report["aborted_uploads"] as? [String])?.count, 1, pruned.stdout)
        let keys = Set(try moto.listing().keys.filter { $0.hasPrefix("ml/") })
        XCTAssertEqual(keys, ["ml/manifest.json", "ml/manifests/00000001.json", "ml/manifests/00000004.json", "ml/models/m/1.0.0/m.bin",
                              "ml/_modelcast/history-index.json"])
        let index = try XCTUnwrap(try JSONSerialization.jsonObject(with: try moto.download("ml/_modelcast/history-index.json")) as? [String: Any])
        XCTAssertEqual((index["records"] as? [[String: Any]])?.compactMap { $0["sequence"] as? Int }, [1, 4], "the index names the kept records")
        let pending = try moto.awsCLI(["s3api", "list-multipart-uploads", "--bucket", moto.bucket])
        XCTAssertFalse(pending.contains("9.9.9"), pending)

        var fresh = Device(.sequence(model: "m"))
        try fresh.check(manifestURL: base + "/manifest.json", fetch: fetch)
        XCTAssertEqual(fresh.installed, inputs["1.0.0"]!.sha256)
        let verify = try modelcast(["verify", base + "/manifest.json", "--allow-http"])
        XCTAssertEqual(verify.status, 0, verify.stdout)
    }

    func epoch(_ index: Int) -> [String: String] {
        let environment = pinnedEnvironment(epoch: 1_790_000_000 + index * 3600)
        return environment
    }
}
