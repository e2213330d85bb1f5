import Foundation
import ModelCastFormat

/// An object a manifest tells devices to download, with what the manifest promises about it.
package struct ExpectedObject: Sendable {
    /// Which model and file this is, for reports (`tiny-llm/tiny-llm.gguf`, `tier 1b`).
    package let label: String
    package let url: String
    /// Promised SHA-256 (hex), when the profile carries one.
    package let sha256: String?
    /// Promised exact size in bytes.
    package let size: Int64?
    /// A size known only roughly (nomlens' `size_mb`): bytes and allowed difference.
    package let approximateSize: (bytes: Int64, tolerance: Int64)?
    /// Promised Content-Type, when the profile carries one.
    package let contentType: String?
    /// The artifact's segment index, when the manifest names one (modelcast profile).
    package var segmentIndex: SegmentIndexReference? = nil
}

extension ExpectedObject {
    /// What verify expects of one object a release names (`Release.objects`): its exact
    /// bytes, size and Content-Type (each is served like an artifact), and an artifact's
    /// segment index; labelled as the manifest names it (`llm@q4 2.0.0/q4.gguf`,
    /// `rollback llm 1.0.0 model signature`).
    init(_ object: ReleaseObject) {
        let prefix = object.section == .fallback ? "rollback " : ""
        let label: String
        switch object.kind {
        case .artifact: label = "\(prefix)\(object.unit) \(object.version)/\(object.place ?? object.key)"
        case .segmentIndex: label = "\(prefix)\(object.unit) \(object.version)/\(object.place ?? object.key) segment index"
        case .modelSignature: label = "\(prefix)\(object.unit) \(object.version) model signature"
        }
        let index = object.kind == .artifact ? object.artifact?.segments : nil
        self.init(label: label, url: object.url, sha256: object.sha256, size: object.size, approximateSize: nil, contentType: object.contentType,
                  segmentIndex: index.map { SegmentIndexReference(url: $0.url, sha256: $0.sha256, size: $0.size) })
    }
}

/// A model version (or variant) that names a model signature: `label` for reports
/// (`llm 1.0.0`, `llm@q4 1.0.0`), `name` the model's name, `model` its manifest entry.
package struct ModelSignatureReference: Sendable {
    package let label: String
    package let name: String
    package let model: ReleaseModel
    /// True for the rollback section's: what devices fall back to.
    package var fallback = false
}

/// What a manifest says, whatever its profile.
package struct ManifestFacts: Sendable {
    package let profile: ManifestProfile
    /// The modelcast format's sequence.
    package let sequence: Int64?
    /// The modelcast format's expiry (RFC 3339).
    package let expiresAt: String?
    /// Every object devices may download: current models first, then rollback targets.
    package let objects: [ExpectedObject]
    /// For a manifest with a staged rollout: what is wrong with its rollout block (empty
    /// when nothing). nil when there is no rollout.
    package var rolloutProblems: [String]? = nil
    /// The model versions (and variants) whose manifest entry names a model signature
    /// (modelcast profile): verify checks each bundle against the files.
    package var modelSignatures: [ModelSignatureReference] = []

    package init(profile: ManifestProfile, sequence: Int64?, expiresAt: String?, objects: [ExpectedObject], rolloutProblems: [String]? = nil) {
        self.profile = profile
        self.sequence = sequence
        self.expiresAt = expiresAt
        self.objects = objects
        self.rolloutProblems = rolloutProblems
    }

    /// Reads a manifest of any profile (`profile` nil: detect it from the fields present).
    package static func read(_ data: Data, profile requested: ManifestProfile? = nil, source: String) throws -> ManifestFacts {
        func fail(_ reason: String) -> ModelCastError { ManifestReader.failure(source: source, reason) }
        // JSON is UTF-8: a bad byte would otherwise surface as a confusing type error deep inside.
        if let offset = firstInvalidUTF8Offset(data) {
            throw fail("not valid UTF-8 JSON: the first bad byte, 0x\(String(format: "%02X", data[data.startIndex + offset])), is at byte offset \(offset)")
        }
        let json: JSONValue
        do { json = try JSONValue(parsing: data) } catch {
            throw fail("not valid JSON (\(describe(decodingError: error)))")
        }
        guard case .object = json else { throw fail("not a JSON object") }
        guard let profile = requested ?? ManifestProfile.detectionOrder.first(where: { $0.definition.claims(json) }) else {
            throw fail("cannot tell its profile from its fields; pass --profile")
        }
        return try profile.definition.read(ManifestReader(data: data, json: json, source: source))
    }
}

/// Where the manifest says an artifact's segment index is (`files[].segments`).
package struct SegmentIndexReference: Sendable {
    package let url: String
    package let sha256: String
    package let size: Int64
}
