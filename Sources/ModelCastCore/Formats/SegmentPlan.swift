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
    /// The regions of the file at `path`, `size` bytes long.
    package static func regions(path: String, size: Int64) throws -> [SegmentRegion] {
        if size >= 4, try prefix(path) == GGUFReader.magic, let summary = try? GGUFReader.read(path: path) {
            return gguf(tensorStarts: summary.tensorStarts.map { Int64($0) }, size: size)
        }
        return [.contentDefined(start: 0, end: size, cut: .bulk)]
    }

    /// A GGUF's regions, given where its tensors start.
    package static func gguf(tensorStarts: [Int64], size: Int64) -> [SegmentRegion] {
        let starts = tensorStarts.filter { $0 < size }
        guard let first = starts.first else { return [.contentDefined(start: 0, end: size, cut: .metadata)] }
        var regions: [SegmentRegion] = [.contentDefined(start: 0, end: first, cut: .metadata)]
        for (index, start) in starts.enumerated() {
            let end = index + 1 < starts.count ? starts[index + 1] : size
            regions.append(.slices(start: start, end: end, slice: SegmentScheme.tensorSlice))
        }
        return regions
    }

    private static func prefix(_ path: String) throws -> [UInt8] {
        let file = try FileDescriptor.openForReading(path)
        var bytes = [UInt8](repeating: 0, count: 4)
        let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0) }
        return Array(bytes.prefix(count))
    }
}
