import Foundation
import XCTest
import ModelCastFormat
import ModelCastCore
import ModelCastTestSupport

/// Issue 44, item 3: every go-live command proves every object the release it makes live
/// names — artifacts, segment indexes and model-signature bundles, of the release and of
/// its rollback section (a rollback's target, a rollout's fallback) — and refuses, naming
/// the object, when one is missing or holds other bytes, with the live manifest left as it
/// was. An unchanged re-publish puts back what it has the bytes for; verify checks all of it.
final class GoLiveProofTests: XCTestCase {
    struct Keys {
        let secret: String, modelSigning: String, modelSigningPublic: String
    }

    /// How an object is damaged.
    enum Damage: String, CaseIterable {
        /// Deleted.
        case missing
        /// Other bytes: an artifact one byte longer (a changed size: a take-over checks
        /// sizes), a segment index or bundle with its last byte flipped (same size).
        case changed
    }

    func keys(_ work: Scratch) throws -> Keys {
        let minisign = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")])
        XCTAssertEqual(minisign.status, 0, minisign.stderr)
        let signing = try modelcast(["keygen", "--model-signing", "--unencrypted", "--private-key", work.at("ms.pem"), "--public-key", work.at("ms.pub")])
        XCTAssertEqual(signing.status, 0, signing.stderr)
        return Keys(secret: work.at("k.key"), modelSigning: work.at("ms.pem"), modelSigningPublic: work.at("ms.pub"))
    }

    /// The flags every publish of these targets takes: signed, model-signed, indexed.
    func publishFlags(_ keys: Keys, base: String) -> [String] {
        ["--base-url", base, "--sign", keys.secret, "--model-signing-key", keys.modelSigning, "--segment-index", "always"]
    }

    /// Publishes model m 1.0.0 (record 1) to stable, the same to beta, then 2.0.0 (record 2)
    /// to stable — as a plain release, or as a staged rollout of 10 %.
    func makeTarget(_ target: String, work: Scratch, keys: Keys, rollout: Bool, environment: [String: String]? = nil) throws {
        let base = "https://cdn.example.com/p"
        let v1 = try work.write("in/v1/m.bin", patternBytes(7000, seed: 1))
        let v2 = try work.write("in/v2/m.bin", patternBytes(7000, seed: 2))
        var env = environment ?? pinnedEnvironment()
        for (file, version, extra, epoch) in [(v1, "1.0.0", [String](), 1_790_000_000), (v1, "1.0.0", ["--channel", "beta"], 1_790_000_010),
                                               (v2, "2.0.0", rollout ? ["--rollout", "10"] : [], 1_790_000_020)] {
            env["SOURCE_DATE_EPOCH"] = String(epoch)
            let run = try modelcast(["publish", "m=" + file, "--version", version, "--to", target] + publishFlags(keys, base: base) + extra, environment: env)
            XCTAssertEqual(run.status, 0, run.stderr)
        }
    }

    /// The objects of version `version` of model m (its release section as first published)
    /// in the stable channel, or in beta (there 1.0.0 has a model signature of its own).
    func objects(of version: String, in site: String, channel: String = "stable") throws -> [ReleaseObject] {
        let folder = channel == "stable" ? "/manifests/" : "/manifests/channels/\(channel)/"
        let record = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site + folder + "0000000\(version == "1.0.0" ? 1 : 2).json")), source: version)
        return record.objects.filter { $0.section == .release }
    }

    /// Every go-live command under test: its name, the target it runs on (`plain`: 2.0.0
    /// live over 1.0.0, with 1.0.0 live on beta; `rolling`: 2.0.0 rolling out over 1.0.0),
    /// the versions whose objects the release it makes live names (`beta:V` is the beta
    /// channel's record of V, whose model signature is its own), and its arguments for a target.
    func goLiveCommands(plain: String, rolling: String, keys: Keys, work: Scratch) throws
        -> [(name: String, pristine: String, versions: [String], arguments: (String) -> [String])] {
        let v3 = try work.write("in/v3/m.bin", patternBytes(7000, seed: 3))
        let base = "https://cdn.example.com/p"
        return [
            ("resign", plain, ["2.0.0", "1.0.0"], { ["resign", $0, "--sign", keys.secret] }),
            ("rollback", plain, ["1.0.0"], { ["rollback", $0, "--version", "1.0.0", "--sign", keys.secret] }),
            ("promote", plain, ["2.0.0", "beta:1.0.0"], { ["promote", $0, "--from", "stable", "--to", "beta", "--sign", keys.secret] }),
            ("publish", plain, ["2.0.0"], { ["publish", "m=" + v3, "--version", "3.0.0", "--to", $0] + self.publishFlags(keys, base: base) }),
            ("publish --rollout", plain, ["2.0.0"], { ["publish", "m=" + v3, "--version", "3.0.0", "--to", $0, "--rollout", "50"] + self.publishFlags(keys, base: base) }),
            ("rollout --percent", rolling, ["2.0.0", "1.0.0"], { ["rollout", $0, "--percent", "50", "--sign", keys.secret] }),
            ("rollout --halt", rolling, ["1.0.0"], { ["rollout", $0, "--halt", "--sign", keys.secret] }),
            ("rollout --complete", rolling, ["2.0.0"], { ["rollout", $0, "--complete", "--sign", keys.secret] }),
        ]
    }

    /// The damaged bytes of an object (`Damage.changed`).
    func changed(_ bytes: Data, kind: ReleaseObject.Kind) -> Data {
        var bytes = bytes
        if kind == .artifact { bytes.append(0x21) } else { bytes[bytes.count - 1] ^= 0x01 }
        return bytes
    }

    func damage(_ path: String, kind: ReleaseObject.Kind, _ damage: Damage) throws {
        switch damage {
        case .missing:
            try FileManager.default.removeItem(atPath: path)
        case .changed:
            let bytes = changed(try Data(contentsOf: URL(fileURLWithPath: path)), kind: kind)
            // A new inode, as a tool rewriting the file would leave it.
            try FileManager.default.removeItem(atPath: path)
            try bytes.write(to: URL(fileURLWithPath: path))
        }
    }

    /// Every go-live command × every object kind of the release it names (and of its
    /// rollback section) × missing or changed, on a directory: refused, naming the key,
    /// nothing live changed.
    func testEveryGoLiveCommandRefusesAMissingOrChangedObjectOnADirectory() throws {
        let work = try Scratch()
        let keys = try keys(work)
        let plain = work.at("plain"), rolling = work.at("rolling")
        try makeTarget(plain, work: work, keys: keys, rollout: false)
        try makeTarget(rolling, work: work, keys: keys, rollout: true)
        let commands = try goLiveCommands(plain: plain, rolling: rolling, keys: keys, work: work)
        var cases = 0
        for command in commands {
            for version in command.versions {
                let (channel, number) = version.hasPrefix("beta:") ? ("beta", String(version.dropFirst(5))) : ("stable", version)
                for object in try objects(of: number, in: command.pristine, channel: channel) {
                    for damage in Damage.allCases {
                        let site = work.at("case\(cases)")
                        cases += 1
                        let copy = try runProcess("/bin/cp", ["-a", command.pristine, site])
                        XCTAssertEqual(copy.status, 0, copy.stderr)
                        let label = "\(command.name), \(object.label) (\(object.key)) \(damage.rawValue)"
                        let before = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))
                        try self.damage(site + "/" + object.key, kind: object.kind, damage)
                        let run = try modelcast(command.arguments(site), environment: pinnedEnvironment(epoch: 1_790_000_100))
                        XCTAssertEqual(run.status, 1, "\(label): \(run.stderr)")
                        XCTAssertTrue(run.stderr.contains(object.key), "\(label) is named: \(run.stderr)")
                        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), before, "\(label): nothing went live")
                        try? FileManager.default.removeItem(atPath: site)
                    }
                }
            }
        }
        XCTAssertEqual(cases, 11 * 3 * 2, "every command, version, object kind and damage")
    }

    /// The same matrix on moto: every go-live command × every object kind of the release
    /// it names × missing or changed (other bytes uploaded with a SHA-256 checksum, as a
    /// tool would), one target of each kind; each damaged object is put back, with its
    /// headers, before the next case (a refused command writes nothing).
    func testEveryGoLiveCommandRefusesAMissingOrChangedObjectOnS3() throws {
        // moto without signature checks: the test's own reads and writes are plain curl
        // requests (an aws cli launch per request would take most of the test's time).
        let moto = try MotoS3(checkSignatures: false)
        let everyone = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject","s3:PutObject","s3:DeleteObject"],"Resource":"arn:aws:s3:::\#(moto.bucket)/*"}]}"#
        try moto.awsCLI(["s3api", "put-bucket-policy", "--bucket", moto.bucket, "--policy", everyone])
        let work = try Scratch()
        let keys = try keys(work)
        let plain = "s3://\(moto.bucket)/plain", rolling = "s3://\(moto.bucket)/rolling"
        try makeTarget(plain, work: work, keys: keys, rollout: false, environment: pinnedEnvironment(moto.environment))
        try makeTarget(rolling, work: work, keys: keys, rollout: true, environment: pinnedEnvironment(moto.environment))
        func curl(_ arguments: [String]) throws -> Data {
            let out = work.at("curl.out")
            let result = try runProcess("/usr/bin/curl", ["-sS", "-f", "-o", out] + arguments)
            XCTAssertEqual(result.status, 0, "curl \(arguments): \(result.stderr)")
            return (try? Data(contentsOf: URL(fileURLWithPath: out))) ?? Data()
        }
        func url(_ key: String) -> String { "\(moto.endpoint)/\(moto.bucket)/\(key)" }
        func upload(_ bytes: Data, _ key: String, _ object: ReleaseObject) throws {
            let file = work.at("upload.bin")
            try bytes.write(to: URL(fileURLWithPath: file))
            _ = try curl(["-X", "PUT", "--data-binary", "@" + file, "-H", "Content-Type: \(object.contentType)", "-H", "Cache-Control: \(CachePolicy.immutable)",
                          "-H", "x-amz-checksum-sha256: \(Data(try SHA256Hasher.digest(bytes).bytes).base64EncodedString())", url(key)])
        }
        var cases = 0
        for command in try goLiveCommands(plain: plain, rolling: rolling, keys: keys, work: work) {
            let prefix = String(command.pristine.dropFirst("s3://\(moto.bucket)/".count))
            let before = try curl([url(prefix + "/manifest.json")])
            for version in command.versions {
                let (folder, number) = version.hasPrefix("beta:") ? ("manifests/channels/beta/", String(version.dropFirst(5))) : ("manifests/", version)
                let record = try Release.decode(try curl([url("\(prefix)/\(folder)0000000\(number == "1.0.0" ? 1 : 2).json")]), source: version)
                for object in record.objects where object.section == .release {
                    let key = prefix + "/" + object.key
                    let original = try curl([url(key)])
                    for damage in Damage.allCases {
                        cases += 1
                        switch damage {
                        case .missing: _ = try curl(["-X", "DELETE", url(key)])
                        case .changed: try upload(changed(original, kind: object.kind), key, object)
                        }
                        let label = "\(command.name), \(object.label) (\(object.key)) \(damage.rawValue)"
                        let run = try modelcast(command.arguments(command.pristine), environment: pinnedEnvironment(moto.environment, epoch: 1_790_000_100))
                        XCTAssertEqual(run.status, 1, "\(label): \(run.stderr)")
                        XCTAssertTrue(run.stderr.contains(object.key), "\(label) is named: \(run.stderr)")
                        XCTAssertEqual(try curl([url(prefix + "/manifest.json")]), before, "\(label): nothing went live")
                        try upload(original, key, object)
                    }
                }
            }
        }
        XCTAssertEqual(cases, 11 * 3 * 2, "every command, version, object kind and damage")
        // With every object back, each target's commands go live.
        for target in [plain, rolling] {
            let resign = try modelcast(["resign", target, "--sign", keys.secret], environment: pinnedEnvironment(moto.environment, epoch: 1_790_000_200))
            XCTAssertEqual(resign.status, 0, resign.stderr)
            let verify = try modelcast(["verify", target, "--model-signing-public-key", keys.modelSigningPublic], environment: moto.environment)
            XCTAssertEqual(verify.status, 0, verify.stdout)
        }
    }

    /// A publish changing one model of a catalog on S3 takes the others' artifacts over
    /// from the live release: each must be present with its size, checked against the
    /// store's listing (a few requests, not one per model). One deleted is refused, by key.
    func testATakeOverOfACatalogOnS3IsCheckedAgainstTheListing() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let count = 30
        func config(changed: Bool) throws -> String {
            var text = "base_url: https://cdn.example.com/cat\nmodels:\n"
            for index in 0..<count {
                let version = changed && index == 0 ? "1.1.0" : "1.0.0"
                let file = try work.write("in/m\(index)-\(version).bin", patternBytes(1000 + index, seed: UInt32(index + (version == "1.1.0" ? 100 : 0))))
                text += "  m\(index):\n    version: \(version)\n    files: [\(file)]\n"
            }
            return try work.write(changed ? "changed.yml" : "catalog.yml", text: text)
        }
        let target = "s3://\(moto.bucket)/cat"
        let first = try modelcast(["publish", "--config", try config(changed: false), "--to", target], environment: pinnedEnvironment(moto.environment))
        XCTAssertEqual(first.status, 0, first.stderr)
        let gone = "models/m7/1.0.0/m7-1.0.0.bin"
        try moto.awsCLI(["s3", "rm", "--only-show-errors", "s3://\(moto.bucket)/cat/\(gone)"])
        let before = try moto.download("cat/manifest.json")
        let heads = moto.loggedRequests().filter { $0.method == "HEAD" }.count
        let changed = try config(changed: true)
        let refused = try modelcast(["publish", "--config", changed, "--to", target], environment: pinnedEnvironment(moto.environment, epoch: 1_790_000_100))
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains(gone) && refused.stderr.contains("is missing from the target"), refused.stderr)
        XCTAssertEqual(try moto.download("cat/manifest.json"), before, "nothing went live")
        XCTAssertLessThan(moto.loggedRequests().filter { $0.method == "HEAD" }.count - heads, 10, "the taken-over artifacts are not looked up one by one")
        // Put back, the change goes live.
        try moto.awsCLI(["s3", "cp", "--only-show-errors", work.at("in/m7-1.0.0.bin"), "s3://\(moto.bucket)/cat/\(gone)",
                         "--content-type", "application/octet-stream", "--cache-control", CachePolicy.immutable, "--checksum-algorithm", "SHA256"])
        let published = try modelcast(["publish", "--config", changed, "--to", target], environment: pinnedEnvironment(moto.environment, epoch: 1_790_000_100))
        XCTAssertEqual(published.status, 0, published.stderr)
    }

    /// Publishing the live release's input again restores a deleted segment index or
    /// artifact (with or without --reverify-stored), on a directory and on moto; a segment
    /// index holding other bytes is refused, naming it.
    func testAnUnchangedRepublishRestoresWhatItHasTheBytesFor() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let keys = try keys(work)
        let v2 = work.at("in/v2/m.bin")
        for onS3 in [false, true] {
            let target = onS3 ? "s3://\(moto.bucket)/r" : work.at("r")
            let environment = onS3 ? pinnedEnvironment(moto.environment) : pinnedEnvironment()
            try makeTarget(target, work: work, keys: keys, rollout: false, environment: environment)
            let record = try Release.decode(onS3 ? try moto.download("r/manifests/00000002.json")
                                                 : Data(contentsOf: URL(fileURLWithPath: target + "/manifests/00000002.json")), source: "record 2")
            for (kind, reverify) in [(ReleaseObject.Kind.segmentIndex, false), (.artifact, false), (.segmentIndex, true), (.artifact, true)] {
                let object = try XCTUnwrap(record.objects.first { $0.kind == kind && $0.section == .release })
                if onS3 {
                    try moto.awsCLI(["s3", "rm", "--only-show-errors", "s3://\(moto.bucket)/r/\(object.key)"])
                } else {
                    try FileManager.default.removeItem(atPath: target + "/" + object.key)
                }
                var env = environment
                env["SOURCE_DATE_EPOCH"] = "1790000100"
                let run = try modelcast(["publish", "m=" + v2, "--version", "2.0.0", "--to", target] + publishFlags(keys, base: "https://cdn.example.com/p")
                                        + (reverify ? ["--reverify-stored"] : []), environment: env)
                let label = "\(onS3 ? "S3" : "directory"), \(object.label) missing\(reverify ? ", --reverify-stored" : "")"
                XCTAssertEqual(run.status, 0, "\(label): \(run.stderr)")
                XCTAssertTrue(run.stdout.contains("unchanged") || run.stderr.contains("unchanged"), "\(label): \(run.stdout)")
                XCTAssertTrue(run.stderr.contains("restored") && run.stderr.contains(object.key), "\(label): \(run.stderr)")
                let bytes = onS3 ? try moto.download("r/" + object.key) : try Data(contentsOf: URL(fileURLWithPath: target + "/" + object.key))
                XCTAssertEqual(try SHA256Hasher.digest(bytes).hex, object.sha256, label)
            }
            let verify = try modelcast(["verify", target, "--allow-http", "--model-signing-public-key", keys.modelSigningPublic], environment: environment)
            XCTAssertEqual(verify.status, 0, verify.stdout)
        }
        // Other bytes under the index's key: refused, naming it.
        let site = work.at("changed")
        try makeTarget(site, work: work, keys: keys, rollout: false)
        let index = try XCTUnwrap(try objects(of: "2.0.0", in: site).first { $0.kind == .segmentIndex })
        try damage(site + "/" + index.key, kind: .segmentIndex, .changed)
        let run = try modelcast(["publish", "m=" + v2, "--version", "2.0.0", "--to", site] + publishFlags(keys, base: "https://cdn.example.com/p"),
                                environment: pinnedEnvironment(epoch: 1_790_000_100))
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains(index.key), run.stderr)
    }

    /// The same with a newcomer's flags only: a 9 MiB model gets its segment index by
    /// default (`--segment-index auto`); deleted, the same publish again puts it back.
    func testARepublishWithDefaultFlagsRestoresTheSegmentIndex() throws {
        let work = try Scratch()
        let model = try work.write("model.bin", patternBytes(9 << 20, seed: 8))
        let site = work.at("site")
        let arguments = ["publish", model, "--version", "1.0.0", "--base-url", "https://cdn.example.com/models", "--to", site]
        XCTAssertEqual(try modelcast(arguments, environment: pinnedEnvironment()).status, 0)
        let live = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), source: "manifest")
        let index = try XCTUnwrap(live.objects.first { $0.kind == .segmentIndex }, "a 9 MiB file gets an index by default")
        try FileManager.default.removeItem(atPath: site + "/" + index.key)
        let again = try modelcast(arguments, environment: pinnedEnvironment(epoch: 1_790_000_100))
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.contains("restored") && again.stderr.contains(index.key), again.stderr)
        XCTAssertTrue(again.stdout.contains("unchanged"), again.stdout)
        XCTAssertEqual(try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: site + "/" + index.key))).hex, index.sha256)
    }

    /// verify checks the rollback section's model signature and segment index: a device
    /// falling back fetches them, and one that pins the model-signing key cannot switch
    /// to a fallback whose bundle is gone.
    func testVerifyChecksTheFallbacksDerivedObjects() throws {
        let work = try Scratch()
        let keys = try keys(work)
        for kind in [ReleaseObject.Kind.modelSignature, .segmentIndex] {
            let site = work.at("site-\(kind == .modelSignature ? "bundle" : "index")")
            try makeTarget(site, work: work, keys: keys, rollout: false)
            let object = try XCTUnwrap(try objects(of: "1.0.0", in: site).first { $0.kind == kind })
            try FileManager.default.removeItem(atPath: site + "/" + object.key)
            let verify = try modelcast(["verify", site, "--allow-http", "--model-signing-public-key", keys.modelSigningPublic])
            XCTAssertEqual(verify.status, 1, "\(object.label): \(verify.stdout)")
            XCTAssertTrue(verify.stdout.contains("FAIL") && verify.stdout.contains(object.key), verify.stdout)
        }
    }

    /// Issue 44, item 7: publishing the live versions again (unchanged, or only metadata
    /// changed) stages no copy of the models, so it works on a disk with no room for one:
    /// here the process may write no file over 256 KiB (`ulimit -f`), and the models are
    /// a 2 MiB file and a directory zipped to about 2 MiB.
    func testARepublishOfTheLiveVersionsNeedsNoRoomForACopy() throws {
        let work = try Scratch()
        let file = try work.write("in/big.bin", patternBytes(2 << 20, seed: 5))
        try work.mkdir("in/Pack")
        try work.write("in/Pack/weights.bin", patternBytes(2 << 20, seed: 6))
        let site = work.at("site")
        let models = ["big=" + file, "pack=" + work.at("in/Pack")]
        let first = try modelcast(["publish"] + models + ["--version", "1.0.0", "--base-url", "https://cdn.example.com/p", "--to", site], environment: pinnedEnvironment())
        XCTAssertEqual(first.status, 0, first.stderr)
        func limited(_ extra: [String]) throws -> ProcessOutput {
            let arguments = (["publish"] + models + ["--version", "1.0.0", "--base-url", "https://cdn.example.com/p", "--to", site] + extra)
                .map { "'" + $0 + "'" }.joined(separator: " ")
            return try runProcess("/bin/bash", ["-c", "ulimit -f 256; exec '\(modelcastBinary)' \(arguments)"], environment: pinnedEnvironment(epoch: 1_790_000_100))
        }
        let unchanged = try limited([])
        XCTAssertEqual(unchanged.status, 0, unchanged.stderr)
        XCTAssertTrue(unchanged.stdout.contains("unchanged"), unchanged.stdout)
        // Metadata only: a new release naming the same stored files.
        let meta = try limited(["--meta", "note=retitled"])
        XCTAssertEqual(meta.status, 0, meta.stderr)
        XCTAssertTrue(meta.stdout.contains("published sequence 2"), meta.stdout)
        let verify = try modelcast(["verify", site, "--allow-http"])
        XCTAssertEqual(verify.status, 0, verify.stdout)
    }
}
