import Foundation

/// Local headers and data descriptors, read in coalesced ranges, checked against the
/// central directory, and the layout of the entries in the file (gaps, overlaps, collisions).
extension ZipInspector {
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

    /// Reads the local header (and data descriptor) of every entry placed before the central
    /// directory, recording where each entry's data ends. The headers are read in file order,
    /// so neighbouring ones come in one read; their problems are returned in central
    /// directory order like everything else.
    static func localHeaderProblems(_ entries: inout [ParsedEntry], of source: some RandomAccessBytes, directoryStart: Int64) async throws -> [ZipProblem] {
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
        var byEntry: [Int: [ZipProblem]] = [:]
        for (position, index) in placed.enumerated() {
            var found: [ZipProblem] = []
            try await readLocalHeader(of: &entries[index], reader: &reader, bound: bounds[position], problems: &found)
            if !found.isEmpty { byEntry[index] = found }
        }
        return entries.indices.flatMap { byEntry[$0] ?? [] }
    }

    /// Reads the entry's local header and compares it with the central directory:
    /// name, general purpose flags, method, CRC-32 and both sizes (zip64 extra field
    /// included). With bit 3 set, the CRC-32 and sizes may be zero (deferred to the
    /// data descriptor, which is read here and judged by `descriptorProblems`).
    /// Records where the entry's data ends. `bound` is where the next local header (or
    /// the central directory) starts: the extra field and the descriptor are not read past it.
    static func readLocalHeader<Source>(of parsed: inout ParsedEntry, reader: inout CoalescingReader<Source>, bound: Int64, problems: inout [ZipProblem]) async throws {
        let entry = parsed.entry, name = entry.name, index = parsed.index
        let offset = entry.localHeaderOffset
        let fixed = localHeaderSize + parsed.nameBytes.count
        let guess = Int(min(Int64(fixed + parsed.centralExtraLength), max(Int64(fixed), bound - offset)))
        var bytes = try await reader.read(offset, guess)
        guard bytes.count >= localHeaderSize else {
            problems.append(.localHeaderTruncated(entry: name, index: index, offset: offset))
            return
        }
        var header = Fields(bytes)
        guard header.u32(0) == localHeaderSignature else {
            problems.append(.localHeaderMissing(entry: name, index: index, offset: offset, signature: header.u32(0)))
            return
        }
        let nameLength = Int(header.u16(26)), extraLength = Int(header.u16(28))
        let localName = Array(header.bytes[localHeaderSize..<min(localHeaderSize + nameLength, header.count)])
        var end = saturatingAdd(offset, Int64(localHeaderSize + nameLength + extraLength))
        end = saturatingAdd(end, entry.compressedSize)
        if entry.flags & 0x0008 != 0 { end = saturatingAdd(end, minimumDataDescriptorSize) }
        parsed.dataEnd = end
        if nameLength != parsed.nameBytes.count || localName != parsed.nameBytes {
            let shown = String(decoding: localName, as: UTF8.self)
            problems.append(.localHeaderNameDiffers(entry: name, index: index, offset: offset, localName: shown, truncated: localName.count < nameLength))
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
        let wide = extraFits && extra.count == extraLength ? zip64Field(in: extra, entry: name, index: index, header: .local(offset: offset), problems: &problems) : nil
        if extraFits && extra.count == extraLength { problems += unicodePathProblems(in: extra, entry: name, index: index, header: .local(offset: offset)) }

        let local = localValues(header, zip64: wide, extraFits: extraFits)
        if !local.missing.isEmpty {
            problems.append(.zip64ValuesMissing(entry: name, index: index, header: .local(offset: offset), fields: local.missing))
        }
        problems += localHeaderDifferences(local, entry: entry, index: index)

        // The data descriptor follows the data when both records say there is one.
        if local.isDeferred, local.flags == entry.flags {
            let at = saturatingAdd(saturatingAdd(offset, Int64(localHeaderSize + nameLength + extraLength)), entry.compressedSize)
            if at < bound, bound - at >= minimumDataDescriptorSize {
                let count = Int(min(24, bound - at))
                parsed.descriptor = Descriptor(offset: at, bytes: try await reader.read(at, count), wide: wide != nil)
            }
        }
    }

    /// What a local header records that is compared with the central directory.
    struct LocalValues {
        var flags: UInt16
        var method: UInt16
        var crc: UInt32
        /// Nil when marked 0xFFFFFFFF but not read from the zip64 extra field: not compared.
        var compressed: UInt64?
        var uncompressed: UInt64?
        /// The sizes read from the zip64 extra field.
        var fromZip64: Set<ZipProblem.Field> = []
        /// Sizes marked 0xFFFFFFFF that the zip64 extra field does not supply.
        var missing: [ZipProblem.Field] = []

        /// Bit 3: the CRC-32 and sizes follow the data; the local header may hold zeros instead.
        var isDeferred: Bool { flags & 0x0008 != 0 }
    }

    /// The local header's flags, method, CRC-32 and sizes. In a local header the zip64 field
    /// (`wide`, its body) holds the uncompressed size, then the compressed size, each only
    /// when its classic field is the 0xFFFFFFFF marker. A marked size whose zip64 field
    /// overlaps what follows (`extraFits` false) is left to the layout check.
    static func localValues(_ header: Fields, zip64 wide: Fields?, extraFits: Bool) -> LocalValues {
        var values = LocalValues(
            flags: header.u16(6), method: header.u16(8), crc: header.u32(14),
            compressed: UInt64(header.u32(18)), uncompressed: UInt64(header.u32(22)))
        var cursor = 0
        func take(_ field: ZipProblem.Field) -> UInt64? {
            guard let wide, cursor + 8 <= wide.count else { values.missing.append(field); return nil }
            defer { cursor += 8 }
            values.fromZip64.insert(field)
            return wide.u64(cursor)
        }
        if values.uncompressed == 0xFFFF_FFFF {
            let value = extraFits ? take(.uncompressedSize) : nil
            values.uncompressed = value
        }
        if values.compressed == 0xFFFF_FFFF {
            let value = extraFits ? take(.compressedSize) : nil
            values.compressed = value
        }
        return values
    }

    /// The local header's values against the central directory's: general purpose flags,
    /// method, CRC-32 and both sizes (deferred ones may be zero).
    static func localHeaderDifferences(_ local: LocalValues, entry: ZipEntry, index: Int) -> [ZipProblem] {
        var problems: [ZipProblem] = []
        func differs(_ field: ZipProblem.Field, _ value: UInt64, _ central: UInt64) {
            problems.append(.localHeaderDiffers(
                entry: entry.name, index: index, offset: entry.localHeaderOffset, field: field,
                local: value, central: central, fromZip64: local.fromZip64.contains(field)))
        }
        let deferred = local.isDeferred
        if local.flags != entry.flags { differs(.flags, UInt64(local.flags), UInt64(entry.flags)) }
        if local.method != entry.method { differs(.method, UInt64(local.method), UInt64(entry.method)) }
        if local.crc != entry.crc32, !(deferred && local.crc == 0) { differs(.crc32, UInt64(local.crc), UInt64(entry.crc32)) }
        if let compressed = local.compressed, compressed != UInt64(entry.compressedSize), !(deferred && compressed == 0) {
            differs(.compressedSize, compressed, UInt64(entry.compressedSize))
        }
        if let uncompressed = local.uncompressed, uncompressed != UInt64(entry.uncompressedSize), !(deferred && uncompressed == 0) {
            differs(.uncompressedSize, uncompressed, UInt64(entry.uncompressedSize))
        }
        return problems
    }

    static let descriptorSignature: UInt32 = 0x0807_4b50

    /// The entry's data descriptor against the central directory: CRC-32 and both
    /// sizes (eight bytes each when the local header has a zip64 field). The
    /// signature is optional, so a descriptor that matches read either way passes.
    static func descriptorProblems(_ parsed: ParsedEntry) -> [ZipProblem] {
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
        let name = entry.name, index = parsed.index, offset = descriptor.offset
        guard let first = readings.first else {
            return [.descriptorTruncated(entry: name, index: index, offset: offset, available: fields.count)]
        }
        let central = (crc: entry.crc32, compressed: UInt64(entry.compressedSize), uncompressed: UInt64(entry.uncompressedSize))
        if readings.contains(where: { $0 == central }) { return [] }
        var problems: [ZipProblem] = []
        func differs(_ field: ZipProblem.Field, _ found: UInt64, _ expected: UInt64) {
            if found != expected { problems.append(.descriptorDiffers(entry: name, index: index, offset: offset, field: field, descriptor: found, central: expected)) }
        }
        differs(.crc32, UInt64(first.crc), UInt64(central.crc))
        differs(.compressedSize, first.compressed, central.compressed)
        differs(.uncompressedSize, first.uncompressed, central.uncompressed)
        return problems
    }

    /// Entries whose local header lies beyond the central directory start, or
    /// whose data runs into the central directory or into the next local header;
    /// and the positions of the entries concerned.
    static func overlapProblems(_ entries: [ParsedEntry], directoryStart: Int64) -> (problems: [ZipProblem], entries: Set<Int>) {
        var problems: [ZipProblem] = []
        var concerned = Set<Int>()
        for parsed in entries where parsed.entry.localHeaderOffset >= directoryStart {
            problems.append(.localHeaderBeyondDirectory(entry: parsed.entry.name, index: parsed.index, offset: parsed.entry.localHeaderOffset, directoryStart: directoryStart))
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
            problems.append(.bytesBeforeFirstHeader(offset: first.entry.localHeaderOffset, entry: first.entry.name))
        }
        for (index, parsed) in placed.enumerated() {
            guard let end = parsed.dataEnd else { continue }
            let next = index + 1 < placed.count ? placed[index + 1].entry.localHeaderOffset : directoryStart
            // With flag bit 3, `dataEnd` counts the shortest data descriptor (12 bytes); it may
            // be 4 longer with its signature, 8 with zip64 sizes, 12 with both.
            let descriptorSlack: Set<Int64> = parsed.entry.flags & 0x0008 != 0 ? [4, 8, 12] : []
            if end < next, !descriptorSlack.contains(next - end) {
                let nextEntry = index + 1 < placed.count ? placed[index + 1].entry.name : nil
                problems.append(.unaccountedBytes(entry: parsed.entry.name, index: parsed.index, dataEnd: end, next: next, nextEntry: nextEntry))
                concerned.insert(parsed.index)
            }
        }
        for (index, parsed) in placed.enumerated() {
            guard let end = parsed.dataEnd else { continue }
            if end > directoryStart {
                problems.append(.dataPastDirectory(entry: parsed.entry.name, index: parsed.index, dataEnd: end, directoryStart: directoryStart))
                concerned.insert(parsed.index)
            } else if index + 1 < placed.count, end > placed[index + 1].entry.localHeaderOffset {
                let next = placed[index + 1].entry
                problems.append(.dataOverlapsNextHeader(entry: parsed.entry.name, index: parsed.index, dataEnd: end, nextEntry: next.name, nextOffset: next.localHeaderOffset))
                concerned.insert(parsed.index)
            }
        }
        return (problems, concerned)
    }

    /// Names that would overwrite each other: identical bytes, or equal after NFC
    /// normalisation and lowercasing (APFS normalises; iOS volumes ignore case).
    static func collisionProblems(_ entries: [ParsedEntry]) -> [ZipProblem] {
        var problems: [ZipProblem] = []
        // Keyed by bytes: Swift's String equality is canonical equivalence, which
        // would merge NFC and NFD spellings and hide which rule matched.
        var byBytes: [[UInt8]: Int] = [:]
        var byFolded: [String: Int] = [:]
        for parsed in entries {
            let name = parsed.entry.name, index = parsed.index
            if let first = byBytes[parsed.nameBytes] {
                problems.append(.duplicateName(entry: name, index: index, firstIndex: first))
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
                problems.append(.foldedNameCollision(entry: name, index: index, other: entries[first].entry.name))
            } else {
                byFolded[folded] = index
            }
        }
        return problems
    }
}
