import Foundation

/// A Core ML ML program's weight file (`weights/weight.bin`, MIL blob storage version 2),
/// read for cutting (`docs/segment-index.md`). Its layout, as coremltools writes it:
///
/// - a 64-byte storage header: u32 blob count, u32 version (2), zero padding;
/// - per blob, at a multiple of 64: a 64-byte metadata header (u32 sentinel 0xDEADBEEF,
///   u32 data type, u64 size in bytes, u64 offset of the data in the file, reserved
///   bytes), then the data at that offset; the next header follows the data, at the next
///   multiple of 64 (the last blob's data ends the file, unpadded).
///
/// Each blob's metadata header is a small region of its own and its data is cut into
/// slices counted from the data's start, like a GGUF tensor's: a header records its data's
/// absolute offset, so a blob that grows moves every later blob and rewrites every later
/// header, but leaves every later blob's slices as they were. (Slices counted from the
/// header would carry the moved offset in each later blob's first slice.) Values are read
/// defensively: the first header that is not a blob's stops the walk, and the rest of the
/// file is cut by content.
package enum MILWeightBlobs {
    static let headerSize: Int64 = 64
    static let sentinel: UInt32 = 0xDEAD_BEEF
    static let storageVersion: UInt32 = 2
    /// The most blobs one artifact is cut at, all its weight files together (a large
    /// language model has a few thousand); blobs past this many are cut by content, so a
    /// hostile file of empty blobs cannot make millions of regions.
    package static let maxBlobs = 65_536

    /// The regions of a weight file published on its own: its storage header, each blob's
    /// header and data, what follows the last blob. Nil when `bytes` is not a weight file (`isWeightFile`).
    package static func fileRegions(_ bytes: SegmentPlan.Bytes) -> [SegmentRegion]? {
        guard isWeightFile(bytes, at: 0, length: bytes.size) else { return nil }
        var budget = maxBlobs
        return [.contentDefined(start: 0, end: headerSize, cut: .metadata)] + blobRegions(bytes, at: 0, length: bytes.size, budget: &budget)
    }

    /// True when the `length` bytes at `start` begin with a storage header of version 2
    /// followed by a blob's metadata header (the sentinel at byte 64): at least 128 bytes.
    static func isWeightFile(_ bytes: SegmentPlan.Bytes, at start: Int64, length: Int64) -> Bool {
        guard length >= 2 * headerSize, let head = bytes.read(start, Int(2 * headerSize)) else { return false }
        return u32(head, 4) == storageVersion && u32(head, Int(headerSize)) == sentinel
    }

    /// The regions of the weight file of `length` bytes at `start`, after its storage
    /// header: per blob, its metadata header (to its data) by content, then its data as
    /// slices to the next blob's header (the last one's to the end of its data, padded to a
    /// multiple of 64 within the file); then what no blob accounts for, by content. They
    /// tile `start + 64 ..< start + length` (empty ones left out). `budget` counts down the
    /// blobs the artifact may still be cut at.
    static func blobRegions(_ bytes: SegmentPlan.Bytes, at start: Int64, length: Int64, budget: inout Int) -> [SegmentRegion] {
        let walk = blobs(bytes, at: start, length: length, budget: &budget)
        var regions: [SegmentRegion] = []
        for (index, blob) in walk.blobs.enumerated() {
            let end = index + 1 < walk.blobs.count ? walk.blobs[index + 1].header : walk.end
            regions += SegmentPlan.byContent(start + blob.header, start + blob.data)
            if end > blob.data { regions.append(.slices(start: start + blob.data, end: start + end, slice: SegmentScheme.tensorSlice)) }
        }
        return regions + SegmentPlan.byContent(start + walk.end, start + length)
    }

    /// Each blob's metadata header and data offsets (in the weight file, ascending), and where
    /// the last blob's region ends (64 when there is none). The walk stops at the storage
    /// header's count, at the budget, where no 64-byte header fits, and at the first header
    /// without the sentinel or whose data does not lie after it and inside the file.
    static func blobs(_ bytes: SegmentPlan.Bytes, at start: Int64, length: Int64, budget: inout Int) -> (blobs: [(header: Int64, data: Int64)], end: Int64) {
        guard let storage = bytes.read(start, Int(headerSize)) else { return ([], headerSize) }
        let count = Int(u32(storage, 0))
        var blobs: [(header: Int64, data: Int64)] = []
        var position = headerSize
        while blobs.count < count, budget > 0, position <= length - headerSize, let header = bytes.read(start + position, Int(headerSize)) {
            let size = u64(header, 8), offset = u64(header, 16)
            guard u32(header, 0) == sentinel, offset >= UInt64(position + headerSize), offset <= UInt64(length),
                  size <= UInt64(length) - offset else { break }
            blobs.append((position, Int64(offset)))
            budget -= 1
            // The data ends inside the file (checked above); the next header is at the next
            // multiple of 64, or the file ends first.
            let dataEnd = Int64(offset + size)
            let padded = dataEnd.addingReportingOverflow((headerSize - dataEnd % headerSize) % headerSize)
            position = padded.overflow ? length : min(length, padded.partialValue)
        }
        return (blobs, position)
    }

    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }

    static func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        UInt64(u32(bytes, at)) | UInt64(u32(bytes, at + 4)) << 32
    }
}
