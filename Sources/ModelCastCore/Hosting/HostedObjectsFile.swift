import Foundation

/// `_modelcast/objects.json` as publish writes it: the base URL a directory is served
/// from and every object's headers. serve answers with them, verify checks a directory
/// against them, and rollback reads the manifest's declared Cache-Control from them.
package struct HostedObjectsFile: Sendable {
    /// The file's place inside a published directory.
    package static let relativePath = "_modelcast/objects.json"

    package let baseURL: String
    /// Headers by key.
    package let declared: [String: ObjectMetadata]

    /// Reads the file under `root`; nil when there is none. An entry that cannot be used
    /// is an error naming its key and field (it would otherwise be served with no headers).
    package init?(root: String) throws {
        let path = root + "/" + Self.relativePath
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        struct File: Decodable {
            // Optional here so that a missing field is reported with its object's key.
            struct Object: Decodable {
                let key: String?
                let cache_control: String?
                let content_type: String?
                let size: Int64?
                let sha256: String?
            }
            let base_url: String
            let objects: [Object]
        }
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: data) } catch {
            throw FormatError.invalidRecord(source: path, reason: describe(decodingError: error))
        }
        var declared: [String: ObjectMetadata] = [:]
        for (index, object) in file.objects.enumerated() {
            guard let key = object.key else { throw FormatError.invalidRecord(source: path, reason: "objects[\(index)] has no key") }
            func refuse(_ reason: String) -> FormatError { .invalidRecord(source: path, reason: "the entry for key '\(key)' \(reason)") }
            guard let cacheControl = object.cache_control else { throw refuse("has no cache_control") }
            guard let contentType = object.content_type else { throw refuse("has no content_type") }
            guard let size = object.size, size >= 0 else { throw refuse("has no non-negative size") }
            guard let sha256 = object.sha256 else { throw refuse("has no sha256") }
            guard let digest = SHA256Digest(hex: sha256) else { throw refuse("has sha256 '\(sha256)', not a hex SHA-256") }
            declared[key] = ObjectMetadata(cacheControl: cacheControl, contentType: contentType, size: size, sha256: digest)
        }
        baseURL = file.base_url.hasSuffix("/") ? String(file.base_url.dropLast()) : file.base_url
        self.declared = declared
    }
}
