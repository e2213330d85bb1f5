import Crypto
import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Progress of an update, as `ModelUpdater.progress` reports it.
public struct UpdateProgress: Sendable, Equatable {
    /// The file being downloaded (its name in the manifest).
    public let file: String
    /// Bytes of this update on disk so far (resumed bytes included) and in all.
    public let completedBytes: Int64
    public let totalBytes: Int64

    public init(file: String, completedBytes: Int64, totalBytes: Int64) {
        self.file = file
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
    }
}

/// Downloads one file of a release to `downloads/<sha256>`: streamed to disk with its
/// SHA-256 computed as it is written, never past the manifest's size, and resumed from
/// `downloads/<sha256>.part` after a dropped connection or an app restart (`Range` with
/// `If-Range`, the 206 checked against the offset and the size). Only a file whose
/// bytes hash to the manifest's SHA-256 becomes `downloads/<sha256>`.
///
/// A dropped connection, a server error and an attempt abandoned below the minimum rate
/// (`ClientError.tooSlow`) are tried again, resuming, `retries` times: a server that only
/// trickles costs a file (retries + 1) × `transferRateWindow` and the backoff (0.2 s, 0.4 s…),
/// and one that keeps above the rate delivers that much of the file each window.
///
/// With `BackgroundDownloads`, a file of at least its `minimumFileSize` is fetched by a
/// background download task instead (`Downloader+DownloadTask.swift`).
struct Downloader: Sendable {
    let directory: URL
    let retries: Int
    let http: HTTPStream
    /// The background session, and the size from which files go through it (nil: every file streams).
    var background: (session: BackgroundSession, minimumFileSize: Int64)? = nil

    /// True when `file` is fetched by a background download task rather than streamed.
    func usesDownloadTask(_ file: CheckedFile) -> Bool {
        guard let background else { return false }
        return file.size >= background.minimumFileSize
    }

    /// Bytes of `file` already on disk (complete or partial).
    func bytesOnDisk(_ file: CheckedFile) -> Int64 {
        let complete = path(file, suffix: "")
        if let size = fileSize(complete) { return size }
        // A download task starts from nothing or from the system's resume data, never from a part file.
        if usesDownloadTask(file) { return 0 }
        return min(fileSize(path(file, suffix: ".part")) ?? 0, file.size)
    }

    /// The proven file, downloading what is missing. `progress` gets the bytes on disk.
    func fetch(_ file: CheckedFile, model: ModelName, progress: @escaping @Sendable (Int64) -> Void) async throws -> URL {
        let complete = path(file, suffix: "")
        if fileSize(complete) == file.size, try hash(of: complete) == file.sha256.rawValue { return complete }
        // A wrong file that cannot go now makes the rename over it fail, with the reason.
        try? FileManager.default.removeItem(at: complete)
        if let background, usesDownloadTask(file) {
            return try await fetchWithDownloadTask(file, model: model, session: background.session, progress: progress)
        }
        var attempt = 0
        while true {
            try Task.checkCancellation()
            // Bytes kept from an earlier attempt or launch: if the whole fails its digest,
            // they may be what was wrong, so one more attempt starts from nothing.
            let hadPartial = (fileSize(path(file, suffix: ".part")) ?? 0) > 0
            do {
                return try await attemptDownload(file, model: model, progress: progress)
            } catch ClientError.hashMismatch where hadPartial && attempt < retries {
                attempt += 1
            } catch let error as ClientError where attempt < retries && (error.isRetriable || error.isTooSlow) {
                attempt += 1
                if case .badRangeResponse = error {
                    // The partial file cannot be continued: start it again. (Left there, the
                    // next attempt is refused the same way, and the retries end with this error.)
                    try? FileManager.default.removeItem(at: path(file, suffix: ".part"))
                    try? FileManager.default.removeItem(at: path(file, suffix: ".etag"))
                }
                try await Task.sleep(nanoseconds: UInt64(200_000_000 * attempt))
            }
        }
    }

    private func attemptDownload(_ file: CheckedFile, model: ModelName, progress: @escaping @Sendable (Int64) -> Void) async throws -> URL {
        let part = path(file, suffix: ".part")
        let validatorFile = path(file, suffix: ".etag")
        do { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) } catch { throw ClientError.io(directory, error) }
        if !FileManager.default.fileExists(atPath: part.path) { FileManager.default.createFile(atPath: part.path, contents: nil) }
        let handle: FileHandle
        do { handle = try FileHandle(forUpdating: part) } catch { throw ClientError.io(part, error) }
        defer { try? handle.close() }  // `finish` synchronizes before its rename: a failed close loses nothing
        do { return try await attemptDownload(file, model: model, handle: handle, part: part, validatorFile: validatorFile, progress: progress) } catch let error as ClientError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ClientError.io(part, error)
        }
    }

    private func attemptDownload(_ file: CheckedFile, model: ModelName, handle: FileHandle, part: URL, validatorFile: URL,
                                 progress: @escaping @Sendable (Int64) -> Void) async throws -> URL {
        var offset = Int64(try handle.seekToEnd())
        if offset > file.size {
            try handle.truncate(atOffset: 0)
            offset = 0
        }
        // The bytes already there are part of the digest: hash them first.
        let state = DownloadState(offset: offset)
        if offset > 0 {
            try handle.seek(toOffset: 0)
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { state.digest.update(chunk) }
        }
        if offset == file.size {
            // Every byte arrived before the app stopped (or was killed) short of the rename.
            return try finish(file, model: model, handle: handle, digest: state.digest.finalize())
        }
        // None kept: the resume goes without If-Range; bytes of a changed object then fail the
        // digest, and the next attempt starts over.
        let validator = offset > 0 ? (try? String(contentsOf: validatorFile, encoding: .utf8)) : nil
        let request = Self.request(for: file, from: offset, validator: validator)
        let url = file.url.rawValue, size = file.size
        do {
            try await receive(request, file: file, model: model, state: state, handle: handle, validatorFile: validatorFile, progress: progress)
        } catch {
            // Whatever arrived is kept for a resume (the session delivers nothing more once
            // the request has ended), if it can be: the error reported is the one that ended it.
            try? state.flush(to: handle)
            throw error
        }
        try state.flush(to: handle)
        progress(state.written)
        guard state.written == size else {
            throw ClientError.network(url: url, reason: "the body ended after \(state.written) of \(size) bytes")
        }
        return try finish(file, model: model, handle: handle, digest: state.digest.finalize())
    }

    /// Streams the answer to `request` into `state`: written in pieces of
    /// `DownloadState.flushSize` (the transport hands over chunks of 16–64 KiB, and one
    /// write and one progress event each would cost more than the transfer), each hashed
    /// once written, on the hash's own queue (`HashPipeline`). What is pending when it
    /// returns or throws is the caller's to flush.
    private func receive(_ request: URLRequest, file: CheckedFile, model: ModelName, state: DownloadState, handle: FileHandle, validatorFile: URL,
                         progress: @escaping @Sendable (Int64) -> Void) async throws {
        let size = file.size, name = file.name.rawValue, modelName = model.rawValue
        _ = try await http.get(request, metadata: false, onResponse: { response in
            try Self.accept(response, file: file, model: model, state: state, handle: handle, validatorFile: validatorFile)
        }, onData: { chunk in
            // Never past the promised size: more bytes are an error, not a longer file.
            guard state.written + Int64(chunk.count) <= size else {
                throw ClientError.sizeMismatch(model: modelName, file: name, expected: size, actual: state.written + Int64(chunk.count))
            }
            state.pending.append(chunk)
            state.written += Int64(chunk.count)
            if state.pending.count >= DownloadState.flushSize {
                try state.flush(to: handle)
                progress(state.written)
            }
        })
    }

    /// The GET for `file`: whole, or from `offset` on (with `If-Range`, so a changed object
    /// comes back whole), never re-encoded.
    static func request(for file: CheckedFile, from offset: Int64, validator: String?) -> URLRequest {
        var request = URLRequest(url: file.url.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if offset > 0 {
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            if let validator { request.setValue(validator, forHTTPHeaderField: "If-Range") }
        }
        return request
    }

    /// Takes the response's head: a 200 starts the file over (its length must be the
    /// file's), a 206 must continue exactly where the part file ends; anything else fails.
    /// Keeps the validator for the next resume.
    private static func accept(_ response: HTTPURLResponse, file: CheckedFile, model: ModelName, state: DownloadState, handle: FileHandle,
                               validatorFile: URL) throws {
        let url = file.url.rawValue, size = file.size
        switch response.statusCode {
        case 200:
            // The whole object (a first request, or the server would not resume): start over.
            if state.written > 0 {
                try handle.truncate(atOffset: 0)
                state.restart()
            }
            if let length = response.value(forHTTPHeaderField: "Content-Length").flatMap(Int64.init), length != size {
                throw ClientError.sizeMismatch(model: model.rawValue, file: file.name.rawValue, expected: size, actual: length)
            }
        case 206:
            let expected = "bytes \(state.written)-\(size - 1)/\(size)"
            guard state.written > 0, response.value(forHTTPHeaderField: "Content-Range") == expected else {
                throw ClientError.badRangeResponse(url: url, reason: "Content-Range '\(response.value(forHTTPHeaderField: "Content-Range") ?? "")', expected '\(expected)'")
            }
        case 416:
            throw ClientError.badRangeResponse(url: url, reason: "HTTP 416 for bytes \(state.written)- of \(size)")
        default:
            throw ClientError.http(url: url, status: response.statusCode)
        }
        try handle.seek(toOffset: UInt64(state.written))
        if let tag = response.value(forHTTPHeaderField: "ETag") ?? response.value(forHTTPHeaderField: "Last-Modified") {
            try? tag.write(to: validatorFile, atomically: true, encoding: .utf8)  // best effort: see `validator` above
        }
    }

    /// Proves the complete partial file by its digest and renames it into place; a wrong
    /// one is deleted (the next attempt starts over).
    private func finish(_ file: CheckedFile, model: ModelName, handle: FileHandle, digest: SHA256.Digest) throws -> URL {
        let part = path(file, suffix: ".part")
        let validatorFile = path(file, suffix: ".etag")
        try handle.synchronize()
        let actual = digest.map { String(format: "%02x", $0) }.joined()
        guard actual == file.sha256.rawValue else {
            // The mismatch is what is reported; a part left behind fails again at the next attempt.
            try? FileManager.default.removeItem(at: part)
            try? FileManager.default.removeItem(at: validatorFile)
            throw ClientError.hashMismatch(model: model.rawValue, file: file.name.rawValue, expected: file.sha256.rawValue, actual: actual)
        }
        let complete = path(file, suffix: "")
        try? FileManager.default.removeItem(at: complete)  // one that cannot go fails the move below, which says why
        do { try FileManager.default.moveItem(at: part, to: complete) } catch {
            throw ClientError.io(complete, error)
        }
        try? FileManager.default.removeItem(at: validatorFile)  // left behind, it can only make a resume start over (If-Range)
        return complete
    }

    /// Removes every download, finished or partial (once an update is installed), except
    /// those of the files `keeping` names: files of models the update left for a later
    /// call, whose partial downloads that call resumes.
    func removeAll(keeping: Set<SHA256Hex> = []) {
        // A tidy-up once the install holds: what cannot be listed or deleted now, the next
        // update's tidy-up deletes.
        guard !keeping.isEmpty else {
            try? FileManager.default.removeItem(at: directory)
            return
        }
        let kept = Set(keeping.map(\.rawValue))
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where !kept.contains(String(entry.prefix(64))) {
            // try?: as above, the next tidy-up deletes what cannot be deleted now.
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(entry))
        }
    }

    /// `downloads/<sha256><suffix>`: the digest is a `SHA256Hex`, 64 characters from [0-9a-f].
    func path(_ file: CheckedFile, suffix: String) -> URL {
        directory.appendingPathComponent(file.sha256.rawValue + suffix)
    }
}

/// The running state of one download (touched by the transport's callbacks, one at a time,
/// and by the download once the transfer is over).
// @unchecked: see above: one callback at a time, then the download, never both.
private final class DownloadState: @unchecked Sendable {
    /// Received bytes are written (then hashed) once this many are waiting: few system
    /// calls, and at most this much is fetched again after the app is killed mid-download.
    static let flushSize = 512 << 10

    /// The digest of the bytes written so far.
    private(set) var digest = HashPipeline()
    /// Bytes received, on disk or in `pending`.
    var written: Int64
    /// Received, not yet written nor hashed.
    var pending = Data()

    init(offset: Int64) {
        written = offset
        pending.reserveCapacity(Self.flushSize + (64 << 10))
    }

    /// Writes what is pending at the file handle's position, then hands it to the hash
    /// (a new buffer takes its place: the hash reads the old one meanwhile).
    func flush(to handle: FileHandle) throws {
        guard !pending.isEmpty else { return }
        try handle.write(contentsOf: pending)
        digest.update(pending)
        pending = Data()
        pending.reserveCapacity(Self.flushSize + (64 << 10))
    }

    func restart() {
        digest = HashPipeline()
        written = 0
        pending.removeAll(keepingCapacity: true)
    }
}

/// The size of the file at `url`; nil when there is none (or none the client can examine).
func fileSize(_ url: URL) -> Int64? {
    (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
}

/// SHA-256 of a file, lowercase hex, read in 1 MiB pieces.
func hash(of url: URL) throws -> String {
    let handle: FileHandle
    do { handle = try FileHandle(forReadingFrom: url) } catch { throw ClientError.io(url, error) }
    defer { try? handle.close() }  // read only: nothing to lose
    var hasher = SHA256()
    while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
    return hasher.finalize().map { String(format: "%02x", $0) }.joined()
}
