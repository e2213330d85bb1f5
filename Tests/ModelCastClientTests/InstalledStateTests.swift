import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// `ModelUpdater.installedState()`: what the conformance `state` call prints, read from the
/// disk and `state.json` alone.
final class InstalledStateTests: XCTestCase {
    /// Before any update: no sequence, no model. After two: the sequence, the version in use
    /// with its files (a tree's nested ones, not the client's records), the kept version. A
    /// link planted in the version directory is not followed, and the digests are the disk's.
    func testStateNamesTheVersionItsFilesKeptVersionsAndRefusal() async throws {
        let site = try ClientTests.Site()
        let v1 = try site.work.write("v1/m.bin", patternBytes(20_000, seed: 1))
        try site.work.write("v2/m/weights.bin", patternBytes(21_000, seed: 2))
        try site.work.write("v2/m/sub/config.json", text: "{}")
        try site.publish([v1], version: "1.0.0")
        try site.start()
        let updater = try ModelUpdater(site.configuration())
        let empty = try await updater.installedState()
        XCTAssertNil(empty.sequence)
        XCTAssertEqual(empty.models, [])

        _ = try await updater.update()
        try site.publish([site.work.at("v2/m")], version: "2.0.0", ["--no-zip"])
        _ = try await updater.update()
        let state = try await updater.installedState()
        XCTAssertEqual(state.sequence, 2)
        let model = try XCTUnwrap(state.models.first)
        XCTAssertEqual(state.models.count, 1)
        XCTAssertEqual([model.name, model.version], ["m", "2.0.0"])
        XCTAssertNil(model.variant)
        XCTAssertEqual(model.previous, ["1.0.0"])
        XCTAssertNil(model.refused)
        let id = model.files.first.map { $0.path.split(separator: "/")[3] } ?? ""
        XCTAssertEqual(model.files.map(\.path), ["models/m/versions/\(id)/m/sub/config.json", "models/m/versions/\(id)/m/weights.bin"])
        for file in model.files {
            XCTAssertEqual(file.sha256, try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: site.work.at("device/" + file.path)))).hex)
        }

        let version = site.work.at("device/models/m/versions/\(id)")
        try FileManager.default.createSymbolicLink(atPath: version + "/m/outside", withDestinationPath: site.work.at("v1"))
        try Data("changed".utf8).write(to: URL(fileURLWithPath: version + "/m/sub/config.json"))
        let after = try await updater.installedState()
        XCTAssertEqual(after.models.first?.files.map(\.path), model.files.map(\.path), "the planted link is not followed")
        XCTAssertEqual(after.models.first?.files.first?.sha256, try SHA256Hasher.digest(Data("changed".utf8)).hex)

        try await updater.reportUnusable(model: "m", reason: "garbled")
        let reverted = try await updater.installedState()
        XCTAssertEqual(reverted.models.first?.version, "1.0.0")
        XCTAssertEqual(reverted.models.first?.previous, [])
        XCTAssertEqual(reverted.models.first?.refused, "2.0.0")
        XCTAssertEqual(reverted.sequence, 2)
    }
}
