import Foundation
import ModelCastClient

/// A static site for the client: model files under `root`, and an unsigned modelcast
/// manifest naming them with the SHA-256 and size a test chooses (the true ones, or wrong
/// ones to see them refused). Written by hand: this package's tests use no publisher.
struct ManifestSite {
    let root: URL

    /// One file of the manifest: what it says, whatever the served bytes are.
    struct Entry {
        var name: String
        var path: String
        var sha256: String
        var size: Int64
    }

    init(root: URL) throws {
        self.root = root
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    /// Serves `data` at `path` and returns the entry that names it truly.
    @discardableResult
    func serve(_ data: Data, at path: String) throws -> Entry {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        return Entry(name: url.lastPathComponent, path: path, sha256: sha256Hex(data), size: Int64(data.count))
    }

    /// Writes `manifest.json`: model `model` at `version` with `files`, served from `base`.
    func publish(model: String = "m", version: String, sequence: Int, files: [Entry], base: String) throws {
        let path = root.appendingPathComponent("manifest.json")
        try Self.manifest(model: model, version: version, sequence: sequence, files: files, base: base).write(to: path, atomically: true, encoding: .utf8)
        // nginx's ETag is the file's time and size: two manifests of one size written in
        // the same second would share one, and the second would be "not modified".
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000 + Double(sequence))], ofItemAtPath: path.path)
    }

    /// The manifest's text (what `publish` writes).
    static func manifest(model: String = "m", version: String, sequence: Int, files: [Entry], base: String) -> String {
        let entries = files.map { entry in
            """
                    {"name": "\(entry.name)", "key": "\(entry.path)", "url": "\(base)/\(entry.path)", "sha256": "\(entry.sha256)", "size": \(entry.size), "content_type": "application/octet-stream"}
            """
        }
        return """
            {
              "format": "modelcast-manifest",
              "format_version": 1,
              "sequence": \(sequence),
              "published_at": "2026-01-01T00:00:00Z",
              "channel": "stable",
              "profile": "modelcast",
              "models": {
                "\(model)": {
                  "version": "\(version)",
                  "files": [
            \(entries.joined(separator: ",\n"))
                  ]
                }
              }
            }
            """
    }
}
