import Foundation

/// One stored object a release names: what a go-live command proves before the manifest
/// names it, what verify downloads, what prune keeps and what the hosting files list.
/// `Release.objects` is the one enumeration of them; every other walk derives from it.
public struct ReleaseObject: Equatable, Sendable {
    /// What the object is to a device.
    public enum Kind: String, Sendable, CaseIterable {
        /// A file devices install (the model, a companion, a zip, a tree file).
        case artifact
        /// An artifact's segment index (`SegmentIndex`), fetched for delta updates.
        case segmentIndex = "segment index"
        /// An OpenSSF model-signature bundle over a unit's files.
        case modelSignature = "model signature"
    }

    /// Which part of the manifest names it.
    public enum Section: String, Sendable {
        /// The release's own models and prototypes: what devices install now.
        case release
        /// The rollback section: what devices fall back to (a rollback, a staged rollout's
        /// fallback, a halt).
        case fallback
    }

    public let kind: Kind
    public let section: Section
    /// The model naming it (`detector`), or `prototypes`.
    public let model: String
    /// The unit naming it: a model (`detector`), a variant (`detector@ane`) or `prototypes`.
    public let unit: String
    /// That unit's manifest entry (its version, files and model signature): what a check of
    /// the object against the files it covers reads (a segment index's artifact, a bundle's files).
    public let entry: ReleaseModel
    /// The unit's version.
    public let version: String
    /// For an artifact or segment index, the artifact's file name; for a bundle, nil.
    public let file: String?
    /// For an artifact or segment index, where a device puts the artifact: its name, or
    /// for a tree model's file `TREE/PATH`; for a bundle, nil.
    public let place: String?
    /// For an artifact or segment index, the artifact's manifest entry (its tree path and
    /// segment index); for a bundle, nil.
    public let artifact: ReleaseFile?
    public let key: String
    public let url: String
    public let size: Int64
    /// Lowercase hex, as the manifest has it.
    public let sha256: String
    public let contentType: String

    /// How a message names the object: `segment index of detector 2.0.0 model.gguf (fallback)`.
    public var label: String {
        let what: String
        switch kind {
        case .artifact: what = "\(unit) \(version) \(file ?? key)"
        case .segmentIndex: what = "segment index of \(unit) \(version) \(file ?? key)"
        case .modelSignature: what = "model signature of \(unit) \(version)"
        }
        return section == .fallback ? what + " (rollback section)" : what
    }
}

extension Release {
    /// Every object the release names, each key once: the release's models (each variant),
    /// prototypes, then the rollback section's; for each unit its files, each file's segment
    /// index, then its model signature. A key named twice is listed where first named.
    public var objects: [ReleaseObject] { objects(in: [.release, .fallback]) }

    /// The objects the given sections of the release name, in `objects`' order, each key
    /// once within them: `[.fallback]` lists every object devices fall back to, those the
    /// release names too included.
    public func objects(in sections: Set<ReleaseObject.Section>) -> [ReleaseObject] {
        var seen = Set<String>()
        var objects: [ReleaseObject] = []
        func add(_ object: ReleaseObject) {
            if seen.insert(object.key).inserted { objects.append(object) }
        }
        func addUnits(of models: [String: ReleaseModel], section: ReleaseObject.Section) {
            for name in models.keys.sorted() {
                for (label, unit) in models[name]!.units(name: name) { addUnit(unit, model: name, label: label, section: section) }
                // A model with variants may also name files at its top level (the variant
                // older clients take): the same objects, already listed, unless they differ.
                if models[name]!.variants?.isEmpty == false { addUnit(models[name]!, model: name, label: name, section: section) }
            }
        }
        func addUnit(_ unit: ReleaseModel, model: String, label: String, section: ReleaseObject.Section) {
            func object(_ kind: ReleaseObject.Kind, file: ReleaseFile?, key: String, url: String, size: Int64, sha256: String, contentType: String) -> ReleaseObject {
                ReleaseObject(kind: kind, section: section, model: model, unit: label, entry: unit, version: unit.version, file: file?.name,
                              place: file.map { (unit.tree.map { $0 + "/" } ?? "") + $0.placement }, artifact: file, key: key, url: url, size: size,
                              sha256: sha256, contentType: contentType)
            }
            for file in unit.files {
                add(object(.artifact, file: file, key: file.key, url: file.url, size: file.size, sha256: file.sha256, contentType: file.contentType))
                if let index = file.segments {
                    add(object(.segmentIndex, file: file, key: index.key, url: index.url, size: index.size, sha256: index.sha256,
                               contentType: SegmentIndexObject.contentType))
                }
            }
            if let bundle = unit.modelSignature {
                add(object(.modelSignature, file: nil, key: bundle.key, url: bundle.url, size: bundle.size, sha256: bundle.sha256,
                           contentType: ModelSignatureObject.contentType))
            }
        }
        if sections.contains(.release) {
            addUnits(of: models, section: .release)
            if let prototypes { addUnit(prototypes, model: "prototypes", label: "prototypes", section: .release) }
        }
        if sections.contains(.fallback), let rollback { addUnits(of: rollback.models, section: .fallback) }
        return objects
    }

    /// Every storage key the release names (`objects`), its rollback section's included.
    public var referencedKeys: Set<String> { Set(objects.map(\.key)) }
}
