import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// The example device (`examples/device`, `modelcast-device`) with issue 28's flags: the
/// device description a variant is chosen for, download policies, `--request`,
/// `--max-download`, and `revert MODEL --reason TEXT`.
final class DeviceExampleTests: XCTestCase {
    let device = modelcastBinary.replacingOccurrences(of: "/modelcast", with: "/modelcast-device")

    func run(_ site: VariantSite, _ arguments: [String], directory: String = "phone", file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try runProcess(device, arguments + ["--manifest", site.site.base + "/manifest.json", "--dir", site.work.at(directory)])
        XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)", file: file, line: line)
        return result.stdout
    }

    func testVariantsPoliciesAndRevertThroughTheExampleDevice() throws {
        let site = try VariantSite()
        func release(_ version: Int) throws -> [VariantSite.Model] {
            [
                .init(name: "m", variants: [
                    .init(name: "big", requires: ["min_memory": Int64(8) << 30, "platforms": ["ios": "17.0"]],
                          file: try site.work.write("v\(version)/big.bin", patternBytes(30_000, seed: UInt32(version)))),
                    .init(name: "small", file: try site.work.write("v\(version)/small.bin", patternBytes(10_000, seed: UInt32(10 + version)))),
                ], download: "essential"),
                .init(name: "extra", download: "on-demand", file: try site.work.write("v\(version)/extra.bin", patternBytes(5_000, seed: UInt32(20 + version)))),
            ]
        }
        try site.publish(try release(1), version: "1.0.0")
        try site.site.start()
        let phone = ["--memory", "16G", "--platform", "ios", "--os-version", "17.4"]

        let check = try run(site, phone + ["--check", "--policy", "essential"])
        XCTAssertEqual(check, "sequence 1: m 1.0.0, 30000 bytes to download\nm: variant big 1.0.0\n")
        let small = try run(site, ["--check", "--memory", "4G", "--platform", "ios", "--os-version", "17.4"], directory: "small-phone")
        XCTAssertTrue(small.contains("m: variant small 1.0.0 (skipped big: needs 8 GiB of memory; the device has 4 GiB)"), small)

        let deferred = try run(site, phone + ["--policy", "essential", "--max-download", "1000"])
        XCTAssertTrue(deferred.hasPrefix("deferred: 30000 bytes to download, more than --max-download\nm: variant big 1.0.0\n"), deferred)
        let first = try run(site, phone + ["--policy", "essential"])
        XCTAssertEqual(first, "updated to sequence 1: m 1.0.0\nrunning m 1.0.0 (variant big): models/m/current/big.bin\n")
        let requested = try run(site, phone + ["--request", "extra"])
        XCTAssertTrue(requested.hasPrefix("requested running extra 1.0.0: models/extra/current/extra.bin\n"), requested)

        try site.publish(try release(2), version: "2.0.0")
        let second = try run(site, phone + ["--policy", "prefetch"])
        XCTAssertTrue(second.hasPrefix("updated to sequence 2: extra 2.0.0, m 2.0.0\n"), second)
        let reverted = try run(site, ["revert", "m", "--reason", "garbled output"])
        XCTAssertEqual(reverted, "reverted m to 1.0.0 (variant big); the version it ran is refused\n")
        let after = try run(site, phone + ["--check", "--policy", "prefetch"])
        XCTAssertTrue(after.contains("m: 2.0.0 refused on this device (garbled output), left as it is"), after)
        let again = try run(site, phone + ["--policy", "prefetch"])
        XCTAssertTrue(again.contains("running m 1.0.0 (variant big): models/m/current/big.bin"), again)

        let nothing = try runProcess(device, ["revert", "m", "--reason", "x", "--manifest", site.site.base + "/manifest.json", "--dir", site.work.at("small-phone")])
        XCTAssertEqual(nothing.status, 1)
        XCTAssertTrue(nothing.stderr.contains("model 'm' is not installed on this device"), nothing.stderr)
    }
}
