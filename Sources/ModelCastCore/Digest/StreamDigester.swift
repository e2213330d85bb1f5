import Foundation
import ModelCastFormat
import NIOConcurrencyHelpers

/// The size and SHA-256 of a byte stream.
package struct DigestResult: Sendable, Equatable {
    /// Bytes seen.
    package let size: Int64
    /// SHA-256 of those bytes.
    package let sha256: SHA256Digest
    /// For a file: the file as it was when reading began (nil for a stream).
    package var source: FileSnapshot? = nil
    /// Each part's checksum, when a part size was asked for (same read as `sha256`).
    package var parts: PartDigests? = nil
    /// The segments the regions asked for cut the bytes into (same read as `sha256`).
    package var segments: [SegmentIndex.Segment]? = nil
    /// For a zip, when asked for (model signing): each file's SHA-256 by its archive name,
    /// made in the read that zipped it.
    package var entryDigests: [String: SHA256Digest]? = nil
}

/// The consumer ends of a `ChunkPipeline`: one hashes every chunk, one (when there is
/// a destination) writes it, one (with a part size) hashes it part by part, and one (with
/// segment regions) cuts and hashes its segments, each on its own thread, so the bytes
/// hashed are exactly the bytes written.
// @unchecked: the hasher (an OpenSSL context), the destination descriptor and the part
// hasher are each used by exactly one consumer thread of the pipeline, and `count` is
// read only after the pipeline has finished (its threads joined).
final class DigestingWriter: @unchecked Sendable {
    private let hasher: SHA256Hasher
    private let destination: FileDescriptor?
    private let progress: ProgressReporter?
    private let partHasher: PartHasher?
    private let segmentHasher: SegmentHasher?
    private(set) var count: Int64 = 0

    init(destination: FileDescriptor?, progress: ProgressReporter?, parts: PartPlan? = nil, regions: [SegmentRegion]? = nil) throws {
        self.hasher = try SHA256Hasher()
        self.destination = destination
        self.progress = progress
        self.partHasher = parts.map(PartHasher.init)
        self.segmentHasher = regions.map { SegmentHasher(regions: $0) }
    }

    /// Each consumer of a chunk: hash, write, part checksums, segments.
    private func makeConsumers() -> [ChunkPipeline.Consumer] {
        var consumers: [ChunkPipeline.Consumer] = [{ [self] chunk in
            hasher.update(chunk)
            count += Int64(chunk.count)
            progress?.advance(by: chunk.count)
        }]
        if let destination {
            consumers.append { chunk in try destination.writeAll(chunk) }
        }
        if let partHasher {
            consumers.append { chunk in try partHasher.update(chunk) }
        }
        if let segmentHasher {
            consumers.append { chunk in try segmentHasher.update(chunk) }
        }
        return consumers
    }

    /// A pipeline feeding this writer's consumers, through buffers of `bufferSize` bytes.
    func makePipeline(bufferSize: Int = ChunkPipeline.defaultBufferSize) -> ChunkPipeline {
        ChunkPipeline(bufferSize: bufferSize, consumers: makeConsumers())
    }

    /// The consumers run one after another on the calling thread.
    func makeInlineConsumer() -> ChunkPipeline.Consumer {
        let consumers = makeConsumers()
        return { chunk in for consume in consumers { try consume(chunk) } }
    }

    /// Call after the pipeline has finished.
    func result() throws -> DigestResult {
        DigestResult(size: count, sha256: hasher.finalize(), parts: partHasher?.finish(), segments: try segmentHasher?.finish())
    }
}

/// Hashes files in one read pass, optionally copying them at the same time.
package enum StreamDigester {
    /// Files up to this size are hashed on the calling thread when it lends a buffer.
    static let inlineLimit: Int64 = 8 << 20

    /// Reads the regular file at `path` once, hashing it (and writing it to `copy`
    /// when given, and checksumming each part `parts` cuts when
    /// given) on other threads. With `scratch`, a file of at most `inlineLimit` bytes is
    /// read through that buffer and hashed on the calling thread instead: no threads or
    /// buffers made per file, for a caller that hashes many small files, one per core.
    /// Fails if the file's size changes meanwhile.
    static func digestFile(
        at path: String,
        copyingTo copy: FileDescriptor? = nil,
        progress: ProgressReporter? = nil,
        parts: PartPlan? = nil,
        regions: [SegmentRegion]? = nil,
        bufferSize: Int = ChunkPipeline.defaultBufferSize,
        scratch: UnsafeMutableRawBufferPointer? = nil
    ) throws -> DigestResult {
        let input = try FileDescriptor.openForReading(path)
        let info = try input.status()
        guard case .regular = FileType(mode: info.st_mode) else {
            throw ModelCastError.unreadable(path: path, reason: "not a regular file")
        }
        let expected = Int64(info.st_size)
        Platform.adviseSequential(input.fd)

        let writer = try DigestingWriter(destination: copy, progress: progress, parts: parts, regions: regions)
        var total: Int64 = 0
        if let scratch, expected <= inlineLimit {
            // A small file: read, hash and write on this thread, through the caller's buffer.
            let consume = writer.makeInlineConsumer()
            while true {
                let n = try input.read(into: scratch)
                if n == 0 { break }
                total += Int64(n)
                try consume(UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
            }
        } else {
            let pipeline = writer.makePipeline(bufferSize: bufferSize)
            defer { pipeline.close() }
            while true {
                let n = try pipeline.fill { try input.read(into: $0) }
                if n == 0 { break }
                total += Int64(n)
            }
            try pipeline.finish()
        }
        guard total == expected else {
            throw ModelCastError.changedWhilePacking(path: path, expected: expected, actual: total)
        }
        var result = try writer.result()
        result.source = FileSnapshot(info)
        return result
    }

    /// The size and SHA-256 of the file at `path` (one streaming read, flat memory).
    package static func digest(ofFileAt path: String, progress: ProgressReporter? = nil) throws -> DigestResult {
        try digestFile(at: path, copyingTo: nil, progress: progress)
    }

    /// The segment index of the file at `path` cut by `regions`, with its size and
    /// SHA-256, in one read.
    package static func segmentIndex(ofFileAt path: String, regions: [SegmentRegion]) throws -> SegmentIndex {
        let result = try digestFile(at: path, regions: regions)
        return try SegmentIndex(scheme: SegmentScheme.name, artifactSize: result.size, artifactSHA256: result.sha256.bytes, segments: result.segments ?? [])
    }

    /// Digests several files concurrently, one per core, in the order given.
    package static func digest(ofFilesAt paths: [String]) throws -> [DigestResult] {
        let results = ResultBox<DigestResult>(count: paths.count)
        DispatchQueue.concurrentPerform(iterations: paths.count) { index in
            results.set(index, Result { try digest(ofFileAt: paths[index]) })
        }
        return try results.values.map { try $0!.get() }
    }
}

/// Collects results written from concurrent iterations or tasks.
final class ResultBox<Value: Sendable>: Sendable {
    private let results: NIOLockedValueBox<[Result<Value, Error>?]>

    init(count: Int) { results = NIOLockedValueBox(Array(repeating: nil, count: count)) }

    /// The results so far, in index order (nil where none was set).
    var values: [Result<Value, Error>?] { results.withLockedValue { $0 } }

    func set(_ index: Int, _ value: Result<Value, Error>) {
        results.withLockedValue { $0[index] = value }
    }
}
