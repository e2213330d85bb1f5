import Foundation
import ModelCastFormat

/// Proves a file that arrived whole, not through the client's own hashing stream (a
/// background download task's file, which the system wrote): its size from the file
/// system, then its SHA-256 read back from the disk, against the manifest's. Only a file
/// that passes both gets its place, `downloads/<sha256>`, where the installer takes it;
/// one that fails is deleted, so a refused download leaves nothing behind.
enum DownloadedFileCheck {
    /// Moves `candidate` to `destination` once it is proven to be `file`; deletes it and
    /// throws `sizeMismatch` or `hashMismatch` (naming the model and file) otherwise. The
    /// size is checked first: a short or oversized file is refused without reading it.
    static func prove(_ candidate: URL, as file: CheckedFile, model: ModelName, into destination: URL) throws -> URL {
        do {
            guard let size = fileSize(candidate) else { throw ClientError.io(path: candidate.path, reason: "the downloaded file is missing") }
            guard size == file.size else {
                throw ClientError.sizeMismatch(model: model.rawValue, file: file.name.rawValue, expected: file.size, actual: size)
            }
            let digest = try hash(of: candidate)
            guard digest == file.sha256.rawValue else {
                throw ClientError.hashMismatch(model: model.rawValue, file: file.name.rawValue, expected: file.sha256.rawValue, actual: digest)
            }
        } catch {
            // The refusal is reported; a candidate left behind is proven again before any use.
            try? FileManager.default.removeItem(at: candidate)
            throw error
        }
        try? FileManager.default.removeItem(at: destination)  // one that cannot go fails the move, which says why
        do { try FileManager.default.moveItem(at: candidate, to: destination) } catch {
            try? FileManager.default.removeItem(at: candidate)  // as above: the move's failure is reported
            throw ClientError.io(destination, error)
        }
        return destination
    }
}
