import Foundation

/// One central-directory entry, with zip64 values already applied.
@_spi(ModelCastTooling) public struct ZipEntry: Sendable, Equatable {
    /// The name as stored, decoded as UTF-8 (invalid bytes appear as U+FFFD).
    public let name: String
    /// Bytes of (possibly compressed) data after the local header.
    public let compressedSize: Int64
    /// Bytes after decompression.
    public let uncompressedSize: Int64
    /// Where the entry's local file header starts.
    public let localHeaderOffset: Int64
    /// Compression method: 0 store, 8 deflate.
    public let method: UInt16
    /// General purpose bit flags (bit 0 encrypted, bit 3 data descriptor, bit 11 UTF-8 name).
    public let flags: UInt16
    /// CRC-32 of the uncompressed data, as the central directory records it.
    public let crc32: UInt32
    /// The host system from "version made by" (0 MS-DOS, 3 Unix, 19 macOS).
    public let hostSystem: UInt8
    /// External file attributes (the Unix mode sits in the high 16 bits on Unix hosts).
    public let externalAttributes: UInt32
    /// True for a directory: the name ends in `/`, or the attributes say so.
    public let isDirectory: Bool
    /// True when the Unix mode says symbolic link.
    public let isSymlink: Bool
    /// True when a zip64 extended information extra field supplied a size, offset or disk number.
    public let usesZip64: Bool
    /// Where the entry's data starts (after its local header's name and extra field); nil
    /// when its local header was not read (a layout-only scan) or could not be.
    public internal(set) var dataOffset: Int64?

    /// The Unix mode (file type and permission bits) when the host is Unix-like and records one.
    public var unixMode: UInt32? {
        let mode = externalAttributes >> 16
        return ZipFormat.unixHosts.contains(hostSystem) && mode != 0 ? mode : nil
    }

    /// General purpose bit 0: the data is encrypted.
    public var isEncrypted: Bool { flags & 1 != 0 }
}

/// What `ZipScan` found: every entry, and every problem (none means safe to unzip).
@_spi(ModelCastTooling) public struct ZipInspection: Sendable {
    /// The central directory's entries, in central directory order.
    public let entries: [ZipEntry]
    /// Every problem, in the order found (`message` names the entry and the offending value).
    public var problems: [ZipProblem]
    /// True when the archive ends with zip64 end of central directory records.
    public let isZip64: Bool
    /// Where the central directory starts (the end of the entries' bytes).
    public let directoryOffset: Int64

    /// Sum of the entries' uncompressed sizes (saturating at `Int64.max`).
    public var totalUncompressedSize: Int64 {
        entries.reduce(0) { ZipText.saturatingAdd($0, $1.uncompressedSize) }
    }
}

extension ZipInspection {
    /// Where each stored (uncompressed) file's bytes lie in the archive, in file order: an
    /// unpacked copy of the entry holds the same bytes, so it can stand in for them.
    public var storedData: [ZipStoredData] {
        entries.compactMap { entry in
            guard entry.method == 0, entry.compressedSize > 0, !entry.name.hasSuffix("/"), let offset = entry.dataOffset else { return nil }
            return ZipStoredData(name: entry.name, offset: offset, size: entry.compressedSize)
        }.sorted { $0.offset < $1.offset }
    }
}

/// Where a stored (uncompressed) entry's bytes lie in the archive: an unpacked copy of the
/// entry holds the same bytes, so it can stand in for them (a device keeps these beside
/// an unpacked version, as JSON).
@_spi(ModelCastTooling) public struct ZipStoredData: Equatable, Sendable, Codable {
    /// The entry's name as the archive spells it.
    public let name: String
    /// Where its data starts in the archive, and its length.
    public let offset: Int64
    public let size: Int64

    public init(name: String, offset: Int64, size: Int64) {
        self.name = name
        self.offset = offset
        self.size = size
    }
}
