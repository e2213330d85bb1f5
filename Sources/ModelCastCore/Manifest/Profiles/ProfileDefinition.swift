import Foundation

/// Everything one manifest profile is, in one type (one file per profile): the fields it
/// writes, the shape of release it can express, how its clients compare versions and move
/// back, how it renders a release, and how one of its manifests is read back into the
/// objects it tells devices to download. `ManifestProfile.definition` maps each case to its
/// type; nothing else switches over the profiles.
protocol ProfileDefinition: Sendable {
    /// What its manifest carries, for help (`version, url, sha256, …`).
    var summary: String { get }
    /// How its clients decide to download (`version equality`), for help and docs.
    var clientRule: String { get }
    /// How its clients move back to an earlier version, and so what a rollback must write.
    var rollbackForm: RollbackForm { get }
    /// How its clients move back, in a sentence, for rollback's help.
    var rollbackRule: String { get }
    /// Fields each model must (or may) carry in its metadata (`--meta`).
    var modelFields: [ProfileField] { get }
    /// Fields of the prototypes object, for the profiles that write one.
    var prototypeFields: [ProfileField] { get }
    /// Fields it writes that modelcast computes from the artifact (never `--meta`).
    var computedFields: [String] { get }
    /// What its manifest can express and its clients act on: stated by every profile (no
    /// default), and asked by every command instead of which profile it is.
    var capabilities: ProfileCapabilities { get }

    /// Throws, naming the counts, when the release has a shape the manifest cannot express.
    func checkShape(_ release: Release) throws
    /// Release-level fields it needs beyond each model's `modelFields`: (what, how to give it).
    func missingReleaseFields(_ release: Release) -> [(field: String, remedy: String)]
    /// The manifest for a release that passed `checkShape` and has every required field.
    func render(_ release: Release) -> JSONValue
    /// True when a manifest of unknown profile has this profile's telltale fields.
    func claims(_ json: JSONValue) -> Bool
    /// The objects a manifest of this profile names, with what it promises about each.
    func read(_ manifest: ManifestReader) throws -> ManifestFacts
    /// The storage key for a file of a model.
    func artifactKey(model: String, version: String, fileName: String, sha256: SHA256Digest) -> String
    /// What its clients would get wrong about this release, said as publish warnings.
    func publishWarnings(_ release: Release) -> [String]
    /// What a rollback that keeps the old version number leaves undone on devices already
    /// on `deviceVersion` (profiles whose rollback form is `higherVersionOnly`).
    func rollbackWithoutBumpWarning(deviceVersion: String, targetVersion: String) -> String?
    /// True when the object's URL itself proves its content (a content-derived file name),
    /// for profiles whose manifest carries no hash.
    func urlNamesContent(_ url: String, sha256: SHA256Digest) -> Bool
}

extension ProfileDefinition {
    var prototypeFields: [ProfileField] { [] }
    func publishWarnings(_ release: Release) -> [String] { [] }
    func rollbackWithoutBumpWarning(deviceVersion: String, targetVersion: String) -> String? { nil }
    func missingReleaseFields(_ release: Release) -> [(field: String, remedy: String)] { [] }
    func artifactKey(model: String, version: String, fileName: String, sha256: SHA256Digest) -> String {
        "models/\(model)/\(version)/\(fileName)"
    }
    func urlNamesContent(_ url: String, sha256: SHA256Digest) -> Bool { false }
}

/// How a profile's clients go back to an earlier version.
package enum RollbackForm: Sendable, Equatable {
    /// The manifest's sequence goes up; clients accept any version it names.
    case higherSequence
    /// Clients download whenever the named version (or file) differs from theirs.
    case anyDifferentVersion
    /// Clients only ever move to a higher version: going back needs the old bytes
    /// republished under a new, higher version (`rollback --bump`).
    case higherVersionOnly
}

/// The value type a profile field must have.
package enum FieldType: String, Sendable {
    case string, integer, number, boolean, stringList = "list of strings", date = "date (YYYY-MM-DD)"
}

/// A field a profile writes beyond url/hash/size, supplied with `--meta` or the config file.
package struct ProfileField: Sendable {
    /// Key inside a model's metadata; dots address nested objects (`hardware.gpu`).
    package let path: String
    package let type: FieldType
    package let required: Bool
    /// Taken from `--min-app-version` when the model does not set it.
    package let defaultsToMinAppVersion: Bool

    init(_ path: String, _ type: FieldType, required: Bool = true, defaultsToMinAppVersion: Bool = false) {
        self.path = path
        self.type = type
        self.required = required
        self.defaultsToMinAppVersion = defaultsToMinAppVersion
    }
}

// MARK: - Shapes several profiles share

/// Refuses a release that is not exactly one model with one file.
func requireOneModelWithOneFile(_ release: Release, profile: ManifestProfile) throws {
    guard release.models.count == 1, let (name, model) = release.models.first else {
        throw ModelCastError.usage("profile \(profile.rawValue) publishes exactly one model, got \(release.models.count): \(release.models.keys.sorted().joined(separator: ", "))")
    }
    try requireOneFile(model, name: name, profile: profile)
}

/// Refuses a release with no models, or with a model of more than one file.
func requireModelsWithOneFileEach(_ release: Release, profile: ManifestProfile) throws {
    try requireModels(release)
    for (name, model) in release.models { try requireOneFile(model, name: name, profile: profile) }
}

/// Refuses a release with no models.
func requireModels(_ release: Release) throws {
    guard !release.models.isEmpty else { throw ModelCastError.usage("nothing to publish: no models given") }
}

private func requireOneFile(_ model: ReleaseModel, name: String, profile: ManifestProfile) throws {
    guard model.files.count == 1 else {
        throw ModelCastError.usage("profile \(profile.rawValue) publishes exactly one file per model; model \(name) has \(model.files.count): \(model.files.map(\.name).joined(separator: ", "))")
    }
}

// MARK: - Reading a manifest back

/// A parsed manifest being read by its profile, with typed field accessors whose errors
/// name the manifest and the field.
struct ManifestReader {
    let data: Data
    let json: JSONValue
    let source: String

    func fail(_ reason: String) -> ModelCastError { Self.failure(source: source, reason) }

    /// The error for a manifest that cannot be read, naming it.
    static func failure(source: String, _ reason: String) -> ModelCastError { .invalidManifest(source: source, reason: reason) }

    func string(_ value: JSONValue?, _ field: String) throws -> String {
        guard let s = value?.stringValue else { throw fail("\(field) is missing or not a string") }
        return s
    }

    func integer(_ value: JSONValue?, _ field: String) throws -> Int64 {
        guard case .int(let i)? = value, i >= 0 else { throw fail("\(field) is missing or not a non-negative integer") }
        return i
    }

    func hex(_ text: String, _ field: String) throws -> String {
        guard SHA256Digest(hex: text) != nil, text == text.lowercased() else { throw fail("\(field) '\(text)' is not a lowercase hex SHA-256") }
        return text
    }

    /// A `sha256:<hex>` checksum's hex.
    func prefixedChecksum(_ value: JSONValue?, _ field: String) throws -> String {
        let text = try string(value, field)
        guard text.hasPrefix("sha256:") else { throw fail("\(field) '\(text)' does not start with sha256:") }
        return try hex(String(text.dropFirst(7)), field)
    }
}
