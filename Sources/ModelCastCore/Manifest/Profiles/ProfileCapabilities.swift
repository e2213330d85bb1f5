import Foundation

/// What a profile's manifest can express and its clients act on. Each profile's definition
/// states its own set (the requirement has no default, so a new profile says what it can
/// instead of inheriting another's assumptions); code outside `Manifest/Profiles/` asks
/// these, never which profile it is.
package struct ProfileCapabilities: OptionSet, Sendable {
    package let rawValue: Int

    package init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// It writes a prototypes object beside the models.
    package static let writesPrototypes = ProfileCapabilities(rawValue: 1 << 0)
    /// It can name a directory's files one by one (a tree model, `--no-zip`); profiles
    /// whose clients read one URL per model cannot.
    package static let publishesTrees = ProfileCapabilities(rawValue: 1 << 1)
    /// Its manifest has fields for an inline signature and `expires_at`.
    package static let carriesSignatureAndExpiry = ProfileCapabilities(rawValue: 1 << 2)
    /// Its clients know the cohort rule, so a release can go to a share of devices
    /// (`--rollout`, `--rollout-schedule`); elsewhere every device would take it at once.
    package static let stagesRollouts = ProfileCapabilities(rawValue: 1 << 3)
    /// It writes a model's variants (each with its own version, files and requirements).
    package static let writesVariants = ProfileCapabilities(rawValue: 1 << 4)
    /// It names a default variant's version and files at the model's top level, which
    /// clients that predate variants install on every device.
    package static let namesDefaultVariant = ProfileCapabilities(rawValue: 1 << 5)
    /// Its manifest names each large artifact's segment index (delta updates).
    package static let writesSegmentIndexes = ProfileCapabilities(rawValue: 1 << 6)
    /// Its manifest names each unit's OpenSSF model signature (`model_signature`).
    package static let carriesModelSignatures = ProfileCapabilities(rawValue: 1 << 7)
    /// It writes whatever metadata a model carries (`--meta`); a fixed-shape profile
    /// writes only its own fields, so any other key would be dropped silently.
    package static let writesAnyMeta = ProfileCapabilities(rawValue: 1 << 8)
    /// Its clients compare version strings with `>`: a higher version that sorts lower as
    /// a string is never installed.
    package static let comparesVersionStrings = ProfileCapabilities(rawValue: 1 << 9)
    /// Its model entries carry a licence, download conditions and storage (`licence`,
    /// `download_conditions`, `storage`), which its clients enforce; publish computes
    /// every unit's install size for it.
    package static let carriesModelPolicies = ProfileCapabilities(rawValue: 1 << 10)
}
