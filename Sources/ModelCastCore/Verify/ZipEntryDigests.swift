import Foundation
@_spi(ModelCastTooling) import ModelCastFormat

/// The SHA-256 of every file a zip unpacks to, read by ranges from where it is served:
/// what a model signature over an unpacked package is compared with. Stored entries are
/// hashed as they are read, a chunk at a time; deflated ones are inflated first (each at
/// most `maximumInflated` bytes, in memory). Names are the archive's (`X.mlpackage/…`).
enum ZipEntryDigests {
    static let chunk = 4 << 20
    static let maximumInflated = 1 << 30

    /// Digests by archive name. Throws, naming the entry, for a zip the inspector finds
    /// unsafe (verify's zip check says why), an encrypted or unknown-method entry, and a
    /// deflated entry over `maximumInflated` bytes.
    static func digests(_ bytes: some RandomAccessBytes, maxEntries: Int) async throws -> [String: SHA256Digest] {
        let inspection = try await ZipInspector.inspect(bytes, maxEntries: maxEntries)
        guard inspection.problems.isEmpty else {
            throw ModelCastError.invalidModel(path: bytes.name, format: "zip", reason: "it is not safe to unpack (see artifact.zip), so its files are not compared")
        }
        var digests: [String: SHA256Digest] = [:]
        for entry in inspection.entries where !entry.isDirectory {
            digests[entry.name] = try await digest(of: entry, in: bytes)
        }
        return digests
    }

    private static func digest(of entry: ZipEntry, in bytes: some RandomAccessBytes) async throws -> SHA256Digest {
        func refuse(_ reason: String) -> ModelCastError { .invalidModel(path: bytes.name, format: "zip", reason: "entry \(quotedValue(entry.name)) \(reason)") }
        // Where the inspection found the data, reading the local header (the inspection
        // found no problem, so every entry's was read).
        guard let start = entry.dataOffset else { throw refuse("has a truncated local header") }
        switch entry.method {
        case 0:
            let hasher = try SHA256Hasher()
            var offset: Int64 = 0
            while offset < entry.compressedSize {
                let part = try await bytes.read(offset: start + offset, count: Int(min(Int64(chunk), entry.compressedSize - offset)))
                guard !part.isEmpty else { throw refuse("ends before its data does") }
                hasher.update(part)
                offset += Int64(part.count)
            }
            return hasher.finalize()
        case 8:
            guard entry.uncompressedSize <= Int64(maximumInflated), entry.compressedSize <= Int64(maximumInflated) else {
                throw refuse("is deflated and larger than \(maximumInflated) bytes, so it is not inflated here")
            }
            let data = try await bytes.read(offset: start, count: Int(entry.compressedSize))
            // Bytes past the end of the stream are not refused here: the entry's compressed size
            // is the central directory's word, which the zip checks (artifact.zip) judge.
            let inflated = try Inflater.inflate([UInt8](data), framing: .raw, limit: maximumInflated, allowTrailing: true) { refuse("does not inflate: \($0)") }
            return try SHA256Hasher.digest(inflated)
        default:
            throw refuse("uses compression method \(entry.method), which devices do not unpack")
        }
    }
}
