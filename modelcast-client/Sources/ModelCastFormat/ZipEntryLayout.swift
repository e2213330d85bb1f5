import Foundation

/// Where the entries lie in the file, together: every byte before the central directory
/// must belong to exactly one listed entry, in order, with no gap and no overlap, so a
/// streaming extractor (which walks local headers) sees the entries the central directory lists.
enum ZipEntryLayout {
    /// With flag bit 3, an entry's `dataEnd` counts the shortest data descriptor (12 bytes);
    /// it may be 4 longer with its signature, 8 with zip64 sizes, 12 with both.
    static let descriptorSlack: Set<Int64> = [4, 8, 12]

    /// Entries whose local header lies beyond the central directory start, or whose data
    /// runs into the central directory or into the next local header, or leaves bytes
    /// before the next; and the positions of the entries concerned. `placed` lists the
    /// entries whose local header lies before the central directory, by local header
    /// offset, then position (`ZipLocalPass.placed`).
    static func problems(_ entries: [ZipParsedEntry], placed: [Int], directoryStart: Int64) -> (problems: [ZipProblem], entries: Set<Int>) {
        var problems: [ZipProblem] = []
        var concerned = Set<Int>()
        for position in entries.indices where entries[position].entry.localHeaderOffset >= directoryStart {
            let entry = entries[position].entry
            problems.append(.localHeaderBeyondDirectory(entry: entry.name, index: position, offset: entry.localHeaderOffset, directoryStart: directoryStart))
            concerned.insert(position)
        }
        // Every byte accounted for: the first local header at offset 0, each entry's data
        // ending where the next local header starts, the last one's where the central
        // directory starts. Bytes in between could hold a local entry the central directory
        // does not list, which a streaming extractor would write.
        if let first = placed.first.map({ entries[$0].entry }), first.localHeaderOffset > 0 {
            problems.append(.bytesBeforeFirstHeader(offset: first.localHeaderOffset, entry: first.name))
        }
        for (index, position) in placed.enumerated() {
            guard let end = entries[position].dataEnd else { continue }
            let next = index + 1 < placed.count ? entries[placed[index + 1]].entry.localHeaderOffset : directoryStart
            let deferred = entries[position].entry.flags & ZipFormat.flagDataDescriptor != 0
            if end < next, !(deferred && descriptorSlack.contains(next - end)) {
                let nextEntry = index + 1 < placed.count ? entries[placed[index + 1]].entry.name : nil
                problems.append(.unaccountedBytes(entry: entries[position].entry.name, index: position, dataEnd: end, next: next, nextEntry: nextEntry))
                concerned.insert(position)
            }
        }
        for (index, position) in placed.enumerated() {
            guard let end = entries[position].dataEnd else { continue }
            if end > directoryStart {
                problems.append(.dataPastDirectory(entry: entries[position].entry.name, index: position, dataEnd: end, directoryStart: directoryStart))
                concerned.insert(position)
            } else if index + 1 < placed.count, end > entries[placed[index + 1]].entry.localHeaderOffset {
                let next = entries[placed[index + 1]].entry
                problems.append(.dataOverlapsNextHeader(entry: entries[position].entry.name, index: position, dataEnd: end, nextEntry: next.name, nextOffset: next.localHeaderOffset))
                concerned.insert(position)
            }
        }
        return (problems, concerned)
    }
}
