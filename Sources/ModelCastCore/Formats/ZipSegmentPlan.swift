import Foundation

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
    /// directory modelcast can find (`ZipInspector.layout`).
    static func regions(_ bytes: SegmentPlan.Bytes) -> [SegmentRegion]? {
        guard let layout = ZipInspector.layout(bytes) else { return nil }
        // Entries sharing a local header (a hostile directory) are one: the first listed.
        var byOffset: [Int64: ZipInspector.Layout.Entry] = [:]
        for entry in layout.entries where entry.offset < layout.directoryStart && byOffset[entry.offset] == nil {
            byOffset[entry.offset] = entry
        }
        let starts = byOffset.keys.sorted()
        var regions = SegmentPlan.byContent(0, starts.first ?? layout.directoryStart)
        var budget = MILWeightBlobs.maxBlobs
        for (index, start) in starts.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1] : layout.directoryStart
            regions += entryRegions(byOffset[start]!, end: end, bytes, budget: &budget)
        }
        return regions + SegmentPlan.byContent(layout.directoryStart, bytes.size)
    }

    /// The regions of the entry whose local header starts at `entry.offset`, up to `end`.
    static func entryRegions(_ entry: ZipInspector.Layout.Entry, end: Int64, _ bytes: SegmentPlan.Bytes, budget: inout Int) -> [SegmentRegion] {
        let start = entry.offset
        guard entry.method == 0, let local = bytes.read(start, ZipInspector.localHeaderSize).map(ZipInspector.Fields.init),
              local.u32(0) == ZipInspector.localHeaderSignature else { return SegmentPlan.byContent(start, end) }
        // The data follows the local header's name and extra field; the central directory
        // gives its size, cut to what lies before `end`.
        let dataStart = start + Int64(ZipInspector.localHeaderSize) + Int64(local.u16(26)) + Int64(local.u16(28))
        guard dataStart < end else { return SegmentPlan.byContent(start, end) }
        let dataLength = min(entry.compressedSize, end - dataStart)
        guard MILWeightBlobs.isWeightFile(bytes, at: dataStart, length: dataLength) else { return SegmentPlan.byContent(start, end) }
        return [.contentDefined(start: start, end: dataStart + MILWeightBlobs.headerSize, cut: .metadata)]
            + MILWeightBlobs.blobRegions(bytes, at: dataStart, length: dataLength, budget: &budget)
            + SegmentPlan.byContent(dataStart + dataLength, end)
    }
}
