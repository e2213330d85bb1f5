import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// Issue 28, client side: a model's variants on the device, against `modelcast serve`
/// (the manifest published with the CLI, then given its variants: `VariantSite`).
final class VariantClientTests: XCTestCase {
    static let gib: Int64 = 1 << 30
    /// A large phone: 16 GiB, iOS 17.2, GPU and Neural Engine.
    let bigPhone = DeviceProfile(physicalMemory: 16 * gib, platform: .ios, osVersion: "17.2", architecture: "arm64", accelerators: [.gpu, .neuralEngine])
    /// A small phone: 4 GiB, iOS 16.4, a Neural Engine.
    let smallPhone = DeviceProfile(physicalMemory: 4 * gib, platform: .ios, osVersion: "16.4", architecture: "arm64", accelerators: [.neuralEngine])
    /// A Linux box: 4 GiB, no accelerator known.
    let linuxBox = DeviceProfile(physicalMemory: 4 * gib, platform: .linux, architecture: "x86_64")

    func sha256(_ path: String) throws -> String {
        try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: path))).hex
    }

    /// Model m: `future` (an unknown requirement), `big` (8 GiB, iOS 17), `ane` (Neural
    /// Engine), `small` (anything; its files are the model's own).
    func variantsOfM(_ site: VariantSite, seed: UInt32) throws -> VariantSite.Model {
        func file(_ name: String, _ size: Int, _ offset: UInt32) throws -> String {
            try site.work.write("v\(seed)/\(name).bin", patternBytes(size, seed: seed * 10 + offset))
        }
        return VariantSite.Model(name: "m", variants: [
            .init(name: "future", requires: ["npu_generation": 3], file: try file("future", 5_000, 1)),
            .init(name: "big", requires: ["min_memory": 8 * Self.gib, "platforms": ["ios": "17.0"]], file: try file("big", 40_000, 2)),
            .init(name: "ane", requires: ["accelerators": ["neural-engine"]], file: try file("ane", 20_000, 3)),
            .init(name: "small", file: try file("small", 10_000, 4)),
        ])
    }

    /// Three devices, three variants: each installs its own variant's file under the
    /// model's name, its record says which, and the plan says why the earlier ones were
    /// passed over (the unknown requirement named). A device that meets no variant of a
    /// model downloads nothing for it.
    func testEachDeviceInstallsTheVariantItMeets() async throws {
        let site = try VariantSite()
        let m = try variantsOfM(site, seed: 1)
        let huge = VariantSite.Model(name: "huge", variants: [
            .init(name: "only", requires: ["min_memory": 64 * Self.gib], file: try site.work.write("v1/huge.bin", patternBytes(30_000, seed: 99))),
        ])
        try site.publish([m, huge], version: "1.0.0")
        try site.site.start()

        for (device, directory, variant) in [(bigPhone, "big-phone", "big"), (smallPhone, "small-phone", "ane"), (linuxBox, "linux", "small")] {
            let updater = try ModelUpdater(site.configuration(directory: directory, device: device))
            let checked = try await updater.check()
            let plan = try XCTUnwrap(checked)
            let choice = try XCTUnwrap(plan.variants["m"], directory)
            XCTAssertEqual(choice.chosen?.variant?.rawValue, variant, directory)
            XCTAssertEqual(choice.skipped.first?.variant, "future", directory)
            XCTAssertEqual(choice.skipped.first?.reasons, ["requires 'npu_generation', which this client does not know"], directory)
            XCTAssertEqual(plan.versions, ["m": "1.0.0"], "no version of huge for \(directory)")
            XCTAssertNil(try XCTUnwrap(plan.variants["huge"]).chosen)
            XCTAssertEqual(plan.bytesToDownload, Int64(try Data(contentsOf: URL(fileURLWithPath: site.work.at("v1/\(variant).bin"))).count), directory)

            let outcome = try await updater.update()
            XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]), directory)
            let installed = try XCTUnwrap(updater.installed("m"))
            XCTAssertEqual(installed.variant, variant)
            XCTAssertEqual(installed.mainFile.lastPathComponent, "\(variant).bin")
            XCTAssertEqual(try sha256(installed.mainFile.path), try sha256(site.work.at("v1/\(variant).bin")))
            XCTAssertNil(updater.installed("huge"), "\(directory) meets no variant of huge")
        }
        let smallPlan = try await ModelUpdater(site.configuration(directory: "another-small-phone", device: smallPhone)).check()
        let small = try XCTUnwrap(smallPlan)
        XCTAssertEqual(try XCTUnwrap(small.variants["m"]).skipped.map(\.variant), ["future", "big"])
        XCTAssertEqual(try XCTUnwrap(small.variants["m"]).skipped[1].reasons,
                       ["needs 8 GiB of memory; the device has 4 GiB", "needs ios 17.0 or later; the device runs 16.4"])
        XCTAssertEqual(site.downloads(of: "huge_only"), [], "nothing of huge was downloaded by any device")
        XCTAssertEqual(site.downloads(of: "m_future"), [])
        for variant in ["big", "ane", "small"] { XCTAssertEqual(site.downloads(of: "m_\(variant)").count, 1, variant) }
    }

    /// A device that meets none of a model's variants any more keeps the version it has
    /// (not removed, nothing downloaded), and the plan says so; when a variant fits again,
    /// it installs it.
    func testADeviceMeetingNoVariantKeepsWhatItHas() async throws {
        let site = try VariantSite()
        try site.publish([try variantsOfM(site, seed: 1)], version: "1.0.0")
        try site.site.start()
        let updater = try ModelUpdater(site.configuration(directory: "linux", device: linuxBox))
        let first = try await updater.update()
        XCTAssertEqual(first, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertEqual(updater.installed("m")?.variant, "small")

        // 2.0.0 needs 8 GiB for every variant.
        let demanding = VariantSite.Model(name: "m", variants: [
            .init(name: "big", requires: ["min_memory": 8 * Self.gib], file: try site.work.write("v2/big.bin", patternBytes(41_000, seed: 21))),
            .init(name: "gpu", requires: ["min_memory": 8 * Self.gib, "accelerators": ["gpu"]], file: try site.work.write("v2/gpu.bin", patternBytes(21_000, seed: 22))),
        ])
        try site.publish([demanding], version: "2.0.0")
        let checked = try await updater.check()
        let plan = try XCTUnwrap(checked)
        XCTAssertNil(try XCTUnwrap(plan.variants["m"]).chosen)
        XCTAssertEqual(try XCTUnwrap(plan.variants["m"]).skipped.map(\.reasons), [
            ["needs 8 GiB of memory; the device has 4 GiB"],
            ["needs 8 GiB of memory; the device has 4 GiB", "needs the GPU; the device has none known"],
        ])
        XCTAssertEqual(plan.versions, [:])
        XCTAssertEqual(plan.bytesToDownload, 0)
        let second = try await updater.update()
        XCTAssertEqual(second, .upToDate(sequence: 2))
        let kept = try XCTUnwrap(updater.installed("m"))
        XCTAssertEqual(kept.version, "1.0.0")
        XCTAssertEqual(kept.variant, "small")
        XCTAssertEqual(try sha256(kept.mainFile.path), try sha256(site.work.at("v1/small.bin")))
        XCTAssertEqual(site.downloads(of: "m_big").filter { $0.contains("/2.0.0/") }, [])
        XCTAssertEqual(site.downloads(of: "m_gpu"), [])
        do {
            _ = try await updater.request("m")
        } catch {
            XCTFail("request returns the version installed when no variant fits: \(error)")
        }
        let fresh = try ModelUpdater(site.configuration(directory: "fresh-linux", device: linuxBox))
        do {
            _ = try await fresh.request("m")
            XCTFail("a device with no variant and nothing installed got m")
        } catch let error as ClientError {
            guard case .noVariantForDevice(let model, let reasons) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(model, "m")
            XCTAssertEqual(reasons.first, "big: needs 8 GiB of memory; the device has 4 GiB")
            XCTAssertTrue(error.description.contains("meets none of its variants"), error.description)
        }

        // The app declares more memory (its override): the big variant installs.
        var roomy = linuxBox
        roomy.physicalMemory = 12 * Self.gib
        let upgraded = try ModelUpdater(site.configuration(directory: "linux", device: roomy))
        let third = try await upgraded.update()
        XCTAssertEqual(third, .updated(sequence: 2, models: ["m": "2.0.0"]), "a changed device profile is not answered by a 304")
        XCTAssertEqual(upgraded.installed("m")?.variant, "big")
    }

    /// A staged rollout of a model with variants: the device in the cohort takes the
    /// candidate's variant for it, the one outside the fallback's (the rollback section's
    /// variants); after a halt the first goes back to its kept variant, downloading nothing.
    func testRolloutAndRollbackChooseByVariant() async throws {
        let site = try VariantSite()
        try site.publish([try variantsOfM(site, seed: 1)], version: "1.0.0")
        try site.publish([try variantsOfM(site, seed: 2)], version: "1.1.0", ["--rollout", "50%"])
        try site.site.start()
        let release = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site.manifestPath)), source: "manifest")
        XCTAssertEqual(release.rollback?.models["m"]?.variants?.map(\.name), ["future", "big", "ane", "small"], "the fallback has its variants too")
        let ids = (0..<200).map { "device-\($0)" }
        let inCohort = try XCTUnwrap(ids.first { release.rollout!.selects(deviceID: $0, at: Date()) })
        let outside = try XCTUnwrap(ids.first { !release.rollout!.selects(deviceID: $0, at: Date()) })
        let early = try ModelUpdater(site.configuration(directory: "early", device: bigPhone, deviceID: inCohort))
        let late = try ModelUpdater(site.configuration(directory: "late", device: smallPhone, deviceID: outside))
        let earlyOutcome = try await early.update()
        XCTAssertEqual(earlyOutcome, .updated(sequence: 2, models: ["m": "1.1.0"]))
        XCTAssertEqual(try sha256(try XCTUnwrap(early.installed("m")).mainFile.path), try sha256(site.work.at("v2/big.bin")))
        let lateChecked = try await late.check()
        let latePlan = try XCTUnwrap(lateChecked)
        XCTAssertFalse(latePlan.takesCandidate)
        XCTAssertEqual(latePlan.variants["m"]?.chosen?.variant?.rawValue, "ane")
        let lateOutcome = try await late.update()
        XCTAssertEqual(lateOutcome, .updated(sequence: 2, models: ["m": "1.0.0"]))
        XCTAssertEqual(try sha256(try XCTUnwrap(late.installed("m")).mainFile.path), try sha256(site.work.at("v1/ane.bin")))

        // A halt sends the early device to the fallback: 1.0.0, its variant big (downloaded now).
        try site.run(["rollout", site.site.root, "--halt"])
        let halted = try await early.update()
        XCTAssertEqual(halted, .updated(sequence: 3, models: ["m": "1.0.0"]))
        XCTAssertEqual(early.installed("m")?.variant, "big")
        XCTAssertEqual(try sha256(try XCTUnwrap(early.installed("m")).mainFile.path), try sha256(site.work.at("v1/big.bin")))
        let lateHalted = try await late.update()
        XCTAssertEqual(lateHalted, .upToDate(sequence: 3))
        XCTAssertEqual(site.downloads(of: "m_big").filter { $0.contains("/1.1.0/") }.count, 1, "1.1.0 big was fetched once, by the early device")
    }

    /// A version installed by a client that knew no variants (its record has no variant)
    /// is reused when the device takes the variant with the same files, and its record is
    /// relabelled: `installed` then names the variant.
    func testARecordWithoutVariantIsRelabelled() async throws {
        let site = try VariantSite()
        let m = try variantsOfM(site, seed: 1)
        try site.publish([VariantSite.Model(name: "m", file: m.variants[3].file)], version: "1.0.0")
        try site.site.start()
        let updater = try ModelUpdater(site.configuration(directory: "linux", device: linuxBox))
        let plain = try await updater.update()
        XCTAssertEqual(plain, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertNil(updater.installed("m")?.variant)
        // The same bytes become the default variant of 1.0.0's successor… published under
        // another key: the client's id is the version and the files' digests and places.
        try site.publish([m], version: "1.0.0")
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .upToDate(sequence: 2), "the same version with the same file is the version installed")
        XCTAssertEqual(updater.installed("m")?.variant, "small")
        let record = try String(contentsOf: try XCTUnwrap(updater.installed("m")).directory.appendingPathComponent(".modelcast-version.json"), encoding: .utf8)
        XCTAssertTrue(record.contains("\"variant\":\"small\""), record)
    }

    /// On Linux the profile the client fills by default: the machine's memory, `linux`, its
    /// architecture, no OS version and no accelerator; it is the configuration's default.
    func testTheCurrentProfileOnLinux() throws {
        #if os(Linux)
        let current = DeviceProfile.current
        XCTAssertEqual(current.physicalMemory, Int64(ProcessInfo.processInfo.physicalMemory))
        XCTAssertGreaterThan(current.physicalMemory ?? 0, 0)
        XCTAssertEqual(current.platform, .linux)
        XCTAssertNil(current.osVersion)
        #if arch(x86_64)
        XCTAssertEqual(current.architecture, "x86_64")
        #elseif arch(arm64)
        XCTAssertEqual(current.architecture, "arm64")
        #endif
        XCTAssertEqual(current.accelerators, [])
        let configuration = ClientConfiguration(manifestURL: URL(string: "http://127.0.0.1/m/manifest.json")!, directory: URL(fileURLWithPath: "/tmp/x"), deviceID: "d")
        XCTAssertEqual(configuration.device, current)
        #else
        throw XCTSkip("the Linux profile")
        #endif
    }

    /// A manifest with variants still decodes with the client types as they were before
    /// variants (Release.swift at 01efcfe): an old client installs the default variant's
    /// version and files, and ignores the rest.
    func testAManifestWithVariantsDecodesWithThePreviousClientTypes() throws {
        let site = try VariantSite()
        try site.publish([try variantsOfM(site, seed: 1)], version: "1.0.0")
        let data = try Data(contentsOf: URL(fileURLWithPath: site.manifestPath))
        let old = try JSONDecoder().decode(PreviousRelease.self, from: data)
        let m = try XCTUnwrap(old.models["m"])
        XCTAssertEqual(m.version, "1.0.0")
        XCTAssertEqual(m.files.map(\.name), ["small.bin"])
        XCTAssertEqual(m.files.first?.sha256, try sha256(site.work.at("v1/small.bin")))
        XCTAssertEqual(m.files.first?.key, "models/m_small/1.0.0/small.bin")
        XCTAssertEqual(old.models.keys.sorted(), ["m"])
        let current = try Release.decode(data, source: "manifest")
        XCTAssertEqual(current.models["m"]?.variants?.count, 4)
    }

}

/// The manifest types of the client before variants (ModelCastFormat/Release.swift at
/// 01efcfe), cut to what decoding a model needs: the same keys, the same optional ones.
private struct PreviousRelease: Decodable {
    struct File: Decodable {
        var name: String
        var key: String
        var url: String
        var sha256: String
        var size: Int64
        var contentType: String
        var path: String?
        enum CodingKeys: String, CodingKey {
            case name, key, url, sha256, size, path
            case contentType = "content_type"
        }
    }

    struct Model: Decodable {
        var version: String
        var files: [File]
        var meta: [String: JSONValue]
        var tree: String?
        enum CodingKeys: String, CodingKey { case version, tree, files, meta }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            version = try c.decode(String.self, forKey: .version)
            tree = try c.decodeIfPresent(String.self, forKey: .tree)
            files = try c.decode([File].self, forKey: .files)
            meta = try c.decodeIfPresent([String: JSONValue].self, forKey: .meta) ?? [:]
        }
    }

    struct Rollback: Decodable {
        var sequence: Int64
        var models: [String: Model]
    }

    var sequence: Int64
    var channel: String
    var models: [String: Model]
    var rollback: Rollback?
}
