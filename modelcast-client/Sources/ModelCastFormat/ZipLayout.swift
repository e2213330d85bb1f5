import Foundation

/// The byte layout of a zip archive, checked so that what an extractor sees is what the
/// entry list shows: every byte before the central directory belongs to exactly one
/// listed entry (its local header, name, extra field, data and data descriptor), in
/// order, with no gap and no overlap; each local header names its entry as the central
/// directory does; and no entry carries a second name (an Info-ZIP Unicode Path extra
/// field, 0x7075, which unzip and bsdtar extract to instead of the checked name).
///
/// Streaming extractors walk local headers from the start of the file, and ordinary ones
/// read the central directory: a zip passing this check shows both the same entries.
/// modelcast writes such zips; a device refuses any other before unpacking a byte.
public enum ZipLayout {
    /// Reads `count` bytes at `offset` (fewer only at the end of the file).
    public typealias Reader = (_ offset: Int64, _ count: Int) throws -> [UInt8]

    /// What was wrong, in words naming the entry and the offsets.
    public struct Problem: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// The most central directory bytes read (a zip modelcast writes needs far less).
    public static let maxCentralDirectory = 64 << 20

    /// Where a stored (uncompressed) entry's bytes lie in the archive: an unpacked copy of
    /// the entry holds the same bytes, so it can stand in for them.
    public struct StoredData: Equatable, Sendable, Codable {
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

    /// Checks the archive of `size` bytes `read` gives; returns where its stored files'
    /// data lies, by offset.
    @discardableResult
    public static func check(size: Int64, read: Reader) throws -> [StoredData] {
        let end = try endRecord(size: size, read: read)
        guard end.directorySize <= Int64(maxCentralDirectory) else {
            throw Problem(description: "a central directory of \(end.directorySize) bytes (more than \(maxCentralDirectory))")
        }
        let directory = try exactly(read, end.directoryStart, Int(end.directorySize), "the central directory")
        var entries: [Entry] = []
        var at = 0
        while at < directory.count {
            let entry = try centralEntry(directory, at: &at, index: entries.count)
            entries.append(entry)
        }
        guard Int64(entries.count) == end.entryCount else {
            throw Problem(description: "the end record counts \(end.entryCount) entries, the central directory lists \(entries.count)")
        }
        var cursor: Int64 = 0
        var stored: [StoredData] = []
        let ordered = entries.sorted { $0.localOffset < $1.localOffset }
        for (position, entry) in ordered.enumerated() {
            guard entry.localOffset == cursor else {
                let what = entry.localOffset > cursor ? "\(entry.localOffset - cursor) bytes at offset \(cursor)" : "entry \(entry.label) overlapping the one before it at offset \(entry.localOffset)"
                throw Problem(description: "\(what) that no listed entry accounts for (a local entry the central directory does not list, or a gap)")
            }
            let next = position + 1 < ordered.count ? ordered[position + 1].localOffset : end.directoryStart
            let (dataStart, end) = try localEntryEnd(entry, next: next, read: read)
            if entry.method == 0, entry.compressedSize > 0, entry.name.last != UInt8(ascii: "/") {
                stored.append(StoredData(name: String(decoding: entry.name, as: UTF8.self), offset: dataStart, size: entry.compressedSize))
            }
            cursor = end
        }
        guard cursor == end.directoryStart else {
            throw Problem(description: "\(end.directoryStart - cursor) bytes at offset \(cursor) that no listed entry accounts for (before the central directory)")
        }
        return stored
    }

    struct EndRecord {
        var entryCount: Int64
        var directoryStart: Int64
        var directorySize: Int64
    }

    /// The end of central directory record (and its zip64 form where the fields overflow).
    /// It must end the file: its comment runs exactly to the last byte.
    static func endRecord(size: Int64, read: Reader) throws -> EndRecord {
        guard size >= 22 else { throw Problem(description: "\(size) bytes: too short for a zip") }
        let tailLength = Int(min(size, 22 + 0xFFFF))
        let tail = try exactly(read, size - Int64(tailLength), tailLength, "the end of the archive")
        var found: Int?
        var at = tail.count - 22
        while at >= 0 {
            if u32(tail, at) == 0x0605_4b50, at + 22 + Int(u16(tail, at + 20)) == tail.count { found = at; break }
            at -= 1
        }
        guard let end = found else { throw Problem(description: "no end of central directory record ending the file") }
        let recordStart = size - Int64(tailLength) + Int64(end)
        var record = EndRecord(entryCount: Int64(u16(tail, end + 10)), directoryStart: Int64(u32(tail, end + 16)), directorySize: Int64(u32(tail, end + 12)))
        var directoryEnd = recordStart
        let overflowed = record.entryCount == 0xFFFF || record.directoryStart == 0xFFFF_FFFF || record.directorySize == 0xFFFF_FFFF
        // A zip64 end record may be written even where the plain fields hold the values
        // (Python's zipfile does): its locator, right before the end record, says so.
        let locator = recordStart >= 20 ? try exactly(read, recordStart - 20, 20, "the zip64 locator") : []
        let hasLocator = locator.count == 20 && u32(locator, 0) == 0x0706_4b50
        if overflowed && !hasLocator { throw Problem(description: "a zip64 archive without its locator") }
        if hasLocator {
            let zip64Start = Int64(bitPattern: u64(locator, 8))
            guard zip64Start >= 0, zip64Start <= recordStart - 76 else { throw Problem(description: "the zip64 end record at \(zip64Start) is outside the file") }
            let zip64 = try exactly(read, zip64Start, 56, "the zip64 end record")
            guard u32(zip64, 0) == 0x0606_4b50 else { throw Problem(description: "no zip64 end record at \(zip64Start)") }
            guard sum(zip64Start + 12, Int64(bitPattern: u64(zip64, 4))) == recordStart - 20 else {
                throw Problem(description: "bytes between the zip64 end record and its locator")
            }
            record = EndRecord(entryCount: Int64(bitPattern: u64(zip64, 32)), directoryStart: Int64(bitPattern: u64(zip64, 48)), directorySize: Int64(bitPattern: u64(zip64, 40)))
            directoryEnd = zip64Start
        }
        guard record.directoryStart >= 0, record.directorySize >= 0, record.directoryStart <= directoryEnd,
              sum(record.directoryStart, record.directorySize) == directoryEnd else {
            throw Problem(description: "the central directory (\(record.directorySize) bytes at \(record.directoryStart)) does not end where the end record begins (\(directoryEnd))")
        }
        return record
    }

    struct Entry {
        var label: String
        var name: [UInt8]
        var flags: UInt16
        /// The compression method (0: stored).
        var method: UInt16
        var compressedSize: Int64
        var localOffset: Int64
        var zip64: Bool
    }

    /// One central directory header at `at` (advanced past it).
    static func centralEntry(_ bytes: [UInt8], at: inout Int, index: Int) throws -> Entry {
        guard at + 46 <= bytes.count, u32(bytes, at) == 0x0201_4b50 else {
            throw Problem(description: "entry \(index + 1): no central directory header at offset \(at) of the directory")
        }
        let nameLength = Int(u16(bytes, at + 28)), extraLength = Int(u16(bytes, at + 30)), commentLength = Int(u16(bytes, at + 32))
        let total = 46 + nameLength + extraLength + commentLength
        guard at + total <= bytes.count else { throw Problem(description: "entry \(index + 1): its central header runs past the directory") }
        let name = Array(bytes[(at + 46)..<(at + 46 + nameLength)])
        let label = quotedValue(String(decoding: name, as: UTF8.self))
        let extra = Array(bytes[(at + 46 + nameLength)..<(at + 46 + nameLength + extraLength)])
        try checkExtra(extra, label: label, place: "central")
        var compressed = Int64(u32(bytes, at + 20)), uncompressed = Int64(u32(bytes, at + 24)), offset = Int64(u32(bytes, at + 42))
        var zip64 = false
        if compressed == 0xFFFF_FFFF || uncompressed == 0xFFFF_FFFF || offset == 0xFFFF_FFFF {
            guard let field = extraField(0x0001, in: extra) else { throw Problem(description: "entry \(label): sizes past 4 GiB without a zip64 extra field") }
            var position = 0
            func next() throws -> Int64 {
                guard position + 8 <= field.count else { throw Problem(description: "entry \(label): a zip64 extra field too short for its sizes") }
                defer { position += 8 }
                return Int64(bitPattern: u64(field, position))
            }
            if uncompressed == 0xFFFF_FFFF { uncompressed = try next() }
            if compressed == 0xFFFF_FFFF { compressed = try next() }
            if offset == 0xFFFF_FFFF { offset = try next() }
            zip64 = true
        }
        guard compressed >= 0, offset >= 0 else { throw Problem(description: "entry \(label): a negative size or offset") }
        at += total
        return Entry(label: label, name: name, flags: u16(bytes, at - total + 8), method: u16(bytes, at - total + 10), compressedSize: compressed, localOffset: offset, zip64: zip64)
    }

    /// Checks `entry`'s local header and returns where its data starts and where the entry
    /// ends (after its data descriptor, if any), which must be `next` or before it.
    static func localEntryEnd(_ entry: Entry, next: Int64, read: Reader) throws -> (dataStart: Int64, end: Int64) {
        let header = try exactly(read, entry.localOffset, 30, "entry \(entry.label)'s local header")
        guard u32(header, 0) == 0x0403_4b50 else { throw Problem(description: "entry \(entry.label): no local header at offset \(entry.localOffset)") }
        let nameLength = Int(u16(header, 26)), extraLength = Int(u16(header, 28))
        let rest = try exactly(read, entry.localOffset + 30, nameLength + extraLength, "entry \(entry.label)'s local name")
        guard Array(rest[0..<nameLength]) == entry.name else {
            throw Problem(description: "entry \(entry.label): its local header names it \(quotedValue(String(decoding: rest[0..<nameLength], as: UTF8.self))), so extractors disagree on its name")
        }
        try checkExtra(Array(rest[nameLength...]), label: entry.label, place: "local")
        let dataStart = entry.localOffset + 30 + Int64(nameLength + extraLength)
        let dataEnd = sum(dataStart, entry.compressedSize) ?? .max
        guard dataEnd <= next else { throw Problem(description: "entry \(entry.label) runs past offset \(next), where the next entry or the central directory begins") }
        guard entry.flags & 0x0008 != 0 else { return (dataStart, dataEnd) }
        // A data descriptor: CRC and the two sizes (4 or 8 bytes each), with or without its signature.
        for length in [12, 16, 20, 24] where dataEnd + Int64(length) == next {
            return (dataStart, next)
        }
        return (dataStart, dataEnd)
    }

    /// Refuses a second name hidden in an extra field.
    static func checkExtra(_ extra: [UInt8], label: String, place: String) throws {
        if let field = extraField(0x7075, in: extra) {
            let name = field.count > 5 ? String(decoding: field[5...], as: UTF8.self) : ""
            throw Problem(description: "entry \(label): an Info-ZIP Unicode Path extra field (0x7075) in its \(place) header names it \(quotedValue(name)); unzip and bsdtar extract to that name, which is not the one checked")
        }
    }

    /// The data of the first extra field with `id`, or nil.
    static func extraField(_ id: UInt16, in extra: [UInt8]) -> [UInt8]? {
        var at = 0
        while at + 4 <= extra.count {
            let fieldID = u16(extra, at), length = Int(u16(extra, at + 2))
            guard at + 4 + length <= extra.count else { return nil }
            if fieldID == id { return Array(extra[(at + 4)..<(at + 4 + length)]) }
            at += 4 + length
        }
        return nil
    }

    /// `a + b`, or nil where it would overflow (hostile sizes).
    static func sum(_ a: Int64, _ b: Int64) -> Int64? {
        let (value, overflow) = a.addingReportingOverflow(b)
        return overflow ? nil : value
    }

    static func exactly(_ read: Reader, _ offset: Int64, _ count: Int, _ what: String) throws -> [UInt8] {
        let bytes = try read(offset, count)
        guard bytes.count == count else { throw Problem(description: "\(what) (\(count) bytes at offset \(offset)) runs past the end of the file") }
        return bytes
    }

    static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 { UInt32(u16(bytes, at)) | UInt32(u16(bytes, at + 2)) << 16 }
    static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 { UInt64(u32(bytes, at)) | UInt64(u32(bytes, at + 4)) << 32 }
}
