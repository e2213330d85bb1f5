import Foundation

/// Random access to an archive's bytes: a local file, or an HTTP resource read with Range requests.
public protocol RandomAccessBytes: Sendable {
    /// Total size in bytes.
    var size: Int64 { get }
    /// A display name for errors (a path or URL).
    var name: String { get }
    /// Exactly `count` bytes at `offset` (fewer only at end of data).
    func read(offset: Int64, count: Int) async throws -> [UInt8]
}

/// A local file as `RandomAccessBytes`. The file is opened once and read with
/// `pread`, so every read sees the same file even if the path is replaced meanwhile.
public struct FileBytes: RandomAccessBytes, @unchecked Sendable {
    // @unchecked: FileDescriptor is a class, but FileBytes only ever calls its
    // positional read (pread shares no file position between threads) and never closes it.
    private let file: FileDescriptor
    /// Size of the file when it was opened.
    public let size: Int64
    /// The path, as given.
    public let name: String

    /// Opens the regular file at `path` (a symbolic link is followed).
    public init(path: String) throws {
        let file = try FileDescriptor.openForReading(path)
        let info = try file.status()
        switch FileType(mode: info.st_mode) {
        case .regular, .symlink:  // open() followed any link, so fstat never reports one
            break
        case .directory:
            throw ModelCastError.invalidModel(path: path, format: "zip", reason: "a directory, not a zip archive")
        case .other(let kind):
            throw ModelCastError.specialFile(path: path, kind: kind)
        }
        self.file = file
        self.size = Int64(info.st_size)
        self.name = path
    }

    /// `count` bytes at `offset`, fewer only at end of file.
    public func read(offset: Int64, count: Int) async throws -> [UInt8] {
        guard offset >= 0, count >= 0 else {
            throw ModelCastError.io(operation: "read \(count) bytes at offset \(offset)", path: name, reason: "invalid range")
        }
        return try file.read(at: offset, count: count)
    }
}

/// One central-directory entry, with zip64 values already applied.
public struct ZipEntry: Sendable, Equatable {
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

    /// The Unix mode (file type and permission bits) when the host is Unix-like and records one.
    public var unixMode: UInt32? {
        let mode = externalAttributes >> 16
        return ZipInspector.unixHosts.contains(hostSystem) && mode != 0 ? mode : nil
    }

    /// General purpose bit 0: the data is encrypted.
    public var isEncrypted: Bool { flags & 1 != 0 }
}

/// What `ZipInspector.inspect` found: every entry, and every problem (none means safe to unzip).
public struct ZipInspection: Sendable {
    /// The central directory's entries, in central directory order.
    public let entries: [ZipEntry]
    /// One message per problem, naming the entry and the offending value.
    public let problems: [String]
    /// True when the archive ends with zip64 end of central directory records.
    public let isZip64: Bool

    /// Sum of the entries' uncompressed sizes (saturating at `Int64.max`).
    public var totalUncompressedSize: Int64 {
        entries.reduce(0) { ZipInspector.saturatingAdd($0, $1.uncompressedSize) }
    }
}

/// Reads a zip's central directory the way a cautious device would before
/// unzipping, and lists everything that makes it unsafe: names that escape the
/// destination or collide, links and special files, sizes and offsets that do not
/// add up, encryption, multiple disks, an implausible compression ratio.
///
/// Only the end records, the central directory and the fixed part plus name of
/// each local header are read, so the cost follows the central directory, not
/// the archive (which matters when `source` is a remote file read by ranges).
public enum ZipInspector {
    static let endSignature: UInt32 = 0x0605_4b50
    static let zip64LocatorSignature: UInt32 = 0x0706_4b50
    static let zip64EndSignature: UInt32 = 0x0606_4b50
    static let centralHeaderSignature: UInt32 = 0x0201_4b50
    static let localHeaderSignature: UInt32 = 0x0403_4b50
    static let endRecordSize = 22
    static let maxCommentLength = 65_535
    static let zip64LocatorSize = 20
    static let zip64EndRecordSize = 56
    static let centralHeaderSize = 46
    static let localHeaderSize = 30
    /// The smallest data descriptor: CRC-32 and two 4-byte sizes, no signature.
    static let minimumDataDescriptorSize: Int64 = 12
    /// Total uncompressed size above this many times the archive size is reported as a zip bomb.
    static let maxCompressionRatio: Int64 = 1000
    /// "Version made by" hosts whose external attributes carry a Unix mode: Unix (3), OS X (19).
    static let unixHosts: Set<UInt8> = [3, 19]

    /// The most entries an archive may have unless the caller says otherwise
    /// (`verify --max-zip-entries`). Model packages hold tens to thousands of files;
    /// a huge count only costs the device time and memory before it unpacks anything.
    public static let defaultMaxEntries = 100_000
    /// Local headers (and data descriptors) closer together than this are fetched in one read.
    static let coalescingGap: Int64 = 32 << 10
    /// The largest single read of local headers.
    static let coalescedReadLimit: Int64 = 1 << 20

    /// Reads the end of central directory record (searching the last 65,557 bytes
    /// for its signature, so a trailing comment is handled), the zip64 records when
    /// present, then the central directory, and checks every entry, its local
    /// header and its data descriptor against each other.
    ///
    /// Throws `ModelCastError.invalidModel` (format "zip", naming `source`) when the
    /// archive cannot be parsed at all: no end record, end records that point
    /// outside the file, a central directory larger than `maxCentralDirectory`
    /// bytes or claiming more entries than it could hold, or more than `maxEntries`
    /// entries (refused from the end record's count before the central directory
    /// is read, and again while walking it if that count understates). Everything
    /// else is reported in the result's `problems`.
    public static func inspect(_ source: some RandomAccessBytes, maxCentralDirectory: Int = 64 << 20, maxEntries: Int = defaultMaxEntries) async throws -> ZipInspection {
        var problems: [String] = []
        let end = try await readEndRecords(source, problems: &problems)
        guard end.entryCount <= UInt64(max(maxEntries, 0)) else {
            throw invalid(source, "end of central directory declares \(end.entryCount) entries, more than the limit of \(maxEntries) (verify --max-zip-entries raises it)")
        }

        guard end.directorySize <= UInt64(max(maxCentralDirectory, 0)) else {
            throw invalid(source, "central directory is \(end.directorySize) bytes, more than the limit of \(maxCentralDirectory) bytes")
        }
        let directoryEnd = end.directoryOffset.addingReportingOverflow(end.directorySize)
        guard !directoryEnd.overflow, directoryEnd.partialValue <= UInt64(end.directoryEndExpected) else {
            throw invalid(source, "central directory (offset \(end.directoryOffset), size \(end.directorySize)) runs past the end of central directory record at offset \(end.directoryEndExpected)")
        }
        if directoryEnd.partialValue != UInt64(end.directoryEndExpected) {
            let gap = UInt64(end.directoryEndExpected) - directoryEnd.partialValue
            problems.append("central directory (offset \(end.directoryOffset), size \(end.directorySize)) ends at \(directoryEnd.partialValue), but the end of central directory records start at \(end.directoryEndExpected) (\(gap) unexplained bytes; prepended data would shift every offset)")
        }
        let capacity = end.directorySize / UInt64(centralHeaderSize)
        guard end.entryCount <= capacity else {
            throw invalid(source, "end of central directory claims \(end.entryCount) entries, more than a \(end.directorySize)-byte central directory can hold (at most \(capacity))")
        }

        let directoryStart = Int64(end.directoryOffset)
        var entries: [ParsedEntry]
        do {
            let directory = try await readExactly(source, offset: directoryStart, count: Int(end.directorySize), what: "central directory")
            entries = try parseCentralDirectory(directory, startingAt: directoryStart, maxEntries: maxEntries, problems: &problems)
        } catch let tooMany as TooManyEntries {
            throw invalid(source, "central directory holds more than the limit of \(tooMany.limit) entries (the end of central directory declares \(end.entryCount)); verify --max-zip-entries raises the limit")
        }
        if UInt64(entries.count) != end.entryCount {
            problems.append("end of central directory says \(end.entryCount) entries, but the central directory holds \(entries.count)")
        }

        // Local headers in file order, so neighbouring ones come in one read; their
        // problems are reported in central directory order like everything else.
        let placed = entries.indices
            .filter { entries[$0].entry.localHeaderOffset < directoryStart }
            .sorted { (entries[$0].entry.localHeaderOffset, $0) < (entries[$1].entry.localHeaderOffset, $1) }
        // Each entry's extra field and data descriptor are read only up to the next local
        // header (or the central directory): the reads never add up to more than the archive,
        // whatever lengths a hostile header declares. Running past that point is a layout
        // problem, which `overlapProblems` reports.
        var bounds = [Int64](repeating: directoryStart, count: placed.count)
        var nextStart = directoryStart
        for position in placed.indices.reversed() {
            let offset = entries[placed[position]].entry.localHeaderOffset
            bounds[position] = nextStart
            if position > 0, entries[placed[position - 1]].entry.localHeaderOffset < offset { nextStart = offset }
        }
        var reader = CoalescingReader(source: source, groups: readPlan(placed.indices.map { (entries[placed[$0]], bounds[$0]) }, directoryStart: directoryStart))
        var localProblems: [Int: [String]] = [:]
        for (position, index) in placed.enumerated() {
            var found: [String] = []
            try await readLocalHeader(of: &entries[index], reader: &reader, bound: bounds[position], problems: &found)
            if !found.isEmpty { localProblems[index] = found }
        }
        for index in entries.indices { problems += localProblems[index] ?? [] }
        let layout = overlapProblems(entries, directoryStart: directoryStart)
        problems += layout.problems
        // A descriptor is only where the layout says it is when the layout adds up.
        for parsed in entries where !layout.entries.contains(parsed.index) {
            problems += descriptorProblems(parsed)
        }
        problems += collisionProblems(entries)

        let result = entries.map(\.entry)
        let total = result.reduce(0) { saturatingAdd($0, $1.uncompressedSize) }
        let limit = source.size.multipliedReportingOverflow(by: maxCompressionRatio)
        if !limit.overflow, total > limit.partialValue {
            problems.append("total uncompressed size \(total) bytes is more than \(maxCompressionRatio) times the archive size \(source.size) bytes (a possible zip bomb)")
        }
        return ZipInspection(entries: result, problems: problems, isZip64: end.isZip64)
    }

    // MARK: - End records

    /// Where the central directory is, according to the end records.
    struct EndRecords {
        var entryCount: UInt64
        var directorySize: UInt64
        var directoryOffset: UInt64
        /// Where the central directory should end: the zip64 end record if there is one, else the end record.
        var directoryEndExpected: Int64
        var isZip64: Bool
    }

    static func readEndRecords(_ source: some RandomAccessBytes, problems: inout [String]) async throws -> EndRecords {
        let size = source.size
        guard size >= Int64(endRecordSize) else {
            throw invalid(source, "\(size) bytes is too short for a zip archive (the end of central directory record alone is \(endRecordSize) bytes)")
        }
        let window = min(size, Int64(endRecordSize + maxCommentLength))
        let tailStart = size - window
        let tail = Fields(try await readExactly(source, offset: tailStart, count: Int(window), what: "end of archive"))

        // Search backwards; a record whose comment reaches exactly the end of the
        // file wins. The signature can also occur inside a comment, so a candidate
        // whose comment length does not fit is skipped.
        var exact: Int?
        var loose: Int?
        var position = tail.count - endRecordSize
        while position >= 0 {
            if tail.u32(position) == endSignature {
                let commentEnd = position + endRecordSize + Int(tail.u16(position + 20))
                if commentEnd == tail.count { exact = position; break }
                if loose == nil, commentEnd < tail.count { loose = position }
            }
            position -= 1
        }
        guard let found = exact ?? loose else {
            throw invalid(source, "no end of central directory record in the last \(window) bytes (not a zip archive, or truncated)")
        }
        let endOffset = tailStart + Int64(found)
        let record = Fields(Array(tail.bytes[found..<(found + endRecordSize)]))
        if exact == nil {
            let trailing = tail.count - (found + endRecordSize + Int(record.u16(20)))
            problems.append("\(trailing) bytes follow the end of central directory record and its comment at offset \(endOffset)")
        }

        let disk = record.u16(4), directoryDisk = record.u16(6)
        let entriesOnDisk = record.u16(8), entryCount = record.u16(10)
        let directorySize = record.u32(12), directoryOffset = record.u32(16)
        if disk != 0 { problems.append("end of central directory: disk number \(disk) (multi-disk archives are not supported)") }
        if directoryDisk != 0 { problems.append("end of central directory: central directory starts on disk \(directoryDisk) (multi-disk archive)") }

        var result = EndRecords(
            entryCount: UInt64(entryCount), directorySize: UInt64(directorySize), directoryOffset: UInt64(directoryOffset),
            directoryEndExpected: endOffset, isZip64: false)
        var onDisk = UInt64(entriesOnDisk)

        let locatorOffset = endOffset - Int64(zip64LocatorSize)
        if locatorOffset >= 0 {
            let locator = Fields(try await readExactly(source, offset: locatorOffset, count: zip64LocatorSize, what: "zip64 end of central directory locator"))
            if locator.u32(0) == zip64LocatorSignature {
                let recordDisk = locator.u32(4), recordOffset = locator.u64(8), diskCount = locator.u32(16)
                if recordDisk != 0 { problems.append("zip64 end of central directory locator: record on disk \(recordDisk) (multi-disk archive)") }
                if diskCount > 1 { problems.append("zip64 end of central directory locator: \(diskCount) disks (multi-disk archive)") }
                guard recordOffset <= UInt64(locatorOffset), UInt64(locatorOffset) - recordOffset >= UInt64(zip64EndRecordSize) else {
                    throw invalid(source, "zip64 end of central directory locator points to offset \(recordOffset), which leaves no room for the \(zip64EndRecordSize)-byte record before the locator at \(locatorOffset)")
                }
                let zip64 = Fields(try await readExactly(source, offset: Int64(recordOffset), count: zip64EndRecordSize, what: "zip64 end of central directory record"))
                guard zip64.u32(0) == zip64EndSignature else {
                    throw invalid(source, "no zip64 end of central directory record at offset \(recordOffset) (signature \(hex(zip64.u32(0))))")
                }
                // The record's size field excludes its first 12 bytes; anything
                // between the record and the locator is unexplained.
                let recordEnd = recordOffset.addingReportingOverflow(12).partialValue.addingReportingOverflow(zip64.u64(4))
                if recordEnd.overflow || recordEnd.partialValue != UInt64(locatorOffset) {
                    problems.append("zip64 end of central directory record at offset \(recordOffset) declares \(zip64.u64(4)) more bytes, so it does not end at its locator (offset \(locatorOffset))")
                }
                let disk64 = zip64.u32(16), directoryDisk64 = zip64.u32(20)
                if disk64 != 0 { problems.append("zip64 end of central directory: disk number \(disk64) (multi-disk archives are not supported)") }
                if directoryDisk64 != 0 { problems.append("zip64 end of central directory: central directory starts on disk \(directoryDisk64) (multi-disk archive)") }

                // Where the classic record holds a real value (not the 0xFFFF.. marker),
                // both records must agree, or two unzip tools could see two archives.
                let pairs: [(String, UInt64, UInt64, UInt64)] = [
                    ("entries on this disk", UInt64(entriesOnDisk), 0xFFFF, zip64.u64(24)),
                    ("total entries", UInt64(entryCount), 0xFFFF, zip64.u64(32)),
                    ("central directory size", UInt64(directorySize), 0xFFFF_FFFF, zip64.u64(40)),
                    ("central directory offset", UInt64(directoryOffset), 0xFFFF_FFFF, zip64.u64(48)),
                ]
                for (field, classic, marker, wide) in pairs where classic != marker && classic != wide {
                    problems.append("end of central directory says \(field) \(classic), but the zip64 record says \(wide)")
                }
                onDisk = zip64.u64(24)
                result = EndRecords(
                    entryCount: zip64.u64(32), directorySize: zip64.u64(40), directoryOffset: zip64.u64(48),
                    directoryEndExpected: Int64(recordOffset), isZip64: true)
            }
        }
        if onDisk != result.entryCount {
            problems.append("end of central directory: \(onDisk) entries on this disk but \(result.entryCount) in total (multi-disk archive)")
        }
        return result
    }

    // MARK: - Central directory

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

    static func parseCentralDirectory(_ bytes: [UInt8], startingAt base: Int64, maxEntries: Int = defaultMaxEntries, problems: inout [String]) throws -> [ParsedEntry] {
        let directory = Fields(bytes)
        var entries: [ParsedEntry] = []
        var position = 0
        while position < directory.count {
            // The end record's count was checked against the limit, but it can understate.
            guard entries.count < maxEntries else { throw TooManyEntries(limit: maxEntries) }
            let remaining = directory.count - position
            guard remaining >= centralHeaderSize, directory.u32(position) == centralHeaderSignature else {
                let found = remaining >= 4 ? hex(directory.u32(position)) : "only \(remaining) bytes"
                problems.append("central directory: no central directory header at offset \(base + Int64(position)) (\(found)); \(remaining) bytes left unread")
                break
            }
            let nameLength = Int(directory.u16(position + 28))
            let extraLength = Int(directory.u16(position + 30))
            let commentLength = Int(directory.u16(position + 32))
            let recordLength = centralHeaderSize + nameLength + extraLength + commentLength
            guard recordLength <= remaining else {
                problems.append("central directory: header at offset \(base + Int64(position)) declares \(recordLength) bytes, but only \(remaining) remain")
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

    static func parseEntry(_ directory: Fields, at position: Int, index: Int, nameBytes: [UInt8], extra: [UInt8], problems: inout [String]) -> ParsedEntry {
        let decoded = String(validating: nameBytes, as: UTF8.self)
        let name = decoded ?? String(decoding: nameBytes, as: UTF8.self)
        // Labels quote the name (a scan of its scalars): built only when something is reported.
        func label() -> String { entryLabel(name, index: index) }
        func report(_ message: String) { problems.append("\(label()): \(message)") }

        let versionMadeBy = directory.u16(position + 4)
        let flags = directory.u16(position + 8)
        let method = directory.u16(position + 10)
        let crc = directory.u32(position + 16)
        var compressed = UInt64(directory.u32(position + 20))
        var uncompressed = UInt64(directory.u32(position + 24))
        var disk = UInt32(directory.u16(position + 34))
        let external = directory.u32(position + 38)
        var offset = UInt64(directory.u32(position + 42))

        // The zip64 field holds, in this order, only the values whose classic field is the 0xFFFF.. marker.
        var usesZip64 = false
        var missing: [String] = []
        let wide = zip64Field(in: extra, label: label(), problems: &problems)
        problems += unicodePathProblems(in: extra, label: label())
        var cursor = 0
        func take(_ width: Int, _ field: String) -> UInt64? {
            guard let wide, cursor + width <= wide.count else { missing.append(field); return nil }
            defer { cursor += width }
            usesZip64 = true
            return width == 8 ? wide.u64(cursor) : UInt64(wide.u32(cursor))
        }
        if uncompressed == 0xFFFF_FFFF, let value = take(8, "uncompressed size") { uncompressed = value }
        if compressed == 0xFFFF_FFFF, let value = take(8, "compressed size") { compressed = value }
        if offset == 0xFFFF_FFFF, let value = take(8, "local header offset") { offset = value }
        if disk == 0xFFFF, let value = take(4, "disk number") { disk = UInt32(value) }
        if !missing.isEmpty {
            report("\(missing.joined(separator: ", ")) marked 0xFFFFFFFF but missing from the zip64 extra field")
        }
        func clamp(_ value: UInt64, _ field: String) -> Int64 {
            guard value <= UInt64(Int64.max) else {
                report("\(field) \(value) is out of range")
                return Int64.max
            }
            return Int64(value)
        }

        let host = UInt8(versionMadeBy >> 8)
        let mode = unixHosts.contains(host) ? external >> 16 : 0
        let fileType = mode & 0o170000
        let entry = ZipEntry(
            name: name,
            compressedSize: clamp(compressed, "compressed size"),
            uncompressedSize: clamp(uncompressed, "uncompressed size"),
            localHeaderOffset: clamp(offset, "local header offset"),
            method: method, flags: flags, crc32: crc, hostSystem: host, externalAttributes: external,
            isDirectory: nameBytes.last == UInt8(ascii: "/") || fileType == 0o040000 || (fileType == 0 && external & 0x10 != 0),
            isSymlink: fileType == 0o120000,
            usesZip64: usesZip64)

        for message in nameProblems(nameBytes, decoded: decoded, flags: flags) { report(message) }
        switch fileType {
        case 0, 0o100000, 0o040000: break
        case 0o120000: report("symbolic link (mode \(octal(mode)))")
        default: report("not a regular file or directory (\(fileTypeName(fileType)), mode \(octal(mode)))")
        }
        // The low byte of "version needed to extract" is the APPNOTE version ×10: above 6.3
        // no specification defines it, and readers (Python's zipfile) refuse the entry.
        let needed = directory.u16(position + 6) & 0xFF
        if needed > 63 { report("needs zip version \(needed / 10).\(needed % 10) to extract (above 6.3, the newest the zip specification defines; readers refuse it)") }
        if disk != 0 { report("starts on disk \(disk) (multi-disk archive)") }
        if flags & 1 != 0 { report("encrypted (general purpose flag bit 0)") }
        if method != 0 && method != 8 { report("compression method \(method) (\(methodName(method))) is neither store (0) nor deflate (8)") }
        if method == 0 && compressed != uncompressed {
            report("stored (method 0) but compressed size \(compressed) differs from uncompressed size \(uncompressed)")
        }
        return ParsedEntry(entry: entry, index: index, nameBytes: nameBytes, dataEnd: nil)
    }

    /// The body of the zip64 extended information extra field (0x0001), if present.
    static func zip64Field(in extra: [UInt8], label: @autoclosure () -> String, problems: inout [String]) -> Fields? {
        let fields = Fields(extra)
        var position = 0
        var found: Fields?
        // Fewer than 4 trailing bytes cannot hold a field header; some writers pad.
        while position + 4 <= fields.count {
            let id = fields.u16(position), length = Int(fields.u16(position + 2))
            guard position + 4 + length <= fields.count else {
                problems.append("\(label()): extra field \(hex16(id)) declares \(length) bytes, but only \(fields.count - position - 4) remain")
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
    static func unicodePathProblems(in extra: [UInt8], label: @autoclosure () -> String) -> [String] {
        let fields = Fields(extra)
        var position = 0
        var problems: [String] = []
        while position + 4 <= fields.count {
            let id = fields.u16(position), length = Int(fields.u16(position + 2))
            guard position + 4 + length <= fields.count else { break }  // zip64Field reports it
            if id == 0x7075 {
                // Version (1 byte), CRC-32 of the header's name (4), then the UTF-8 name.
                let body = extra[(position + 4)..<(position + 4 + length)]
                let name = body.count > 5 ? String(decoding: body.dropFirst(5), as: UTF8.self) : ""
                problems.append("\(label()): an Info-ZIP Unicode Path extra field (0x7075) names it \(quoted(name)); unzip and bsdtar extract to that name, which is not the one checked (modelcast never writes this field)")
            }
            position += 4 + length
        }
        return problems
    }

    /// Names that would land outside the destination, or mean different files on different systems.
    static func nameProblems(_ bytes: [UInt8], decoded: String?, flags: UInt16) -> [String] {
        guard !bytes.isEmpty else { return ["empty name"] }
        var problems: [String] = []
        if decoded == nil {
            problems.append("name is not valid UTF-8 (\(bytes.map { String(format: "%02x", $0) }.joined()))")
        } else if flags & 0x0800 == 0, bytes.contains(where: { $0 >= 0x80 }) {
            problems.append("non-ASCII name without the UTF-8 flag (general purpose bit 11), which unzip tools decode differently")
        }
        let name = decoded ?? String(decoding: bytes, as: UTF8.self)
        // ASCII's only control characters are C0 and DEL; other names need the Unicode tables.
        let isASCII = bytes.allSatisfy { $0 < 0x80 }
        if isASCII, let control = bytes.first(where: { $0 < 0x20 || $0 == 0x7F }) {
            problems.append("control character \(codePoint(Unicode.Scalar(control))) in name")
        } else if !isASCII, let control = name.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            problems.append("control character \(codePoint(control)) in name")
        }
        if bytes.first == UInt8(ascii: "/") {
            problems.append("absolute path (leading \"/\")")
        }
        if bytes.count >= 2, bytes[1] == UInt8(ascii: ":"), (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[0] & 0xDF) {
            problems.append("Windows drive prefix (\"\(Character(Unicode.Scalar(bytes[0]))):\")")
        }
        if bytes.contains(UInt8(ascii: "\\")) {
            problems.append("backslash in name (a path separator on Windows)")
        }
        if name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).contains("..") {
            problems.append("path escapes the archive (\"..\")")
        }
        return problems
    }

    // MARK: - Local headers and layout

    /// The byte ranges the local header pass will want, merged into reads: each entry's
    /// fixed header, name and (assumed as long as the central one) extra field, and for
    /// an entry with a data descriptor, the descriptor's likely place. Ranges closer than
    /// `coalescingGap` share a read of at most `coalescedReadLimit` bytes, so an archive
    /// of many small files costs a few reads (Range requests over HTTP), not one per entry.
    static func readPlan(_ placed: [(ParsedEntry, bound: Int64)], directoryStart: Int64) -> [ReadRange] {
        var wanted: [ReadRange] = []
        wanted.reserveCapacity(placed.count)
        for (parsed, bound) in placed {
            let entry = parsed.entry
            let fixed = saturatingAdd(entry.localHeaderOffset, Int64(localHeaderSize + parsed.nameBytes.count))
            let header = saturatingAdd(fixed, Int64(parsed.centralExtraLength))
            wanted.append(ReadRange(start: entry.localHeaderOffset, end: min(max(fixed, min(header, bound)), directoryStart)))
            if entry.flags & 0x0008 != 0 {
                let descriptor = saturatingAdd(header, entry.compressedSize)
                if descriptor < bound {
                    wanted.append(ReadRange(start: descriptor, end: min(saturatingAdd(descriptor, 24), bound)))
                }
            }
        }
        wanted.sort { $0.start < $1.start }
        var groups: [ReadRange] = []
        for range in wanted where range.end > range.start {
            if var last = groups.last, range.start <= saturatingAdd(last.end, coalescingGap),
               max(last.end, range.end) - last.start <= coalescedReadLimit {
                last.end = max(last.end, range.end)
                groups[groups.count - 1] = last
            } else {
                groups.append(range)
            }
        }
        return groups
    }

    struct ReadRange { var start: Int64; var end: Int64 }

    /// Reads through one window: a read the window covers costs nothing; a miss reads
    /// from the requested offset to the end of its planned group (or just what was asked).
    struct CoalescingReader<Source: RandomAccessBytes> {
        let source: Source
        /// Sorted, disjoint.
        let groups: [ReadRange]
        private var windowStart: Int64 = 0
        private var window: [UInt8] = []

        init(source: Source, groups: [ReadRange]) {
            self.source = source
            self.groups = groups
        }

        /// `count` bytes at `offset`, fewer only at the end of the source.
        mutating func read(_ offset: Int64, _ count: Int) async throws -> [UInt8] {
            let end = saturatingAdd(offset, Int64(count))
            let windowEnd = windowStart + Int64(window.count)
            if offset >= windowStart, end <= windowEnd {
                let from = Int(offset - windowStart)
                return Array(window[from..<(from + count)])
            }
            var readEnd = end
            if let group = group(containing: offset) { readEnd = max(readEnd, group.end) }
            let bytes = try await source.read(offset: offset, count: Int(min(readEnd - offset, Int64(Int.max))))
            // A source may return more than asked (a server ignoring Range): keep only what was asked for.
            window = bytes.count > Int(readEnd - offset) ? Array(bytes.prefix(Int(readEnd - offset))) : bytes
            windowStart = offset
            return Array(window.prefix(count))
        }

        private func group(containing offset: Int64) -> ReadRange? {
            var low = 0, high = groups.count
            while low < high {
                let middle = (low + high) / 2
                if groups[middle].start <= offset { low = middle + 1 } else { high = middle }
            }
            guard low > 0, offset < groups[low - 1].end else { return nil }
            return groups[low - 1]
        }
    }

    /// Reads the entry's local header and compares it with the central directory:
    /// name, general purpose flags, method, CRC-32 and both sizes (zip64 extra field
    /// included). With bit 3 set, the CRC-32 and sizes may be zero (deferred to the
    /// data descriptor, which is read here and judged by `descriptorProblems`).
    /// Records where the entry's data ends. `bound` is where the next local header (or
    /// the central directory) starts: the extra field and the descriptor are not read past it.
    static func readLocalHeader<Source>(of parsed: inout ParsedEntry, reader: inout CoalescingReader<Source>, bound: Int64, problems: inout [String]) async throws {
        let entry = parsed.entry
        let offset = entry.localHeaderOffset
        // Built only when something is reported (quoting scans the name).
        var label: String { entryLabel(entry.name, index: parsed.index) }
        var subject: String { "\(label): local header at offset \(offset)" }
        let fixed = localHeaderSize + parsed.nameBytes.count
        let guess = Int(min(Int64(fixed + parsed.centralExtraLength), max(Int64(fixed), bound - offset)))
        var bytes = try await reader.read(offset, guess)
        guard bytes.count >= localHeaderSize else {
            problems.append("\(label): local header at offset \(offset) is cut short by the end of the archive")
            return
        }
        var header = Fields(bytes)
        guard header.u32(0) == localHeaderSignature else {
            problems.append("\(label): no local file header at offset \(offset) (signature \(hex(header.u32(0))))")
            return
        }
        let nameLength = Int(header.u16(26)), extraLength = Int(header.u16(28))
        let localName = Array(header.bytes[localHeaderSize..<min(localHeaderSize + nameLength, header.count)])
        var end = saturatingAdd(offset, Int64(localHeaderSize + nameLength + extraLength))
        end = saturatingAdd(end, entry.compressedSize)
        if entry.flags & 0x0008 != 0 { end = saturatingAdd(end, minimumDataDescriptorSize) }
        parsed.dataEnd = end
        if nameLength != parsed.nameBytes.count || localName != parsed.nameBytes {
            let shown = String(decoding: localName, as: UTF8.self) + (localName.count < nameLength ? "…" : "")
            problems.append("\(label): local header at offset \(offset) names \(quoted(shown)) instead")
            return  // another entry's header, or none: its other fields say nothing about this entry
        }

        // An extra field running past the next local header is a layout problem
        // (reported with the overlaps); its zip64 values are then not compared.
        let headerEnd = Int64(localHeaderSize + nameLength + extraLength)
        let extraFits = headerEnd <= bound - offset
        if extraFits, header.count < localHeaderSize + nameLength + extraLength {
            bytes = try await reader.read(offset, localHeaderSize + nameLength + extraLength)
            header = Fields(bytes)
        }
        let extra = Array(bytes[min(localHeaderSize + nameLength, bytes.count)..<min(localHeaderSize + nameLength + extraLength, bytes.count)])
        let wide = extraFits && extra.count == extraLength ? zip64Field(in: extra, label: subject, problems: &problems) : nil
        if extraFits && extra.count == extraLength { problems += unicodePathProblems(in: extra, label: subject + " (local header)") }

        let flags = header.u16(6), method = header.u16(8), crc = header.u32(14)
        var compressed = UInt64(header.u32(18)), uncompressed = UInt64(header.u32(22))
        var fromZip64: Set<String> = []
        var missing: [String] = []
        // In a local header the zip64 field holds the uncompressed size, then the compressed size,
        // each only when its classic field is the 0xFFFFFFFF marker.
        var cursor = 0
        func take(_ field: String) -> UInt64? {
            guard let wide, cursor + 8 <= wide.count else { missing.append(field); return nil }
            defer { cursor += 8 }
            fromZip64.insert(field)
            return wide.u64(cursor)
        }
        // A marked size whose zip64 field overlaps what follows is left to the layout check.
        var checkUncompressed = true, checkCompressed = true
        if uncompressed == 0xFFFF_FFFF {
            if extraFits, let value = take("uncompressed size") { uncompressed = value } else { checkUncompressed = false }
        }
        if compressed == 0xFFFF_FFFF {
            if extraFits, let value = take("compressed size") { compressed = value } else { checkCompressed = false }
        }
        if !missing.isEmpty {
            problems.append("\(subject): \(missing.joined(separator: ", ")) marked 0xFFFFFFFF but missing from the zip64 extra field")
        }

        func differs(_ field: String, _ local: String, _ central: String) {
            problems.append("\(subject) says \(field) \(local)\(fromZip64.contains(field) ? " (zip64 extra field)" : ""), the central directory says \(central)")
        }
        // Bit 3: the CRC-32 and sizes follow the data; the local header may hold zeros instead.
        let deferred = flags & 0x0008 != 0
        if flags != entry.flags { differs("general purpose flags", hex16(flags), hex16(entry.flags)) }
        if method != entry.method { differs("compression method", String(method), String(entry.method)) }
        if crc != entry.crc32, !(deferred && crc == 0) { differs("CRC-32", hex(crc), hex(entry.crc32)) }
        if checkCompressed, compressed != UInt64(entry.compressedSize), !(deferred && compressed == 0) {
            differs("compressed size", String(compressed), String(entry.compressedSize))
        }
        if checkUncompressed, uncompressed != UInt64(entry.uncompressedSize), !(deferred && uncompressed == 0) {
            differs("uncompressed size", String(uncompressed), String(entry.uncompressedSize))
        }

        // The data descriptor follows the data when both records say there is one.
        if deferred, flags == entry.flags {
            let at = saturatingAdd(saturatingAdd(offset, Int64(localHeaderSize + nameLength + extraLength)), entry.compressedSize)
            if at < bound, bound - at >= minimumDataDescriptorSize {
                let count = Int(min(24, bound - at))
                parsed.descriptor = Descriptor(offset: at, bytes: try await reader.read(at, count), wide: wide != nil)
            }
        }
    }

    static let descriptorSignature: UInt32 = 0x0807_4b50

    /// The entry's data descriptor against the central directory: CRC-32 and both
    /// sizes (eight bytes each when the local header has a zip64 field). The
    /// signature is optional, so a descriptor that matches read either way passes.
    static func descriptorProblems(_ parsed: ParsedEntry) -> [String] {
        guard let descriptor = parsed.descriptor else { return [] }
        let entry = parsed.entry
        let fields = Fields(descriptor.bytes)
        let sizeWidth = descriptor.wide ? 8 : 4
        let starts = (fields.count >= 4 && fields.u32(0) == descriptorSignature ? [4] : []) + [0]
        var readings: [(crc: UInt32, compressed: UInt64, uncompressed: UInt64)] = []
        for start in starts where start + 4 + 2 * sizeWidth <= fields.count {
            let size = { (at: Int) in descriptor.wide ? fields.u64(at) : UInt64(fields.u32(at)) }
            readings.append((fields.u32(start), size(start + 4), size(start + 4 + sizeWidth)))
        }
        let label = "\(entryLabel(entry.name, index: parsed.index)): data descriptor at offset \(descriptor.offset)"
        guard let first = readings.first else {
            return ["\(label) is cut short: \(fields.count) bytes before the next local header or the central directory"]
        }
        let central = (crc: entry.crc32, compressed: UInt64(entry.compressedSize), uncompressed: UInt64(entry.uncompressedSize))
        if readings.contains(where: { $0 == central }) { return [] }
        var problems: [String] = []
        if first.crc != central.crc { problems.append("\(label) says CRC-32 \(hex(first.crc)), the central directory says \(hex(central.crc))") }
        if first.compressed != central.compressed { problems.append("\(label) says compressed size \(first.compressed), the central directory says \(central.compressed)") }
        if first.uncompressed != central.uncompressed { problems.append("\(label) says uncompressed size \(first.uncompressed), the central directory says \(central.uncompressed)") }
        return problems
    }

    /// Entries whose local header lies beyond the central directory start, or
    /// whose data runs into the central directory or into the next local header;
    /// and the positions of the entries concerned.
    static func overlapProblems(_ entries: [ParsedEntry], directoryStart: Int64) -> (problems: [String], entries: Set<Int>) {
        var problems: [String] = []
        var concerned = Set<Int>()
        for parsed in entries where parsed.entry.localHeaderOffset >= directoryStart {
            problems.append("\(entryLabel(parsed.entry.name, index: parsed.index)): local header offset \(parsed.entry.localHeaderOffset) is beyond the central directory start \(directoryStart)")
            concerned.insert(parsed.index)
        }
        let placed = entries
            .filter { $0.entry.localHeaderOffset < directoryStart }
            .sorted { ($0.entry.localHeaderOffset, $0.index) < ($1.entry.localHeaderOffset, $1.index) }
        // Every byte accounted for: the first local header at offset 0, each entry's data
        // ending where the next local header starts, the last one's where the central
        // directory starts. Bytes in between could hold a local entry the central directory
        // does not list, which a streaming extractor would write.
        if let first = placed.first, first.entry.localHeaderOffset > 0 {
            problems.append("\(first.entry.localHeaderOffset) bytes before the first local header (\(quoted(first.entry.name))) that no entry accounts for")
        }
        for (index, parsed) in placed.enumerated() {
            guard let end = parsed.dataEnd else { continue }
            let next = index + 1 < placed.count ? placed[index + 1].entry.localHeaderOffset : directoryStart
            // With flag bit 3, `dataEnd` counts the shortest data descriptor (12 bytes); it may
            // be 4 longer with its signature, 8 with zip64 sizes, 12 with both.
            let descriptorSlack: Set<Int64> = parsed.entry.flags & 0x0008 != 0 ? [4, 8, 12] : []
            if end < next, !descriptorSlack.contains(next - end) {
                let what = index + 1 < placed.count ? "the local header of \(quoted(placed[index + 1].entry.name))" : "the central directory"
                problems.append("\(entryLabel(parsed.entry.name, index: parsed.index)): \(next - end) bytes between its data (ending at \(end)) and \(what) at \(next) that no entry accounts for (a local entry the central directory does not list?)")
                concerned.insert(parsed.index)
            }
        }
        for (index, parsed) in placed.enumerated() {
            guard let end = parsed.dataEnd else { continue }
            var label: String { entryLabel(parsed.entry.name, index: parsed.index) }
            if end > directoryStart {
                problems.append("\(label): data ends at \(end), past the central directory start \(directoryStart)")
                concerned.insert(parsed.index)
            } else if index + 1 < placed.count, end > placed[index + 1].entry.localHeaderOffset {
                let next = placed[index + 1].entry
                problems.append("\(label): data ends at \(end), overlapping the local header of \(quoted(next.name)) at \(next.localHeaderOffset)")
                concerned.insert(parsed.index)
            }
        }
        return (problems, concerned)
    }

    /// Names that would overwrite each other: identical bytes, or equal after NFC
    /// normalisation and lowercasing (APFS normalises; iOS volumes ignore case).
    static func collisionProblems(_ entries: [ParsedEntry]) -> [String] {
        var problems: [String] = []
        // Keyed by bytes: Swift's String equality is canonical equivalence, which
        // would merge NFC and NFD spellings and hide which rule matched.
        var byBytes: [[UInt8]: Int] = [:]
        var byFolded: [String: Int] = [:]
        for parsed in entries {
            let name = parsed.entry.name, index = parsed.index
            if let first = byBytes[parsed.nameBytes] {
                problems.append("\(entryLabel(name, index: index)): duplicate name (same as entry #\(first + 1))")
                continue
            }
            byBytes[parsed.nameBytes] = index
            // "a" and "a/" are the same path on disk.
            var path = Substring(name)
            while path.hasSuffix("/") { path = path.dropLast() }
            // ASCII is its own NFC form and lowercases within ASCII: skip Foundation's
            // normalisation, which dominates the time of an archive with many entries.
            let folded = path.utf8.allSatisfy({ $0 < 0x80 })
                ? String(decoding: path.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
                : String(path).precomposedStringWithCanonicalMapping.lowercased().precomposedStringWithCanonicalMapping
            if let first = byFolded[folded] {
                problems.append("\(entryLabel(name, index: index)): collides with \(quoted(entries[first].entry.name)) after Unicode NFC normalisation and lowercasing (they would overwrite each other on a case-insensitive file system)")
            } else {
                byFolded[folded] = index
            }
        }
        return problems
    }

    // MARK: - Helpers

    static func invalid(_ source: some RandomAccessBytes, _ reason: String) -> ModelCastError {
        .invalidModel(path: source.name, format: "zip", reason: reason)
    }

    static func readExactly(_ source: some RandomAccessBytes, offset: Int64, count: Int, what: String) async throws -> [UInt8] {
        let bytes = try await source.read(offset: offset, count: count)
        guard bytes.count >= count else {
            throw invalid(source, "\(what) at offset \(offset) is cut short: \(bytes.count) of \(count) bytes (the archive is truncated or changed while being read)")
        }
        // A source that returns more (a server ignoring the Range header) must not shift the fields.
        return bytes.count == count ? bytes : Array(bytes.prefix(count))
    }

    /// `entry "NAME"`; an empty name also gets its position, since "" alone names nothing.
    static func entryLabel(_ name: String, index: Int) -> String {
        if name.isEmpty { return "entry #\(index + 1) \"\"" }
        return "entry \(quoted(name))"
    }

    /// The name in double quotes, with control and format characters escaped so a
    /// hostile name cannot drive the terminal or reorder the text it is shown in.
    static func quoted(_ name: String) -> String {
        var out = "\""
        for scalar in name.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format: out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func hex(_ value: UInt32) -> String { String(format: "0x%08x", value) }
    static func hex16(_ value: UInt16) -> String { String(format: "0x%04x", value) }
    static func octal(_ mode: UInt32) -> String { "0o" + String(mode, radix: 8) }

    static func fileTypeName(_ type: UInt32) -> String {
        switch type {
        case 0o010000: return "FIFO"
        case 0o020000: return "character device"
        case 0o060000: return "block device"
        case 0o140000: return "socket"
        default: return "unknown file type"
        }
    }

    static func methodName(_ method: UInt16) -> String {
        switch method {
        case 1...6: return "legacy"
        case 9: return "deflate64"
        case 12: return "bzip2"
        case 14: return "LZMA"
        case 93: return "zstd"
        case 95: return "xz"
        case 99: return "AES encryption"
        default: return "unknown"
        }
    }

    /// `a + b`, or `Int64.max` if that overflows.
    static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let sum = a.addingReportingOverflow(b)
        return sum.overflow ? Int64.max : sum.partialValue
    }

    /// Little-endian fields of a zip record. Callers check lengths before reading.
    struct Fields {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var count: Int { bytes.count }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) | UInt32(u16(at + 2)) << 16 }
        func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 }
    }
}
