import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// Issue 50, client side: a model's licence gate, download conditions, the free-space check
/// and the storage budget, against `modelcast serve` on 127.0.0.1. What a device fetched is
/// the server's request log: a model that waits, or an update refused for its space or its
/// budget, requests none of its artifacts.
final class ManifestConditionsClientTests: XCTestCase {
    static var licence: [String: Any] { ["spdx": "Llama-3.2-Community", "url": "https://example.com/LICENSE.txt", "acceptance": "required"] }

    func device(_ site: VariantSite, _ directory: String, budget: Int64? = nil) -> ClientConfiguration {
        var configuration = site.configuration(directory: directory, device: DeviceProfile(physicalMemory: 1 << 33, platform: .linux))
        configuration.storageBudget = budget
        return configuration
    }

    func model(_ site: VariantSite, _ name: String, version: Int, size: Int = 40_000, download: String? = nil,
               fields: [String: Any] = [:]) throws -> VariantSite.Model {
        .init(name: name, download: download,
              file: try site.work.write("v\(version)/\(name).bin", patternBytes(size, seed: UInt32(version * 10 + name.count))), fields: fields)
    }

    /// Nothing of a gated model is requested before its licence is accepted: the plan says
    /// why it waits, `request` throws naming the licence, another licence's acceptance does
    /// not open the gate; once accepted (persisted: a relaunched updater knows it), it installs.
    /// The model beside it installs meanwhile.
    func testTheLicenceGateRequestsNoArtifactBeforeAcceptance() async throws {
        let site = try VariantSite()
        try site.publish([try model(site, "gated", version: 1, fields: ["licence": Self.licence]), try model(site, "free", version: 1)], version: "1.0.0")
        try site.site.start()
        let updater = try ModelUpdater(device(site, "phone"))
        let first = try await updater.update()
        XCTAssertEqual(first, .updated(sequence: 1, models: ["free": "1.0.0"]))
        let waiting = await updater.lastPlan?.waiting
        XCTAssertEqual(waiting, ["gated": .licence(spdx: "Llama-3.2-Community", url: "https://example.com/LICENSE.txt")])
        XCTAssertEqual(waiting?["gated"]?.description, "licence Llama-3.2-Community (https://example.com/LICENSE.txt) not accepted")
        XCTAssertEqual(site.downloads(of: "gated"), [])
        XCTAssertNil(updater.installed("gated"))
        do {
            _ = try await updater.request("gated")
            XCTFail("a gated model was installed without its licence accepted")
        } catch let error as ClientError {
            XCTAssertEqual(error, .licenceNotAccepted(model: "gated", spdx: "Llama-3.2-Community", url: "https://example.com/LICENSE.txt"))
            XCTAssertEqual(error.kind, .refused)
        }
        // The same SPDX with another URL is another licence.
        try await updater.acceptLicence(model: "gated", licence: LicenceTerms(spdx: "Llama-3.2-Community", url: "https://example.com/OTHER.txt"))
        let stillWaiting = try await updater.update()
        XCTAssertEqual(stillWaiting, .upToDate(sequence: 1))
        XCTAssertEqual(site.downloads(of: "gated"), [])

        try await updater.acceptLicence(model: "gated", licence: LicenceTerms(spdx: "Llama-3.2-Community", url: "https://example.com/LICENSE.txt"))
        let relaunched = try ModelUpdater(device(site, "phone"))
        XCTAssertEqual(relaunched.acceptedLicences()["gated"], try LicenceTerms(spdx: "Llama-3.2-Community", url: "https://example.com/LICENSE.txt"))
        let accepted = try await relaunched.update()
        XCTAssertEqual(accepted, .updated(sequence: 1, models: ["gated": "1.0.0"]), "a model left waiting does not let a 304 stand for it")
        XCTAssertEqual(site.downloads(of: "gated").count, 1)
        let again = try await relaunched.update()
        XCTAssertEqual(again, .notModified)
    }

    /// A release whose licence differs (its URL) waits again; the version accepted before keeps running.
    func testALicenceChangeAsksAgainAndKeepsTheVersionRunning() async throws {
        let site = try VariantSite()
        try site.publish([try model(site, "gated", version: 1, fields: ["licence": Self.licence])], version: "1.0.0")
        try site.site.start()
        let updater = try ModelUpdater(device(site, "phone"))
        try await updater.acceptLicence(model: "gated", licence: LicenceTerms(spdx: "Llama-3.2-Community", url: "https://example.com/LICENSE.txt"))
        _ = try await updater.update()
        XCTAssertEqual(updater.installed("gated")?.version, "1.0.0")
        var changed = Self.licence
        changed["url"] = "https://example.com/LICENSE-v2.txt"
        try site.publish([try model(site, "gated", version: 2, fields: ["licence": changed])], version: "2.0.0")
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .upToDate(sequence: 2))
        let waiting = await updater.lastPlan?.waiting
        XCTAssertEqual(waiting, ["gated": .licence(spdx: "Llama-3.2-Community", url: "https://example.com/LICENSE-v2.txt")])
        XCTAssertEqual(updater.installed("gated")?.version, "1.0.0")
        XCTAssertEqual(site.downloads(of: "gated").count, 1, "version 2 was not requested")
    }

    /// Network and charging conditions as the app reports them: not reported, a model that
    /// needs them waits (fail safe on Linux, where no transport can keep a request off
    /// cellular); on cellular an unmetered-only model and one over its cap wait, one under
    /// its cap installs; an unknown condition (a newer publisher's) holds its model back
    /// without refusing the manifest.
    func testDownloadConditionsAsTheAppReportsThem() async throws {
        let site = try VariantSite()
        try site.publish([
            try model(site, "wifi", version: 1, fields: ["download_conditions": ["network": "unmetered"]]),
            try model(site, "small", version: 1, size: 10_000, fields: ["download_conditions": ["cellular_max": 20_000]]),
            try model(site, "large", version: 1, size: 30_000, fields: ["download_conditions": ["cellular_max": 20_000]]),
            try model(site, "plugged", version: 1, fields: ["download_conditions": ["charging": "required"]]),
            try model(site, "future", version: 1, fields: ["download_conditions": ["network": "satellite"]]),
        ], version: "1.0.0")
        try site.site.start()
        let updater = try ModelUpdater(device(site, "phone"))
        _ = try await updater.update()
        var waiting = await updater.lastPlan?.waiting
        XCTAssertEqual(waiting, ["wifi": .notReported(condition: "network"), "large": .notReported(condition: "network"),
                                 "plugged": .notReported(condition: "charging"), "future": .unknownCondition("network 'satellite'")])
        XCTAssertEqual(updater.installedModels().map(\.name), ["small"])

        await updater.setConditions(DeviceConditions(network: .cellular, charging: false))
        _ = try await updater.update()
        waiting = await updater.lastPlan?.waiting
        XCTAssertEqual(waiting, ["wifi": .network(required: "unmetered"), "large": .cellularCap(bytes: 30_000, cap: 20_000),
                                 "plugged": .charging, "future": .unknownCondition("network 'satellite'")])
        for name in ["wifi", "large", "plugged", "future"] { XCTAssertEqual(site.downloads(of: name), [], name) }
        do {
            _ = try await updater.request("wifi")
            XCTFail("a model that needs an unmetered network was downloaded on cellular")
        } catch let error as ClientError {
            XCTAssertEqual(error, .conditionsNotMet(model: "wifi", reason: "needs an unmetered network"))
        }

        await updater.setConditions(DeviceConditions(network: .unmetered, charging: true))
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["wifi": "1.0.0", "large": "1.0.0", "plugged": "1.0.0"]))
        waiting = await updater.lastPlan?.waiting
        XCTAssertEqual(waiting, ["future": .unknownCondition("network 'satellite'")])
        XCTAssertEqual(site.downloads(of: "future"), [])
    }

    /// An install size larger than the volume's free space is refused before any request,
    /// naming the model, the bytes needed and the bytes free.
    func testFreeSpaceIsCheckedBeforeAnyRequest() async throws {
        let site = try VariantSite()
        let huge: Int64 = 1 << 53
        try site.publish([try model(site, "big", version: 1, fields: ["storage": ["install_size": huge]])], version: "1.0.0")
        try site.site.start()
        let updater = try ModelUpdater(device(site, "phone"))
        do {
            _ = try await updater.update()
            XCTFail("an install larger than the volume was attempted")
        } catch let error as ClientError {
            guard case .insufficientSpace(let model, let needed, let free) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(model, "big")
            XCTAssertGreaterThan(needed, huge - 40_000)
            XCTAssertLessThan(free, needed)
            XCTAssertEqual(error.kind, .refused)
        }
        XCTAssertEqual(site.downloads(of: "big"), [])
        XCTAssertNil(updater.installed("big"))
    }

    /// Under a budget for two models, requesting a third on-demand one evicts the on-demand
    /// model used longest ago (b: a was used since b was installed), never the one in use
    /// nor the essential one; the plan names the eviction.
    func testTheStorageBudgetEvictsTheLeastRecentlyUsedOnDemandModel() async throws {
        let site = try VariantSite()
        try site.publish([try model(site, "core", version: 1, download: "essential"),
                          try model(site, "a", version: 1, download: "on-demand"),
                          try model(site, "b", version: 1, download: "on-demand"),
                          try model(site, "c", version: 1, download: "on-demand")], version: "1.0.0")
        try site.site.start()
        let updater = try ModelUpdater(device(site, "phone", budget: 130_000))
        _ = try await updater.update(.essential)
        _ = try await updater.request("a")
        _ = try await updater.request("b")
        await updater.beginUse("a")
        await updater.endUse("a")
        _ = try await updater.request("c")
        let evictions = await updater.lastPlan?.evictions
        XCTAssertEqual(evictions, ["b"])
        XCTAssertEqual(updater.installedModels().map(\.name).sorted(), ["a", "c", "core"])

        // In use, a stays: b comes back by evicting c.
        await updater.beginUse("a")
        _ = try await updater.request("b")
        let next = await updater.lastPlan?.evictions
        XCTAssertEqual(next, ["c"])
        XCTAssertEqual(updater.installedModels().map(\.name).sorted(), ["a", "b", "core"])
    }

    /// When only models it may not evict (essential, in use) would make room, the update is
    /// refused naming them: nothing is downloaded, nothing evicted.
    func testTheStorageBudgetRefusesWhatOnlyProtectedModelsCouldMakeRoomFor() async throws {
        let site = try VariantSite()
        try site.publish([try model(site, "core", version: 1, download: "essential"),
                          try model(site, "a", version: 1, download: "on-demand"),
                          try model(site, "big", version: 1, download: "on-demand")], version: "1.0.0")
        try site.site.start()
        let updater = try ModelUpdater(device(site, "phone", budget: 90_000))
        _ = try await updater.update(.essential)
        _ = try await updater.request("a")
        await updater.beginUse("a")
        do {
            _ = try await updater.request("big")
            XCTFail("a model over the budget was installed")
        } catch let error as ClientError {
            guard case .overStorageBudget(let model, let needed, let budget, let wouldEvict) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(model, "big")
            XCTAssertGreaterThan(needed, 120_000)
            XCTAssertEqual(budget, 90_000)
            XCTAssertEqual(wouldEvict, ["core"], "removing core alone (used longest ago; a is in use) would make room")
            XCTAssertEqual(error.kind, .refused)
        }
        XCTAssertEqual(site.downloads(of: "big"), [])
        XCTAssertEqual(updater.installedModels().map(\.name).sorted(), ["a", "core"])
    }

    /// An update of every model (`update(.onDemand)`) evicts none: it wants them all, and an
    /// eviction would only make its next call install the evicted model again and evict
    /// another, downloading without end. Over the budget it is refused naming what would go.
    func testAnUpdateOfEveryModelEvictsNothing() async throws {
        let site = try VariantSite()
        try site.publish([try model(site, "a", version: 1, download: "on-demand"),
                          try model(site, "b", version: 1, download: "on-demand")], version: "1.0.0")
        try site.site.start()
        let updater = try ModelUpdater(device(site, "phone", budget: 60_000))
        _ = try await updater.request("a")
        for _ in 0..<2 {
            do {
                _ = try await updater.update(.onDemand)
                XCTFail("an update over the budget went ahead")
            } catch let error as ClientError {
                guard case .overStorageBudget(let model, _, _, let wouldEvict) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(model, "b")
                XCTAssertEqual(wouldEvict, ["a"])
            }
            XCTAssertEqual(updater.installedModels().map(\.name), ["a"])
        }
        XCTAssertEqual(site.downloads(of: "b"), [], "nothing of b was fetched")
        XCTAssertEqual(site.downloads(of: "a").count, 1, "a was fetched once")
        // Asked for alone, b takes a's place.
        _ = try await updater.request("b")
        XCTAssertEqual(updater.installedModels().map(\.name), ["b"])
    }

    /// Two updaters on one directory (an app and its extension) accepting licences at the
    /// same time keep every acceptance: each records under `licences.json.lock`, so neither
    /// writes over an entry the other added meanwhile.
    func testAcceptancesFromTwoProcessesAtOnceAreAllKept() async throws {
        let site = try VariantSite()
        let first = try ModelUpdater(device(site, "shared"))
        let second = try ModelUpdater(device(site, "shared"))
        let terms = try LicenceTerms(spdx: "MIT", url: nil)
        let perSide = 150
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (side, updater) in [("a", first), ("b", second)] {
                group.addTask {
                    for index in 0..<perSide { try await updater.acceptLicence(model: "\(side)\(index)", licence: terms) }
                }
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(first.acceptedLicences().count, 2 * perSide, "an acceptance was lost")
    }
}
