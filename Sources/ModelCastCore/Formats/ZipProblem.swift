import Foundation

/// One thing `ZipInspector.inspect` found that makes an archive unsafe to unzip, with the
/// values that show it. `message` is the sentence verify reports (in its log, its JSON
/// report and the golden files). An entry is named by `entry`, its name as decoded, and
/// `index`, its position in the central directory from 0 (shown only for an empty name).
package enum ZipProblem: Sendable, Equatable {
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
    /// Total uncompressed size above `ratio` times the archive's size.
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
    package enum EndRecord: Sendable, Equatable {
        case classic, zip64
    }

    /// Which of the entry's headers the problem is in.
    package enum Header: Sendable, Equatable {
        case central
        case local(offset: Int64)
    }

    /// A record field, by the words problems name it with.
    package enum Field: String, Sendable, Equatable {
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
            case .flags: ZipInspector.hex16(UInt16(truncatingIfNeeded: value))
            case .crc32: ZipInspector.hex(UInt32(truncatingIfNeeded: value))
            default: String(value)
            }
        }
    }
}

extension ZipProblem {
    /// The sentence verify reports for the problem, naming the entry and the offending value.
    package var message: String {
        switch self {
        case let .trailingBytes(count, endRecordOffset):
            "\(count) bytes follow the end of central directory record and its comment at offset \(endRecordOffset)"
        case let .endRecordDisk(record, disk):
            "\(record.name): disk number \(disk) (multi-disk archives are not supported)"
        case let .directoryDisk(record, disk):
            "\(record.name): central directory starts on disk \(disk) (multi-disk archive)"
        case let .locatorRecordDisk(disk):
            "zip64 end of central directory locator: record on disk \(disk) (multi-disk archive)"
        case let .locatorDiskCount(count):
            "zip64 end of central directory locator: \(count) disks (multi-disk archive)"
        case let .zip64RecordLength(offset, declared, locatorOffset):
            "zip64 end of central directory record at offset \(offset) declares \(declared) more bytes, so it does not end at its locator (offset \(locatorOffset))"
        case let .endRecordsDisagree(field, classic, zip64):
            "end of central directory says \(field.rawValue) \(classic), but the zip64 record says \(zip64)"
        case let .entriesOnDiskMismatch(onDisk, total):
            "end of central directory: \(onDisk) entries on this disk but \(total) in total (multi-disk archive)"
        case let .directoryGap(offset, size, end, recordsStart):
            "central directory (offset \(offset), size \(size)) ends at \(end), but the end of central directory records start at \(recordsStart) (\(UInt64(truncatingIfNeeded: recordsStart) &- end) unexplained bytes; prepended data would shift every offset)"
        case let .entryCountMismatch(declared, found):
            "end of central directory says \(declared) entries, but the central directory holds \(found)"
        case let .missingCentralHeader(offset, signature, remaining):
            "central directory: no central directory header at offset \(offset) (\(signature.map(ZipInspector.hex) ?? "only \(remaining) bytes")); \(remaining) bytes left unread"
        case let .centralHeaderOverrun(offset, length, remaining):
            "central directory: header at offset \(offset) declares \(length) bytes, but only \(remaining) remain"
        case let .compressionRatio(total, ratio, archiveSize):
            "total uncompressed size \(total) bytes is more than \(ratio) times the archive size \(archiveSize) bytes (a possible zip bomb)"

        case let .zip64ValuesMissing(entry, index, header, fields):
            "\(header.subject(entry, index)): \(fields.map(\.rawValue).joined(separator: ", ")) marked 0xFFFFFFFF but missing from the zip64 extra field"
        case let .extraFieldOverrun(entry, index, header, id, length, remaining):
            "\(header.subject(entry, index)): extra field \(ZipInspector.hex16(id)) declares \(length) bytes, but only \(remaining) remain"
        case let .unicodePathField(entry, index, header, name):
            // In a local header the subject is followed by "(local header)" as well.
            "\(header.subject(entry, index))\(header == .central ? "" : " (local header)"): an Info-ZIP Unicode Path extra field (0x7075) names it \(ZipInspector.quoted(name)); unzip and bsdtar extract to that name, which is not the one checked (modelcast never writes this field)"
        case let .valueOutOfRange(entry, index, field, value):
            "\(label(entry, index)): \(field.rawValue) \(value) is out of range"
        case let .emptyName(entry, index):
            "\(label(entry, index)): empty name"
        case let .invalidUTF8Name(entry, index, bytes):
            "\(label(entry, index)): name is not valid UTF-8 (\(bytes.map { String(format: "%02x", $0) }.joined()))"
        case let .nonASCIINameWithoutUTF8Flag(entry, index):
            "\(label(entry, index)): non-ASCII name without the UTF-8 flag (general purpose bit 11), which unzip tools decode differently"
        case let .controlCharacter(entry, index, scalar):
            "\(label(entry, index)): control character \(ZipInspector.codePoint(scalar)) in name"
        case let .absolutePath(entry, index):
            "\(label(entry, index)): absolute path (leading \"/\")"
        case let .windowsDrivePrefix(entry, index, drive):
            "\(label(entry, index)): Windows drive prefix (\"\(drive):\")"
        case let .backslashInName(entry, index):
            "\(label(entry, index)): backslash in name (a path separator on Windows)"
        case let .pathEscapes(entry, index):
            "\(label(entry, index)): path escapes the archive (\"..\")"
        case let .symbolicLink(entry, index, mode):
            "\(label(entry, index)): symbolic link (mode \(ZipInspector.octal(mode)))"
        case let .specialFile(entry, index, mode):
            "\(label(entry, index)): not a regular file or directory (\(ZipInspector.fileTypeName(mode & 0o170000)), mode \(ZipInspector.octal(mode)))"
        case let .unsupportedVersion(entry, index, needed):
            "\(label(entry, index)): needs zip version \(needed / 10).\(needed % 10) to extract (above 6.3, the newest the zip specification defines; readers refuse it)"
        case let .entryDisk(entry, index, disk):
            "\(label(entry, index)): starts on disk \(disk) (multi-disk archive)"
        case let .encrypted(entry, index):
            "\(label(entry, index)): encrypted (general purpose flag bit 0)"
        case let .unsupportedMethod(entry, index, method):
            "\(label(entry, index)): compression method \(method) (\(ZipInspector.methodName(method))) is neither store (0) nor deflate (8)"
        case let .storedSizesDiffer(entry, index, compressed, uncompressed):
            "\(label(entry, index)): stored (method 0) but compressed size \(compressed) differs from uncompressed size \(uncompressed)"

        case let .localHeaderTruncated(entry, index, offset):
            "\(label(entry, index)): local header at offset \(offset) is cut short by the end of the archive"
        case let .localHeaderMissing(entry, index, offset, signature):
            "\(label(entry, index)): no local file header at offset \(offset) (signature \(ZipInspector.hex(signature)))"
        case let .localHeaderNameDiffers(entry, index, offset, localName, truncated):
            "\(label(entry, index)): local header at offset \(offset) names \(ZipInspector.quoted(localName + (truncated ? "…" : ""))) instead"
        case let .localHeaderDiffers(entry, index, offset, field, local, central, fromZip64):
            "\(label(entry, index)): local header at offset \(offset) says \(field.rawValue) \(field.shown(local))\(fromZip64 ? " (zip64 extra field)" : ""), the central directory says \(field.shown(central))"
        case let .descriptorTruncated(entry, index, offset, available):
            "\(label(entry, index)): data descriptor at offset \(offset) is cut short: \(available) bytes before the next local header or the central directory"
        case let .descriptorDiffers(entry, index, offset, field, descriptor, central):
            "\(label(entry, index)): data descriptor at offset \(offset) says \(field.rawValue) \(field.shown(descriptor)), the central directory says \(field.shown(central))"

        case let .localHeaderBeyondDirectory(entry, index, offset, directoryStart):
            "\(label(entry, index)): local header offset \(offset) is beyond the central directory start \(directoryStart)"
        case let .bytesBeforeFirstHeader(offset, entry):
            "\(offset) bytes before the first local header (\(ZipInspector.quoted(entry))) that no entry accounts for"
        case let .unaccountedBytes(entry, index, dataEnd, next, nextEntry):
            "\(label(entry, index)): \(next &- dataEnd) bytes between its data (ending at \(dataEnd)) and \(nextEntry.map { "the local header of \(ZipInspector.quoted($0))" } ?? "the central directory") at \(next) that no entry accounts for (a local entry the central directory does not list?)"
        case let .dataPastDirectory(entry, index, dataEnd, directoryStart):
            "\(label(entry, index)): data ends at \(dataEnd), past the central directory start \(directoryStart)"
        case let .dataOverlapsNextHeader(entry, index, dataEnd, nextEntry, nextOffset):
            "\(label(entry, index)): data ends at \(dataEnd), overlapping the local header of \(ZipInspector.quoted(nextEntry)) at \(nextOffset)"
        case let .duplicateName(entry, index, firstIndex):
            "\(label(entry, index)): duplicate name (same as entry #\(firstIndex + 1))"
        case let .foldedNameCollision(entry, index, other):
            "\(label(entry, index)): collides with \(ZipInspector.quoted(other)) after Unicode NFC normalisation and lowercasing (they would overwrite each other on a case-insensitive file system)"
        }
    }

    private func label(_ entry: String, _ index: Int) -> String { ZipInspector.entryLabel(entry, index: index) }
}

extension ZipProblem.EndRecord {
    var name: String {
        switch self {
        case .classic: "end of central directory"
        case .zip64: "zip64 end of central directory"
        }
    }
}

extension ZipProblem.Header {
    /// The entry's label, followed for a local header by where that header is.
    func subject(_ entry: String, _ index: Int) -> String {
        let label = ZipInspector.entryLabel(entry, index: index)
        switch self {
        case .central: return label
        case .local(let offset): return "\(label): local header at offset \(offset)"
        }
    }
}
