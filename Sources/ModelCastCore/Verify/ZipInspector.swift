import Foundation

/// Reads a zip's central directory the way a cautious device would before
/// unzipping, and lists everything that makes it unsafe: names that escape the
/// destination or collide, links and special files, sizes and offsets that do not
/// add up, encryption, multiple disks, an implausible compression ratio.
///
/// Only the end records, the central directory and the fixed part plus name of
/// each local header are read, so the cost follows the central directory, not
/// the archive (which matters when `source` is a remote file read by ranges).
package enum ZipInspector {
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
    package static let defaultMaxEntries = 100_000
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
    package static func inspect(_ source: some RandomAccessBytes, maxCentralDirectory: Int = 64 << 20, maxEntries: Int = defaultMaxEntries) async throws -> ZipInspection {
        var problems: [ZipProblem] = []
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
            problems.append(.directoryGap(offset: end.directoryOffset, size: end.directorySize, end: directoryEnd.partialValue, recordsStart: end.directoryEndExpected))
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
            problems.append(.entryCountMismatch(declared: end.entryCount, found: entries.count))
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
        var localProblems: [Int: [ZipProblem]] = [:]
        for (position, index) in placed.enumerated() {
            var found: [ZipProblem] = []
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
            problems.append(.compressionRatio(total: total, ratio: maxCompressionRatio, archiveSize: source.size))
        }
        return ZipInspection(entries: result, problems: problems, isZip64: end.isZip64)
    }
}
