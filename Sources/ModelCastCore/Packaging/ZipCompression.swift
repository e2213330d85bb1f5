/// How zip entries are stored.
package enum ZipCompression: String, Sendable, CaseIterable, Codable {
    /// No compression. The default: the only mode whose bytes do not depend on the zlib version.
    case store
    /// Deflate (smaller, but the bytes may differ between zlib versions).
    case deflate
}
