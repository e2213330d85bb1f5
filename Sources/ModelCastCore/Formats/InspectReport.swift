import Foundation

/// What `modelcast inspect` prints.
public struct InspectReport: Encodable, Sendable {
    public let path: String
    public let kind: ModelKind
    public let files: Int
    /// Total bytes of the model's files.
    public let modelSize: Int64
    public let details: [String: String]
    private let orderedDetails: [(key: String, value: String)]
    /// The artifact that would be published.
    public let artifact: Artifact

    /// The artifact part of the report.
    public struct Artifact: Encodable, Sendable {
        public let name: String
        public let format: ArtifactFormat
        public let contentType: String
        public let size: Int64?
        public let sha256: SHA256Digest?

        enum CodingKeys: String, CodingKey {
            case name, format, size, sha256
            case contentType = "content_type"
        }
    }

    enum CodingKeys: String, CodingKey {
        case path, kind, files, details, artifact
        case modelSize = "model_size"
    }

    public init(description: ModelDescription, artifactName: String, artifact: PackResult?) {
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
    public var text: String {
        var rows: [(String, String)] = [
            ("path", path), ("kind", kind.rawValue), ("files", String(files)),
            ("model size", "\(modelSize) bytes (\(formatBytes(modelSize)))"),
        ]
        // Detail values come from inside the model file: escaped for the terminal.
        rows += orderedDetails.map { ($0.key.replacingOccurrences(of: "_", with: " "), printable($0.value)) }
        rows.append(("artifact", "\(artifact.name) (\(artifact.format.rawValue), \(artifact.contentType))"))
        if let size = artifact.size { rows.append(("artifact size", "\(size) bytes (\(formatBytes(size)))")) }
        if let sha = artifact.sha256 { rows.append(("sha256", sha.hex)) }
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }.joined(separator: "\n") + "\n"
    }
}
