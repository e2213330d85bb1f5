import Foundation

/// What `modelcast inspect` prints.
package struct InspectReport: Encodable, Sendable {
    package let path: String
    package let kind: ModelKind
    package let files: Int
    /// Total bytes of the model's files.
    package let modelSize: Int64
    /// What publish writes as the model's `storage.install_size` (modelcast profile) when
    /// no larger size is stated: `ModelDescription.installSize(of:)`, the code publish runs.
    package let installSize: Int64
    /// The licence the file declares, or why it could not be read; nil when it declares none
    /// (or its format has no place for one). Only shown: publish does not take it.
    package let declaredLicence: Result<DeclaredLicence, ModelCastError>?
    package let details: [String: String]
    private let orderedDetails: [(key: String, value: String)]
    /// The artifact that would be published.
    package let artifact: Artifact
    /// The model's interface (`ModelInterface`), or why it could not be read; nil when the
    /// format has none modelcast reads.
    package let interface: Result<ModelInterface, ModelCastError>?

    /// The artifact part of the report.
    package struct Artifact: Encodable, Sendable {
        package let name: String
        package let format: ArtifactFormat
        package let contentType: String
        package let size: Int64?
        package let sha256: SHA256Digest?

        enum CodingKeys: String, CodingKey {
            case name, format, size, sha256
            case contentType = "content_type"
        }
    }

    enum CodingKeys: String, CodingKey {
        case path, kind, files, details, artifact, interface
        case modelSize = "model_size"
        case installSize = "install_size"
        case declaredLicence = "declared_licence"
        case declaredLicenceError = "declared_licence_error"
        case interfaceError = "interface_error"
    }

    /// Details that are counts or version numbers: JSON numbers in `--json`, not strings.
    static let integerDetails: Set<String> = ["gguf_version", "tensors", "metadata_keys", "parameters", "specification_version", "ir_version"]

    /// A detail typed for JSON.
    enum DetailValue: Encodable {
        case integer(Int64)
        case text(String)

        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .integer(let value): try container.encode(value)
            case .text(let value): try container.encode(value)
            }
        }
    }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(kind, forKey: .kind)
        try container.encode(files, forKey: .files)
        try container.encode(modelSize, forKey: .modelSize)
        try container.encode(installSize, forKey: .installSize)
        switch declaredLicence {
        case .success(let value): try container.encode(value, forKey: .declaredLicence)
        case .failure(let error): try container.encode(error.message, forKey: .declaredLicenceError)
        case nil: break
        }
        let typed = details.mapValues { value -> DetailValue in
            value.allSatisfy(\.isASCIIDigit) ? Int64(value).map(DetailValue.integer) ?? .text(value) : .text(value)
        }
        var detailContainer = container.nestedContainer(keyedBy: AnyKey.self, forKey: .details)
        for (key, value) in typed {
            try detailContainer.encode(Self.integerDetails.contains(key) ? value : .text(details[key]!), forKey: AnyKey(key))
        }
        try container.encode(artifact, forKey: .artifact)
        switch interface {
        case .success(let value): try container.encode(value.jsonValue(), forKey: .interface)
        case .failure(let error): try container.encode(error.message, forKey: .interfaceError)
        case nil: break
        }
    }

    struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    package init(description: ModelDescription, artifactName: String, artifact: PackResult?,
                 interface: Result<ModelInterface, ModelCastError>? = nil,
                 declaredLicence: Result<DeclaredLicence, ModelCastError>? = nil) {
        self.interface = interface
        self.declaredLicence = declaredLicence
        installSize = ModelDescription.installSize(of: [description])
        path = description.path
        kind = description.kind
        files = description.fileCount
        modelSize = description.totalSize
        orderedDetails = description.details
        details = Dictionary(description.details.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        let name = artifact?.name ?? artifactName
        self.artifact = Artifact(
            name: name, format: description.isDirectory ? .zip : .file,
            contentType: ContentType.forArtifact(named: name),
            size: artifact?.size, sha256: artifact?.sha256)
    }

    /// Aligned `key: value` lines.
    package var text: String {
        var rows: [(String, String)] = [
            ("path", path), ("kind", kind.rawValue), ("files", String(files)),
            ("model size", "\(modelSize) bytes (\(formatBytes(modelSize)))"),
            ("install size", "\(installSize) bytes (\(formatBytes(installSize)))"),
        ]
        // Detail values come from inside the model file: escaped for the terminal.
        rows += orderedDetails.map { ($0.key.replacingOccurrences(of: "_", with: " "), printable($0.value)) }
        switch declaredLicence {
        // Held escaped and cut already (`DeclaredLicence`).
        case .success(let licence): rows.append(("licence (file)", licence.line))
        case .failure(let error): rows.append(("licence (file)", "unreadable: " + printable(error.message)))
        case nil: break
        }
        rows.append(("artifact", "\(artifact.name) (\(artifact.format.rawValue), \(artifact.contentType))"))
        if let size = artifact.size { rows.append(("artifact size", "\(size) bytes (\(formatBytes(size)))")) }
        if let sha = artifact.sha256 { rows.append(("sha256", sha.hex)) }
        return Self.aligned(rows, indent: "") + interfaceText
    }

    /// The interface as an indented block after the rest: `interface`, then its rows.
    var interfaceText: String {
        switch interface {
        case .success(let value): return "interface\n" + Self.aligned(value.textRows, indent: "  ")
        case .failure(let error): return "interface\n" + Self.aligned([("unreadable", printable(error.message))], indent: "  ")
        case nil: return ""
        }
    }

    /// `key  value` lines, the values aligned.
    static func aligned(_ rows: [(String, String)], indent: String) -> String {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { indent + $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n") + "\n"
    }
}
