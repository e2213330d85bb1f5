import Foundation

extension ZipProblem {
    /// The sentence verify reports for the problem, naming the entry and the offending value.
    public var message: String {
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
            "central directory: no central directory header at offset \(offset) (\(signature.map(ZipText.hex) ?? "only \(remaining) bytes")); \(remaining) bytes left unread"
        case let .centralHeaderOverrun(offset, length, remaining):
            "central directory: header at offset \(offset) declares \(length) bytes, but only \(remaining) remain"
        case let .compressionRatio(total, ratio, archiveSize):
            "total uncompressed size \(total) bytes is more than \(ratio) times the archive size \(archiveSize) bytes (a possible zip bomb)"

        case let .zip64ValuesMissing(entry, index, header, fields):
            "\(header.subject(entry, index)): \(fields.map(\.rawValue).joined(separator: ", ")) marked 0xFFFFFFFF but missing from the zip64 extra field"
        case let .extraFieldOverrun(entry, index, header, id, length, remaining):
            "\(header.subject(entry, index)): extra field \(ZipText.hex16(id)) declares \(length) bytes, but only \(remaining) remain"
        case let .unicodePathField(entry, index, header, name):
            // In a local header the subject is followed by "(local header)" as well.
            "\(header.subject(entry, index))\(header == .central ? "" : " (local header)"): an Info-ZIP Unicode Path extra field (0x7075) names it \(ZipText.quoted(name)); unzip and bsdtar extract to that name, which is not the one checked (modelcast never writes this field)"
        case let .valueOutOfRange(entry, index, field, value):
            "\(label(entry, index)): \(field.rawValue) \(value) is out of range"
        case let .emptyName(entry, index):
            "\(label(entry, index)): empty name"
        case let .invalidUTF8Name(entry, index, bytes):
            "\(label(entry, index)): name is not valid UTF-8 (\(bytes.map { String(format: "%02x", $0) }.joined()))"
        case let .nonASCIINameWithoutUTF8Flag(entry, index):
            "\(label(entry, index)): non-ASCII name without the UTF-8 flag (general purpose bit 11), which unzip tools decode differently"
        case let .controlCharacter(entry, index, scalar):
            "\(label(entry, index)): control character \(ZipText.codePoint(scalar)) in name"
        case let .absolutePath(entry, index):
            "\(label(entry, index)): absolute path (leading \"/\")"
        case let .windowsDrivePrefix(entry, index, drive):
            "\(label(entry, index)): Windows drive prefix (\"\(drive):\")"
        case let .backslashInName(entry, index):
            "\(label(entry, index)): backslash in name (a path separator on Windows)"
        case let .pathEscapes(entry, index):
            "\(label(entry, index)): path escapes the archive (\"..\")"
        case let .unsafeName(entry, index, rule):
            "\(label(entry, index)): a name no device can create: it \(rule)"
        case let .symbolicLink(entry, index, mode):
            "\(label(entry, index)): symbolic link (mode \(ZipText.octal(mode)))"
        case let .specialFile(entry, index, mode):
            "\(label(entry, index)): not a regular file or directory (\(ZipText.fileTypeName(mode & 0o170000)), mode \(ZipText.octal(mode)))"
        case let .unsupportedVersion(entry, index, needed):
            "\(label(entry, index)): needs zip version \(needed / 10).\(needed % 10) to extract (above 6.3, the newest the zip specification defines; readers refuse it)"
        case let .entryDisk(entry, index, disk):
            "\(label(entry, index)): starts on disk \(disk) (multi-disk archive)"
        case let .encrypted(entry, index):
            "\(label(entry, index)): encrypted (general purpose flag bit 0)"
        case let .unsupportedMethod(entry, index, method):
            "\(label(entry, index)): compression method \(method) (\(ZipText.methodName(method))) is neither store (0) nor deflate (8)"
        case let .storedSizesDiffer(entry, index, compressed, uncompressed):
            "\(label(entry, index)): stored (method 0) but compressed size \(compressed) differs from uncompressed size \(uncompressed)"

        case let .localHeaderTruncated(entry, index, offset):
            "\(label(entry, index)): local header at offset \(offset) is cut short by the end of the archive"
        case let .localHeaderMissing(entry, index, offset, signature):
            "\(label(entry, index)): no local file header at offset \(offset) (signature \(ZipText.hex(signature)))"
        case let .localHeaderNameDiffers(entry, index, offset, localName, truncated):
            "\(label(entry, index)): local header at offset \(offset) names \(ZipText.quoted(localName + (truncated ? "…" : ""))) instead"
        case let .localHeaderDiffers(entry, index, offset, field, local, central, fromZip64):
            "\(label(entry, index)): local header at offset \(offset) says \(field.rawValue) \(field.shown(local))\(fromZip64 ? " (zip64 extra field)" : ""), the central directory says \(field.shown(central))"
        case let .descriptorTruncated(entry, index, offset, available):
            "\(label(entry, index)): data descriptor at offset \(offset) is cut short: \(available) bytes before the next local header or the central directory"
        case let .descriptorDiffers(entry, index, offset, field, descriptor, central):
            "\(label(entry, index)): data descriptor at offset \(offset) says \(field.rawValue) \(field.shown(descriptor)), the central directory says \(field.shown(central))"

        case let .localHeaderBeyondDirectory(entry, index, offset, directoryStart):
            "\(label(entry, index)): local header offset \(offset) is beyond the central directory start \(directoryStart)"
        case let .bytesBeforeFirstHeader(offset, entry):
            "\(offset) bytes before the first local header (\(ZipText.quoted(entry))) that no entry accounts for"
        case let .unaccountedBytes(entry, index, dataEnd, next, nextEntry):
            "\(label(entry, index)): \(next &- dataEnd) bytes between its data (ending at \(dataEnd)) and \(nextEntry.map { "the local header of \(ZipText.quoted($0))" } ?? "the central directory") at \(next) that no entry accounts for (a local entry the central directory does not list?)"
        case let .dataPastDirectory(entry, index, dataEnd, directoryStart):
            "\(label(entry, index)): data ends at \(dataEnd), past the central directory start \(directoryStart)"
        case let .dataOverlapsNextHeader(entry, index, dataEnd, nextEntry, nextOffset):
            "\(label(entry, index)): data ends at \(dataEnd), overlapping the local header of \(ZipText.quoted(nextEntry)) at \(nextOffset)"
        case let .duplicateName(entry, index, firstIndex):
            "\(label(entry, index)): duplicate name (same as entry #\(firstIndex + 1))"
        case let .foldedNameCollision(entry, index, other):
            "\(label(entry, index)): collides with \(ZipText.quoted(other)) after Unicode NFC normalisation and lowercasing (they would overwrite each other on a case-insensitive file system)"
        }
    }

    private func label(_ entry: String, _ index: Int) -> String { ZipText.entryLabel(entry, index: index) }
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
        let label = ZipText.entryLabel(entry, index: index)
        switch self {
        case .central: return label
        case .local(let offset): return "\(label): local header at offset \(offset)"
        }
    }
}
