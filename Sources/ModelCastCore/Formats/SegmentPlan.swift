import Foundation

/// The regions a file is cut into for its segment index (`modelcast-segments-1`,
/// `docs/segment-index.md`), read from the file's own structure:
///
/// - a GGUF: everything before the first tensor (header, metadata, tokenizer, chat
///   template, tensor records, alignment padding) is cut by content (`metadata`); each
///   tensor's data, up to the next tensor's start (or the file's end), is cut into 1 MiB
///   slices counted from the tensor's start, so a grown header shifts no slice's bytes;
/// - a Core ML weight file (`weight.bin`) on its own: per weight blob (`MILWeightBlobs`);
/// - a zip (a packed `.mlpackage`): at its entries, a stored weight file per blob
///   (`ZipSegmentPlan`);
/// - anything else: cut by content (`bulk`).
package enum SegmentPlan {
    /// The regions of the file at `path`, `size` bytes long. The header is read again
    /// here rather than taken from `describe`: the cuts must follow the bytes being cut,
    /// so that cutting the stored artifact later (verify) gives the same index. A file
    /// that is not a readable GGUF (the reader stops at a wrong magic) is cut as
    /// `regions(of:)` says.
    package static func regions(path: String, size: Int64) -> [SegmentRegion] {
        // try?: not a readable GGUF: cut by content (below), as the doc says.
        if let summary = try? GGUFReader.read(path: path) {
            return gguf(tensorStarts: summary.tensorStarts.map { Int64($0) }, size: size)
        }
        // A file that cannot be opened is cut as bulk: the digest that follows reports it.
        guard let file = try? FileDescriptor.openForReading(path) else { return [.contentDefined(start: 0, end: size, cut: .bulk)] }
        return regions(of: Bytes(size: size) { offset, count in try file.read(at: offset, count: count) })
    }

    /// The regions of a file that is not a GGUF: a weight file per blob, a zip at its
    /// entries, anything else as one bulk region. They tile 0 to `bytes.size` in order,
    /// none empty, whatever the bytes.
    package static func regions(of bytes: Bytes) -> [SegmentRegion] {
        let regions = MILWeightBlobs.fileRegions(bytes) ?? ZipSegmentPlan.regions(bytes) ?? [.contentDefined(start: 0, end: bytes.size, cut: .bulk)]
        return regions.filter { $0.end > $0.start }
    }

    /// A GGUF's regions, given where its tensors start (in any order, repeated or past
    /// the end: the regions still tile the file from 0 to `size`).
    package static func gguf(tensorStarts: [Int64], size: Int64) -> [SegmentRegion] {
        let starts = Set(tensorStarts.filter { $0 >= 0 && $0 < size }).sorted()
        guard let first = starts.first else { return [.contentDefined(start: 0, end: size, cut: .metadata)] }
        var regions: [SegmentRegion] = [.contentDefined(start: 0, end: first, cut: .metadata)]
        for (index, start) in starts.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1] : size
            regions.append(.slices(start: start, end: end, slice: SegmentScheme.tensorSlice))
        }
        return regions
    }

    /// A stretch of a structured file cut by content: with the metadata parameters when
    /// shorter than `SegmentScheme.largeStretch`, else bulk; none when empty.
    static func byContent(_ start: Int64, _ end: Int64) -> [SegmentRegion] {
        guard end > start else { return [] }
        return [.contentDefined(start: start, end: end, cut: end - start < SegmentScheme.largeStretch ? .metadata : .bulk)]
    }
}
