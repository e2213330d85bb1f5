import Foundation

/// The one zip reader: reads a zip's records the way a cautious device does before
/// unzipping, and lists everything that makes it unsafe (`ZipProblem`): names that escape
/// the destination or collide, links and special files, sizes and offsets that do not add
/// up, encryption, multiple disks, local headers and data descriptors that disagree with
/// the central directory, bytes no listed entry accounts for, a second name in an extra
/// field. A device refuses a zip with any problem; verify reports them (and adds its own
/// server-side limits).
///
/// The scan does no I/O: it says which bytes it needs next (`step`) and is given them
/// (`supply`), so one reader serves a file read in place (`inspect(size:read:)`, a device)
/// and a remote one read by ranges (ModelCastCore's verify, asynchronously). Only the end
/// records, the central directory and the fixed part plus name (and usually extra field) of
/// each local header are read, so the cost follows the central directory, not the archive.
@_spi(ModelCastTooling) public struct ZipScan {
    /// Bytes the scan needs: `count` bytes at `offset` (a source gives fewer only where it ends).
    public struct Read: Equatable, Sendable {
        public let offset: Int64
        public let count: Int

        public init(offset: Int64, count: Int) {
            self.offset = offset
            self.count = count
        }
    }

    /// What the scan does next: read, or hand over what it found.
    public enum Step {
        case read(Read)
        case finished(ZipInspection)
    }

    /// The most the scan takes on before it refuses an archive (`ZipFailure`).
    public struct Limits: Sendable {
        /// Central directory bytes (a zip modelcast writes needs far less).
        public var maxCentralDirectory: Int
        /// Entries: model packages hold tens to thousands of files; a huge count only
        /// costs the device time and memory before it unpacks anything.
        public var maxEntries: Int
        /// What raises `maxEntries`, named when it refuses (verify's option); nil on a device.
        public var raisedBy: String?

        public init(maxCentralDirectory: Int = 64 << 20, maxEntries: Int = 100_000, raisedBy: String? = nil) {
            self.maxCentralDirectory = maxCentralDirectory
            self.maxEntries = maxEntries
            self.raisedBy = raisedBy
        }
    }

    /// How far the scan reads.
    public enum Depth: Sendable {
        /// Everything: every device rule, local headers and data descriptors included.
        case everything
        /// The end records and the central directory only, leniently, as
        /// `docs/segment-index.md` specifies for cutting a zip into segments: zip64 end
        /// records that cannot be followed are ignored (the classic record is used), and the
        /// end record's entry count is not held to the limit or to the directory's size.
        /// Problems are not reported.
        case centralDirectory
    }

    private enum Stage {
        case tail
        case locator(ZipEndRecords.Classic)
        case zip64Record(ZipEndRecords.Classic, offset: UInt64)
        case directory(ZipEndRecords)
        case localHeaders(ZipEndRecords)
    }

    let size: Int64
    let limits: Limits
    let depth: Depth
    private var stage = Stage.tail
    private var problems: [ZipProblem] = []
    private var local: ZipLocalPass?
    /// What the scan does next.
    public private(set) var step: Step

    /// A scan of an archive of `size` bytes; refused when it is too short to be a zip.
    public init(size: Int64, limits: Limits = Limits(), depth: Depth = .everything) throws {
        guard size >= Int64(ZipFormat.endRecordSize) else { throw ZipFailure.tooShort(size: size) }
        self.size = size
        self.limits = limits
        self.depth = depth
        let window = ZipEndRecords.tailWindow(size: size)
        step = .read(Read(offset: size - window, count: Int(window)))
    }

    /// Gives the scan the bytes its `step` asked for (more are ignored; fewer mean the
    /// source ended there). Throws `ZipFailure` when the archive cannot be read at all.
    public mutating func supply(_ given: [UInt8]) throws {
        guard case .read(let read) = step else { return }
        let bytes = given.count > read.count ? Array(given.prefix(read.count)) : given
        switch stage {
        case .tail:
            let tail = try Self.whole(bytes, read, .endOfArchive)
            let classic = try ZipEndRecords.classic(tail: tail, tailStart: read.offset, problems: &problems)
            let locatorOffset = classic.offset - Int64(ZipFormat.zip64LocatorSize)
            if locatorOffset >= 0 {
                stage = .locator(classic)
                step = .read(Read(offset: locatorOffset, count: ZipFormat.zip64LocatorSize))
            } else {
                try endRecordsRead(classic.records)
            }
        case .locator(let classic):
            let locator = try Self.whole(bytes, read, .zip64Locator)
            let recordOffset = try Self.lenient(depth) { try ZipEndRecords.zip64RecordOffset(locator: locator, at: read.offset, problems: &problems) }
            if let recordOffset = recordOffset ?? nil {
                stage = .zip64Record(classic, offset: recordOffset)
                step = .read(Read(offset: Int64(recordOffset), count: ZipFormat.zip64EndRecordSize))
            } else {
                try endRecordsRead(classic.records)
            }
        case let .zip64Record(classic, recordOffset):
            let record = try Self.whole(bytes, read, .zip64EndRecord)
            let zip64 = try Self.lenient(depth) { try ZipEndRecords.zip64(record, at: recordOffset, classic: classic, problems: &problems) }
            try endRecordsRead(zip64 ?? classic.records)
        case .directory(let end):
            try directoryRead(try Self.whole(bytes, read, .centralDirectory), end)
        case .localHeaders(let end):
            local?.supply(bytes, for: read)
            localHeadersRead(end)
        }
    }

    /// `bytes`, or a refusal when the source gave fewer than `read` asked for.
    private static func whole(_ bytes: [UInt8], _ read: Read, _ record: ZipFailure.Record) throws -> [UInt8] {
        guard bytes.count >= read.count else { throw ZipFailure.cutShort(record, offset: read.offset, got: bytes.count, wanted: read.count) }
        return bytes
    }

    /// What `body` finds; nil where it refuses and the scan only wants the central directory
    /// (a zip64 end record it cannot follow is ignored there).
    private static func lenient<T>(_ depth: Depth, _ body: () throws -> T) throws -> T? {
        do { return try body() } catch is ZipFailure where depth == .centralDirectory {
            return nil
        }
    }

    /// With the end records read: the central directory's bounds checked, it is read next.
    private mutating func endRecordsRead(_ end: ZipEndRecords) throws {
        if end.entriesOnDisk != end.entryCount {
            problems.append(.entriesOnDiskMismatch(onDisk: end.entriesOnDisk, total: end.entryCount))
        }
        try end.checkBounds(limits, counts: depth == .everything, problems: &problems)
        stage = .directory(end)
        step = .read(Read(offset: Int64(end.directoryOffset), count: Int(end.directorySize)))
    }

    /// The central directory parsed (refused past `maxEntries` headers); then the local headers.
    private mutating func directoryRead(_ bytes: [UInt8], _ end: ZipEndRecords) throws {
        let entries: [ZipParsedEntry]
        do {
            entries = try ZipCentralDirectory.parse(bytes, startingAt: Int64(end.directoryOffset), maxEntries: limits.maxEntries, problems: &problems)
        } catch let tooMany as ZipCentralDirectory.TooManyEntries {
            throw ZipFailure.tooManyListed(limit: tooMany.limit, declared: end.entryCount, raisedBy: limits.raisedBy)
        }
        if UInt64(entries.count) != end.entryCount {
            problems.append(.entryCountMismatch(declared: end.entryCount, found: entries.count))
        }
        guard depth == .everything else {
            step = .finished(ZipInspection(entries: entries.map(\.entry), problems: [], isZip64: end.isZip64, directoryOffset: Int64(end.directoryOffset)))
            return
        }
        // Handed over, not shared: the pass writes into the entries, which must not copy them.
        local = ZipLocalPass(consume entries, directoryStart: Int64(end.directoryOffset))
        stage = .localHeaders(end)
        localHeadersRead(end)
    }

    /// Reads on through the local headers; with all of them read, the entries' layout and
    /// names together, and the data descriptors where the layout adds up.
    private mutating func localHeadersRead(_ end: ZipEndRecords) {
        guard var pass = local else { return }
        local = nil  // held here while it reads on, so its entries are not copied
        if let read = pass.advance() {
            step = .read(read)
            local = pass
            return
        }
        let directoryStart = Int64(end.directoryOffset)
        problems += pass.problems
        let layout = ZipEntryLayout.problems(pass.entries, placed: pass.placed, directoryStart: directoryStart)
        problems += layout.problems
        // A descriptor is only where the layout says it is when the layout adds up.
        for parsed in pass.entries where !layout.entries.contains(parsed.index) {
            problems += ZipLocalHeader.descriptorProblems(parsed)
        }
        problems += ZipEntryNames.collisions(pass.entries)
        step = .finished(ZipInspection(entries: pass.entries.map(\.entry), problems: problems, isZip64: end.isZip64, directoryOffset: directoryStart))
    }
}

extension ZipScan {
    /// Scans the archive of `size` bytes that `read` gives (`count` bytes at `offset`, fewer
    /// only at its end), as a device does before unpacking it. Throws `ZipFailure` when it
    /// cannot be read at all, and whatever `read` throws.
    public static func inspect(size: Int64, limits: Limits = Limits(), depth: Depth = .everything, read: (_ offset: Int64, _ count: Int) throws -> [UInt8]) throws -> ZipInspection {
        var scan = try ZipScan(size: size, limits: limits, depth: depth)
        while true {
            switch scan.step {
            case .finished(let inspection): return inspection
            case .read(let next): try scan.supply(try read(next.offset, next.count))
            }
        }
    }
}
