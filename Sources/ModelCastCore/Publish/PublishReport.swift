import Foundation
import ModelCastFormat

/// What a publish did (or, with dry run, would do).
package struct PublishReport: Codable, Sendable {
    /// One object written (or found already in place).
    package struct Object: Codable, Sendable, Equatable {
        package let key: String
        package let role: String
        package let outcome: String
        package let size: Int64
        package let sha256: String
    }

    /// One model of the release: its version, and how many of its files this run stored
    /// and how many were already there (an unchanged model costs no upload).
    package struct Model: Codable, Sendable, Equatable {
        package let name: String
        package let version: String
        package let files: Int
        package let size: Int64
        /// Files this run stored (a dry run: would store).
        package let stored: Int
        /// Files already in the target, reused as they are.
        package let reused: Int
    }

    package let target: String
    package let profile: String
    /// True when the target already held exactly this release: nothing was written.
    package let unchanged: Bool
    package let dryRun: Bool
    package let sequence: Int64
    package let previousSequence: Int64?
    package let manifestKey: String
    package let manifestURL: String
    package let objects: [Object]
    package let warnings: [String]
    /// The manifest as published (or as it would be): its bytes as text. In JSON, the
    /// manifest as an object, with `manifest_sha256` of its bytes.
    package let manifest: String
    /// Requests sent to a network store, by HTTP method.
    package var requests: [String: Int]?
    /// The release's models, by name.
    package var models: [Model] = []
    /// What a device on the live version would fetch of each new file with a segment index.
    package var reuse: [Reuse] = []
    /// Every interface change of a model version this release publishes, each difference
    /// with its facet and kind: compatible ones, and breaking ones `--interface-change`
    /// accepted (docs/interface-contract.md).
    package var interfaceChanges: [InterfaceChange] = []

    /// For one new file with a segment index: what a device running the live version of
    /// its model fetches to update (`DeltaPlan`), and how.
    /// One difference between a model version's interface and the live version's.
    package struct InterfaceChange: Codable, Sendable, Equatable {
        /// The model (`NAME`, or `NAME@VARIANT`).
        package let model: String
        /// The live version, and the version published.
        package let from: String
        package let to: String
        /// The version whose interface was compared when `from` recorded none (the last one recorded); nil when it is `from`.
        package let comparedWith: String?
        /// The facet's name (`InterfaceFacet`: `chat_template`, `vocabulary`, …).
        package let facet: String
        /// `compatible` or `breaking` (after the config file's `interface:`).
        package let kind: String
        /// The change in plain words (`chat template changed`).
        package let description: String

        enum CodingKeys: String, CodingKey {
            case model, from, to, facet, kind, description
            case comparedWith = "compared_with"
        }
    }

    package struct Reuse: Codable, Sendable, Equatable {
        package let model: String
        package let version: String
        package let file: String
        /// The live version the device runs.
        package let from: String
        package let size: Int64
        package let fetchedBytes: Int64
        package let rangeRequests: Int
        /// True when the plan fetches more than 70 % of the file: devices download it whole.
        package let wholeDownload: Bool

        enum CodingKeys: String, CodingKey {
            case model, version, file, from, size
            case fetchedBytes = "fetched_bytes", rangeRequests = "range_requests", wholeDownload = "whole_download"
        }
    }

    package init(target: String, profile: String, unchanged: Bool, dryRun: Bool, sequence: Int64, previousSequence: Int64?, manifestKey: String,
                manifestURL: String, objects: [Object], warnings: [String], manifest: String, requests: [String: Int]?, models: [Model] = []) {
        self.target = target
        self.profile = profile
        self.unchanged = unchanged
        self.dryRun = dryRun
        self.sequence = sequence
        self.previousSequence = previousSequence
        self.manifestKey = manifestKey
        self.manifestURL = manifestURL
        self.objects = objects
        self.warnings = warnings
        self.manifest = manifest
        self.requests = requests
        self.models = models
    }

    /// The models of `release`, with what `objects` says this run stored of their files.
    static func models(of release: Release?, objects: [Object]) -> [Model] {
        guard let release else { return [] }
        let stored = Set(objects.filter { $0.role == "artifact" && ($0.outcome == "created" || $0.outcome == "would store") }.map(\.key))
        // Per unit: a model with variants reports each variant (`NAME@VARIANT`).
        let units = release.unitsByLabel
        return units.keys.sorted().map { name in
            let model = units[name]!
            let count = model.files.filter { stored.contains($0.key) }.count
            return Model(name: name, version: model.version, files: model.files.count, size: model.files.reduce(0) { $0 + $1.size },
                         stored: count, reused: model.files.count - count)
        }
    }

    enum CodingKeys: String, CodingKey {
        case target, profile, unchanged, sequence, models, objects, warnings, manifest, requests, reuse
        case interfaceChanges = "interface_changes"
        case dryRun = "dry_run", previousSequence = "previous_sequence", manifestKey = "manifest_key", manifestURL = "manifest_url"
        case manifestSHA256 = "manifest_sha256"
    }

    package func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(target, forKey: .target)
        try c.encode(profile, forKey: .profile)
        try c.encode(unchanged, forKey: .unchanged)
        try c.encode(dryRun, forKey: .dryRun)
        try c.encode(sequence, forKey: .sequence)
        try c.encodeIfPresent(previousSequence, forKey: .previousSequence)
        try c.encode(manifestKey, forKey: .manifestKey)
        try c.encode(manifestURL, forKey: .manifestURL)
        try c.encode(models, forKey: .models)
        try c.encode(objects, forKey: .objects)
        try c.encode(warnings, forKey: .warnings)
        let bytes = Data(manifest.utf8)
        // The manifest as JSON (what a pipeline reads), and the SHA-256 of its exact bytes.
        // try?: a manifest that is not JSON (never one modelcast wrote) is reported as its text.
        if let value = try? JSONValue(parsing: bytes) {
            try c.encode(value, forKey: .manifest)
        } else {
            try c.encode(manifest, forKey: .manifest)
        }
        if !bytes.isEmpty { try c.encode(SHA256Hasher.digest(bytes).hex, forKey: .manifestSHA256) }
        try c.encodeIfPresent(requests, forKey: .requests)
        try c.encode(reuse, forKey: .reuse)
        try c.encode(interfaceChanges, forKey: .interfaceChanges)
    }

    package init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        target = try c.decode(String.self, forKey: .target)
        profile = try c.decode(String.self, forKey: .profile)
        unchanged = try c.decode(Bool.self, forKey: .unchanged)
        dryRun = try c.decode(Bool.self, forKey: .dryRun)
        sequence = try c.decode(Int64.self, forKey: .sequence)
        previousSequence = try c.decodeIfPresent(Int64.self, forKey: .previousSequence)
        manifestKey = try c.decode(String.self, forKey: .manifestKey)
        manifestURL = try c.decode(String.self, forKey: .manifestURL)
        objects = try c.decode([Object].self, forKey: .objects)
        warnings = try c.decode([String].self, forKey: .warnings)
        // try?: either form is accepted (see `encode`): text, else JSON.
        if let text = try? c.decode(String.self, forKey: .manifest) {
            manifest = text
        } else {
            manifest = try c.decode(JSONValue.self, forKey: .manifest).serialized()
        }
        requests = try c.decodeIfPresent([String: Int].self, forKey: .requests)
        models = try c.decodeIfPresent([Model].self, forKey: .models) ?? []
        reuse = try c.decodeIfPresent([Reuse].self, forKey: .reuse) ?? []
        interfaceChanges = try c.decodeIfPresent([InterfaceChange].self, forKey: .interfaceChanges) ?? []
    }
}

extension PublishReport {
    /// The report of a commit (applied, or a dry run's plan) with the objects it wrote.
    init(_ plan: CommitPlan, state: TargetState, objects: [PublishReport.Object], warnings: [String], storage: any Storage) {
        self.init(
            target: storage.location, profile: plan.settings.profile.rawValue, unchanged: false, dryRun: plan.settings.dryRun,
            sequence: plan.release.sequence, previousSequence: state.live?.sequence, manifestKey: plan.settings.manifestKey,
            manifestURL: URLParts.url(base: plan.settings.baseURL, key: plan.settings.manifestKey), objects: objects,
            warnings: warnings, manifest: String(decoding: plan.manifestData, as: UTF8.self), requests: storage.requestCounts,
            models: PublishReport.models(of: plan.release, objects: objects))
    }

    /// The report of a command that found its release already live: nothing was written.
    init(unchanged state: TargetState, settings: CommitSettings, warnings: Warnings, storage: any Storage) {
        let sequence = state.liveRecord?.sequence ?? 0
        self.init(
            target: storage.location, profile: settings.profile.rawValue, unchanged: true, dryRun: settings.dryRun,
            sequence: sequence, previousSequence: sequence, manifestKey: settings.manifestKey,
            manifestURL: URLParts.url(base: settings.baseURL, key: settings.manifestKey), objects: [], warnings: warnings.all,
            manifest: state.manifestData.map { String(decoding: $0, as: UTF8.self) } ?? "", requests: storage.requestCounts,
            models: PublishReport.models(of: state.liveRecord, objects: []))
    }
}
