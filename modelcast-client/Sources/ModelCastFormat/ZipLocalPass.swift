import Foundation

/// The pass over local headers (and data descriptors) of the entries placed before the
/// central directory, in file order, as a sequence of reads `ZipScan` serves: each entry's
/// header is compared with the central directory, and where each entry's data ends is
/// recorded for the layout checks.
///
/// Reads go through one window. The byte ranges the pass will want are planned up front
/// and merged (`plan`); a read the window covers costs nothing, and a miss reads from the
/// requested offset to the end of its planned group, so an archive of many small files
/// costs a few reads (Range requests over HTTP), not one per entry.
struct ZipLocalPass {
    /// Local headers (and data descriptors) closer together than this are fetched in one read.
    static let coalescingGap: Int64 = 32 << 10
    /// The largest single read of local headers.
    static let coalescedReadLimit: Int64 = 1 << 20

    private(set) var entries: [ZipParsedEntry]
    /// The positions of the entries whose local header lies before the central directory,
    /// by local header offset (then position).
    let placed: [Int]
    /// For each of `placed`, where the next local header (or the central directory) starts:
    /// its extra field and descriptor are not read past it, so the reads never add up to
    /// more than the archive, whatever lengths a hostile header declares.
    private let bounds: [Int64]
    /// Sorted, disjoint.
    private let groups: [ZipScan.Read]
    /// The entry of `placed` being read, and which of its records.
    private var position = 0
    private var step = Step.header
    private var window = Window()
    private var found: [Int: [ZipProblem]] = [:]

    private enum Step {
        case header
        /// The header again, whole: its extra field is longer than the central one.
        case wholeHeader(nameLength: Int, extraLength: Int)
        case descriptor(offset: Int64, count: Int, wide: Bool)
    }

    /// What the last read left: bytes from `start`, covering requests up to `end` (fewer
    /// bytes than that only where the source ended).
    private struct Window {
        var start: Int64 = 0
        var end: Int64 = 0
        var bytes: [UInt8] = []

        func slice(_ offset: Int64, _ count: Int) -> [UInt8]? {
            guard offset >= start, ZipText.saturatingAdd(offset, Int64(count)) <= end else { return nil }
            let from = Int(offset - start)
            return from < bytes.count ? Array(bytes[from..<min(from + count, bytes.count)]) : []
        }
    }

    init(_ entries: consuming [ZipParsedEntry], directoryStart: Int64) {
        let placed = entries.indices
            .filter { entries[$0].entry.localHeaderOffset < directoryStart }
            .sorted { (entries[$0].entry.localHeaderOffset, $0) < (entries[$1].entry.localHeaderOffset, $1) }
        var bounds = [Int64](repeating: directoryStart, count: placed.count)
        var nextStart = directoryStart
        for position in placed.indices.reversed() {
            let offset = entries[placed[position]].entry.localHeaderOffset
            bounds[position] = nextStart
            if position > 0, entries[placed[position - 1]].entry.localHeaderOffset < offset { nextStart = offset }
        }
        self.groups = Self.plan(entries, placed: placed, bounds: bounds, directoryStart: directoryStart)
        self.placed = placed
        self.bounds = bounds
        self.entries = entries
    }

    /// The byte ranges the pass will want, merged into reads: each entry's fixed header, name
    /// and (assumed as long as the central one) extra field, and for an entry with a data
    /// descriptor, the descriptor's likely place. Ranges closer than `coalescingGap` share
    /// a read of at most `coalescedReadLimit` bytes.
    static func plan(_ entries: [ZipParsedEntry], placed: [Int], bounds: [Int64], directoryStart: Int64) -> [ZipScan.Read] {
        var wanted: [(start: Int64, end: Int64)] = []
        wanted.reserveCapacity(placed.count)
        for (index, bound) in zip(placed, bounds) {
            let offset = entries[index].entry.localHeaderOffset
            let fixed = ZipText.saturatingAdd(offset, Int64(ZipFormat.localHeaderSize + entries[index].nameBytes.count))
            let header = ZipText.saturatingAdd(fixed, Int64(entries[index].centralExtraLength))
            wanted.append((offset, min(max(fixed, min(header, bound)), directoryStart)))
            if entries[index].entry.flags & ZipFormat.flagDataDescriptor != 0 {
                let descriptor = ZipText.saturatingAdd(header, entries[index].entry.compressedSize)
                if descriptor < bound {
                    wanted.append((descriptor, min(ZipText.saturatingAdd(descriptor, 24), bound)))
                }
            }
        }
        wanted.sort { $0.start < $1.start }
        var groups: [(start: Int64, end: Int64)] = []
        for range in wanted where range.end > range.start {
            if var last = groups.last, range.start <= ZipText.saturatingAdd(last.end, coalescingGap),
               max(last.end, range.end) - last.start <= coalescedReadLimit {
                last.end = max(last.end, range.end)
                groups[groups.count - 1] = last
            } else {
                groups.append(range)
            }
        }
        return groups.map { ZipScan.Read(offset: $0.start, count: Int(min($0.end - $0.start, Int64(Int.max)))) }
    }

    /// Reads every record the window holds, and returns the read the pass needs next (from
    /// the missing record to the end of its planned group); nil when every entry is read.
    mutating func advance() -> ZipScan.Read? {
        while position < placed.count {
            let request = self.request()
            guard let bytes = window.slice(request.offset, request.count) else {
                var end = ZipText.saturatingAdd(request.offset, Int64(request.count))
                if let group = group(containing: request.offset) { end = max(end, ZipText.saturatingAdd(group.offset, Int64(group.count))) }
                return ZipScan.Read(offset: request.offset, count: Int(min(end - request.offset, Int64(Int.max))))
            }
            take(bytes)
        }
        return nil
    }

    /// What the source gave for `read` (the read `advance` asked for).
    mutating func supply(_ bytes: [UInt8], for read: ZipScan.Read) {
        window = Window(start: read.offset, end: ZipText.saturatingAdd(read.offset, Int64(read.count)), bytes: bytes)
    }

    /// Every problem found, in central directory order.
    var problems: [ZipProblem] { entries.indices.flatMap { found[$0] ?? [] } }

    private func group(containing offset: Int64) -> ZipScan.Read? {
        var low = 0, high = groups.count
        while low < high {
            let middle = (low + high) / 2
            if groups[middle].offset <= offset { low = middle + 1 } else { high = middle }
        }
        guard low > 0, offset < ZipText.saturatingAdd(groups[low - 1].offset, Int64(groups[low - 1].count)) else { return nil }
        return groups[low - 1]
    }

    /// The bytes the current step reads.
    private func request() -> ZipScan.Read {
        let index = placed[position]
        let offset = entries[index].entry.localHeaderOffset
        switch step {
        case .header:
            let fixed = ZipFormat.localHeaderSize + entries[index].nameBytes.count
            let guess = min(Int64(fixed + entries[index].centralExtraLength), max(Int64(fixed), bounds[position] - offset))
            return ZipScan.Read(offset: offset, count: Int(guess))
        case let .wholeHeader(nameLength, extraLength):
            return ZipScan.Read(offset: offset, count: ZipFormat.localHeaderSize + nameLength + extraLength)
        case let .descriptor(at, count, _):
            return ZipScan.Read(offset: at, count: count)
        }
    }

    private mutating func take(_ bytes: [UInt8]) {
        switch step {
        case .header: header(bytes)
        case let .wholeHeader(nameLength, extraLength): extraField(bytes, nameLength: nameLength, extraLength: extraLength, fits: true)
        case let .descriptor(at, _, wide):
            entries[placed[position]].descriptor = ZipParsedEntry.Descriptor(offset: at, bytes: bytes, wide: wide)
            next()
        }
    }

    private mutating func next() {
        position += 1
        step = .header
    }

    private mutating func report(_ problems: [ZipProblem]) {
        guard !problems.isEmpty else { return }
        found[placed[position], default: []] += problems
    }

    /// Reads the entry's local header and compares it with the central directory: name,
    /// general purpose flags, method, CRC-32 and both sizes (zip64 extra field included).
    /// With bit 3 set, the CRC-32 and sizes may be zero (deferred to the data descriptor,
    /// which is read next and judged by `ZipLocalHeader.descriptorProblems`). Records where
    /// the entry's data starts and ends.
    private mutating func header(_ bytes: [UInt8]) {
        let index = placed[position]
        let name = entries[index].entry.name, offset = entries[index].entry.localHeaderOffset
        guard bytes.count >= ZipFormat.localHeaderSize else {
            report([.localHeaderTruncated(entry: name, index: index, offset: offset)])
            return next()
        }
        let header = ZipFields(bytes)
        guard header.u32(0) == ZipFormat.localHeaderSignature else {
            report([.localHeaderMissing(entry: name, index: index, offset: offset, signature: header.u32(0))])
            return next()
        }
        let nameLength = Int(header.u16(26)), extraLength = Int(header.u16(28))
        let localName = Array(bytes[ZipFormat.localHeaderSize..<min(ZipFormat.localHeaderSize + nameLength, header.count)])
        let dataStart = ZipText.saturatingAdd(offset, Int64(ZipFormat.localHeaderSize + nameLength + extraLength))
        var end = ZipText.saturatingAdd(dataStart, entries[index].entry.compressedSize)
        if entries[index].entry.flags & ZipFormat.flagDataDescriptor != 0 { end = ZipText.saturatingAdd(end, ZipFormat.minimumDataDescriptorSize) }
        entries[index].dataEnd = end
        guard nameLength == entries[index].nameBytes.count, localName == entries[index].nameBytes else {
            let shown = String(decoding: localName, as: UTF8.self)
            report([.localHeaderNameDiffers(entry: name, index: index, offset: offset, localName: shown, truncated: localName.count < nameLength)])
            return next()  // another entry's header, or none: its other fields say nothing about this entry
        }
        entries[index].entry.dataOffset = dataStart

        // An extra field running past the next local header is a layout problem
        // (reported with the overlaps); its zip64 values are then not compared.
        let fits = Int64(ZipFormat.localHeaderSize + nameLength + extraLength) <= bounds[position] - offset
        if fits, header.count < ZipFormat.localHeaderSize + nameLength + extraLength {
            step = .wholeHeader(nameLength: nameLength, extraLength: extraLength)
            return
        }
        extraField(bytes, nameLength: nameLength, extraLength: extraLength, fits: fits)
    }

    /// The local header's extra field (its zip64 values and a second name) and its values
    /// against the central directory; then the data descriptor's place, when both records
    /// say there is one.
    private mutating func extraField(_ bytes: [UInt8], nameLength: Int, extraLength: Int, fits: Bool) {
        let index = placed[position], entry = entries[index].entry, offset = entry.localHeaderOffset
        guard bytes.count >= ZipFormat.localHeaderSize else {  // the source changed since the header was read
            report([.localHeaderTruncated(entry: entry.name, index: index, offset: offset)])
            return next()
        }
        let headerLength = ZipFormat.localHeaderSize + nameLength + extraLength
        let extra = Array(bytes[min(ZipFormat.localHeaderSize + nameLength, bytes.count)..<min(headerLength, bytes.count)])
        var problems: [ZipProblem] = []
        var wide: ZipFields?
        if fits && extra.count == extraLength {
            let fields = ZipExtraFields(extra, entry: entry.name, index: index, header: .local(offset: offset), problems: &problems)
            wide = fields.zip64
            problems += fields.unicodePathProblems(entry: entry.name, index: index, header: .local(offset: offset))
        }
        let local = ZipLocalHeader.values(ZipFields(bytes), zip64: wide, extraFits: fits)
        if !local.missing.isEmpty {
            problems.append(.zip64ValuesMissing(entry: entry.name, index: index, header: .local(offset: offset), fields: local.missing))
        }
        problems += ZipLocalHeader.differences(local, entry: entry, index: index)
        report(problems)

        let bound = bounds[position]
        let at = ZipText.saturatingAdd(ZipText.saturatingAdd(offset, Int64(headerLength)), entry.compressedSize)
        if local.isDeferred, local.flags == entry.flags, at < bound, bound - at >= ZipFormat.minimumDataDescriptorSize {
            step = .descriptor(offset: at, count: Int(min(24, bound - at)), wide: wide != nil)
        } else {
            next()
        }
    }
}
