import Foundation
import XCTest
@testable import ModelCastCore

/// Each profile's type renders a release and reads its own manifest back: the read names
/// exactly the objects the release put in it, and detection finds the profile unasked.
final class ProfileRoundTripTests: XCTestCase {
    private func file(_ name: String, _ version: String, model: String, bytes: String) throws -> ReleaseFile {
        let key = "models/\(model)/\(version)/\(name)"
        return ReleaseFile(name: name, key: key, url: "https://cdn.test/ml/" + key,
                           sha256: try SHA256Hasher.digest(Data(bytes.utf8)).hex, size: Int64(bytes.utf8.count),
                           contentType: "application/octet-stream")
    }

    /// A release every profile can express, with the fields each one needs.
    private func release(for profile: ManifestProfile) throws -> Release {
        var meta: [String: JSONValue] = [:]
        meta.set(.int(12), at: "num_classes")
        meta.set(.string("v3"), at: "class_list_version")
        meta.set(.string("2026-11-01"), at: "training_date")
        meta.set(.string("notes"), at: "release_notes")
        meta.set(.array([.string("ocr")]), at: "features")
        for part in ["neuralEngine", "gpu", "cpu"] { meta.set(.bool(true), at: "hardware.\(part)") }
        let model = ReleaseModel(version: "1.2.0", files: [try file("m.gguf", "1.2.0", model: "m", bytes: "new bytes")], meta: meta)
        let previous = ReleaseModel(version: "1.1.0", files: [try file("m.gguf", "1.1.0", model: "m", bytes: "old bytes")], meta: meta)
        let prototypes = profile.writesPrototypes
            ? ReleaseModel(version: "4.0.0", files: [try file("p.json", "4.0.0", model: "prototypes", bytes: "{}")], meta: ["classes": .int(12)])
            : nil
        return Release(sequence: 7, publishedAt: "2026-11-22T00:00:00Z", channel: "stable", profile: profile.rawValue,
                       minAppVersion: "2.0.0", models: ["m": model], prototypes: prototypes,
                       rollback: ReleaseRollback(sequence: 6, models: ["m": previous]), replaces: 6)
    }

    func testEveryProfileReadsBackWhatItRendered() throws {
        for profile in ManifestProfile.allCases {
            let release = try release(for: profile)
            let data = Data(try profile.render(release).serialized().utf8)
            let facts = try ManifestFacts.read(data, source: "\(profile.rawValue).json")
            XCTAssertEqual(facts.profile, profile, "detected from \(String(decoding: data, as: UTF8.self))")

            let current = release.models["m"]!.files[0]
            let named = Dictionary(facts.objects.map { ($0.url, $0) }, uniquingKeysWith: { a, _ in a })
            let object = try XCTUnwrap(named[current.url], "\(profile): the current file is named")
            // Every profile that carries a hash carries the file's; latest's proof is its content-derived name.
            if let sha256 = object.sha256 { XCTAssertEqual(sha256, current.sha256, "\(profile)") }
            if let size = object.size { XCTAssertEqual(size, current.size, "\(profile)") }
            if profile == .latest { XCTAssertNil(object.sha256) }
            if profile.writesPrototypes {
                XCTAssertNotNil(named[release.prototypes!.files[0].url], "\(profile): the prototypes file is named")
            }
            // Rollback targets are named by the profiles whose manifest carries them.
            let rollbackURL = release.rollback!.models["m"]!.files[0].url
            XCTAssertEqual(named[rollbackURL] != nil, profile == .modelcast || profile == .tiers, "\(profile): rollback url named")
            XCTAssertEqual(facts.sequence, profile.carriesSignatureAndExpiry ? 7 : nil, "\(profile)")
        }
    }

    func testLatestNamesItsFilesByContent() throws {
        let digest = try SHA256Hasher.digest(Data("bytes".utf8))
        let key = ManifestProfile.latest.artifactKey(model: "m", version: "1.0.0", fileName: "M.mlpackage.zip", sha256: digest)
        XCTAssertTrue(key.hasSuffix(".mlpackage.zip"), key)
        XCTAssertTrue(ManifestProfile.latest.urlNamesContent("https://cdn.test/" + key, sha256: digest))
        XCTAssertFalse(ManifestProfile.latest.urlNamesContent("https://cdn.test/" + key, sha256: try SHA256Hasher.digest(Data("other".utf8))))
        XCTAssertFalse(ManifestProfile.modelcast.urlNamesContent("https://cdn.test/" + key, sha256: digest))
        XCTAssertEqual(ManifestProfile.modelcast.artifactKey(model: "m", version: "1.0.0", fileName: "a.bin", sha256: digest), "models/m/1.0.0/a.bin")
    }

    func testOnlyTiersClientsNeedABumpToGoBack() {
        for profile in ManifestProfile.allCases {
            XCTAssertEqual(profile.rollbackForm == .higherVersionOnly, profile == .tiers, "\(profile)")
            XCTAssertEqual(profile.rollbackWithoutBumpWarning(deviceVersion: "1.2.0", targetVersion: "1.1.0") != nil, profile == .tiers, "\(profile)")
        }
    }
}
