import Crypto
import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds a new version of a file from the old one and single-range requests, as a
/// `DeltaPlan` says: segments the old file holds are copied, the others fetched, one
/// request per run of them. Every segment is hashed before it is written, copies
/// included; one that fails is fetched once more on its own. The whole file must hash to
/// the index's SHA-256. A server that does not answer a range exactly (a 200, 416 or 501,
/// another Content-Range, an encoding) ends the build early, so the caller downloads the
/// file whole instead (and only then): the bytes spent on the failed build are one
/// response head.
struct SegmentedBuild: Sendable {
    let http: HTTPStream

    /// What the build did.
    enum Outcome: Equatable {
        case built(fetchedBytes: Int64, requests: Int)
        /// The server cannot serve the plan's ranges, or a segment failed twice: download whole.
        case fallBack(reason: String)
    }

    /// Writes the file `index` describes to `part` (replacing what is there) from `old`
    /// and `url`.
    func build(plan: DeltaPlan, index: SegmentIndex, url: URL, old: URL, part: URL) async throws -> Outcome {
        FileManager.default.createFile(atPath: part.path, contents: nil)
        guard let output = try? FileHandle(forWritingTo: part) else { throw ClientError.io(path: part.path, reason: "cannot open for writing") }
        defer { try? output.close() }
        guard let input = try? FileHandle(forReadingFrom: old) else { throw ClientError.io(path: old.path, reason: "cannot open for reading") }
        defer { try? input.close() }
        let assembly = Assembly(index: index, output: output)
        let offsets = index.offsets
        var fetched: Int64 = 0, requests = 0
        do {
            for step in plan.steps {
                switch step {
                case .copy(let source, _, let length):
                    try assembly.copy(from: input, at: old, offset: source, length: length)
                case .fetch(_, _, let segments):
                    var next = segments.lowerBound
                    var retried = Set<Int>()
                    while next < segments.upperBound {
                        requests += 1
                        do {
                            fetched += try await fetch(index: index, offsets: offsets, segments: next..<segments.upperBound, url: url, into: assembly)
                            next = segments.upperBound
                        } catch let failed as SegmentFailed {
                            fetched += failed.received
                            guard retried.insert(failed.segment).inserted else {
                                return .fallBack(reason: "segment \(failed.segment) failed its SHA-256 twice")
                            }
                            next = failed.segment
                        }
                    }
                }
            }
        } catch let refusal as RangeRefused {
            return .fallBack(reason: refusal.reason)
        }
        let digest = assembly.finish()
        guard digest == index.artifactSHA256 else {
            throw ClientError.io(path: part.path, reason: "the built file hashes to \(hex(digest)), not the index's \(hex(index.artifactSHA256))")
        }
        return .built(fetchedBytes: fetched, requests: requests)
    }

    /// Fetches the bytes of `segments` in one request, handing each whole segment to
    /// `assembly`; returns the body bytes received.
    private func fetch(index: SegmentIndex, offsets: [Int64], segments: Range<Int>, url: URL, into assembly: Assembly) async throws -> Int64 {
        let start = offsets[segments.lowerBound]
        let end = offsets[segments.upperBound - 1] + Int64(index.segments[segments.upperBound - 1].length)
        var request = URLRequest(url: url)
        request.setValue("bytes=\(start)-\(end - 1)", forHTTPHeaderField: "Range")
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let expected = "bytes \(start)-\(end - 1)/\(index.artifactSize)"
        let receiver = assembly.receiver(segments: segments)
        _ = try await http.get(request, onResponse: { response in
            guard response.statusCode == 206 else {
                throw RangeRefused(reason: "HTTP \(response.statusCode) to a Range request for \(expected)")
            }
            let range = response.value(forHTTPHeaderField: "Content-Range") ?? ""
            guard range == expected else { throw RangeRefused(reason: "Content-Range '\(range)', expected '\(expected)'") }
            let encoding = response.value(forHTTPHeaderField: "Content-Encoding") ?? "identity"
            guard encoding.lowercased() == "identity" else { throw RangeRefused(reason: "Content-Encoding \(encoding) on a range") }
        }, onData: { chunk in
            try receiver.receive(chunk)
        })
        return try receiver.finish()
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}

/// The server did not answer a range exactly: the build stops and the file is fetched whole.
struct RangeRefused: Error {
    let reason: String
}

/// A fetched segment's bytes did not hash to the index's value.
struct SegmentFailed: Error {
    let segment: Int
    let received: Int64
}

/// The new file, written segment by segment in order: a segment's bytes are held (at
/// most 16 MiB) until they hash to the index's value, then written and added to the
/// whole file's digest.
final class Assembly: @unchecked Sendable {
    private let index: SegmentIndex
    private let output: FileHandle
    private var whole = SHA256()
    private var nextSegment = 0

    init(index: SegmentIndex, output: FileHandle) {
        self.index = index
        self.output = output
    }

    /// Copies `length` bytes at `sourceOffset` of `input` (the installed file at `source`),
    /// whole segments, hashing each; bytes that no longer hash as indexed fail the build.
    func copy(from input: FileHandle, at source: URL, offset sourceOffset: Int64, length: Int64) throws {
        var read: Int64 = 0
        try input.seek(toOffset: UInt64(sourceOffset))
        while read < length {
            let segment = nextSegment
            let size = Int(index.segments[segment].length)
            guard let bytes = try input.read(upToCount: size), bytes.count == size else {
                throw ClientError.io(path: source.path, reason: "the installed file ended inside segment \(segment)")
            }
            guard accept(bytes, segment: segment) else {
                throw ClientError.io(path: source.path, reason: "the installed file's bytes for segment \(segment) do not hash to the index's value")
            }
            read += Int64(size)
        }
    }

    /// Takes a segment's bytes: written when they hash to the index's value.
    func accept(_ bytes: Data, segment: Int) -> Bool {
        guard Array(SHA256.hash(data: bytes)) == index.segments[segment].sha256 else { return false }
        output.write(bytes)
        whole.update(data: bytes)
        nextSegment = segment + 1
        return true
    }

    /// A receiver for one response carrying `segments`.
    func receiver(segments: Range<Int>) -> Receiver { Receiver(assembly: self, segments: segments, index: index) }

    func finish() -> [UInt8] { Array(whole.finalize()) }

    /// Collects a response's bytes into segments.
    final class Receiver: @unchecked Sendable {
        private let assembly: Assembly
        private let segments: Range<Int>
        private let index: SegmentIndex
        private var current: Int
        private var buffer = Data()
        private var received: Int64 = 0

        init(assembly: Assembly, segments: Range<Int>, index: SegmentIndex) {
            self.assembly = assembly
            self.segments = segments
            self.index = index
            self.current = segments.lowerBound
        }

        func receive(_ chunk: Data) throws {
            var rest = chunk[...]
            while !rest.isEmpty {
                guard current < segments.upperBound else { throw RangeRefused(reason: "more bytes than the range asked for") }
                let want = Int(index.segments[current].length) - buffer.count
                let take = rest.prefix(want)
                buffer.append(take)
                received += Int64(take.count)
                rest = rest.dropFirst(take.count)
                if buffer.count == Int(index.segments[current].length) {
                    guard assembly.accept(buffer, segment: current) else { throw SegmentFailed(segment: current, received: received) }
                    buffer = Data()
                    current += 1
                }
            }
        }

        /// The bytes received, once the response ended: every segment must have arrived.
        func finish() throws -> Int64 {
            guard current == segments.upperBound else {
                throw RangeRefused(reason: "the response ended inside segment \(current)")
            }
            return received
        }
    }
}
