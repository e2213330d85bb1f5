import Foundation

/// A stored zip as `ZipWriter` will write it, laid out before any file is read: every
/// record (local headers, data descriptors, central directory, end records) at its offset,
/// made by the writer itself with each CRC-32 0, and each file's data where it will be,
/// read from the file only where asked. `SegmentPlan` cuts it as it cuts the written zip
/// (nothing it reads is a CRC), so a zip's segments are cut and hashed in the read that
/// writes it rather than in a second read of the written zip.
///
/// The plan reads a few data bytes (a file's first 128, a weight file's blob headers);
/// the write checks (`check`) that each file still holds those bytes as it is zipped, so
/// the cuts always follow the bytes the zip holds. A deflated entry's size is known only
/// once it is written: such a zip cannot be laid out ahead.
final class ZipLayoutImage {
    /// A stretch of the zip: bytes the writer made, or an entry's data.
    private enum Content {
        case record([UInt8])
        case data(entry: Int)
    }

    private struct Piece {
        let offset: Int64
        let length: Int64
        let content: Content
    }

    /// The zip's pieces in order, tiling 0 to `size`.
    private var pieces: [Piece] = []
    private let entries: [TreeEntry]
    /// The zip's size once written.
    private(set) var size: Int64 = 0
    /// Data bytes the plan read, by entry: where in the file, and what they were.
    private var seen: [Int: [(offset: Int64, bytes: [UInt8])]] = [:]
    /// The file last read from, kept open for the plan's next reads (most are in one file).
    private var open: (entry: Int, file: FileDescriptor)?

    /// Lays out the stored zip of `entries` (in the order it writes them), naming
    /// `displayPath` in errors as the writer does.
    init(entries: [TreeEntry], displayPath: String) throws {
        self.entries = entries
        var pieces: [Piece] = []
        var position: Int64 = 0
        let writer = try ZipWriter(compression: .store, displayPath: displayPath) { bytes in
            pieces.append(Piece(offset: position, length: Int64(bytes.count), content: .record(Array(bytes))))
            position += Int64(bytes.count)
        }
        for (index, entry) in entries.enumerated() {
            if entry.isDirectory {
                try writer.addDirectory(name: entry.archiveName)
                continue
            }
            try writer.skipFile(name: entry.archiveName, size: entry.size, executable: entry.isExecutable) { length in
                if length > 0 { pieces.append(Piece(offset: position, length: length, content: .data(entry: index))) }
                position += length
            }
        }
        try writer.finish()
        self.pieces = pieces
        size = position
    }

    /// The regions `SegmentPlan` cuts the zip into (`ZipSegmentPlan`), as it would cut the
    /// written zip. The records are let go of afterwards; what the plan read of the files
    /// is kept for `check`.
    func regions() -> [SegmentRegion] {
        let regions = SegmentPlan.regions(of: SegmentPlan.Bytes(size: size) { offset, count in try self.read(offset, count) })
        pieces = []
        open = nil
        return regions
    }

    /// Fails when the bytes entry `entry` gave at `offset` of its file, as it was zipped,
    /// differ from the ones the plan read there: the file changed since, and the cuts
    /// would not be the zip's.
    func check(entry: Int, at offset: Int64, _ bytes: UnsafeRawBufferPointer) throws {
        guard let reads = seen[entry] else { return }
        let end = offset + Int64(bytes.count)
        for read in reads where read.offset < end && read.offset + Int64(read.bytes.count) > offset {
            let from = max(offset, read.offset), to = min(end, read.offset + Int64(read.bytes.count))
            for position in from..<to where bytes[Int(position - offset)] != read.bytes[Int(position - read.offset)] {
                throw ModelCastError.io(operation: "pack", path: entries[entry].diskPath,
                                        reason: "the file changed while it was packed: its byte at offset \(position) is not the one read to plan the zip's segments")
            }
        }
    }

    /// Up to `count` bytes of the zip at `offset` (fewer only at its end, or where a file
    /// is shorter now than when it was listed: then the zip's write fails anyway).
    private func read(_ offset: Int64, _ count: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        var position = offset
        let end = min(size, offset + Int64(count))
        var index = pieceIndex(containing: position)
        while position < end, index < pieces.count {
            let piece = pieces[index]
            let take = Int(min(end, piece.offset + piece.length) - position)
            let within = position - piece.offset
            switch piece.content {
            case .record(let bytes):
                out += bytes[Int(within)..<Int(within) + take]
            case .data(let entry):
                let bytes = try file(entry).read(at: within, count: take)
                seen[entry, default: []].append((within, bytes))
                out += bytes
                if bytes.count < take { return out }
            }
            position += Int64(take)
            index += 1
        }
        return out
    }

    /// The index of the piece holding byte `offset` (`pieces.count` past the end).
    private func pieceIndex(containing offset: Int64) -> Int {
        var (low, high) = (0, pieces.count)
        while low < high {
            let middle = (low + high) / 2
            if pieces[middle].offset + pieces[middle].length <= offset { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func file(_ entry: Int) throws -> FileDescriptor {
        if let open, open.entry == entry { return open.file }
        let file = try FileDescriptor.openForReading(entries[entry].diskPath)
        open = (entry, file)
        return file
    }
}
