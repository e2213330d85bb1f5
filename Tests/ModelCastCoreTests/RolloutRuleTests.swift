import Foundation
import XCTest
@testable import ModelCastCore

/// The staged-rollout cohort rule (`Rollout`): the documented bucket function, the share
/// it gives, cohorts that only grow, halts, schedules, and the block's validity checks.
final class RolloutRuleTests: XCTestCase {
    let salt = "0123456789abcdef0123456789abcdef"

    /// The bucket is SHA-256(salt ":" id), first 8 bytes big-endian, mod 10 000. These
    /// values were computed with Python's hashlib, independently of modelcast:
    /// int.from_bytes(sha256((salt + ":" + id).encode()).digest()[:8], "big") % 10000.
    func testBucketMatchesAnIndependentImplementation() {
        XCTAssertEqual(Rollout.bucket(salt: salt, deviceID: "device-0"), 9561)
        XCTAssertEqual(Rollout.bucket(salt: salt, deviceID: "device-1"), 1836)
        XCTAssertEqual(Rollout.bucket(salt: "d610dd4c5ae3fbffd179516e27cfefe7", deviceID: "ios-7F3A2C"), 19)
        XCTAssertEqual(Rollout.bucket(salt: "salt-salt-salt-salt", deviceID: ""), 2116)
    }

    /// Over 100 000 synthetic ids the candidate's share is within ±0.5 % of the percentage.
    func testShareIsWithinHalfAPercentOfThePercentage() {
        let ids = (0..<100_000).map { "device-\($0)" }
        for percent in [1, 10, 50] {
            let rollout = Rollout(basisPoints: percent * 100, salt: salt, startedAt: "2026-11-01T00:00:00Z")
            // Counted once: a hundred thousand SHA-256s per pass in a debug build.
            let selected = ids.filter { rollout.selects(deviceID: $0, at: Date()) }.count
            let share = Double(selected) / 1000
            XCTAssertEqual(share, Double(percent), accuracy: 0.5, "\(percent)%: \(share)%")
            let simulation = RolloutSimulation(release: release(rollout), devices: 100_000, at: Date())
            XCTAssertEqual(simulation.candidate.devices, selected, "simulate counts what the rule selects")
            XCTAssertEqual(simulation.candidate.devices + simulation.fallback.devices, 100_000)
        }
    }

    /// Raising 10 % → 50 % keeps the salt, so every device of the 10 % cohort stays in it;
    /// a halt (0 %) selects no device at all.
    func testRaisingKeepsTheCohortAndHaltSelectsNobody() {
        let ids = (0..<20_000).map { "device-\($0)" }
        let ten = Rollout(basisPoints: 1_000, salt: salt, startedAt: "2026-11-01T00:00:00Z")
        var fifty = ten
        fifty.basisPoints = 5_000
        let cohort10 = Set(ids.filter { ten.selects(deviceID: $0, at: Date()) })
        let cohort50 = Set(ids.filter { fifty.selects(deviceID: $0, at: Date()) })
        XCTAssertTrue(cohort10.isSubset(of: cohort50))
        XCTAssertGreaterThan(cohort50.count, cohort10.count * 4)
        var halted = ten
        halted.basisPoints = 0
        XCTAssertTrue(halted.isHalted)
        XCTAssertTrue(ids.allSatisfy { !halted.selects(deviceID: $0, at: Date()) })
    }

    /// A schedule evaluated at several times gives the step percentages; before the first
    /// step nobody, after the last 100 %.
    func testScheduleGivesTheStepPercentages() throws {
        let start = try XCTUnwrap(parseTimestamp("2026-11-01T00:00:00Z"))
        let steps = try Rollout.parseSchedule("1%,10%@24h,50%@72h,100%@7d", start: start)
        XCTAssertEqual(steps.map(\.basisPoints), [100, 1_000, 5_000, 10_000])
        XCTAssertEqual(steps.map(\.at), ["2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z", "2026-11-04T00:00:00Z", "2026-11-08T00:00:00Z"])
        let rollout = Rollout(basisPoints: 100, salt: salt, startedAt: "2026-11-01T00:00:00Z", schedule: steps)
        XCTAssertEqual(rollout.problems, [])
        let hour: TimeInterval = 3600
        for (offset, expected) in [(-hour, 0), (0, 100), (23 * hour, 100), (24 * hour, 1_000), (71 * hour, 1_000), (72 * hour, 5_000), (7 * 24 * hour, 10_000), (30 * 24 * hour, 10_000)] {
            XCTAssertEqual(rollout.basisPoints(at: start.addingTimeInterval(offset)), expected, "at +\(offset / hour)h")
        }
        XCTAssertTrue(rollout.isInProgress(at: start.addingTimeInterval(-hour)), "a schedule yet to start is in progress")
        XCTAssertFalse(rollout.isInProgress(at: start.addingTimeInterval(8 * 24 * hour)), "at 100% it is done")
        let ids = (0..<100_000).map { "device-\($0)" }
        let share = rollout.basisPoints(at: start.addingTimeInterval(30 * hour))
        let atTen = Double(ids.filter { Rollout.bucket(salt: salt, deviceID: $0) < share }.count) / 1000
        XCTAssertEqual(atTen, 10, accuracy: 0.5)
    }

    /// Percentages and schedules that make no sense are refused, naming the value.
    func testBadPercentagesAndSchedulesAreRefused() {
        XCTAssertEqual(try Rollout.parsePercent("10%"), 1_000)
        XCTAssertEqual(try Rollout.parsePercent("0.5%"), 50)
        XCTAssertEqual(try Rollout.parsePercent("12.25"), 1_225)
        XCTAssertEqual(try Rollout.parsePercent("100%"), 10_000)
        for bad in ["", "%", "abc", "-5%", "101%", "0.125%", "1e2", "5%%", " 5"] {
            XCTAssertThrowsError(try Rollout.parsePercent(bad), bad) { error in
                XCTAssertTrue(String(describing: error).contains("'\(bad)'"), "\(error)")
            }
        }
        let start = Date()
        for bad in ["10%@24h,5%@48h", "10%@24h,20%@12h", "1%,10%", "1%,10%@soon", "0%,10%@1h", "1%,,10%@2h"] {
            XCTAssertThrowsError(try Rollout.parseSchedule(bad, start: start), bad)
        }
        let broken = Rollout(basisPoints: 12_000, salt: "short", startedAt: "yesterday",
                             schedule: [.init(at: "2026-11-02T00:00:00Z", basisPoints: 5_000), .init(at: "2026-11-01T00:00:00Z", basisPoints: 1_000)])
        let problems = broken.problems.joined(separator: "\n")
        for expected in ["percent 120 is outside 0–100", "salt 'short'", "started_at 'yesterday'", "schedule[1]"] {
            XCTAssertTrue(problems.contains(expected), "\(expected) in \(problems)")
        }
    }

    /// The block round-trips through the manifest JSON (fractions of a percent included),
    /// and a percentage with more than two decimals does not decode.
    func testTheBlockRoundTripsThroughTheManifest() throws {
        var original = release(Rollout(basisPoints: 50, salt: salt, startedAt: "2026-11-01T00:00:00Z",
                                       schedule: [.init(at: "2026-11-01T00:00:00Z", basisPoints: 50), .init(at: "2026-11-02T00:00:00Z", basisPoints: 1_250)]))
        original.sequence = 7
        let text = original.jsonValue().serialized()
        XCTAssertTrue(text.contains("\"percent\": 0.5"), text)
        XCTAssertTrue(text.contains("\"percent\": 12.5"), text)
        XCTAssertEqual(try Release.decode(Data(text.utf8), source: "test"), original)
        let tooFine = text.replacingOccurrences(of: "\"percent\": 12.5", with: "\"percent\": 12.505")
        XCTAssertThrowsError(try Release.decode(Data(tooFine.utf8), source: "test"))
    }

    private func release(_ rollout: Rollout) -> Release {
        let file = ReleaseFile(name: "m.bin", key: "models/m/1.1.0/m.bin", url: "https://cdn.example.com/models/m/1.1.0/m.bin",
                               sha256: String(repeating: "a", count: 64), size: 1, contentType: "application/octet-stream")
        var old = file
        old.key = "models/m/1.0.0/m.bin"
        return Release(sequence: 2, publishedAt: "2026-11-01T00:00:00Z", channel: "stable", profile: "modelcast",
                       models: ["m": ReleaseModel(version: "1.1.0", files: [file])],
                       rollback: ReleaseRollback(sequence: 1, models: ["m": ReleaseModel(version: "1.0.0", files: [old])]), rollout: rollout, replaces: 1)
    }
}
