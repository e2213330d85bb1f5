@_spi(ModelCastTooling) import ModelCastFormat

/// The bytes of every record `ZipWriter` writes (PKWARE APPNOTE 6.3): local and central
/// headers, data descriptors, the end records. The record signatures and fixed sizes are
/// `ZipFormat`'s (ModelCastFormat), the reader's: one definition for what is written and what is read.
///
/// The layout is the one modelcast has published since its first release, when libarchive
/// 3.6 wrote its zips, kept byte for byte: an artifact's SHA-256 names it in every manifest
/// and device cache, so a zip that came out different from the same input would make an
/// unchanged re-publish upload again and every device download again.
/// `ZipWriterGoldenTests` pins those bytes. In short:
/// - every entry carries a `UT` extra field (mtime only, 1980-01-01) and a `ux` one
///   (uid and gid 0, four bytes each), in the local and the central header;
/// - a regular file sets flag bit 3 and ends with a data descriptor (its CRC-32 is not
///   known when its header is written); its local header holds its size when stored, 0
///   as the compressed size when deflated;
/// - Zip64 is used where a field would overflow, following libarchive's choices: a file
///   over 4 GiB − 1 (or, deflated, over 0xFF000000 bytes, since deflate may grow data)
///   has 0xFFFFFFFF sizes and a Zip64 field in its local header and 8-byte sizes in its
///   descriptor; a central header gets a Zip64 field when a size or the offset is over
///   0xFFFFFFFF, holding each value that is at least that; the Zip64 end records come
///   when the directory starts or is longer than 0xFFFFFFFF or holds over 65,535 entries.
enum ZipRecords {
    /// The largest value a 32-bit field holds; in a size or offset field it means "see the Zip64 field".
    static let max32: Int64 = 0xFFFF_FFFF
    /// A deflated file above this size gets Zip64 sizes from its local header on.
    static let deflatedZip64Threshold: Int64 = 0xFF00_0000
    /// 1980-01-01T00:00:00Z (the earliest DOS time), every entry's time.
    static let unixTime: UInt32 = 315_532_800
    /// The same instant as a DOS date (high half: 1980-01-01) and time (low half: 00:00:00).
    static let dosTime: UInt32 = 0x0021_0000
    /// Flag bit 3: sizes and CRC-32 follow the data in a descriptor.
    static let flagDataDescriptor: UInt16 = 0x0008
    /// Flag bit 11: the name is UTF-8.
    static let flagUTF8: UInt16 = 0x0800

    /// One entry's fixed facts, known before its data is written.
    struct Entry {
        /// The name's bytes (UTF-8; a directory's ends in `/`).
        let name: [UInt8]
        /// Unix file type and permissions (`0o40755`, `0o100644`, `0o100755`), kept in the
        /// central header's external attributes.
        let mode: UInt32
        /// 0 stored, 8 deflated.
        let method: UInt16
        let flags: UInt16
        /// "Version needed to extract" as the local header states it: 1.0 stored, 2.0
        /// deflated or a directory, 4.5 with Zip64 sizes.
        let versionNeeded: UInt16
        /// The local header has 0xFFFFFFFF sizes and a Zip64 field.
        let zip64Sizes: Bool
        /// The uncompressed size, as announced.
        let size: Int64
        /// The compressed size the local header states: the size when stored, 0 when deflated
        /// (unknown until the data is written).
        let announcedCompressedSize: Int64
        /// Where the local header starts.
        let offset: Int64

        /// A directory entry; `name` ends in `/`.
        static func directory(name: String, offset: Int64) -> Entry {
            let bytes = Array(name.utf8)
            return Entry(name: bytes, mode: 0o040755, method: 0, flags: nameFlag(bytes), versionNeeded: 20, zip64Sizes: false,
                         size: 0, announcedCompressedSize: 0, offset: offset)
        }

        /// A regular file of `size` bytes.
        static func file(name: String, size: Int64, executable: Bool, compression: ZipCompression, offset: Int64) -> Entry {
            let bytes = Array(name.utf8)
            let deflated = compression == .deflate
            let zip64 = size > max32 || (deflated && size > deflatedZip64Threshold)
            return Entry(name: bytes, mode: executable ? 0o100755 : 0o100644, method: deflated ? 8 : 0,
                         flags: flagDataDescriptor | nameFlag(bytes), versionNeeded: zip64 ? 45 : (deflated ? 20 : 10),
                         zip64Sizes: zip64, size: size, announcedCompressedSize: deflated ? 0 : size, offset: offset)
        }

        private static func nameFlag(_ name: [UInt8]) -> UInt16 {
            name.contains { $0 >= 0x80 } ? flagUTF8 : 0
        }

        /// True for a regular file (a directory has no data and no descriptor).
        var isFile: Bool { mode & 0o170000 == 0o100000 }
    }

    /// The extra fields both headers of every entry start with: `UT` (flags 1: mtime) and
    /// `ux` (version 1, a 4-byte uid and a 4-byte gid, both 0).
    private static let commonExtra: [UInt8] = {
        var bytes = LittleEndianBytes()
        bytes.append(Array("UT".utf8)); bytes.u16(5); bytes.u8(1); bytes.u32(unixTime)
        bytes.append(Array("ux".utf8)); bytes.u16(11); bytes.u8(1); bytes.u8(4); bytes.u32(0); bytes.u8(4); bytes.u32(0)
        return bytes.bytes
    }()

    /// The local header, name and extra fields that precede an entry's data.
    static func localHeader(_ entry: Entry) -> [UInt8] {
        var extra = commonExtra
        if entry.zip64Sizes {
            var zip64 = LittleEndianBytes()
            zip64.u16(1); zip64.u16(16); zip64.u64(entry.size); zip64.u64(entry.announcedCompressedSize)
            extra += zip64.bytes
        }
        var bytes = LittleEndianBytes()
        bytes.u32(ZipFormat.localHeaderSignature)
        bytes.u16(entry.versionNeeded)
        bytes.u16(entry.flags)
        bytes.u16(entry.method)
        bytes.u32(dosTime)
        bytes.u32(0)  // the CRC-32 is in the descriptor (files) or 0 (directories)
        bytes.u32(size: entry.zip64Sizes ? max32 : entry.announcedCompressedSize)
        bytes.u32(size: entry.zip64Sizes ? max32 : entry.size)
        bytes.u16(count: entry.name.count)
        bytes.u16(count: extra.count)
        bytes.append(entry.name)
        bytes.append(extra)
        return bytes.bytes
    }

    /// The data descriptor after a file's data: 8-byte sizes when its local header had Zip64
    /// sizes, else 4-byte ones.
    static func dataDescriptor(_ entry: Entry, crc: UInt32, compressed: Int64, uncompressed: Int64) -> [UInt8] {
        var bytes = LittleEndianBytes()
        bytes.u32(ZipFormat.descriptorSignature)
        bytes.u32(crc)
        if entry.zip64Sizes {
            bytes.u64(compressed)
            bytes.u64(uncompressed)
        } else {
            bytes.u32(truncating: compressed)
            bytes.u32(truncating: uncompressed)
        }
        return bytes.bytes
    }

    /// The entry's central directory header, once its data is written.
    static func centralHeader(_ entry: Entry, crc: UInt32, compressed: Int64, uncompressed: Int64) -> [UInt8] {
        var extra = commonExtra
        // A Zip64 field when any value is over 0xFFFFFFFF, holding each that is at least
        // 0xFFFFFFFF (libarchive's tests, `>` then `>=`, kept as they were).
        let needsZip64 = compressed > max32 || uncompressed > max32 || entry.offset > max32
        if needsZip64 {
            var values = LittleEndianBytes()
            if uncompressed >= max32 { values.u64(uncompressed) }
            if compressed >= max32 { values.u64(compressed) }
            if entry.offset >= max32 { values.u64(entry.offset) }
            var zip64 = LittleEndianBytes()
            zip64.u16(1); zip64.u16(count: values.bytes.count); zip64.append(values.bytes)
            extra += zip64.bytes
        }
        var bytes = LittleEndianBytes()
        bytes.u32(ZipFormat.centralHeaderSignature)
        bytes.u16(3 << 8 | entry.versionNeeded)  // made by: Unix, the version the local header needs
        bytes.u16(needsZip64 ? max(entry.versionNeeded, 45) : entry.versionNeeded)
        bytes.u16(entry.flags)
        bytes.u16(entry.method)
        bytes.u32(dosTime)
        bytes.u32(crc)
        bytes.u32(size: min(compressed, max32))
        bytes.u32(size: min(uncompressed, max32))
        bytes.u16(count: entry.name.count)
        bytes.u16(count: extra.count)
        bytes.u16(0)  // comment length
        bytes.u16(0)  // disk number
        bytes.u16(0)  // internal attributes
        bytes.u32(entry.mode << 16)
        bytes.u32(size: min(entry.offset, max32))
        bytes.append(entry.name)
        bytes.append(extra)
        return bytes.bytes
    }

    /// What follows the central directory: the Zip64 end record and its locator when the
    /// directory's offset or size, or the entry count, does not fit the classic record; then
    /// the classic end record (with no comment).
    static func endRecords(entries: Int, directoryOffset: Int64, directorySize: Int64) -> [UInt8] {
        var bytes = LittleEndianBytes()
        if directorySize > max32 || directoryOffset > max32 || entries > 0xFFFF {
            let zip64EndOffset = directoryOffset + directorySize
            bytes.u32(ZipFormat.zip64EndSignature)
            bytes.u64(Int64(ZipFormat.zip64EndRecordSize - 12))  // the record's size after this field
            bytes.u16(45)  // made by
            bytes.u16(45)  // needed
            bytes.u32(0)   // this disk
            bytes.u32(0)   // the directory's disk
            bytes.u64(Int64(entries))
            bytes.u64(Int64(entries))
            bytes.u64(directorySize)
            bytes.u64(directoryOffset)
            bytes.u32(ZipFormat.zip64LocatorSignature)
            bytes.u32(0)   // the Zip64 end record's disk
            bytes.u64(zip64EndOffset)
            bytes.u32(1)   // disks in all
        }
        bytes.u32(ZipFormat.endSignature)
        bytes.u16(0)
        bytes.u16(0)
        bytes.u16(count: min(entries, 0xFFFF))
        bytes.u16(count: min(entries, 0xFFFF))
        bytes.u32(size: min(directorySize, max32))
        bytes.u32(size: min(directoryOffset, max32))
        bytes.u16(0)  // comment length
        return bytes.bytes
    }
}

/// Appends little-endian integers; every value given fits its width by construction
/// (counts and lengths are bounded by the callers, sizes and offsets are clamped first).
struct LittleEndianBytes {
    private(set) var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { bytes.append(UInt8(value & 0xff)); bytes.append(UInt8(value >> 8)) }
    mutating func u16(count value: Int) { u16(UInt16(value)) }
    mutating func u32(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) } }
    mutating func u32(size value: Int64) { u32(UInt32(value)) }
    /// The low 32 bits (a non-Zip64 descriptor states sizes modulo 2³², as libarchive did).
    mutating func u32(truncating value: Int64) { u32(UInt32(truncatingIfNeeded: value)) }
    mutating func u64(_ value: Int64) { for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> Int64(shift))) } }
    mutating func append(_ more: [UInt8]) { bytes += more }
}
