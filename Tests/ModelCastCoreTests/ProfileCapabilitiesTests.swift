import Foundation
import XCTest
import ModelCastTestSupport
@testable import ModelCastCore

/// A profile's capabilities are stated by its definition (issue 48, item 4): the table
/// below is what each profile says it can do, the commands follow what it says, and no
/// code outside `Manifest/Profiles/` asks which profile it is.
final class ProfileCapabilitiesTests: XCTestCase {
    /// What each profile can express, as its definition must state it.
    private let table: [ManifestProfile: ProfileCapabilities] = [
        .modelcast: [.writesPrototypes, .publishesTrees, .carriesSignatureAndExpiry, .stagesRollouts, .writesVariants,
                     .namesDefaultVariant, .writesSegmentIndexes, .carriesModelSignatures, .writesAnyMeta, .carriesModelPolicies],
        .tiers: [.writesVariants, .comparesVersionStrings],
        .catalog: [.writesPrototypes],
        .nomlens: [],
        .latest: [],
    ]

    func testEveryProfileStatesItsCapabilities() {
        XCTAssertEqual(Set(table.keys), Set(ManifestProfile.allCases), "a profile missing from the table: state what it can do here")
        for profile in ManifestProfile.allCases {
            XCTAssertEqual(profile.capabilities, table[profile], "\(profile)")
            let capabilities = profile.capabilities
            XCTAssertEqual(profile.writesPrototypes, capabilities.contains(.writesPrototypes), "\(profile)")
            XCTAssertEqual(profile.publishesTrees, capabilities.contains(.publishesTrees), "\(profile)")
            XCTAssertEqual(profile.carriesSignatureAndExpiry, capabilities.contains(.carriesSignatureAndExpiry), "\(profile)")
            XCTAssertEqual(profile.stagesRollouts, capabilities.contains(.stagesRollouts), "\(profile)")
            XCTAssertEqual(profile.writesVariants, capabilities.contains(.writesVariants), "\(profile)")
            XCTAssertEqual(profile.namesDefaultVariant, capabilities.contains(.namesDefaultVariant), "\(profile)")
            XCTAssertEqual(profile.writesSegmentIndexes, capabilities.contains(.writesSegmentIndexes), "\(profile)")
            XCTAssertEqual(profile.carriesModelSignatures, capabilities.contains(.carriesModelSignatures), "\(profile)")
            XCTAssertEqual(profile.writesAnyMeta, capabilities.contains(.writesAnyMeta), "\(profile)")
            XCTAssertEqual(profile.comparesVersionStrings, capabilities.contains(.comparesVersionStrings), "\(profile)")
            XCTAssertEqual(profile.carriesModelPolicies, capabilities.contains(.carriesModelPolicies), "\(profile)")
        }
    }

    /// Segment indexes, staged rollouts, variants and a default variant are refused or
    /// written by what the profile states, for every profile.
    func testPublishFollowsTheStatedCapabilities() throws {
        for profile in ManifestProfile.allCases {
            XCTAssertEqual(PublishRequest.SegmentIndexPolicy.always.applies(size: 1, profile: profile), profile.writesSegmentIndexes, "\(profile)")
            XCTAssertEqual(PublishRequest.SegmentIndexPolicy.auto.applies(size: 64 << 20, profile: profile), profile.writesSegmentIndexes, "\(profile)")

            XCTAssertEqual(Self.refusal { try RolloutRules.validateStart(percent: 1_000, schedule: nil, profile: profile, at: Date()) }?.contains("--rollout needs"),
                           profile.stagesRollouts ? nil : true, "\(profile)")

            var model = PublishRequest.Model(name: "m", version: "1.0.0", files: ["/dev/null"])
            let demanding = VariantRequirements(minMemory: 8 << 30)
            model.variants = [PublishRequest.Variant(name: "big", version: "1.0.0", files: ["/dev/null"], requires: demanding),
                              PublishRequest.Variant(name: "small", version: "1.0.0", files: ["/dev/null"], requires: demanding)]
            let refusal = Self.refusal { _ = try PublishRequest(models: [model], profile: profile, baseURL: "https://cdn.test/m") } ?? ""
            XCTAssertEqual(refusal.contains("has variants"), !profile.writesVariants, "\(profile): \(refusal)")
            XCTAssertEqual(refusal.contains("every variant has requirements"), profile.namesDefaultVariant, "\(profile): \(refusal)")
        }
    }

    /// A higher version that sorts lower as a string is warned about only where the
    /// profile's clients compare version strings.
    func testTheStringOrderWarningFollowsTheStatedCapability() throws {
        for profile in ManifestProfile.allCases {
            let live = Release(sequence: 1, publishedAt: "2026-11-22T00:00:00Z", channel: "stable", profile: profile.rawValue,
                               models: ["m": ReleaseModel(version: "1.9.0", files: [])])
            var warnings: [String] = []
            try VersionRules.checkVersions([("m", "1.10.0")], live: live, profile: profile) { warnings.append($0) }
            XCTAssertEqual(warnings.count, profile.comparesVersionStrings ? 1 : 0, "\(profile): \(warnings)")
        }
    }

    /// No code outside `Manifest/Profiles/` decides by which profile it is (`== .modelcast`,
    /// `!= .tiers`, `case .catalog`): it asks a capability.
    func testNoProfileIdentityChecksOutsideTheProfiles() throws {
        let names = ManifestProfile.allCases.map(\.rawValue).joined(separator: "|")
        let identity = try NSRegularExpression(pattern: "([=!]=\\s*(ManifestProfile)?\\.(\(names))\\b)|(\\.(\(names))\\s*[=!]=)|(case\\s+\\.(\(names))\\b)")
        var found: [String] = []
        let root = repositoryRoot + "/Sources"
        for path in try XCTUnwrap(FileManager.default.subpaths(atPath: root)) where path.hasSuffix(".swift") && !path.hasPrefix("ModelCastCore/Manifest/Profiles/") {
            let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(line)
                if identity.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                    found.append("Sources/\(path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertEqual(found, [], "profile identity checks outside Manifest/Profiles/: state a capability in ProfileCapabilities instead")
    }

    /// The message of the usage error `body` throws, or nil when it throws none.
    private static func refusal(_ body: () throws -> Void) -> String? {
        do { try body() } catch { return String(describing: error) }
        return nil
    }
}
