import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// Issue 28, client side: download policies (essential, prefetch, on-demand), the app's
/// overrides, and the `shouldDownload` hook, against `modelcast serve`.
final class DownloadPolicyTests: XCTestCase {
    /// core (essential), extra (no `download`: prefetch), big (on-demand), each one file.
    func models(_ site: VariantSite, version: Int) throws -> [VariantSite.Model] {
        [
            .init(name: "core", download: "essential", file: try site.work.write("v\(version)/core.bin", patternBytes(8_000, seed: UInt32(10 + version)))),
            .init(name: "extra", file: try site.work.write("v\(version)/extra.bin", patternBytes(9_000, seed: UInt32(20 + version)))),
            .init(name: "big", download: "on-demand", file: try site.work.write("v\(version)/big.bin", patternBytes(50_000, seed: UInt32(30 + version)))),
        ]
    }

    func device(_ site: VariantSite, _ directory: String) -> ClientConfiguration {
        site.configuration(directory: directory, device: DeviceProfile(physicalMemory: 1 << 32, platform: .linux))
    }

    /// First launch: `update(.essential)` installs core alone; `update(.prefetch)` then adds
    /// extra (the manifest unchanged: no 304 stands in for it); big waits for
    /// `request("big")`, after which `update(.prefetch)` keeps it up to date. A device that
    /// never asked for big does not get it; `update()` installs everything, as before.
    func testEssentialPrefetchAndOnDemand() async throws {
        let site = try VariantSite()
        try site.publish(try models(site, version: 1), version: "1.0.0")
        try site.site.start()
        let updater = try ModelUpdater(device(site, "phone"))

        let essentialPlan = try await updater.check(.essential)
        XCTAssertEqual(essentialPlan?.installs, ["core": "1.0.0"])
        XCTAssertEqual(essentialPlan?.policies, ["core": .essential, "extra": .prefetch, "big": .onDemand])
        let launch = try await updater.update(.essential)
        XCTAssertEqual(launch, .updated(sequence: 1, models: ["core": "1.0.0"]))
        XCTAssertEqual(updater.installedModels().map(\.name), ["core"])
        let background = try await updater.update(.prefetch)
        XCTAssertEqual(background, .updated(sequence: 1, models: ["extra": "1.0.0"]))
        let again = try await updater.update(.prefetch)
        XCTAssertEqual(again, .notModified)
        let essentialAgain = try await updater.update(.essential)
        XCTAssertEqual(essentialAgain, .notModified, "a prefetch update covered the essential models")
        XCTAssertEqual(updater.installedModels().map(\.name), ["core", "extra"])
        XCTAssertEqual(site.downloads(of: "big"), [])

        let big = try await updater.request("big")
        XCTAssertEqual(big.version, "1.0.0")
        XCTAssertEqual(try Data(contentsOf: big.mainFile), try Data(contentsOf: URL(fileURLWithPath: site.work.at("v1/big.bin"))))
        let requestedAgain = try await updater.request("big")
        XCTAssertEqual(requestedAgain, big)
        XCTAssertEqual(site.downloads(of: "big").count, 1, "installed already: not downloaded again")
        do {
            _ = try await updater.request("nope")
            XCTFail("a model the manifest does not name was requested")
        } catch let error as ClientError {
            XCTAssertEqual(error, .unknownModel(url: site.site.base + "/manifest.json", model: "nope"))
        }

        try site.publish(try models(site, version: 2), version: "2.0.0")
        let next = try await updater.update(.prefetch)
        XCTAssertEqual(next, .updated(sequence: 2, models: ["core": "2.0.0", "extra": "2.0.0", "big": "2.0.0"]), "big, requested once, is kept up to date")
        let other = try ModelUpdater(device(site, "other-phone"))
        let otherOutcome = try await other.update(.prefetch)
        XCTAssertEqual(otherOutcome, .updated(sequence: 2, models: ["core": "2.0.0", "extra": "2.0.0"]))
        XCTAssertNil(other.installed("big"))
        let legacy = try ModelUpdater(device(site, "legacy-phone"))
        let legacyOutcome = try await legacy.update()
        XCTAssertEqual(legacyOutcome, .updated(sequence: 2, models: ["core": "2.0.0", "extra": "2.0.0", "big": "2.0.0"]), "update() installs every model, as before policies")
    }

    /// The app's policies override the manifest's: big made essential, core on-demand.
    func testTheAppOverridesTheManifestsPolicies() async throws {
        let site = try VariantSite()
        try site.publish(try models(site, version: 1), version: "1.0.0")
        try site.site.start()
        var configuration = device(site, "phone")
        configuration.downloadPolicies = ["big": .essential, "core": .onDemand]
        let updater = try ModelUpdater(configuration)
        let launch = try await updater.update(.essential)
        XCTAssertEqual(launch, .updated(sequence: 1, models: ["big": "1.0.0"]))
        let checked = try await updater.check(.prefetch)
        XCTAssertEqual(checked?.policies, ["core": .onDemand, "extra": .prefetch, "big": .essential])
        let background = try await updater.update(.prefetch)
        XCTAssertEqual(background, .updated(sequence: 1, models: ["extra": "1.0.0"]))
        XCTAssertNil(updater.installed("core"))

        configuration.downloadPolicies = ["not a name": .essential]
        XCTAssertThrowsError(try ModelUpdater(configuration)) { error in
            XCTAssertEqual(error as? ClientError, .configuration(reason: "downloadPolicies names 'not a name', which is not a model name"))
        }
    }

    /// `shouldDownload` is given the plan (models, variants, bytes); false defers the update:
    /// nothing is downloaded, installed or saved, and the outcome says so. It is not asked
    /// when nothing would be downloaded; true lets the update through.
    func testShouldDownloadFalseDefersAndChangesNothing() async throws {
        let site = try VariantSite()
        let m = VariantSite.Model(name: "m", variants: [
            .init(name: "big", requires: ["min_memory": Int64(1) << 40], file: try site.work.write("v1/big.bin", patternBytes(30_000, seed: 1))),
            .init(name: "small", file: try site.work.write("v1/small.bin", patternBytes(12_000, seed: 2))),
        ])
        try site.publish([m], version: "1.0.0")
        try site.site.start()
        let recorder = HookRecorder(answer: false)
        var configuration = device(site, "phone")
        configuration.shouldDownload = { plan in await recorder.record(plan) }
        let updater = try ModelUpdater(configuration)
        let deferred = try await updater.update()
        guard case .deferred(let plan) = deferred else { return XCTFail("\(deferred)") }
        XCTAssertEqual(plan.installs, ["m": "1.0.0"])
        XCTAssertEqual(plan.variants["m"]?.chosen?.variant?.rawValue, "small")
        XCTAssertEqual(plan.variants["m"]?.skipped.map(\.variant), ["big"])
        XCTAssertEqual(plan.bytesToDownload, 12_000)
        let given = await recorder.plans
        XCTAssertEqual(given, [plan])
        XCTAssertEqual(site.downloads(of: "m_small"), [], "nothing was downloaded")
        XCTAssertNil(updater.installed("m"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.work.at("phone/state.json")), "nothing was saved")
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.work.at("phone/models/m")))
        let lastDownloads = await updater.lastDownloads
        XCTAssertEqual(lastDownloads, [])

        await recorder.answer(true)
        let installed = try await updater.update()
        XCTAssertEqual(installed, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertEqual(updater.installed("m")?.variant, "small")
        let asked = await recorder.plans.count
        XCTAssertEqual(asked, 2)
        // m unchanged, and a model this device meets no variant of: nothing to download.
        let huge = VariantSite.Model(name: "huge", variants: [
            .init(name: "only", requires: ["min_memory": Int64(1) << 40], file: try site.work.write("v2/huge.bin", patternBytes(20_000, seed: 3))),
        ])
        try site.publish([m, huge], version: "1.0.0")
        let unchanged = try await updater.update()
        XCTAssertEqual(unchanged, .upToDate(sequence: 2))
        let stillAsked = await recorder.plans.count
        XCTAssertEqual(stillAsked, 2, "not asked when nothing would be downloaded")
    }
}
