import Foundation

/// The central directory: every entry's name, sizes, method, attributes and extra fields, with their rules.
extension ZipInspector {
    /// An entry plus what the checks after parsing need.
    struct ParsedEntry {
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
    }

    /// Up to 24 bytes read where an entry's data descriptor should start.
    struct Descriptor {
        var offset: Int64
        var bytes: [UInt8]
        /// Eight-byte sizes: the local header carries a zip64 extra field.
        var wide: Bool
    }

    /// Thrown inside the walk when the central directory holds more entries than allowed.
    struct TooManyEntries: Error { let limit: Int }

    static func parseCentralDirectory(_ bytes: [UInt8], startingAt base: Int64, maxEntries: Int = defaultMaxEntries, problems: inout [ZipProblem]) throws -> [ParsedEntry] {
        let directory = Fields(bytes)
        var entries: [ParsedEntry] = []
        var position = 0
        while position < directory.count {
            // The end record's count was checked against the limit, but it can understate.
            guard entries.count < maxEntries else { throw TooManyEntries(limit: maxEntries) }
            let remaining = directory.count - position
            guard remaining >= centralHeaderSize, directory.u32(position) == centralHeaderSignature else {
                let signature = remaining >= 4 ? directory.u32(position) : nil
                problems.append(.missingCentralHeader(offset: base + Int64(position), signature: signature, remaining: remaining))
                break
            }
            let nameLength = Int(directory.u16(position + 28))
            let extraLength = Int(directory.u16(position + 30))
            let commentLength = Int(directory.u16(position + 32))
            let recordLength = centralHeaderSize + nameLength + extraLength + commentLength
            guard recordLength <= remaining else {
                problems.append(.centralHeaderOverrun(offset: base + Int64(position), length: recordLength, remaining: remaining))
                break
            }
            let nameStart = position + centralHeaderSize
            let nameBytes = Array(bytes[nameStart..<(nameStart + nameLength)])
            let extra = Array(bytes[(nameStart + nameLength)..<(nameStart + nameLength + extraLength)])
            var parsed = parseEntry(directory, at: position, index: entries.count, nameBytes: nameBytes, extra: extra, problems: &problems)
            parsed.centralExtraLength = extraLength
            entries.append(parsed)
            position += recordLength
        }
        return entries
    }

    static func parseEntry(_ directory: Fields, at position: Int, index: Int, nameBytes: [UInt8], extra: [UInt8], problems: inout [ZipProblem]) -> ParsedEntry {
        let decoded = String(validating: nameBytes, as: UTF8.self)
        let name = decoded ?? String(decoding: nameBytes, as: UTF8.self)
        let wide = zip64Field(in: extra, entry: name, index: index, header: .central, problems: &problems)
        problems += unicodePathProblems(in: extra, entry: name, index: index, header: .central)
        let values = centralValues(directory, at: position, zip64: wide, entry: name, index: index, problems: &problems)
        func clamp(_ value: UInt64, _ field: ZipProblem.Field) -> Int64 {
            guard value <= UInt64(Int64.max) else {
                problems.append(.valueOutOfRange(entry: name, index: index, field: field, value: value))
                return Int64.max
            }
            return Int64(value)
        }

        let host = UInt8(directory.u16(position + 4) >> 8)
        let external = directory.u32(position + 38)
        let fileType = (unixHosts.contains(host) ? external >> 16 : 0) & 0o170000
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
        problems += centralHeaderProblems(entry, index: index, nameBytes: nameBytes, decoded: decoded, versionNeeded: directory.u16(position + 6), values: values)
        return ParsedEntry(entry: entry, index: index, nameBytes: nameBytes, dataEnd: nil)
    }

    /// The sizes, local header offset and disk number a central directory header records,
    /// with the zip64 extra field's values in place of the 0xFFFF.. markers.
    struct CentralValues {
        var compressed: UInt64
        var uncompressed: UInt64
        var offset: UInt64
        var disk: UInt32
        /// The zip64 extra field supplied at least one of them.
        var usesZip64 = false
    }

    /// Reads the header's sizes, offset and disk number; reports values marked 0xFFFF.. that
    /// the zip64 extra field (`wide`, its body) does not supply.
    static func centralValues(_ directory: Fields, at position: Int, zip64 wide: Fields?, entry name: String, index: Int, problems: inout [ZipProblem]) -> CentralValues {
        var values = CentralValues(
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
    static func centralHeaderProblems(_ entry: ZipEntry, index: Int, nameBytes: [UInt8], decoded: String?, versionNeeded: UInt16, values: CentralValues) -> [ZipProblem] {
        let name = entry.name, method = entry.method
        var problems = nameProblems(nameBytes, decoded: decoded, flags: entry.flags, index: index)
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

    /// The body of the zip64 extended information extra field (0x0001), if present.
    static func zip64Field(in extra: [UInt8], entry: String, index: Int, header: ZipProblem.Header, problems: inout [ZipProblem]) -> Fields? {
        let fields = Fields(extra)
        var position = 0
        var found: Fields?
        // Fewer than 4 trailing bytes cannot hold a field header; some writers pad.
        while position + 4 <= fields.count {
            let id = fields.u16(position), length = Int(fields.u16(position + 2))
            guard position + 4 + length <= fields.count else {
                problems.append(.extraFieldOverrun(entry: entry, index: index, header: header, id: id, length: length, remaining: fields.count - position - 4))
                break
            }
            if id == 0x0001, found == nil { found = Fields(Array(extra[(position + 4)..<(position + 4 + length)])) }
            position += 4 + length
        }
        return found
    }

    /// An Info-ZIP Unicode Path extra field (0x7075) carries a second name that unzip and
    /// bsdtar extract to instead of the header's: verify checks one name per entry, so an
    /// entry with another name hidden in its extra field is refused (modelcast never writes one).
    static func unicodePathProblems(in extra: [UInt8], entry: String, index: Int, header: ZipProblem.Header) -> [ZipProblem] {
        let fields = Fields(extra)
        var position = 0
        var problems: [ZipProblem] = []
        while position + 4 <= fields.count {
            let id = fields.u16(position), length = Int(fields.u16(position + 2))
            guard position + 4 + length <= fields.count else { break }  // zip64Field reports it
            if id == 0x7075 {
                // Version (1 byte), CRC-32 of the header's name (4), then the UTF-8 name.
                let body = extra[(position + 4)..<(position + 4 + length)]
                let name = body.count > 5 ? String(decoding: body.dropFirst(5), as: UTF8.self) : ""
                problems.append(.unicodePathField(entry: entry, index: index, header: header, name: name))
            }
            position += 4 + length
        }
        return problems
    }

    /// Names that would land outside the destination, or mean different files on different systems.
    static func nameProblems(_ bytes: [UInt8], decoded: String?, flags: UInt16, index: Int) -> [ZipProblem] {
        let name = decoded ?? String(decoding: bytes, as: UTF8.self)
        guard !bytes.isEmpty else { return [.emptyName(entry: name, index: index)] }
        var problems: [ZipProblem] = []
        if decoded == nil {
            problems.append(.invalidUTF8Name(entry: name, index: index, bytes: bytes))
        } else if flags & 0x0800 == 0, bytes.contains(where: { $0 >= 0x80 }) {
            problems.append(.nonASCIINameWithoutUTF8Flag(entry: name, index: index))
        }
        // ASCII's only control characters are C0 and DEL; other names need the Unicode tables.
        let isASCII = bytes.allSatisfy { $0 < 0x80 }
        if isASCII, let control = bytes.first(where: { $0 < 0x20 || $0 == 0x7F }) {
            problems.append(.controlCharacter(entry: name, index: index, scalar: Unicode.Scalar(control)))
        } else if !isASCII, let control = name.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            problems.append(.controlCharacter(entry: name, index: index, scalar: control))
        }
        if bytes.first == UInt8(ascii: "/") {
            problems.append(.absolutePath(entry: name, index: index))
        }
        if bytes.count >= 2, bytes[1] == UInt8(ascii: ":"), (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[0] & 0xDF) {
            problems.append(.windowsDrivePrefix(entry: name, index: index, drive: Character(Unicode.Scalar(bytes[0]))))
        }
        if bytes.contains(UInt8(ascii: "\\")) {
            problems.append(.backslashInName(entry: name, index: index))
        }
        if name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).contains("..") {
            problems.append(.pathEscapes(entry: name, index: index))
        }
        return problems
    }
}
