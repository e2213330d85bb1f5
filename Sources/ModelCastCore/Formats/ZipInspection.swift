import Foundation

/// One central-directory entry, with zip64 values already applied.
package struct ZipEntry: Sendable, Equatable {
    /// The name as stored, decoded as UTF-8 (invalid bytes appear as U+FFFD).
    package let name: String
    /// Bytes of (possibly compressed) data after the local header.
    package let compressedSize: Int64
    /// Bytes after decompression.
    package let uncompressedSize: Int64
    /// Where the entry's local file header starts.
    package let localHeaderOffset: Int64
    /// Compression method: 0 store, 8 deflate.
    package let method: UInt16
    /// General purpose bit flags (bit 0 encrypted, bit 3 data descriptor, bit 11 UTF-8 name).
    package let flags: UInt16
    /// CRC-32 of the uncompressed data, as the central directory records it.
    package let crc32: UInt32
    /// The host system from "version made by" (0 MS-DOS, 3 Unix, 19 macOS).
    package let hostSystem: UInt8
    /// External file attributes (the Unix mode sits in the high 16 bits on Unix hosts).
    package let externalAttributes: UInt32
    /// True for a directory: the name ends in `/`, or the attributes say so.
    package let isDirectory: Bool
    /// True when the Unix mode says symbolic link.
    package let isSymlink: Bool
    /// True when a zip64 extended information extra field supplied a size, offset or disk number.
    package let usesZip64: Bool

    /// The Unix mode (file type and permission bits) when the host is Unix-like and records one.
    package var unixMode: UInt32? {
        let mode = externalAttributes >> 16
        return ZipInspector.unixHosts.contains(hostSystem) && mode != 0 ? mode : nil
    }

    /// General purpose bit 0: the data is encrypted.
    package var isEncrypted: Bool { flags & 1 != 0 }
}

/// What `ZipInspector.inspect` found: every entry, and every problem (none means safe to unzip).
package struct ZipInspection: Sendable {
    /// The central directory's entries, in central directory order.
    package let entries: [ZipEntry]
    /// Every problem, in the order found (`message` names the entry and the offending value).
    package let problems: [ZipProblem]
    /// True when the archive ends with zip64 end of central directory records.
    package let isZip64: Bool

    /// Sum of the entries' uncompressed sizes (saturating at `Int64.max`).
    package var totalUncompressedSize: Int64 {
        entries.reduce(0) { ZipInspector.saturatingAdd($0, $1.uncompressedSize) }
    }
}
