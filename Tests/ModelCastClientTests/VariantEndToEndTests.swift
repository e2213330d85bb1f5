import Foundation
import XCTest
@testable import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// A three-variant model from the real writers, end to end: a 3B-shaped and a 1B-shaped
/// GGUF (llama.cpp's `gguf`) and a Core ML package (coremltools), published with the CLI's
/// variants (signed), verified through `serve`, and installed by devices with different
/// profiles — each gets its variant; a device meeting none keeps what it has — then
/// updated, rolled back and rolled out, each device staying on its variant throughout.
final class VariantEndToEndTests: XCTestCase {
    static let gib: Int64 = 1 << 30
    let aneMac = DeviceProfile(physicalMemory: 16 * gib, platform: .macos, osVersion: "14.4", architecture: "arm64", accelerators: [.gpu, .neuralEngine])
    let bigPhone = DeviceProfile(physicalMemory: 8 * gib, platform: .ios, osVersion: "17.4", architecture: "arm64", accelerators: [.gpu])
    let smallPhone = DeviceProfile(physicalMemory: 4 * gib, platform: .ios, osVersion: "17.4", architecture: "arm64", accelerators: [.gpu])
    let oddBoard = DeviceProfile(physicalMemory: 2 * gib, platform: .linux, architecture: "riscv64")

    func gguf(_ path: String, width: Int, retrain: Bool = false) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_models.py", "gguf", path, "--layers", "1",
                                                   "--width", String(width), "--vocab", "300"] + (retrain ? ["--retrain-attention"] : []))
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    /// The config file of version `version`: ane (Core ML, Neural Engine), 3b (6 GiB), 1b
    /// (arm64 or x86_64 only).
    func config(_ site: ClientTests.Site, version: String, folder: String, coreML: String) throws -> String {
        try site.work.write("\(folder)/modelcast.yml", text: """
            base_url: \(site.base)
            models:
              assistant:
                version: \(version)
                # Every variant has requirements: what clients without variants install is chosen.
                default_variant: 1b
                variants:
                  - name: ane
                    files: [\(coreML)]
                    requires: {accelerators: [neural-engine], platforms: {ios: "17.0", macos: "14.0"}}
                  - name: 3b
                    files: [llm-3b.gguf]
                    requires: {min_memory: 6GiB}
                  - name: 1b
                    files: [llm-1b.gguf]
                    requires: {architectures: [arm64, x86_64]}
            """)
    }

    func updater(_ site: ClientTests.Site, _ device: DeviceProfile, _ directory: String) throws -> ModelUpdater {
        var configuration = site.configuration(device: directory, directory: directory)
        configuration.device = device
        return try ModelUpdater(configuration)
    }

    func testThreeVariantsPublishedVerifiedInstalledUpdatedRolledBackAndRolledOut() async throws {
        let site = try ClientTests.Site()
        let models = try Scratch("modelcast-variant-models")
        let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/scripts/make-interface-models.py", models.path])
        XCTAssertEqual(made.status, 0, made.stderr)
        let coreML = models.at("coreml/classifier.mlpackage")
        try gguf(site.work.at("v1/llm-3b.gguf"), width: 256)
        try gguf(site.work.at("v1/llm-1b.gguf"), width: 64)
        let v1 = try config(site, version: "1.0.0", folder: "v1", coreML: coreML)
        try site.run(["publish", "--config", v1, "--to", site.root])
        try site.start()
        let verify = try modelcast(["verify", site.base + "/manifest.json", "--public-key", site.work.at("k.pub"), "--allow-http"])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        XCTAssertTrue(verify.stdout.contains("assistant@ane 1.0.0/classifier.mlpackage.zip"), verify.stdout)

        // Each device takes its variant; the odd board meets none and installs nothing.
        let devices: [(DeviceProfile, String, String?)] = [(aneMac, "mac", "ane"), (bigPhone, "big", "3b"), (smallPhone, "small", "1b"), (oddBoard, "odd", nil)]
        var updaters: [String: ModelUpdater] = [:]
        for (profile, directory, variant) in devices {
            let updater = try updater(site, profile, directory)
            updaters[directory] = updater
            let outcome = try await updater.update()
            XCTAssertEqual(updater.installed("assistant")?.variant, variant, directory)
            if variant != nil {
                XCTAssertEqual(outcome, .updated(sequence: 1, models: ["assistant": "1.0.0"]), directory)
                XCTAssertTrue(updater.installed("assistant")?.directory.path.contains("1.0.0") ?? false, directory)
            } else {
                XCTAssertEqual(outcome, .upToDate(sequence: 1))
            }
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: try XCTUnwrap(updaters["mac"]?.installed("assistant")).mainFile.appendingPathComponent("Manifest.json").path),
                      "the Core ML variant is installed unpacked")
        let oddPlan = try await updater(site, oddBoard, "odd-check").check()
        let oddChoice = try XCTUnwrap(oddPlan?.variants["assistant"])
        XCTAssertNil(oddChoice.chosen)
        XCTAssertEqual(oddChoice.skipped.map(\.variant), ["ane", "3b", "1b"])
        XCTAssertEqual(oddChoice.skipped.last?.reasons, ["runs on arm64, x86_64; the device is riscv64"])

        // 1.1.0: the GGUFs retrained (same interface), the Core ML build unchanged.
        try gguf(site.work.at("v2/llm-3b.gguf"), width: 256, retrain: true)
        try gguf(site.work.at("v2/llm-1b.gguf"), width: 64, retrain: true)
        try site.run(["publish", "--config", try config(site, version: "1.1.0", folder: "v2", coreML: coreML), "--to", site.root])
        for (_, directory, variant) in devices where variant != nil {
            let outcome = try await updaters[directory]!.update()
            XCTAssertEqual(outcome, .updated(sequence: 2, models: ["assistant": "1.1.0"]), directory)
            XCTAssertEqual(updaters[directory]!.installed("assistant")?.variant, variant)
        }
        let bigFile = try XCTUnwrap(updaters["big"]?.installed("assistant")).mainFile.path
        XCTAssertEqual(try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: bigFile))).hex,
                       try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: site.work.at("v2/llm-3b.gguf")))).hex)

        // Rollback to 1.0.0: every device goes back to its own variant's 1.0.0, kept on the device.
        try site.run(["rollback", site.root, "--version", "1.0.0"])
        let before = site.requests.count
        for (_, directory, variant) in devices where variant != nil {
            let outcome = try await updaters[directory]!.update()
            XCTAssertEqual(outcome, .updated(sequence: 3, models: ["assistant": "1.0.0"]), directory)
            XCTAssertEqual(updaters[directory]!.installed("assistant")?.variant, variant)
        }
        XCTAssertEqual(site.requests.dropFirst(before).filter { $0.contains("/models/assistant/") }, [], "the kept 1.0.0 of each variant is reused")

        // A staged rollout of 1.2.0 to half the devices: in the cohort, a device takes its
        // variant of 1.2.0; outside it, it stays on its variant of 1.0.0.
        try gguf(site.work.at("v3/llm-3b.gguf"), width: 256, retrain: true)
        try FileManager.default.copyItem(atPath: site.work.at("v2/llm-1b.gguf"), toPath: site.work.at("v3/llm-1b.gguf"))
        try site.run(["publish", "--config", try config(site, version: "1.2.0", folder: "v3", coreML: coreML), "--to", site.root, "--rollout", "50%"])
        let manifest = try Release.decode(Data(contentsOf: URL(fileURLWithPath: site.root + "/manifest.json")), source: "site")
        let rollout = try XCTUnwrap(manifest.rollout)
        for (_, directory, variant) in devices where variant != nil {
            _ = try await updaters[directory]!.update()
            let expected = rollout.selects(deviceID: directory, at: Date()) ? "1.2.0" : "1.0.0"
            XCTAssertEqual(updaters[directory]!.installed("assistant")?.version, expected, directory)
            XCTAssertEqual(updaters[directory]!.installed("assistant")?.variant, variant, directory)
        }
    }
}
