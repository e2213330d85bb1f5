import Foundation
@_spi(ModelCastTooling) import ModelCastFormat

/// How `modelcast-segments-1` cuts a zip (a Core ML package as modelcast packs it, or any
/// zip whose central directory can be found), `docs/segment-index.md`:
///
/// - the entries, by distinct local-header offset inside the bytes before the central
///   directory, sorted: each from its local header to the next one's (the last to the
///   central directory), so an entry that grows moves the ones after it without changing
///   their segments; bytes before the first local header form a stretch of their own;
/// - a stored entry whose data is a MIL weight file (`MILWeightBlobs.isWeightFile`, what
///   coremltools writes as `weights/weight.bin`): its local header and the 64-byte
///   storage header, then each blob's header and data (`MILWeightBlobs`), then what the
///   blobs leave of the data, then the bytes from the data's end to the next local header
///   (a data descriptor);
/// - any other entry, and each of those leftover stretches, by content (`byContent`);
/// - the central directory and the end records, to the end of the file, by content.
enum ZipSegmentPlan {
    /// The regions of the zip `bytes` holds, tiling it in order; nil when it has no central
    /// directory modelcast can find (`ZipScan` reading only the central directory, leniently).
    static func regions(_ bytes: SegmentPlan.Bytes) -> [SegmentRegion]? {
        guard let layout = try? ZipScan.inspect(size: bytes.size, depth: .centralDirectory, read: { offset, count in
            guard let read = bytes.read(offset, count) else { throw Unreadable() }
            return read
        }) else { return nil }
        let directoryStart = layout.directoryOffset
        // Entries sharing a local header (a hostile directory) are one: the first listed.
        var byOffset: [Int64: ZipEntry] = [:]
        for entry in layout.entries where entry.localHeaderOffset < directoryStart && byOffset[entry.localHeaderOffset] == nil {
            byOffset[entry.localHeaderOffset] = entry
        }
        let starts = byOffset.keys.sorted()
        var regions = SegmentPlan.byContent(0, starts.first ?? directoryStart)
        var budget = MILWeightBlobs.maxBlobs
        for (index, start) in starts.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1] : directoryStart
            guard let entry = byOffset[start] else { continue }
            regions += entryRegions(entry, end: end, bytes, budget: &budget)
        }
        return regions + SegmentPlan.byContent(directoryStart, bytes.size)
    }

    /// A read outside the file, cut short or failing: the zip is not followed (it is cut as bulk).
    private struct Unreadable: Error {}

    /// The regions of the entry whose local header starts at `entry.localHeaderOffset`, up to `end`.
    static func entryRegions(_ entry: ZipEntry, end: Int64, _ bytes: SegmentPlan.Bytes, budget: inout Int) -> [SegmentRegion] {
        let start = entry.localHeaderOffset
        // The data follows the local header's name and extra field; the central directory
        // gives its size, cut to what lies before `end`.
        guard entry.method == 0, let header = bytes.read(start, ZipFormat.localHeaderSize),
              let dataStart = ZipFormat.dataStart(ofLocalHeader: header, at: start) else { return SegmentPlan.byContent(start, end) }
        guard dataStart < end else { return SegmentPlan.byContent(start, end) }
        let dataLength = min(entry.compressedSize, end - dataStart)
        guard MILWeightBlobs.isWeightFile(bytes, at: dataStart, length: dataLength) else { return SegmentPlan.byContent(start, end) }
        return [.contentDefined(start: start, end: dataStart + MILWeightBlobs.headerSize, cut: .metadata)]
            + MILWeightBlobs.blobRegions(bytes, at: dataStart, length: dataLength, budget: &budget)
            + SegmentPlan.byContent(dataStart + dataLength, end)
    }
}
