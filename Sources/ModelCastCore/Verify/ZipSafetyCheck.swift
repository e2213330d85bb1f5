import Foundation
@_spi(ModelCastTooling) import ModelCastFormat

/// The `artifact.zip` check every verify source runs the same way (URL, directory,
/// bucket): a zip is unpacked on the device, so its records must be safe to unpack. Only
/// the archive's records are read, with ranged reads of `bytes`.
enum ZipSafetyCheck {
    /// True when the object is a zip by its declared type or its name.
    static func applies(contentType: String, name: String) -> Bool {
        mediaType(contentType) == "application/zip" || name.lowercased().hasSuffix(".zip")
    }

    static func run(_ bytes: some RandomAccessBytes, label: String, subject: String, maxEntries: Int, log: CheckLog) async {
        do {
            let inspection = try await ZipInspector.inspect(bytes, maxEntries: maxEntries)
            if inspection.problems.isEmpty {
                log.add(.pass, .artifactZip, subject, "\(label): \(counted(inspection.entries.count, "entry", plural: "entries")), \(inspection.totalUncompressedSize) bytes unpacked, no unsafe entries")
            } else {
                for problem in inspection.problems { log.add(.fail, .artifactZip, subject, "\(label): \(problem.message)") }
            }
        } catch {
            log.add(.fail, .artifactZip, subject, "\(label): \(error)")
        }
    }
}

/// An object of a store read by ranges (`Storage.read`): what the zip check reads of
/// an archive in a bucket, without downloading it.
struct StoredObjectBytes: RandomAccessBytes {
    let storage: any Storage
    let key: String
    let size: Int64
    var name: String { "\(storage.location)/\(key)" }

    func read(offset: Int64, count: Int) async throws -> [UInt8] {
        guard count > 0, offset < size else { return [] }
        let end = min(size, offset + Int64(count)) - 1
        return Array(try await storage.read(key, range: offset...end))
    }
}
