import Foundation

extension ModelSigningStatement {
    /// The most files a statement may list (a bundle is at most `ModelSignatureBundle.maximumSize`
    /// bytes anyway; this bounds the work before the first digest is compared).
    static let maximumResources = 1_000_000
    /// The most ignore paths a statement may list.
    static let maximumIgnorePaths = 4096
    /// How deeply a statement's JSON may nest (it needs 5 levels).
    static let maximumDepth = 8
    /// The predicate type model_signing 0.2 wrote, named in its refusal.
    static let compatPredicateType = "https://model_signing/Digests/v0.1"

    /// Parses a DSSE payload (hostile: it is checked only after the signature over it, but
    /// never trusted to be well formed) into a statement. Every member is typed; the
    /// predicate may carry members a later version adds (v1.0 says to ignore them). The
    /// subject digest must be the SHA-256 over the listed resource digests.
    init(payload: [UInt8]) throws {
        let data = Data(payload)
        try checkJSONDepth(data, limit: Self.maximumDepth)
        let json: JSONValue
        do { json = try JSONValue(parsing: data) } catch is DecodingError {
            throw ManifestValueError(field: "payload", value: "(\(payload.count) bytes)", rule: "is not JSON")
        }
        let root = try BundleJSONObject(json, field: "payload", allowed: ["_type", "subject", "predicateType", "predicate"])
        try root.constant("_type", Self.statementType)
        let type = try root.string("predicateType")
        guard type == Self.predicateType else {
            let rule = type == Self.compatPredicateType
                ? "is model_signing 0.2's format, which is not supported (re-sign with model_signing 1.x or modelcast)"
                : "is not '\(Self.predicateType)'"
            throw ManifestValueError(field: root.path("predicateType"), value: quotedValue(type), rule: rule)
        }
        let (name, subjectDigest) = try Self.subject(root)
        let predicate = try root.object("predicate", allowed: nil)
        let (ignorePaths, allowSymlinks) = try Self.serialization(try predicate.object("serialization", allowed: ["method", "hash_type", "allow_symlinks", "ignore_paths", "shard_size"]))
        self.init(modelName: name, resources: try Self.resources(predicate), ignorePaths: ignorePaths, allowSymlinks: allowSymlinks)
        let computed = rootDigest()
        guard computed == subjectDigest else {
            throw ManifestValueError(field: "payload.subject[0].digest.sha256", value: quotedValue(subjectDigest.hex),
                                     rule: "is not the SHA-256 of the listed resource digests (\(computed.hex)): the statement is inconsistent")
        }
    }

    /// `subject`: exactly one entry, the model's name and the digest over its resources.
    private static func subject(_ root: BundleJSONObject) throws -> (String, SHA256Hex) {
        let subjects = try root.array("subject", limit: 16)
        guard subjects.count == 1 else {
            throw ManifestValueError(field: root.path("subject"), value: "(\(subjects.count) entries)", rule: "must have exactly one entry (the model)")
        }
        let subject = try BundleJSONObject(subjects[0], field: "payload.subject[0]", allowed: ["name", "digest"])
        let name = try subject.string("name")
        return (name, try subject.object("digest", allowed: ["sha256"]).digest("sha256"))
    }

    /// `predicate.serialization`: only the "files" method with SHA-256 is supported.
    private static func serialization(_ object: BundleJSONObject) throws -> ([ModelFilePath], Bool) {
        let method = try object.string("method")
        guard method == "files" else {
            throw ManifestValueError(field: object.path("method"), value: quotedValue(method),
                                     rule: method == "shards" ? "is not supported: only whole-file ('files') signatures are (sign without sharding)" : "is not 'files'")
        }
        try object.constant("hash_type", "sha256", otherwise: "is not supported: only 'sha256' is (sign with the default hash)")
        let allowSymlinks = try object.bool("allow_symlinks")
        guard object.has("ignore_paths") else { return ([], allowSymlinks) }
        let items = try object.array("ignore_paths", limit: maximumIgnorePaths)
        let paths = try items.enumerated().map { index, item in
            let field = object.path("ignore_paths") + "[\(index)]"
            do { return try ModelFilePath(try BundleJSONObject.string(item, field: field)) } catch let error as ManifestValueError {
                throw ManifestValueError(field: field, value: error.value, rule: error.rule)
            }
        }
        return (paths, allowSymlinks)
    }

    /// `predicate.resources`: each file once, with its SHA-256.
    private static func resources(_ predicate: BundleJSONObject) throws -> [ModelSigningResource] {
        let items = try predicate.array("resources", limit: maximumResources)
        var seen = Set<ModelFilePath>()
        var resources: [ModelSigningResource] = []
        resources.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let entry = try BundleJSONObject(item, field: predicate.path("resources") + "[\(index)]", allowed: ["name", "algorithm", "digest"])
            try entry.constant("algorithm", "sha256")
            let path: ModelFilePath
            do { path = try ModelFilePath(try entry.string("name")) } catch let error as ManifestValueError where error.field == "value" {
                throw ManifestValueError(field: entry.path("name"), value: error.value, rule: error.rule)
            }
            guard seen.insert(path).inserted else {
                throw ManifestValueError(field: entry.path("name"), value: quotedValue(path.rawValue), rule: "is listed twice")
            }
            resources.append(ModelSigningResource(path: path, sha256: try entry.digest("digest")))
        }
        if seen.contains(.wholeFile), resources.count > 1 {
            throw ManifestValueError(field: predicate.path("resources"), value: "'.'", rule: "names a single-file model's file beside other files")
        }
        return resources
    }
}
