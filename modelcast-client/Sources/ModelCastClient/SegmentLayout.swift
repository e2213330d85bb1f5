import Crypto
import Foundation
import ModelCastFormat

/// Where each segment of an index lives in its file, and the operations a segmented
/// build does segment by segment: prove, copy, find what a crashed build left in place,
/// hash the whole.
struct SegmentLayout: Sendable {
    let index: SegmentIndex
    /// Each segment's start.
    let offsets: [Int64]
    /// Segment number by start offset.
    private let numbers: [Int64: Int]

    /// The size of the reads that hash the whole file.
    static let readSize = 1 << 20

    init(index: SegmentIndex) {
        self.index = index
        offsets = index.offsets
        numbers = Dictionary(offsets.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func end(of segment: Int) -> Int64 { offsets[segment] + Int64(index.segments[segment].length) }

    /// True when `bytes` are segment `segment`'s.
    func proves(_ bytes: Data, segment: Int) -> Bool {
        bytes.count == Int(index.segments[segment].length) && Array(SHA256.hash(data: bytes)) == index.segments[segment].sha256
    }

    /// The segments a crashed build already wrote to `part`: only a part of the
    /// artifact's size can hold them, and each one counts only if its bytes hash right.
    func segmentsInPlace(_ part: PositionalFile) throws -> Set<Int> {
        guard try part.size() == index.artifactSize else { return [] }
        var kept = Set<Int>()
        for segment in index.segments.indices {
            let bytes = try part.read(count: Int(index.segments[segment].length), at: offsets[segment])
            if proves(bytes, segment: segment) { kept.insert(segment) }
        }
        return kept
    }

    /// Copies the segments starting at `offset` (in the new file) and covering `length`
    /// bytes from `source` in the installed file, each proven before it is written;
    /// segments in `skipping` are already in place.
    func copy(from input: any SeedBytes, source: Int64, to output: PositionalFile, offset: Int64, length: Int64, skipping: Set<Int>) throws {
        guard var segment = numbers[offset] else {
            throw ClientError.io(path: output.path, reason: "no segment starts at \(offset)")
        }
        var done: Int64 = 0
        while done < length {
            let size = Int64(index.segments[segment].length)
            if !skipping.contains(segment) {
                let bytes = try input.read(count: Int(size), at: source + done)
                guard bytes.count == Int(size) else {
                    throw ClientError.io(path: input.path, reason: "the installed file ended inside segment \(segment)")
                }
                guard proves(bytes, segment: segment) else {
                    throw ClientError.io(path: input.path, reason: "the installed file's bytes for segment \(segment) do not hash to the index's value")
                }
                try output.write(bytes, at: offsets[segment])
            }
            done += size
            segment += 1
        }
    }

    /// The parts of `run` not already in place, as runs of consecutive segments.
    func missing(_ run: Range<Int>, kept: Set<Int>) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start: Int?
        for segment in run {
            if kept.contains(segment) {
                if let first = start { runs.append(first..<segment) }
                start = nil
            } else if start == nil {
                start = segment
            }
        }
        if let first = start { runs.append(first..<run.upperBound) }
        return runs
    }

    /// The SHA-256 of the whole file at `file`, as built.
    func digest(of file: PositionalFile) throws -> [UInt8] {
        var whole = SHA256()
        var offset: Int64 = 0
        while offset < index.artifactSize {
            let count = Int(min(Int64(Self.readSize), index.artifactSize - offset))
            let bytes = try file.read(count: count, at: offset)
            guard bytes.count == count else { throw ClientError.io(path: file.path, reason: "the built file is shorter than \(index.artifactSize) bytes") }
            whole.update(data: bytes)
            offset += Int64(count)
        }
        return Array(whole.finalize())
    }
}

/// Collects one response's bytes into the segments it carries: each whole segment that
/// hashes right is written at its place; one that does not is noted, to be fetched again.
// @unchecked: mutable state fed by one response's data handler (the request runs its
// handlers one at a time) and read by the download only after that response ended.
final class SegmentReceiver: @unchecked Sendable {
    private let layout: SegmentLayout
    private let segments: Range<Int>
    private let output: PositionalFile
    private var current: Int
    private var buffer = Data()
    private var received: Int64 = 0
    private var failed: [Int] = []
    /// True once the server answered with the whole file: its bytes are written in order.
    private(set) var whole = false

    init(layout: SegmentLayout, segments: Range<Int>, output: PositionalFile) {
        self.layout = layout
        self.segments = segments
        self.output = output
        current = segments.lowerBound
    }

    /// The answer is the whole file, as stored (a server that ignores Range).
    func takeWholeFile() { whole = true }

    func receive(_ chunk: Data) throws {
        if whole {
            guard received + Int64(chunk.count) <= layout.index.artifactSize else { throw RangeRefused(reason: "a 200 body longer than the file") }
            try output.write(chunk, at: received)
            received += Int64(chunk.count)
            return
        }
        var rest = chunk[...]
        while !rest.isEmpty {
            guard current < segments.upperBound else { throw RangeRefused(reason: "more bytes than the range asked for") }
            let want = Int(layout.index.segments[current].length) - buffer.count
            let take = rest.prefix(want)
            buffer.append(take)
            received += Int64(take.count)
            rest = rest.dropFirst(take.count)
            if buffer.count == Int(layout.index.segments[current].length) {
                if layout.proves(buffer, segment: current) {
                    try output.write(buffer, at: layout.offsets[current])
                } else {
                    failed.append(current)
                }
                buffer = Data()
                current += 1
            }
        }
    }

    /// The bytes received and the segments that failed, once the response ended: every
    /// segment must have arrived.
    func finish() throws -> (Int64, [Int]) {
        if whole {
            guard received == layout.index.artifactSize else { throw RangeRefused(reason: "a 200 body of \(received) bytes, not the file's \(layout.index.artifactSize)") }
            return (received, [])
        }
        guard current == segments.upperBound else {
            throw RangeRefused(reason: "the response ended inside segment \(current)")
        }
        return (received, failed)
    }
}
