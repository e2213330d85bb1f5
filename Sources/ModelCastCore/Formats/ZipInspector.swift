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
        try checkDirectoryBounds(end, of: source, maxCentralDirectory: maxCentralDirectory, maxEntries: maxEntries, problems: &problems)
        let directoryStart = Int64(end.directoryOffset)
        var entries = try await readCentralDirectory(end, of: source, maxEntries: maxEntries, problems: &problems)
        problems += try await localHeaderProblems(&entries, of: source, directoryStart: directoryStart)
        let layout = overlapProblems(entries, directoryStart: directoryStart)
        problems += layout.problems
        // A descriptor is only where the layout says it is when the layout adds up.
        for parsed in entries where !layout.entries.contains(parsed.index) {
            problems += descriptorProblems(parsed)
        }
        problems += collisionProblems(entries)

        let result = entries.map(\.entry)
        if let bomb = compressionRatioProblem(result, archiveSize: source.size) { problems.append(bomb) }
        return ZipInspection(entries: result, problems: problems, isZip64: end.isZip64)
    }

    /// Refuses a central directory the end records declare with more than `maxEntries`
    /// entries, more than `maxCentralDirectory` bytes, more entries than its size can hold,
    /// or running past the end records; reports bytes between it and the end records.
    static func checkDirectoryBounds(_ end: EndRecords, of source: some RandomAccessBytes, maxCentralDirectory: Int, maxEntries: Int, problems: inout [ZipProblem]) throws {
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
    }

    /// Reads and parses the central directory the end records point to, refusing it when
    /// it holds more than `maxEntries` entries; reports a count other than the end record's.
    static func readCentralDirectory(_ end: EndRecords, of source: some RandomAccessBytes, maxEntries: Int, problems: inout [ZipProblem]) async throws -> [ParsedEntry] {
        let directoryStart = Int64(end.directoryOffset)
        let entries: [ParsedEntry]
        do {
            let directory = try await readExactly(source, offset: directoryStart, count: Int(end.directorySize), what: "central directory")
            entries = try parseCentralDirectory(directory, startingAt: directoryStart, maxEntries: maxEntries, problems: &problems)
        } catch let tooMany as TooManyEntries {
            throw invalid(source, "central directory holds more than the limit of \(tooMany.limit) entries (the end of central directory declares \(end.entryCount)); verify --max-zip-entries raises the limit")
        }
        if UInt64(entries.count) != end.entryCount {
            problems.append(.entryCountMismatch(declared: end.entryCount, found: entries.count))
        }
        return entries
    }

    /// A possible zip bomb: the entries unpack to more than `maxCompressionRatio` times the archive's size.
    static func compressionRatioProblem(_ entries: [ZipEntry], archiveSize: Int64) -> ZipProblem? {
        let total = entries.reduce(0) { saturatingAdd($0, $1.uncompressedSize) }
        let limit = archiveSize.multipliedReportingOverflow(by: maxCompressionRatio)
        guard !limit.overflow, total > limit.partialValue else { return nil }
        return .compressionRatio(total: total, ratio: maxCompressionRatio, archiveSize: archiveSize)
    }
}
