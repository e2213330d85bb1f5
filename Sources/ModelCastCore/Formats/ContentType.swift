import Foundation

/// Content-Type values for published objects.
package enum ContentType {
    /// The Content-Type for an artifact file name.
    package static func forArtifact(named name: String) -> String {
        let lower = name.lowercased()
        if lower.hasSuffix(".zip") { return "application/zip" }
        if lower.hasSuffix(".json") { return "application/json" }
        return "application/octet-stream"
    }
}

/// How an artifact holds its model.
package enum ArtifactFormat: String, Codable, Sendable {
    case file, zip
    /// A directory published as its files, each its own object (`--no-zip`).
    case tree
}

/// `application/json; charset=utf-8` → `application/json`.
func mediaType(_ contentType: String) -> String {
    contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
}
