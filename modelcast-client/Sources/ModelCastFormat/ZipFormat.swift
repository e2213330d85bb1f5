import Foundation

/// The fixed parts of a zip's records (PKWARE APPNOTE 6.3): signatures and sizes. One
/// definition for what `ZipScan` reads here and what ModelCastCore's zip writer writes.
@_spi(ModelCastTooling) public enum ZipFormat {
    public static let endSignature: UInt32 = 0x0605_4b50
    public static let zip64LocatorSignature: UInt32 = 0x0706_4b50
    public static let zip64EndSignature: UInt32 = 0x0606_4b50
    public static let centralHeaderSignature: UInt32 = 0x0201_4b50
    public static let localHeaderSignature: UInt32 = 0x0403_4b50
    public static let descriptorSignature: UInt32 = 0x0807_4b50
    public static let endRecordSize = 22
    public static let maxCommentLength = 65_535
    public static let zip64LocatorSize = 20
    public static let zip64EndRecordSize = 56
    public static let centralHeaderSize = 46
    public static let localHeaderSize = 30
    /// The smallest data descriptor: CRC-32 and two 4-byte sizes, no signature.
    static let minimumDataDescriptorSize: Int64 = 12
    /// "Version made by" hosts whose external attributes carry a Unix mode: Unix (3), OS X (19).
    static let unixHosts: Set<UInt8> = [3, 19]
    /// General purpose flag bit 3: the CRC-32 and sizes follow the data in a descriptor.
    static let flagDataDescriptor: UInt16 = 0x0008
    /// General purpose flag bit 11: the name is UTF-8.
    static let flagUTF8: UInt16 = 0x0800

    /// Where the data of the entry whose local header (`header`, its fixed 30 bytes or
    /// more) starts at `offset` begins: after the header's name and extra field. Nil when
    /// `header` is not a local file header.
    public static func dataStart(ofLocalHeader header: [UInt8], at offset: Int64) -> Int64? {
        guard header.count >= localHeaderSize else { return nil }
        let fields = ZipFields(header)
        guard fields.u32(0) == localHeaderSignature else { return nil }
        return offset + Int64(localHeaderSize) + Int64(fields.u16(26)) + Int64(fields.u16(28))
    }
}

/// Little-endian fields of a zip record. Callers check lengths before reading.
struct ZipFields {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var count: Int { bytes.count }
    func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
    func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) | UInt32(u16(at + 2)) << 16 }
    func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 }
}
