import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport

/// Issue 50 through Core's publish: every unit's install size computed from what the
/// packer knows (no pass over the bytes), a stated size that may raise it and never lower
/// it, the flags written as the model's licence and download conditions, the variant rule
/// (the model's storage is its default variant's), the profiles that cannot carry them,
/// and the note a licence change gets.
final class ModelPoliciesPublishTests: XCTestCase {
    /// The manifest a report carries, parsed.
    func manifest(_ report: PublishReport) throws -> Release {
        try JSONDecoder().decode(Release.self, from: Data(report.manifest.utf8))
    }

    /// The words publish writes are exactly the ones every client knows: a word only publish
    /// knew would make each device hold the model back as an unknown condition.
    func testPublishWritesOnlyWordsTheFormatKnows() {
        XCTAssertEqual(Set(LicenceAcceptanceChoice.allCases.map(\.rawValue)), Set(LicenceAcceptance.known.map(\.key)))
        XCTAssertEqual(Set(NetworkChoice.allCases.map(\.rawValue)), Set(NetworkRequirement.known.map(\.key)))
        XCTAssertEqual(Set(ChargingChoice.allCases.map(\.rawValue)), Set(ChargingRequirement.known.map(\.key)))
    }

    func testInstallSizeIsComputedForPlainZippedAndTreeModels() async throws {
        let work = try Scratch()
        let plain = try work.write("plain.bin", patternBytes(2000, seed: 1))
        _ = try work.write("zipped/config.json", Array("{\"a\": 1}".utf8))
        _ = try work.write("zipped/weights/w.bin", patternBytes(5000, seed: 2))
        _ = try work.write("tree/a.bin", patternBytes(700, seed: 3))
        _ = try work.write("tree/sub/b.bin", patternBytes(300, seed: 4))
        let commands = TargetCommands(try InMemoryStorage())
        let report = try await commands.publish([plain, "z=" + work.at("zipped")], name: nil, version: "1.0.0")
        let release = try manifest(report)
        XCTAssertEqual(release.models["plain"]?.storage, ReleaseStorage(installSize: 2000))
        // A zip's entries unpacked (8 + 5000 bytes), not the zip's own size.
        XCTAssertEqual(release.models["z"]?.storage?.installSize, 5008)
        XCTAssertNotEqual(release.models["z"]?.files.first?.size, 5008, "the zip itself is larger than its entries")

        let trees = TargetCommands(try InMemoryStorage())
        let tree = try manifest(try await trees.publish([work.at("tree")], name: "t", version: "1.0.0") { $0.noZip = true })
        XCTAssertEqual(tree.models["t"]?.storage?.installSize, 1000)
        XCTAssertEqual(tree.models["t"]?.files.count, 2)
        _ = try tree.checkedModels()
    }

    func testAStatedInstallSizeRaisesTheComputedOneAndNeverLowersIt() async throws {
        let work = try Scratch()
        let file = try work.write("m.bin", patternBytes(2000, seed: 1))
        let storage = try InMemoryStorage()
        let commands = TargetCommands(storage)
        let raised = try manifest(try await commands.publish([file], version: "1.0.0") {
            $0.policyFlags.installSize = "1MB"
            $0.policyFlags.storagePriority = "10"
        })
        XCTAssertEqual(raised.models["m"]?.storage, ReleaseStorage(installSize: 1_000_000, priority: 10))

        let before = try await storage.list(prefix: "")
        do {
            try await commands.publish([file], version: "1.0.1") { $0.policyFlags.installSize = "1999" }
            XCTFail("a stated size below the files' was accepted")
        } catch let error as ModelCastError {
            XCTAssertEqual(ExitStatus(for: error), .refused)
            XCTAssertTrue("\(error)".contains("model m: install_size 1999 is less than the 2000 bytes its files take installed"), "\(error)")
        }
        let after = try await storage.list(prefix: "")
        XCTAssertEqual(after, before, "nothing written")
    }

    func testVariantsHaveTheirOwnStorageAndTheModelItsDefaultVariants() async throws {
        let work = try Scratch()
        let big = try work.write("big.bin", patternBytes(3000, seed: 1))
        let small = try work.write("small.bin", patternBytes(1000, seed: 2))
        let commands = TargetCommands(try InMemoryStorage())
        let release = try manifest(try await commands.publish([], name: "llm", version: "1.0.0") {
            $0.variants = ["3b=\(big)", "1b=\(small)"]
            $0.requires = ["3b:min_memory=8GB"]
            $0.policyFlags.licence = "Llama-3.2-Community"
            $0.policyFlags.acceptance = .required
            $0.policyFlags.storagePriority = "20"
        })
        let model = try XCTUnwrap(release.models["llm"])
        XCTAssertEqual(model.variants?.map { $0.model.storage }, [ReleaseStorage(installSize: 3000, priority: 20), ReleaseStorage(installSize: 1000, priority: 20)])
        XCTAssertEqual(model.storage, ReleaseStorage(installSize: 1000, priority: 20), "the default variant's (1b, the last)")
        XCTAssertEqual(model.licence, ReleaseLicence(spdx: "Llama-3.2-Community", acceptance: "required"))
        XCTAssertNil(model.variants?.first?.model.licence, "model-level: variants do not repeat it")
        let checked = try release.checkedModels()
        XCTAssertEqual(checked.first?.variants.first?.model.licence?.acceptance, .required)
    }

    func testFlagsWriteTheLicenceAndConditionsAndContradictionsAreRefused() async throws {
        let work = try Scratch()
        let file = try work.write("m.bin", patternBytes(100, seed: 1))
        let release = try manifest(try await TargetCommands(try InMemoryStorage()).publish([file], version: "1.0.0") {
            $0.policyFlags.licenceURL = "https://example.com/LICENSE.txt"
            $0.policyFlags.network = .any
            $0.policyFlags.cellularMax = "500MB"
            $0.policyFlags.charging = .required
        })
        XCTAssertEqual(release.models["m"]?.licence, ReleaseLicence(url: "https://example.com/LICENSE.txt"))
        XCTAssertEqual(release.models["m"]?.downloadConditions, ReleaseDownloadConditions(network: "any", cellularMax: 500_000_000, charging: "required"))

        let refusals: [(String, (inout PublishCommandLine) -> Void)] = [
            ("model m: network unmetered and cellular_max 1000 contradict", { $0.policyFlags.network = .unmetered; $0.policyFlags.cellularMax = "1000" }),
            ("model m: licence acceptance required names no licence", { $0.policyFlags.acceptance = .required }),
            ("--storage-priority: '101' is not a storage priority (an integer from 0 to 100", { $0.policyFlags.storagePriority = "101" }),
            ("--install-size: '-5' is not a byte count from 0 to 2^53", { $0.policyFlags.installSize = "-5" }),
            ("--cellular-max: '9223372036854775808' is not a byte count", { $0.policyFlags.cellularMax = "9223372036854775808" }),
            (#"--licence: 'MIT\u{1b}[2J' is not an SPDX"#, { $0.policyFlags.licence = "MIT\u{1B}[2J" }),
            ("--licence-url: a URL with a user name or password (host 'example.com'; the rest is not shown) is refused", { $0.policyFlags.licenceURL = "https://ci:hunter2@example.com/L" }),
            ("profile nomlens cannot carry licence/download conditions/storage (model m); use the modelcast profile",
             { $0.profile = .nomlens; $0.policyFlags.licence = "MIT"; $0.meta = ["num_classes=3", "class_list_version=1", "training_date=2026-01-01"] }),
            ("profile latest cannot carry licence/download conditions/storage", { $0.profile = .latest; $0.policyFlags.network = .unmetered }),
            ("profile catalog cannot carry licence/download conditions/storage", { $0.profile = .catalog; $0.policyFlags.installSize = "1GB" }),
            ("profile tiers cannot carry licence/download conditions/storage", { $0.profile = .tiers; $0.policyFlags.charging = .required }),
        ]
        for (expected, configure) in refusals {
            let storage = try InMemoryStorage()
            do {
                try await TargetCommands(storage).publish([file], version: "1.0.0", configure: configure)
                XCTFail("accepted: \(expected)")
            } catch let error as ModelCastError {
                XCTAssertTrue("\(error)".contains(expected), "\(expected): \(error)")
                XCTAssertFalse("\(error)".contains("hunter2"), "the password was printed: \(error)")
                XCTAssertFalse(containsControlCharacter("\(error)"), "\(error)")
            }
            let written = try await storage.list(prefix: "")
            XCTAssertEqual(written, [], "\(expected): nothing written")
        }
    }

    func testOtherProfilesGetNoStorage() async throws {
        let work = try Scratch()
        let file = try work.write("m.bin", patternBytes(100, seed: 1))
        let report = try await TargetCommands(try InMemoryStorage()).publish([file], version: "1.0.0") { $0.profile = .latest }
        XCTAssertFalse(report.manifest.contains("install_size"), report.manifest)
    }

    func testFlagsNeedModelsOnTheCommandLine() async throws {
        let work = try Scratch()
        _ = try work.write("m.bin", patternBytes(100, seed: 1))
        let config = try work.write("modelcast.yml", text: "base_url: https://cdn.example.com/m\nmodels:\n  m: {version: 1.0.0, files: [m.bin]}\n")
        do {
            try await TargetCommands(try InMemoryStorage()).publish([], name: nil, version: nil) {
                $0.configPath = config
                $0.policyFlags.licence = "MIT"
            }
            XCTFail("accepted")
        } catch {
            XCTAssertTrue("\(error)".contains("--licence applies to the models given on the command line, and there are none"), "\(error)")
        }
    }

    func testALicenceChangeIsNoted() async throws {
        let work = try Scratch()
        let file = try work.write("m.bin", patternBytes(100, seed: 1))
        let commands = TargetCommands(try InMemoryStorage())
        func publish(_ version: String, url: String, epoch: Int) async throws -> PublishReport {
            try await commands.publish([file], version: version, epoch: epoch) {
                $0.policyFlags.licence = "Llama-3.2-Community"
                $0.policyFlags.licenceURL = url
                $0.policyFlags.acceptance = .required
            }
        }
        let first = try await publish("1.0.0", url: "https://example.com/v1/LICENSE", epoch: 1_790_000_000)
        XCTAssertFalse(first.warnings.contains { $0.contains("licence") }, "\(first.warnings)")
        let same = try await publish("1.0.1", url: "https://example.com/v1/LICENSE", epoch: 1_790_000_100)
        XCTAssertFalse(same.warnings.contains { $0.contains("licence") }, "\(same.warnings)")
        let changed = try await publish("1.0.2", url: "https://example.com/v2/LICENSE", epoch: 1_790_000_200)
        XCTAssertTrue(changed.warnings.contains("licence changed for m: devices ask for acceptance again (Llama-3.2-Community (https://example.com/v1/LICENSE) -> Llama-3.2-Community (https://example.com/v2/LICENSE))"),
                      "\(changed.warnings)")
    }
}
