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
/// The matrices of commands × objects × damage, the catalog take-over and the restoring
/// re-publish run in process on the in-memory store (GoLiveProofLogicTests); these keep
/// the CLI's side and what needs a real process (a file size limit).
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

    /// The CLI's side of a refused go-live (the matrix of every command × object kind ×
    /// damage, on an object store and a directory, is GoLiveProofLogicTests, in process):
    /// a rollback whose target's artifact is missing and a resign whose rollback section's
    /// segment index holds other bytes exit 1, name the key on standard error, print
    /// nothing on standard output, and leave the directory exactly as it was.
    func testAGoLiveCommandRefusesAMissingOrChangedObjectThroughTheCLI() throws {
        let work = try Scratch()
        let keys = try keys(work)
        let site = work.at("plain")
        try makeTarget(site, work: work, keys: keys, rollout: false)
        let artifact = try XCTUnwrap(try objects(of: "1.0.0", in: site).first { $0.kind == .artifact })
        let index = try XCTUnwrap(try objects(of: "1.0.0", in: site).first { $0.kind == .segmentIndex })
        for (arguments, object, damage) in [(["rollback", site, "--version", "1.0.0", "--sign", keys.secret], artifact, Damage.missing),
                                            (["resign", site, "--sign", keys.secret], index, Damage.changed)] {
            let pristine = try snapshot(site)
            let original = try Data(contentsOf: URL(fileURLWithPath: site + "/" + object.key))
            try self.damage(site + "/" + object.key, kind: object.kind, damage)
            let before = try snapshot(site)
            let run = try modelcast(arguments, environment: pinnedEnvironment(epoch: 1_790_000_100))
            XCTAssertEqual(run.status, 1, "\(arguments[0]): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains(object.key), "\(arguments[0]) names \(object.key): \(run.stderr)")
            XCTAssertEqual(run.stdout, "")
            XCTAssertEqual(try snapshot(site), before, "\(arguments[0]): the target changed")
            try? FileManager.default.removeItem(atPath: site + "/" + object.key)
            try original.write(to: URL(fileURLWithPath: site + "/" + object.key))
            XCTAssertEqual(try snapshot(site), pristine)
        }
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
