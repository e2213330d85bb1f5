import Foundation
import ModelCastFormat
import ZIPFoundation

/// What installing a version takes of the disk, known before anything is unpacked. A
/// zip's entries count at the sizes they declare (unpacking holds each entry to its
/// declared size, so together they cannot take more); a plain file or a tree file counts
/// at its size, though it costs no new space: it is a second link to its download.
struct InstallSize: Equatable {
    /// Bytes of the version's files once installed (what `maxInstallBytes` caps).
    var installed: Int64 = 0
    /// Of those, the bytes that need new room on the volume: the unpacked zips.
    var added: Int64 = 0
}

extension Installer {
    /// Free space the client always leaves on the volume (room for its state and
    /// records, and for the app): an install or a download that would eat into it is refused.
    static let reservedSpace: Int64 = 16 << 20

    /// The install size of `model` from its proven downloads (by SHA-256); each zip's
    /// entry list is read, not its data.
    func installSize(of model: CheckedModel, downloads: [SHA256Hex: URL]) throws -> InstallSize {
        var size = InstallSize()
        for file in model.files {
            if file.packedDirectoryName != nil, let zip = downloads[file.sha256] {
                let unpacked = try unpackedSize(zip, model: model.name.rawValue, file: file.name.rawValue)
                size.installed = Self.add(size.installed, unpacked)
                size.added = Self.add(size.added, unpacked)
            } else {
                size.installed = Self.add(size.installed, file.size)
            }
        }
        return size
    }

    /// The sum of the sizes the entries of `zip` declare, refused past `maxZipEntries`
    /// entries or `maxZipBytes` bytes.
    func unpackedSize(_ zip: URL, model: String, file: String) throws -> Int64 {
        let archive: Archive
        do { archive = try Archive(url: zip, accessMode: .read) } catch {
            throw ClientError.unsafeArchive(model: model, file: file, reason: "not a readable zip (\(error))")
        }
        var total: Int64 = 0
        var count = 0
        for entry in archive {
            count += 1
            guard count <= Self.maxZipEntries else { throw ClientError.unsafeArchive(model: model, file: file, reason: "more than \(Self.maxZipEntries) entries") }
            guard entry.type == .file else { continue }
            total = Self.add(total, try Self.declaredSize(entry, model: model, file: file))
            guard total <= Self.maxZipBytes else {
                throw ClientError.unsafeArchive(model: model, file: file, reason: "its entries declare more than \(Self.maxZipBytes) bytes unpacked")
            }
        }
        return total
    }

    /// The size `entry` declares unpacked, refused past `maxZipBytes` (a zip64 size can
    /// say up to 2^64 - 1, which no Int64 holds).
    static func declaredSize(_ entry: Entry, model: String, file: String) throws -> Int64 {
        guard let size = Int64(exactly: entry.uncompressedSize), size <= maxZipBytes else {
            throw ClientError.unsafeArchive(model: model, file: file, reason: "entry \(quotedValue(entry.path)) declares \(entry.uncompressedSize) bytes unpacked, more than \(maxZipBytes)")
        }
        return size
    }

    /// The first of `versions` (about to be built, in order) that cannot be installed,
    /// and why: more bytes installed than `cap`, or, with the ones before it, more new
    /// bytes than `free` less `reservedSpace` (nil `free`: the system cannot tell).
    static func roomProblem(_ versions: [(model: CheckedModel, size: InstallSize)], cap: Int64?, free: Int64?) -> (CheckedModel, ClientError)? {
        var added: Int64 = 0
        for (model, size) in versions {
            let (name, version) = (model.name.rawValue, model.version.rawValue)
            if let cap, size.installed > cap {
                return (model, .installTooLarge(model: name, version: version, bytes: size.installed, limit: cap))
            }
            added = add(added, size.added)
            if let free, size.added > 0, added > free - reservedSpace {
                return (model, .insufficientSpaceToInstall(model: name, version: version, bytes: size.added, available: free - (added - size.added), reserve: reservedSpace))
            }
        }
        return nil
    }

    /// `a + b`, or `Int64.max` past it: a total that large is refused by any cap or volume.
    static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}
