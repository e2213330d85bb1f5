import Foundation

/// Where a zip's entries and central directory are, read for cutting it into segments
/// (`ZipSegmentPlan`): the inspector's own record parsing, read synchronously from a
/// file already open, and tolerant: it gives up (nil) only where it cannot find the
/// central directory, and never reports problems (verify does that).
extension ZipInspector {
    /// The entries as the central directory lists them, and where it starts.
    struct Layout {
        struct Entry {
            /// Where its local header starts.
            var offset: Int64
            /// 0 for stored data.
            var method: UInt16
            var compressedSize: Int64
        }

        /// In central directory order.
        var entries: [Entry]
        /// Below the end records, which are below `Bytes.size`.
        var directoryStart: Int64
    }

    /// The layout of the zip `bytes` holds; nil when there is no end record, the end records
    /// point outside the file, the central directory is larger than 64 MiB, or it lists more
    /// than `defaultMaxEntries` entries (the limits `inspect` applies by default).
    static func layout(_ bytes: SegmentPlan.Bytes) -> Layout? {
        let size = bytes.size
        guard size >= Int64(endRecordSize) else { return nil }
        let window = min(size, Int64(endRecordSize + maxCommentLength))
        guard let tail = bytes.read(size - window, Int(window)), let located = endRecordPosition(in: Fields(tail)) else { return nil }
        let endOffset = size - window + Int64(located.position)
        let record = Fields(Array(tail[located.position..<(located.position + endRecordSize)]))
        var directory = (offset: UInt64(record.u32(16)), size: UInt64(record.u32(12)), end: endOffset)
        if let zip64 = zip64Directory(bytes, endOffset: endOffset) { directory = zip64 }
        let directoryEnd = directory.offset.addingReportingOverflow(directory.size)
        guard directory.size <= 64 << 20, !directoryEnd.overflow, directoryEnd.partialValue <= UInt64(directory.end),
              let listing = bytes.read(Int64(directory.offset), Int(directory.size)) else { return nil }
        var ignored: [ZipProblem] = []
        // Thrown only for more entries than the limit: such a zip is cut as bulk.
        guard let parsed = try? parseCentralDirectory(listing, startingAt: Int64(directory.offset), problems: &ignored) else { return nil }
        let entries = parsed.map { Layout.Entry(offset: $0.entry.localHeaderOffset, method: $0.entry.method, compressedSize: $0.entry.compressedSize) }
        return Layout(entries: entries, directoryStart: Int64(directory.offset))
    }

    /// The central directory's offset and size from the zip64 end record, and where that
    /// record starts, when a zip64 locator sits right before the end record at `endOffset`
    /// and points to a zip64 end record below it.
    static func zip64Directory(_ bytes: SegmentPlan.Bytes, endOffset: Int64) -> (offset: UInt64, size: UInt64, end: Int64)? {
        let locatorOffset = endOffset - Int64(zip64LocatorSize)
        guard let locator = bytes.read(locatorOffset, zip64LocatorSize).map(Fields.init), locator.u32(0) == zip64LocatorSignature else { return nil }
        let recordOffset = locator.u64(8)
        guard recordOffset <= UInt64(locatorOffset), UInt64(locatorOffset) - recordOffset >= UInt64(zip64EndRecordSize),
              let record = bytes.read(Int64(recordOffset), zip64EndRecordSize).map(Fields.init), record.u32(0) == zip64EndSignature else { return nil }
        return (record.u64(48), record.u64(40), Int64(recordOffset))
    }
}
