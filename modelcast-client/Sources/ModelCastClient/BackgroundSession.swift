import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `URLSession` of `BackgroundDownloads`: download tasks whose files the system writes
/// (out of the app's process on Apple platforms, so a transfer goes on while the app is
/// suspended, and a relaunched app is handed what finished meanwhile).
///
/// A finished task's file is moved, within the delegate call (the system deletes it
/// after), to `downloads/<sha256>.task`: a name the installer never takes. Only
/// `DownloadedFileCheck` gives it its place, once its size and SHA-256, read from the
/// disk, are the manifest's. A task that finishes while no update waits for it (the app
/// was suspended or relaunched) leaves its file there for the next update to prove.
///
/// One session per identifier in a process (the system allows no more): `session(…)`
/// hands every updater of a directory the same one, and it lives as long as the process.
// @unchecked: an NSObject delegate; its tables and the events handler are touched only
// under `lock`, and `session` is set once, in init, before any delegate call can arrive.
final class BackgroundSession: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    let identifier: String
    /// The client's `downloads/` directory.
    let downloads: URL
    private let idleTimeout: TimeInterval
    private let lock = NSLock()
    /// The transfers an update waits for, by their task's identifier.
    private var transfers: [Int: BackgroundTransfer] = [:]
    /// What the app forwarded from `handleEventsForBackgroundURLSession`, called once the
    /// session has delivered every event.
    private var eventsHandled: EventsHandler?
    /// The session itself (tests start a task no update waits for, as a relaunched app has).
    private(set) var session: URLSession!

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [String: BackgroundSession] = [:]

    /// The session for `settings.identifier`, created on first use; refuses an identifier
    /// another directory's updater uses (`ClientError.configuration`).
    static func session(_ settings: BackgroundDownloads, downloads: URL, timeout: TimeInterval, base: URLSessionConfiguration?) throws -> BackgroundSession {
        registryLock.lock()
        defer { registryLock.unlock() }
        if let existing = registry[settings.identifier] {
            guard existing.downloads.standardizedFileURL.path == downloads.standardizedFileURL.path else {
                throw ClientError.configuration(reason: "backgroundDownloads.identifier \(quotedValue(settings.identifier)) is the session of another client directory (\(quotedValue(existing.downloads.deletingLastPathComponent().path))): give each directory its own")
            }
            return existing
        }
        let created = BackgroundSession(settings, downloads: downloads, timeout: timeout, base: base)
        registry[settings.identifier] = created
        return created
    }

    private init(_ settings: BackgroundDownloads, downloads: URL, timeout: TimeInterval, base: URLSessionConfiguration?) {
        identifier = settings.identifier
        self.downloads = downloads
        idleTimeout = timeout
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1  // every callback in order, one at a time
        session = URLSession(configuration: Self.configuration(settings, timeout: timeout, base: base), delegate: self, delegateQueue: queue)
    }

    /// A background configuration with the app's network policy (cellular, expensive and
    /// constrained networks, extra headers) and no cache: the client proves every byte.
    private static func configuration(_ settings: BackgroundDownloads, timeout: TimeInterval, base: URLSessionConfiguration?) -> URLSessionConfiguration {
        #if canImport(FoundationNetworking)
        // swift-corelibs-foundation has no background sessions (`background(withIdentifier:)`
        // traps): only the tests make this session there (`BackgroundDownloads.hasSession`),
        // and the same download tasks run in the process.
        let configuration = URLSessionConfiguration.default
        #else
        let configuration = settings.inProcess ? URLSessionConfiguration.default : URLSessionConfiguration.background(withIdentifier: settings.identifier)
        if !settings.inProcess {
            configuration.isDiscretionary = settings.isDiscretionary
            configuration.sessionSendsLaunchEvents = true
        }
        if let base {
            configuration.allowsExpensiveNetworkAccess = base.allowsExpensiveNetworkAccess
            configuration.allowsConstrainedNetworkAccess = base.allowsConstrainedNetworkAccess
        }
        #endif
        if let base {
            configuration.allowsCellularAccess = base.allowsCellularAccess
            configuration.httpAdditionalHeaders = base.httpAdditionalHeaders
        }
        configuration.timeoutIntervalForRequest = timeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        return configuration
    }

    /// Where a finished task's file waits, unproven, for `DownloadedFileCheck`.
    func staged(_ sha256: SHA256Hex) -> URL { downloads.appendingPathComponent(sha256.rawValue + ".task") }
    /// The system's resume data of an interrupted transfer (Apple platforms).
    func resumeFile(_ sha256: SHA256Hex) -> URL { downloads.appendingPathComponent(sha256.rawValue + ".resume") }

    /// What marks a task as this file's, across launches (the system keeps it).
    static func taskDescription(_ sha256: SHA256Hex) -> String { "modelcast-download " + sha256.rawValue }

    /// The file a task's description names, parsed (nil for any other description).
    static func file(ofTaskDescription description: String?) -> SHA256Hex? {
        guard let description, description.hasPrefix("modelcast-download ") else { return nil }
        return try? SHA256Hex(String(description.dropFirst("modelcast-download ".count)))  // else no task of the client's
    }

    /// Downloads `file` with a download task and returns its unproven file (`staged`):
    /// from `resumeData` when there is some, else with `request`. A task of an earlier
    /// launch still running for the file is stopped first and continued from its resume
    /// data, so one file never has two transfers. A body longer than the file's size is
    /// refused as soon as the session reports it (`sizeMismatch`; while the app is
    /// suspended the system reports nothing, and `DownloadedFileCheck` refuses it by its
    /// size). Cancelling the calling task cancels the transfer and keeps its resume data.
    func download(_ file: CheckedFile, model: ModelName, request: URLRequest, progress: @escaping @Sendable (Int64) -> Void) async throws -> URL {
        try Task.checkCancellation()
        var resumeData = takeResumeData(file.sha256)
        if let earlier = await stopEarlierTasks(of: file.sha256) { resumeData = earlier }
        let task: URLSessionDownloadTask
        #if canImport(FoundationNetworking)
        _ = resumeData  // swift-corelibs-foundation makes none, and cannot resume from any
        task = session.downloadTask(with: request)
        #else
        task = resumeData.map { session.downloadTask(withResumeData: $0) } ?? session.downloadTask(with: request)
        #endif
        task.taskDescription = Self.taskDescription(file.sha256)
        let transfer = BackgroundTransfer(file: file, model: model, url: file.url.rawValue, progress: progress)
        register(task, transfer)
        let resumeFile = self.resumeFile(file.sha256)
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let started = transfer.start(continuation, stop: { keepResumeData in
                        Self.stop(task, keepingResumeDataIn: keepResumeData ? resumeFile : nil)
                    })
                    if started { task.resume() } else { Self.stop(task, keepingResumeDataIn: resumeFile) }
                }
            } onCancel: {
                transfer.fail(CancellationError(), keepResumeData: true)
            }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
    }

    /// Ends a task: with its resume data kept in `resumeFile` (a cancellation), or without
    /// (a refusal: such a transfer must not go on). Off the calling thread: on Linux a
    /// cancel waits for the session's work queue.
    private static func stop(_ task: URLSessionDownloadTask, keepingResumeDataIn resumeFile: URL?) {
        DispatchQueue.global().async {
            guard let resumeFile else { return task.cancel() }
            task.cancel(byProducingResumeData: { data in
                // Best effort: without resume data the next attempt starts over.
                if let data { try? data.write(to: resumeFile, options: .atomic) }
            })
        }
    }

    /// The resume data kept for `sha256`, removed (it is good for one attempt).
    private func takeResumeData(_ sha256: SHA256Hex) -> Data? {
        let path = resumeFile(sha256)
        // Good for one attempt either way: none (or unreadable) starts the download over.
        defer { try? FileManager.default.removeItem(at: path) }
        return try? Data(contentsOf: path)
    }

    /// Cancels the tasks still running for `sha256` (started by an earlier launch, or by
    /// an update that was cancelled), returning the resume data of the last one.
    private func stopEarlierTasks(of sha256: SHA256Hex) async -> Data? {
        let description = Self.taskDescription(sha256)
        let tasks: [URLSessionDownloadTask] = await withCheckedContinuation { continuation in
            session.getTasksWithCompletionHandler { _, _, downloads in
                continuation.resume(returning: downloads.filter { $0.taskDescription == description && $0.state != .completed })
            }
        }
        var resumeData: Data?
        for task in tasks {
            resumeData = await withCheckedContinuation { continuation in
                task.cancel(byProducingResumeData: { continuation.resume(returning: $0) })
            }
        }
        return resumeData
    }

    /// Takes what the app forwarded from `handleEventsForBackgroundURLSession`; called
    /// once the session has delivered every event.
    func handleEvents(completionHandler: @escaping () -> Void) {
        lock.lock()
        eventsHandled = EventsHandler(call: completionHandler)
        lock.unlock()
    }

    private func register(_ task: URLSessionTask, _ transfer: BackgroundTransfer) {
        lock.lock()
        defer { lock.unlock() }
        transfers[task.taskIdentifier] = transfer
    }

    private func transfer(_ task: URLSessionTask) -> BackgroundTransfer? {
        lock.lock()
        defer { lock.unlock() }
        return transfers[task.taskIdentifier]
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
                    totalBytesExpectedToWrite: Int64) {
        transfer(downloadTask)?.wrote(totalBytesWritten, expected: totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let status = (downloadTask.response as? HTTPURLResponse)?.statusCode
        guard let sha256 = Self.file(ofTaskDescription: downloadTask.taskDescription) else { return }
        let transfer = self.transfer(downloadTask)
        // An error page, or a transfer already refused or cancelled: its bytes are no download.
        // (206: a task continued from resume data; the system has put the whole file together.)
        let whole = status == 200 || status == 206
        guard whole, transfer?.isOpen ?? true else {
            if let status, !whole { transfer?.fail(ClientError.http(url: transfer?.url ?? "", status: status), keepResumeData: false) }
            // The system's temporary file, which it removes itself after this call anyway.
            try? FileManager.default.removeItem(at: location)
            return
        }
        let staged = self.staged(sha256)
        do {
            try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: staged)  // one that cannot go fails the move, which says why
            try FileManager.default.moveItem(at: location, to: staged)
            transfer?.delivered(staged)
        } catch {
            try? FileManager.default.removeItem(at: location)  // as above: the system's temporary file
            transfer?.fail(ClientError.io(staged, error), keepResumeData: false)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        lock.lock()
        let transfer = transfers.removeValue(forKey: task.taskIdentifier)
        lock.unlock()
        #if canImport(FoundationNetworking)
        let resumeDataKey = URLSessionDownloadTaskResumeData
        #else
        let resumeDataKey = NSURLSessionDownloadTaskResumeData
        #endif
        if let data = (error as NSError?)?.userInfo[resumeDataKey] as? Data, let sha256 = Self.file(ofTaskDescription: task.taskDescription) {
            try? data.write(to: resumeFile(sha256), options: .atomic)  // best effort: without it the next attempt starts over
        }
        transfer?.complete(error, idleTimeout: idleTimeout)
    }

    /// Every event of the session was delivered (a relaunched app's too): the app's
    /// completion handler runs, on the main queue as the system asks.
    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        lock.lock()
        let handler = eventsHandled
        eventsHandled = nil
        lock.unlock()
        if let handler { DispatchQueue.main.async { handler.call() } }
    }
}

/// The app's completion handler for the session's events. UIKit hands it over as a plain
/// closure; it is called once, on the main queue.
// @unchecked: UIKit's handler is a plain closure; it is called once, on the main queue.
private struct EventsHandler: @unchecked Sendable {
    let call: () -> Void
}
