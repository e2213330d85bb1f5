import Foundation
import ModelCastFormat

/// Cuts a byte stream into segments by its regions (`SegmentRegion`) and hashes each
/// segment, in the same read that hashes the whole file; bytes arrive in any chunking
/// and the cuts do not depend on it. Made with `hashing: false` it only cuts (`finishCuts`),
/// for a caller that already hashes the segments another way.
package final class SegmentHasher {
    private let regions: [SegmentRegion]
    private let hashing: Bool
    private var regionIndex = 0
    /// The offset of the next byte.
    private var position: Int64 = 0
    private var segmentStart: Int64 = 0
    private var rolling: UInt64 = 0
    private var hasher: SHA256Hasher?
    /// Each cut segment's length, and (when hashing) its SHA-256.
    private var lengths: [UInt32] = []
    private var digests: [[UInt8]] = []
    /// True while bytes of a segment not yet cut have arrived.
    private var open = false

    /// `regions` must tile the stream from 0, in order (empty ones are skipped).
    package init(regions: [SegmentRegion], hashing: Bool = true) {
        self.regions = regions.filter { $0.end > $0.start }
        self.hashing = hashing
    }

    package func update(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while !rest.isEmpty {
            guard regionIndex < regions.count else {
                throw ModelCastError.io(operation: "cut segments", path: "", reason: "the stream is longer than its regions (\(position) bytes)")
            }
            let region = regions[regionIndex]
            let (count, boundary) = scan(rest, in: region)
            if hashing {
                if hasher == nil { hasher = try SHA256Hasher() }
                hasher!.update(UnsafeRawBufferPointer(rebasing: rest[0..<count]))
            }
            open = true
            position += Int64(count)
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            if boundary {
                endSegment()
                segmentStart = position
                rolling = 0
                if position == region.end { regionIndex += 1 }
            }
        }
    }

    /// The segments, once every byte has arrived. A last region that ends at
    /// `Int64.max` (a stream whose length is not known ahead, such as a zip being
    /// written) ends where the bytes do.
    package func finish() throws -> [SegmentIndex.Segment] {
        precondition(hashing, "a SegmentHasher made with hashing: false only cuts")
        return zip(try finishCuts(), digests).map { SegmentIndex.Segment(length: $0, sha256: $1) }
    }

    /// The segments' lengths, once every byte has arrived (as `finish`).
    package func finishCuts() throws -> [UInt32] {
        if regionIndex == regions.count - 1, regions[regionIndex].end == .max {
            if open { endSegment() }
            regionIndex += 1
        }
        guard regionIndex == regions.count, !open else {
            throw ModelCastError.io(operation: "cut segments", path: "", reason: "the stream ended at \(position) bytes, before its regions did")
        }
        return lengths
    }

    private func endSegment() {
        lengths.append(UInt32(position - segmentStart))
        if hashing { digests.append(hasher?.finalize().bytes ?? []) }
        hasher = nil
        open = false
    }

    /// How many of `bytes` belong to the current segment, and whether it ends after them.
    private func scan(_ bytes: UnsafeRawBufferPointer, in region: SegmentRegion) -> (count: Int, boundary: Bool) {
        switch region {
        case .slices(let start, let end, let slice):
            let sliceEnd = min(end, start + ((segmentStart - start) / slice + 1) * slice)
            let count = Int(min(Int64(bytes.count), sliceEnd - position))
            return (count, position + Int64(count) == sliceEnd)
        case .contentDefined(_, let end, let cut):
            return cutContentDefined(bytes, end: end, cut: cut)
        }
    }

    /// The content-defined cut: a gear hash of each byte, a boundary where its low
    /// `maskBits` bits are zero once the segment holds `minimum` bytes, or at `maximum`.
    /// The hash at a byte depends on that byte and the 63 before it only (each step
    /// shifts it left by one), so bytes more than 64 before `minimum` are not hashed at
    /// all, and from the 64th byte of `bytes` on the cut is found from the bytes alone
    /// (`ContentDefinedCut.firstCandidate`, many positions at a time): the same cuts as
    /// testing every byte. The rolling state carries the hash across chunks.
    private func cutContentDefined(_ bytes: UnsafeRawBufferPointer, end: Int64, cut: ContentDefinedCut) -> (count: Int, boundary: Bool) {
        let available = Int(min(Int64(bytes.count), end - position))
        let done = position - segmentStart  // bytes of this segment before these; byte i makes it done + i + 1
        let stop = Int(min(Int64(available), cut.maximum - done))
        let firstChecked = Int(max(0, min(Int64(stop), cut.minimum - done - 1)))
        let window = ContentDefinedCut.window
        var found: Int?
        if firstChecked < window {
            // Tested bytes whose 64-byte window starts before `bytes`: one at a time, from the rolling state.
            let scalarStop = min(stop, window)
            let firstHashed = Int(max(0, min(Int64(firstChecked), cut.minimum - Int64(window) - done)))
            let mask = cut.mask
            var hash = firstHashed > 0 ? 0 : rolling
            ContentDefinedCut.gear.withUnsafeBufferPointer { gear in
                var index = firstHashed
                while index < firstChecked {
                    hash = (hash << 1) &+ gear[Int(bytes[index])]
                    index += 1
                }
                while index < scalarStop {
                    hash = (hash << 1) &+ gear[Int(bytes[index])]
                    index += 1
                    if hash & mask == 0 {
                        found = index
                        return
                    }
                }
            }
            rolling = hash
        }
        if found == nil, stop > max(firstChecked, window) {
            found = cut.firstCandidate(in: bytes, from: max(firstChecked, window), to: stop).map { $0 + 1 }
        }
        if found == nil, stop >= window {
            // The hash after the last byte, for the next chunk: its last 64 bytes decide it.
            rolling = ContentDefinedCut.windowHash(bytes, endingAt: stop - 1)
        }
        if found == nil, done + Int64(stop) == cut.maximum { found = stop }
        if let found { return (found, true) }
        return (available, position + Int64(available) == end)
    }
}
