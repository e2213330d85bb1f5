import Crypto
import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads a file by its segments when the manifest names its segment index and an
/// older version of the same file is installed: the segments the installed file holds
/// are copied from it, only the others are fetched (`SegmentedBuild`). The new index is
/// proven against the manifest's SHA-256 before it is used; the installed file's index
/// (cached at its install) only says where to look, since every copied segment is hashed
/// against the new index. Anything short of a proven file ends in the plain download.
struct DeltaDownload: Sendable {
    let http: HTTPStream
    let downloads: URL

    /// The index of `file`, fetched and proven (its bytes and value), or nil when the
    /// manifest names none.
    func index(of file: CheckedFile, model: ModelName) async throws -> (bytes: Data, index: SegmentIndex)? {
        guard let reference = file.segments else { return nil }
        var request = URLRequest(url: reference.url.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let (response, data) = try await http.small(request, object: .segmentIndex, limit: Int(reference.size))
        let url = reference.url.rawValue
        guard response.statusCode == 200 else { throw ClientError.http(url: url, status: response.statusCode) }
        let digest = hex(Array(SHA256.hash(data: data)))
        guard Int64(data.count) == reference.size, digest == reference.sha256.rawValue else {
            throw ClientError.hashMismatch(model: model.rawValue, file: url, expected: reference.sha256.rawValue, actual: digest)
        }
        let index: SegmentIndex
        do { index = try SegmentIndex(decoding: [UInt8](data)) } catch {
            throw ClientError.invalidManifest(url: url, reason: "segment index: \(error)")
        }
        guard index.artifactSize == file.size, hex(index.artifactSHA256) == file.sha256.rawValue else {
            throw ClientError.invalidManifest(url: url, reason: "the segment index describes another file than \(file.name.rawValue)")
        }
        return (data, index)
    }

    /// `index(of:model:)`, or nil when the server cannot give it (an error status, a
    /// dropped connection, bytes that are not the index): the file is then downloaded
    /// whole. A body past the index's size, or one abandoned as too slow, is the server
    /// misbehaving, not missing an index: that error ends the update (as a cancel does).
    func indexIfServed(of file: CheckedFile, model: ModelName) async throws -> (bytes: Data, index: SegmentIndex)? {
        do {
            return try await index(of: file, model: model)
        } catch let error as ClientError {
            switch error {
            case .tooLarge, .tooSlow, .deadlineExceeded: throw error
            default: return nil
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return nil
        }
    }

    /// What a segmented build cost.
    struct Built {
        let url: URL
        /// Body bytes received, repairs included.
        let fetched: Int64
        let requests: Int
        /// True when the server sent the whole file for the first range (it ignores Range).
        let whole: Bool
    }

    /// Builds `file` at `downloads/<sha256>` from `seed` (the installed older version's
    /// bytes) and range requests; nil when the plan fetches most of
    /// the file or the server cannot serve it (the caller then downloads it whole). The
    /// part file (`<sha256>.delta`) survives a crash or a cancel, and the next build keeps
    /// its proven segments; any other end removes it.
    func build(_ file: CheckedFile, index: SegmentIndex, seed: SegmentSeed) async throws -> Built? {
        let plan = DeltaPlan(new: index, have: seed.have)
        guard !plan.prefersFullDownload else { return nil }
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        let part = downloads.appendingPathComponent(file.sha256.rawValue + ".delta")
        let outcome: SegmentedBuild.Outcome
        do {
            outcome = try await SegmentedBuild(http: http).build(plan: plan, index: index, url: file.url.url, old: seed.bytes, part: part)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // A network or disk failure mid-build: the plain download decides (and a part
            // that cannot be deleted only takes room until the tidy-up).
            try? FileManager.default.removeItem(at: part)
            return nil
        }
        let fetched: Int64, requests: Int
        switch outcome {
        case .built(let bytes, let count, _): (fetched, requests) = (bytes, count)
        case .whole(let bytes): (fetched, requests) = (bytes, 1)
        case .fallBack:
            try? FileManager.default.removeItem(at: part)  // as above
            return nil
        }
        let complete = downloads.appendingPathComponent(file.sha256.rawValue)
        try? FileManager.default.removeItem(at: complete)  // one that cannot go fails the move, which says why
        do { try FileManager.default.moveItem(at: part, to: complete) } catch { throw ClientError.io(complete, error) }
        if case .whole = outcome { return Built(url: complete, fetched: fetched, requests: requests, whole: true) }
        return Built(url: complete, fetched: fetched, requests: requests, whole: false)
    }
}
