import Foundation

/// One thing `ZipScan` found that makes an archive unsafe to unzip, with the values that
/// show it: a device refuses a zip with any of them, and verify reports each. `message` is
/// the sentence verify reports (in its log, its JSON report and the golden files); the
/// client maps the cases to its own errors. An entry is named by `entry`, its name as
/// decoded, and `index`, its position in the central directory from 0 (shown only for an
/// empty name).
@_spi(ModelCastTooling) public enum ZipProblem: Sendable, Equatable {
    // MARK: End records and the central directory as a whole

    /// Bytes after the end of central directory record and its comment.
    case trailingBytes(count: Int, endRecordOffset: Int64)
    /// An end record on a disk other than 0.
    case endRecordDisk(EndRecord, disk: UInt32)
    /// An end record saying the central directory starts on a disk other than 0.
    case directoryDisk(EndRecord, disk: UInt32)
    /// The zip64 locator placing the zip64 end record on a disk other than 0.
    case locatorRecordDisk(UInt32)
    /// The zip64 locator counting more than one disk.
    case locatorDiskCount(UInt32)
    /// A zip64 end record whose declared size does not bring it to its locator.
    case zip64RecordLength(offset: UInt64, declared: UInt64, locatorOffset: Int64)
    /// A value the classic end record holds (not the 0xFFFF.. marker) that the zip64 record contradicts.
    case endRecordsDisagree(Field, classic: UInt64, zip64: UInt64)
    /// Entries on this disk and in total differ.
    case entriesOnDiskMismatch(onDisk: UInt64, total: UInt64)
    /// Bytes between the central directory's end and the end records.
    case directoryGap(offset: UInt64, size: UInt64, end: UInt64, recordsStart: Int64)
    /// The end record's entry count against the headers the central directory holds.
    case entryCountMismatch(declared: UInt64, found: Int)
    /// No central directory header where the next should start (`signature` nil: fewer than 4 bytes left).
    case missingCentralHeader(offset: Int64, signature: UInt32?, remaining: Int)
    /// A central directory header longer than what remains of the central directory.
    case centralHeaderOverrun(offset: Int64, length: Int, remaining: Int)
    /// Total uncompressed size above `ratio` times the archive's size: a limit verify
    /// applies on the server (ModelCastCore's `ZipInspector`), never reported by `ZipScan`.
    case compressionRatio(total: Int64, ratio: Int64, archiveSize: Int64)

    // MARK: One entry's records

    /// Values marked 0xFFFFFFFF (or 0xFFFF) that the zip64 extra field does not supply.
    case zip64ValuesMissing(entry: String, index: Int, header: Header, fields: [Field])
    /// An extra field longer than what remains of the extra field area.
    case extraFieldOverrun(entry: String, index: Int, header: Header, id: UInt16, length: Int, remaining: Int)
    /// An Info-ZIP Unicode Path extra field (0x7075) naming the entry `name`.
    case unicodePathField(entry: String, index: Int, header: Header, name: String)
    /// A size or offset above `Int64.max`.
    case valueOutOfRange(entry: String, index: Int, field: Field, value: UInt64)
    case emptyName(entry: String, index: Int)
    case invalidUTF8Name(entry: String, index: Int, bytes: [UInt8])
    /// Bytes above 0x7F in a name without general purpose bit 11.
    case nonASCIINameWithoutUTF8Flag(entry: String, index: Int)
    case controlCharacter(entry: String, index: Int, scalar: Unicode.Scalar)
    case absolutePath(entry: String, index: Int)
    case windowsDrivePrefix(entry: String, index: Int, drive: Character)
    case backslashInName(entry: String, index: Int)
    /// A `..` component.
    case pathEscapes(entry: String, index: Int)
    /// A name no device creates (`RelativePath`'s rules: Unicode normal form C, no
    /// invisible characters or look-alikes of `/` and `.`, no empty segment, segments of at
    /// most 255 bytes); `rule` says which, as the device says it.
    case unsafeName(entry: String, index: Int, rule: String)
    case symbolicLink(entry: String, index: Int, mode: UInt32)
    /// A FIFO, device, socket or unknown file type, by its Unix mode.
    case specialFile(entry: String, index: Int, mode: UInt32)
    /// "Version needed to extract" (low byte, the version ×10) above 6.3.
    case unsupportedVersion(entry: String, index: Int, needed: UInt16)
    case entryDisk(entry: String, index: Int, disk: UInt32)
    case encrypted(entry: String, index: Int)
    case unsupportedMethod(entry: String, index: Int, method: UInt16)
    case storedSizesDiffer(entry: String, index: Int, compressed: UInt64, uncompressed: UInt64)

    // MARK: Local headers and data descriptors against the central directory

    case localHeaderTruncated(entry: String, index: Int, offset: Int64)
    case localHeaderMissing(entry: String, index: Int, offset: Int64, signature: UInt32)
    /// The local header's name, as decoded; `truncated` when the archive ends inside it.
    case localHeaderNameDiffers(entry: String, index: Int, offset: Int64, localName: String, truncated: Bool)
    /// `fromZip64`: the local value came from the local header's zip64 extra field.
    case localHeaderDiffers(entry: String, index: Int, offset: Int64, field: Field, local: UInt64, central: UInt64, fromZip64: Bool)
    /// Fewer bytes than the shortest descriptor before the next local header or the central directory.
    case descriptorTruncated(entry: String, index: Int, offset: Int64, available: Int)
    case descriptorDiffers(entry: String, index: Int, offset: Int64, field: Field, descriptor: UInt64, central: UInt64)

    // MARK: The entries' layout in the file, and their names together

    case localHeaderBeyondDirectory(entry: String, index: Int, offset: Int64, directoryStart: Int64)
    /// The first local header (of `entry`) not at offset 0.
    case bytesBeforeFirstHeader(offset: Int64, entry: String)
    /// Bytes between an entry's data and the next local header (`nextEntry`) or, when nil, the central directory at `next`.
    case unaccountedBytes(entry: String, index: Int, dataEnd: Int64, next: Int64, nextEntry: String?)
    case dataPastDirectory(entry: String, index: Int, dataEnd: Int64, directoryStart: Int64)
    case dataOverlapsNextHeader(entry: String, index: Int, dataEnd: Int64, nextEntry: String, nextOffset: Int64)
    /// The same name as the entry at `firstIndex`.
    case duplicateName(entry: String, index: Int, firstIndex: Int)
    /// The same name as `other` after NFC normalisation and lowercasing.
    case foldedNameCollision(entry: String, index: Int, other: String)

    /// The end of central directory record, or its zip64 form.
    public enum EndRecord: Sendable, Equatable {
        case classic, zip64
    }

    /// Which of the entry's headers the problem is in.
    public enum Header: Sendable, Equatable {
        case central
        case local(offset: Int64)
    }

    /// A record field, by the words problems name it with.
    public enum Field: String, Sendable, Equatable {
        case flags = "general purpose flags"
        case method = "compression method"
        case crc32 = "CRC-32"
        case compressedSize = "compressed size"
        case uncompressedSize = "uncompressed size"
        case localHeaderOffset = "local header offset"
        case diskNumber = "disk number"
        case entriesOnDisk = "entries on this disk"
        case totalEntries = "total entries"
        case directorySize = "central directory size"
        case directoryOffset = "central directory offset"

        /// A value of this field as problems show it: flags and CRC-32 in hex, the rest in decimal.
        func shown(_ value: UInt64) -> String {
            switch self {
            case .flags: ZipText.hex16(UInt16(truncatingIfNeeded: value))
            case .crc32: ZipText.hex(UInt32(truncatingIfNeeded: value))
            default: String(value)
            }
        }
    }
}
