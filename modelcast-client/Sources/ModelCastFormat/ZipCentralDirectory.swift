import Foundation

/// One central directory entry as the scan holds it: the entry, and what the checks after
/// the central directory need.
struct ZipParsedEntry {
    var entry: ZipEntry
    /// Position in the central directory, from 0.
    var index: Int
    var nameBytes: [UInt8]
    /// Where the entry's data, and its data descriptor if any, ends; nil when the local header could not be read.
    var dataEnd: Int64?
    /// Length of the central directory header's extra field (the local one is usually as long).
    var centralExtraLength = 0
    /// The bytes where the data descriptor should be, when local and central flags agree on one.
    var descriptor: Descriptor?

    /// Up to 24 bytes read where an entry's data descriptor should start.
    struct Descriptor {
        var offset: Int64
        var bytes: [UInt8]
        /// Eight-byte sizes: the local header carries a zip64 extra field.
        var wide: Bool
    }
}

/// The central directory: every entry's name, sizes, method, attributes and extra fields,
/// with the device's rules on each.
enum ZipCentralDirectory {
    /// Thrown inside the walk when the central directory holds more entries than allowed.
    struct TooManyEntries: Error { let limit: Int }

    /// The entries of the central directory `bytes`, which starts at `base` in the archive.
    /// Throws `TooManyEntries` past `maxEntries` headers; reports a header that is missing
    /// or runs past the directory (the walk stops there).
    static func parse(_ bytes: [UInt8], startingAt base: Int64, maxEntries: Int, problems: inout [ZipProblem]) throws -> [ZipParsedEntry] {
        let directory = ZipFields(bytes)
        var entries: [ZipParsedEntry] = []
        var position = 0
        while position < directory.count {
            // The end record's count was checked against the limit, but it can understate.
            guard entries.count < maxEntries else { throw TooManyEntries(limit: maxEntries) }
            let remaining = directory.count - position
            guard remaining >= ZipFormat.centralHeaderSize, directory.u32(position) == ZipFormat.centralHeaderSignature else {
                let signature = remaining >= 4 ? directory.u32(position) : nil
                problems.append(.missingCentralHeader(offset: base + Int64(position), signature: signature, remaining: remaining))
                break
            }
            let nameLength = Int(directory.u16(position + 28))
            let extraLength = Int(directory.u16(position + 30))
            let commentLength = Int(directory.u16(position + 32))
            let recordLength = ZipFormat.centralHeaderSize + nameLength + extraLength + commentLength
            guard recordLength <= remaining else {
                problems.append(.centralHeaderOverrun(offset: base + Int64(position), length: recordLength, remaining: remaining))
                break
            }
            let nameStart = position + ZipFormat.centralHeaderSize
            let nameBytes = Array(bytes[nameStart..<(nameStart + nameLength)])
            let extra = Array(bytes[(nameStart + nameLength)..<(nameStart + nameLength + extraLength)])
            var parsed = entry(directory, at: position, index: entries.count, nameBytes: nameBytes, extra: extra, problems: &problems)
            parsed.centralExtraLength = extraLength
            entries.append(parsed)
            position += recordLength
        }
        return entries
    }

    static func entry(_ directory: ZipFields, at position: Int, index: Int, nameBytes: [UInt8], extra: [UInt8], problems: inout [ZipProblem]) -> ZipParsedEntry {
        let decoded = ZipText.utf8(nameBytes)
        let name = decoded ?? String(decoding: nameBytes, as: UTF8.self)
        let fields = ZipExtraFields(extra, entry: name, index: index, header: .central, problems: &problems)
        problems += fields.unicodePathProblems(entry: name, index: index, header: .central)
        let values = centralValues(directory, at: position, zip64: fields.zip64, entry: name, index: index, problems: &problems)
        func clamp(_ value: UInt64, _ field: ZipProblem.Field) -> Int64 {
            guard value <= UInt64(Int64.max) else {
                problems.append(.valueOutOfRange(entry: name, index: index, field: field, value: value))
                return Int64.max
            }
            return Int64(value)
        }

        let host = UInt8(directory.u16(position + 4) >> 8)
        let external = directory.u32(position + 38)
        let fileType = (ZipFormat.unixHosts.contains(host) ? external >> 16 : 0) & 0o170000
        let entry = ZipEntry(
            name: name,
            compressedSize: clamp(values.compressed, .compressedSize),
            uncompressedSize: clamp(values.uncompressed, .uncompressedSize),
            localHeaderOffset: clamp(values.offset, .localHeaderOffset),
            method: directory.u16(position + 10), flags: directory.u16(position + 8), crc32: directory.u32(position + 16),
            hostSystem: host, externalAttributes: external,
            isDirectory: nameBytes.last == UInt8(ascii: "/") || fileType == 0o040000 || (fileType == 0 && external & 0x10 != 0),
            isSymlink: fileType == 0o120000,
            usesZip64: values.usesZip64)
        problems += headerProblems(entry, index: index, nameBytes: nameBytes, decoded: decoded, versionNeeded: directory.u16(position + 6), values: values)
        return ZipParsedEntry(entry: entry, index: index, nameBytes: nameBytes, dataEnd: nil)
    }

    /// The sizes, local header offset and disk number a central directory header records,
    /// with the zip64 extra field's values in place of the 0xFFFF.. markers.
    struct Values {
        var compressed: UInt64
        var uncompressed: UInt64
        var offset: UInt64
        var disk: UInt32
        /// The zip64 extra field supplied at least one of them.
        var usesZip64 = false
    }

    /// Reads the header's sizes, offset and disk number; reports values marked 0xFFFF.. that
    /// the zip64 extra field (`wide`, its body) does not supply.
    static func centralValues(_ directory: ZipFields, at position: Int, zip64 wide: ZipFields?, entry name: String, index: Int, problems: inout [ZipProblem]) -> Values {
        var values = Values(
            compressed: UInt64(directory.u32(position + 20)), uncompressed: UInt64(directory.u32(position + 24)),
            offset: UInt64(directory.u32(position + 42)), disk: UInt32(directory.u16(position + 34)))
        // The zip64 field holds, in this order, only the values whose classic field is the 0xFFFF.. marker.
        var missing: [ZipProblem.Field] = []
        var cursor = 0
        func take(_ width: Int, _ field: ZipProblem.Field) -> UInt64? {
            guard let wide, cursor + width <= wide.count else { missing.append(field); return nil }
            defer { cursor += width }
            values.usesZip64 = true
            return width == 8 ? wide.u64(cursor) : UInt64(wide.u32(cursor))
        }
        if values.uncompressed == 0xFFFF_FFFF, let value = take(8, .uncompressedSize) { values.uncompressed = value }
        if values.compressed == 0xFFFF_FFFF, let value = take(8, .compressedSize) { values.compressed = value }
        if values.offset == 0xFFFF_FFFF, let value = take(8, .localHeaderOffset) { values.offset = value }
        if values.disk == 0xFFFF, let value = take(4, .diskNumber) { values.disk = UInt32(value) }
        if !missing.isEmpty {
            problems.append(.zip64ValuesMissing(entry: name, index: index, header: .central, fields: missing))
        }
        return values
    }

    /// What the entry's central directory header says that makes it unsafe to unzip: its name,
    /// a link or special file, a zip version no specification defines, another disk,
    /// encryption, a method other than store or deflate, stored sizes that differ.
    static func headerProblems(_ entry: ZipEntry, index: Int, nameBytes: [UInt8], decoded: String?, versionNeeded: UInt16, values: Values) -> [ZipProblem] {
        let name = entry.name, method = entry.method
        var problems = ZipEntryNames.problems(nameBytes, decoded: decoded, flags: entry.flags, index: index)
        let mode = entry.unixMode ?? 0
        switch mode & 0o170000 {
        case 0, 0o100000, 0o040000: break
        case 0o120000: problems.append(.symbolicLink(entry: name, index: index, mode: mode))
        default: problems.append(.specialFile(entry: name, index: index, mode: mode))
        }
        // The low byte of "version needed to extract" is the APPNOTE version ×10: above 6.3
        // no specification defines it, and readers (Python's zipfile) refuse the entry.
        let needed = versionNeeded & 0xFF
        if needed > 63 { problems.append(.unsupportedVersion(entry: name, index: index, needed: needed)) }
        if values.disk != 0 { problems.append(.entryDisk(entry: name, index: index, disk: values.disk)) }
        if entry.isEncrypted { problems.append(.encrypted(entry: name, index: index)) }
        if method != 0 && method != 8 { problems.append(.unsupportedMethod(entry: name, index: index, method: method)) }
        if method == 0 && values.compressed != values.uncompressed {
            problems.append(.storedSizesDiffer(entry: name, index: index, compressed: values.compressed, uncompressed: values.uncompressed))
        }
        return problems
    }
}
