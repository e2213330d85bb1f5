import Foundation
import ModelCastFormat

extension Downloader {
    /// The proven file, fetched by a background download task (`BackgroundDownloads`).
    /// A file the system delivered while no update waited (`<sha256>.task`: the app was
    /// suspended or relaunched) is proven first and used if it passes. Otherwise a task
    /// downloads the file — continuing from the system's resume data where an earlier
    /// attempt left some — and its file, once delivered, is proven from the disk (size,
    /// then SHA-256) before it takes the name `downloads/<sha256>`. A dropped connection and
    /// a server error are tried again `retries` times; a file of the wrong size or digest
    /// is not (it is what the server holds), and nothing of it is kept.
    func fetchWithDownloadTask(_ file: CheckedFile, model: ModelName, session: BackgroundSession,
                               progress: @escaping @Sendable (Int64) -> Void) async throws -> URL {
        let complete = path(file, suffix: "")
        // A partial file of the streaming path cannot be continued by a download task (one
        // that cannot be deleted now only takes room until the tidy-up).
        try? FileManager.default.removeItem(at: path(file, suffix: ".part"))
        try? FileManager.default.removeItem(at: path(file, suffix: ".etag"))
        let staged = session.staged(file.sha256)
        // A delivered file that fails its proof is deleted by it, and the file downloaded.
        if FileManager.default.fileExists(atPath: staged.path),
           let proven = try? DownloadedFileCheck.prove(staged, as: file, model: model, into: complete) {
            progress(file.size)
            return proven
        }
        do { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) } catch { throw ClientError.io(directory, error) }
        let request = UnmeteredOnly.applied(to: Self.request(for: file, from: 0, validator: nil))
        var attempt = 0
        while true {
            try Task.checkCancellation()
            do {
                let delivered = try await session.download(file, model: model, request: request, progress: progress)
                let proven = try DownloadedFileCheck.prove(delivered, as: file, model: model, into: complete)
                progress(file.size)
                return proven
            } catch let error as ClientError where attempt < retries && error.isRetriable {
                attempt += 1
                try await Task.sleep(nanoseconds: UInt64(200_000_000 * attempt))
            }
        }
    }
}
