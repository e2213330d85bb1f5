import Foundation

/// The regions a file is cut into for its segment index (`modelcast-segments-1`), read
/// from the file's own structure:
///
/// - a GGUF: everything before the first tensor (header, metadata, tokenizer, chat
///   template, tensor records, alignment padding) is cut by content (`metadata`); each
///   tensor's data, up to the next tensor's start (or the file's end), is cut into 1 MiB
///   slices counted from the tensor's start, so a grown header shifts no slice's bytes;
/// - anything else: cut by content (`bulk`).
package enum SegmentPlan {
    /// The regions of the file at `path`, `size` bytes long. The header is read again
    /// here rather than taken from `describe`: the cuts must follow the bytes being cut,
    /// so that cutting the stored artifact later (verify) gives the same index. A file
    /// that is not a readable GGUF (the reader stops at a wrong magic) is cut by content.
    package static func regions(path: String, size: Int64) -> [SegmentRegion] {
        if let summary = try? GGUFReader.read(path: path) {
            return gguf(tensorStarts: summary.tensorStarts.map { Int64($0) }, size: size)
        }
        return [.contentDefined(start: 0, end: size, cut: .bulk)]
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
}
