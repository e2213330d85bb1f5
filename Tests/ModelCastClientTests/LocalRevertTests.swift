import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// Issue 28, client side: `reportUnusable` goes back to the previous kept version at once,
/// offline, and refuses the reported version until the manifest names another one.
final class LocalRevertTests: XCTestCase {
    typealias Site = ClientTests.Site

    func sha256(_ path: String) throws -> String {
        try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: path))).hex
    }

    func state(_ site: Site, _ directory: String = "device") throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: site.work.at("\(directory)/state.json")))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// 1.1.0 reported unusable with the server stopped: the device runs 1.0.0 again at once;
    /// the next updates (this launch and the next) against the same manifest leave it there
    /// and say why; 1.2.0 installs.
    func testReportUnusableSwitchesBackOfflineAndRefusesTheVersion() async throws {
        let site = try Site()
        let v1 = try site.work.write("v1/m.bin", patternBytes(30_000, seed: 1))
        let v2 = try site.work.write("v2/m.bin", patternBytes(31_000, seed: 2))
        try site.publish([v1], version: "1.0.0")
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        _ = try await updater.update()
        try site.publish([v2], version: "1.1.0")
        let second = try await updater.update()
        XCTAssertEqual(second, .updated(sequence: 2, models: ["m": "1.1.0"]))
        let bad = try XCTUnwrap(updater.installed("m")).directory.lastPathComponent

        site.stopServer()
        let reverted = try await updater.reportUnusable(model: "m", reason: "crashes on load")
        XCTAssertEqual(reverted.version, "1.0.0")
        XCTAssertEqual(updater.installed("m"), reverted)
        XCTAssertEqual(try sha256(reverted.mainFile.path), try sha256(v1), "the path the app keeps now holds 1.0.0")
        let refused = try XCTUnwrap((try state(site)["refused"] as? [String: Any])?["m"] as? [String: Any])
        XCTAssertEqual(refused["id"] as? String, bad)
        XCTAssertEqual(refused["reason"] as? String, "crashes on load")

        try site.start()
        let checked = try await updater.check()
        let plan = try XCTUnwrap(checked, "the next check fetches the manifest whole")
        let refusal = try XCTUnwrap(plan.refused["m"])
        XCTAssertEqual([refusal.model, refusal.version, refusal.id, refusal.reason], ["m", "1.1.0", bad, "crashes on load"])
        XCTAssertNil(refusal.variant)
        XCTAssertEqual(plan.installs, [:])
        XCTAssertEqual(plan.versions, [:])
        let downloadsBefore = site.requests.filter { $0.contains("/models/models/") }.count
        let third = try await updater.update()
        XCTAssertEqual(third, .upToDate(sequence: 2))
        XCTAssertEqual(updater.installed("m")?.version, "1.0.0")
        let relaunched = try ModelUpdater(site.configuration())
        let fourth = try await relaunched.update()
        XCTAssertTrue([UpdateOutcome.notModified, .upToDate(sequence: 2)].contains(fourth), "\(fourth)")
        XCTAssertEqual(relaunched.installed("m")?.version, "1.0.0", "the refusal outlives the launch")
        XCTAssertEqual(site.requests.filter { $0.contains("/models/models/") }.count, downloadsBefore, "1.1.0 is not fetched again")
        XCTAssertFalse(FileManager.default.fileExists(atPath: site.work.at("device/models/m/versions/\(bad)")), "the refused version's files go at the next update")

        try site.publish([try site.work.write("v3/m.bin", patternBytes(32_000, seed: 3))], version: "1.2.0")
        let fixed = try await relaunched.update()
        XCTAssertEqual(fixed, .updated(sequence: 3, models: ["m": "1.2.0"]))
        XCTAssertNil((try state(site)["refused"] as? [String: Any])?["m"], "a new release lifts the refusal")
    }

    /// Nothing to go back to: a named error, and nothing changes (link, state). A model
    /// that is not installed: another named error.
    func testNoPreviousVersionIsANamedErrorAndChangesNothing() async throws {
        let site = try Site()
        try site.publish([try site.work.write("v1/m.bin", patternBytes(3_000, seed: 1))], version: "1.0.0")
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        _ = try await updater.update()
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: site.work.at("device/models/m/current"))
        let stateBefore = try Data(contentsOf: URL(fileURLWithPath: site.work.at("device/state.json")))
        do {
            _ = try await updater.reportUnusable(model: "m", reason: "wrong answers")
            XCTFail("went back to a version that is not there")
        } catch let error as ClientError {
            XCTAssertEqual(error, .noPreviousVersion(model: "m", version: "1.0.0"))
            XCTAssertTrue(error.description.contains("no version before '1.0.0' is kept"), error.description)
        }
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: site.work.at("device/models/m/current")), link)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: site.work.at("device/state.json"))), stateBefore)
        do {
            _ = try await updater.reportUnusable(model: "other", reason: "x")
            XCTFail("reverted a model that is not installed")
        } catch let error as ClientError {
            XCTAssertEqual(error, .notInstalled(model: "other"))
        }
    }

    /// `reportUnusable` does not wait for an update under way (here it runs inside the
    /// update's `shouldDownload` hook, from another updater on the same directory): the
    /// update then installs 1.2.0 over the version switched to, keeps that one as the
    /// previous, and the refusal of 1.1.0 is lifted by the new release.
    func testReportUnusableDuringAnUpdate() async throws {
        let site = try Site()
        for (index, version) in ["1.0.0", "1.1.0"].enumerated() {
            try site.publish([try site.work.write("v\(index)/m.bin", patternBytes(20_000 + index, seed: UInt32(index)))], version: version)
            if index == 0 { try site.start() }
            _ = try await ModelUpdater(site.configuration()).update()
        }
        try site.publish([try site.work.write("v2/m.bin", patternBytes(22_000, seed: 9))], version: "1.2.0")
        let plain = site.configuration()
        var configuration = plain
        configuration.shouldDownload = { _ in
            guard let other = try? ModelUpdater(plain) else { return false }
            return (try? await other.reportUnusable(model: "m", reason: "slow"))?.version == "1.0.0"
        }
        let updater = try ModelUpdater(configuration)
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 3, models: ["m": "1.2.0"]))
        let installed = try XCTUnwrap((try state(site)["installed"] as? [String: Any])?["m"] as? [String: Any])
        XCTAssertEqual((installed["previous"] as? [String])?.map { String($0.prefix(5)) }, ["1.0.0"])
        XCTAssertNil((try state(site)["refused"] as? [String: Any])?["m"])
    }
}
