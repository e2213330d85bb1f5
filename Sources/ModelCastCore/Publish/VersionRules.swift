import Foundation
import ModelCastFormat

/// The version rules every command that names new versions applies (publish, promote):
/// never lower than the live one, and a version means the same files for good.
enum VersionRules {
    /// Versions (model name → version): never lower than the live one (`rollback` names
    /// the command that goes back), with a warning where a higher one sorts lower as a
    /// string, for `profile` only when its clients compare version strings (tiers).
    static func checkVersions(_ versions: [(name: String, version: String)], live: Release?, profile: ManifestProfile, rollback: String = "rollback", warn: (String) -> Void) throws {
        for (name, version) in versions {
            guard let previous = live?.unitsByLabel[name], let new = SemanticVersion(version), let old = SemanticVersion(previous.version) else { continue }
            if new < old {
                throw ModelCastError.versionConflict("version \(version) of model \(name) is lower than the live version \(previous.version); to go back, use \(rollback)")
            }
            if profile.comparesVersionStrings, new > old, Array(version.utf8).lexicographicallyPrecedes(Array(previous.version.utf8)) {
                warn("version \(version) of model \(name) sorts below the live \(previous.version) as a plain string: clients that compare version strings with > (the tiers profile's) will not update")
            }
        }
    }

    /// A version means the same files for good: not only the live release's, any that went
    /// live (after a rollback the live one is older), or equality clients that have it never
    /// update. `givenVersions`: texts with other build metadata that were taken as these versions.
    static func checkVersionsKeepTheirFiles(_ models: [String: ReleaseModel], wentLive: [Release], givenVersions: [String: String], log: (String) -> Void) throws {
        for (name, model) in models {
            for previous in (wentLive.reversed().compactMap { $0.unitsByLabel[name] }) where previous.version == model.version {
                if previous.files.map(\.sha256) != model.files.map(\.sha256) || previous.files.map(\.placement) != model.files.map(\.placement) {
                    if let given = givenVersions[name] {
                        throw ModelCastError.versionConflict("version \(given) of model \(name) has the same precedence as \(model.version), already published with different files (build metadata does not order versions, so clients cannot tell them apart); publish a new version instead")
                    }
                    throw ModelCastError.versionConflict("version \(model.version) of model \(name) is already published with different files; publish a new version instead")
                }
            }
        }
        for (name, given) in givenVersions.sorted(by: { $0.key < $1.key }) {
            log("version \(given) of model \(name) has the same precedence as the published \(models[name]!.version) and the same files: it is that version")
        }
    }
}
