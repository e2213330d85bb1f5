import Foundation

/// How to build a new version of an artifact from bytes a device already holds: the
/// segments of the new index (`SegmentIndex`) whose hash the old file has are copied
/// from it, the others fetched, consecutive ones in one single-range request. The same
/// plan gives the publish report's "what a device updating from the live release would
/// fetch" and the client's download.
public struct DeltaPlan: Equatable, Sendable {
    /// One step, in the new file's order.
    public enum Step: Equatable, Sendable {
        /// Copy `length` bytes at `source` in the old file to `offset` in the new one.
        case copy(source: Int64, offset: Int64, length: Int64)
        /// Fetch bytes `offset..<offset+length` of the new file in one request; they are
        /// the new index's `segments` (each hashed as it lands).
        case fetch(offset: Int64, length: Int64, segments: Range<Int>)
    }

    public let steps: [Step]
    /// The new artifact's size.
    public let size: Int64

    /// Bytes to download.
    public var fetchedBytes: Int64 {
        steps.reduce(0) { total, step in if case .fetch(_, let length, _) = step { return total + length } else { return total } }
    }
    /// Bytes copied from the old file.
    public var copiedBytes: Int64 { size - fetchedBytes }
    /// Range requests the plan makes.
    public var requests: Int { steps.filter { if case .fetch = $0 { return true } else { return false } }.count }

    /// Above this share of the file fetched, one plain download is cheaper and simpler.
    public static let fallbackShare = 0.70

    /// True when the plan fetches so much of the file (more than `fallbackShare`) that a
    /// device should download it whole instead.
    public var prefersFullDownload: Bool { size > 0 && Double(fetchedBytes) > Self.fallbackShare * Double(size) }

    /// The plan for `new` given the segments the old file holds: `have` maps a segment's
    /// SHA-256 to where those bytes start in the old file (each proven by hashing the
    /// old file's bytes, never taken from a server).
    public init(new: SegmentIndex, have: [[UInt8]: Int64]) {
        var steps: [Step] = []
        var offset: Int64 = 0
        for (index, segment) in new.segments.enumerated() {
            let length = Int64(segment.length)
            if let source = have[segment.sha256] {
                if case .copy(let lastSource, let lastOffset, let lastLength)? = steps.last, lastSource + lastLength == source {
                    steps[steps.count - 1] = .copy(source: lastSource, offset: lastOffset, length: lastLength + length)
                } else {
                    steps.append(.copy(source: source, offset: offset, length: length))
                }
            } else if case .fetch(let lastOffset, let lastLength, let segments)? = steps.last {
                steps[steps.count - 1] = .fetch(offset: lastOffset, length: lastLength + length, segments: segments.lowerBound..<index + 1)
            } else {
                steps.append(.fetch(offset: offset, length: length, segments: index..<index + 1))
            }
            offset += length
        }
        self.steps = steps
        self.size = new.artifactSize
    }

    /// Where each segment of `index` starts in its file, by SHA-256 (the first when two
    /// segments have the same bytes): the `have` of a plan from a file with this index.
    public static func offsets(of index: SegmentIndex) -> [[UInt8]: Int64] {
        var have: [[UInt8]: Int64] = [:]
        for (segment, offset) in zip(index.segments, index.offsets) where have[segment.sha256] == nil {
            have[segment.sha256] = offset
        }
        return have
    }
}
