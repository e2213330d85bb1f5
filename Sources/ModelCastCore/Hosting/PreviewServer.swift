import Foundation
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// A local preview of the CDN: serves a published directory with the headers its
/// hosting files declare (from `_modelcast/objects.json`), with HEAD, Range, ETag and
/// conditional requests, and logs each request. Only the published objects are served
/// (and, while a publish verifies its staged release through this server, the objects it
/// has stored and proven for it: `StagedObjectsFile`):
/// staging files, the hosting files themselves and anything else in the directory
/// answer 404, as they would on the real host. The list of objects follows new
/// publishes into the directory (see `PublishedObjectList`). It is for local testing
/// and examples, not for the internet, so it binds to loopback by default.
package struct PreviewServer: Sendable {
    package let root: String
    package let host: String
    package let port: Int
    /// The URL path the directory is served under (from the objects file's base URL, or given).
    package let basePath: String
    let objects: PublishedObjectList
    /// Pages made on request, by URL path (`/_modelcast/report`), besides the published objects.
    let pages: [String: GeneratedPage]
    let log: @Sendable (String) -> Void

    /// Reads `root/_modelcast/objects.json` when it is there (and fails if it cannot be read).
    package init(root: String, host: String = "127.0.0.1", port: Int = 8080, basePath: String? = nil, pages: [String: GeneratedPage] = [:],
                 log: @escaping @Sendable (String) -> Void) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ModelCastError.notFound(path: root)
        }
        self.root = root
        self.host = host
        self.port = port
        self.pages = pages
        self.log = log
        // Only what publish listed is served: a directory it never wrote (a project folder)
        // has no list, and serving it would expose every file in it.
        guard FileManager.default.fileExists(atPath: root + "/" + HostedObjectsFile.relativePath) else {
            throw ModelCastError.targetState("\(root) holds no published target: \(HostedObjectsFile.relativePath), which publish writes to list what serve may answer, is missing. Serve the directory you published to (modelcast publish … --to DIR), or publish there first")
        }
        let objects = PublishedObjectList(root: root, log: log)
        let baseURL = try objects.loadFirst()
        let served = basePath ?? baseURL.map { URLParts.path(of: $0) } ?? ""
        objects.basePath = (served, basePath != nil)
        self.objects = objects
        self.basePath = served
        self.publishedBaseURL = baseURL
    }

    /// The base URL the directory was published for (from `_modelcast/objects.json`).
    package let publishedBaseURL: String?

    /// Runs until SIGINT or SIGTERM. `onReady` receives the base URL once listening
    /// (with the actual port when `port` is 0).
    package func run(onReady: @escaping @Sendable (String) async -> Void) async throws {
        let router = Router()
        router.add(middleware: PublishedObjectsMiddleware(root: root, basePath: basePath, objects: objects, pages: pages, log: log))
        var logger = Logger(label: "modelcast.serve")
        logger.logLevel = .warning
        let host = self.host
        let basePath = self.basePath
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "modelcast-serve"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                let shownHost = host.contains(":") ? "[\(host)]" : host
                await onReady("http://\(shownHost):\(bound)\(basePath)")
            },
            logger: logger)
        do {
            try await app.runService()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw ModelCastError.io(operation: "listen", path: "\(host):\(port)",
                                    reason: "the port is already in use (another modelcast serve, or another server?): stop it, or choose another --port (--port 0 picks a free one)")
        }
    }
}

/// The published objects and their headers, from `_modelcast/objects.json`. A publish
/// replaces that file by rename, so on every request its identity is checked with one
/// `stat` (device, inode, size, modification and change times to the nanosecond); it
/// is read and parsed again only when that changed. A replacement that cannot be read
/// or parsed, or a file that went away, leaves the previous list in use (said on stderr,
/// once per replacement); the next good one is picked up.
final class PublishedObjectList: Sendable {
    let path: String
    private let root: String
    private let log: @Sendable (String) -> Void
    private struct State {
        /// Headers per key; nil while the directory has no objects file (then every file but
        /// modelcast's own and dot files is served, with default headers).
        var declared: [String: ObjectMetadata]?
        /// The file as it was when last examined (read, or found unreadable); nil when there
        /// was none, or when it changed while it was being read (so it is examined again).
        var examined: FileSnapshot?
        var basePath = (path: "", given: false)
    }
    private let state = NIOLockedValueBox(State())
    /// The path served under and whether it was given (not taken from the objects file).
    var basePath: (path: String, given: Bool) {
        get { state.withLockedValue { $0.basePath } }
        set { state.withLockedValue { $0.basePath = newValue } }
    }

    init(root: String, log: @escaping @Sendable (String) -> Void) {
        self.root = root
        self.path = root + "/_modelcast/objects.json"
        self.log = log
    }

    /// Reads the objects file if there is one; returns its base URL. Throws when it is
    /// there but cannot be used, as serve should not start on a list it cannot read.
    func loadFirst() throws -> String? {
        try state.withLockedValue { state in
            let before: FileSnapshot
            do { before = try FileSnapshot.current(path) } catch ModelCastError.notFound { return nil }
            guard let file = try HostedObjectsFile(root: root) else { return nil }
            state.declared = file.declared
            // A look after the read that fails is a file being replaced: examined again on the next request.
            state.examined = (try? FileSnapshot.current(path)) == before ? before : nil
            return file.baseURL
        }
    }

    /// The list to answer the current request with.
    func current() -> [String: ObjectMetadata]? {
        state.withLockedValue { state in
            let now: FileSnapshot?
            do {
                now = try FileSnapshot.current(path)
            } catch {
                if state.examined != nil, let declared = state.declared {
                    if case ModelCastError.notFound = error {
                        log("\(path) is gone; still serving the previous list of \(counted(declared.count, "object"))")
                    } else {
                        log("cannot reload \(path): \(error); still serving the previous list of \(counted(declared.count, "object"))")
                    }
                }
                state.examined = nil
                return state.declared
            }
            guard let now, now != state.examined else { return state.declared }
            reload(seen: now, state: &state)
            return state.declared
        }
    }

    /// Reads the file again (the lock is held: `state` is the locked value).
    private func reload(seen before: FileSnapshot, state: inout State) {
        let result = Result {
            guard let file = try HostedObjectsFile(root: root) else { throw ModelCastError.notFound(path: path) }
            return file
        }
        // Read while it was being replaced (or gone by now, the look failing): the bytes may
        // belong to either file, so the next request looks again.
        let after = try? FileSnapshot.current(path)
        state.examined = after == before ? before : nil
        switch result {
        case .success(let file):
            state.declared = file.declared
            var note = ""
            let newPath = URLParts.path(of: file.baseURL)
            if !state.basePath.given, newPath != state.basePath.path {
                note = "; it names base URL \(file.baseURL), but serve keeps serving under '\(state.basePath.path)' until it is restarted"
            }
            log("reloaded _modelcast/objects.json: \(counted(file.declared.count, "object"))\(note)")
        case .failure(let error):
            let previous = state.declared.map { "the previous list of \(counted($0.count, "object"))" } ?? "every file, as before"
            log("cannot reload \(path): \(error); still serving \(previous)")
        }
    }
}

/// Admits only published objects, serves them from the directory and gives them
/// their declared headers.
struct PublishedObjectsMiddleware<Context: RequestContext>: RouterMiddleware {
    let root: String
    let basePath: String
    let objects: PublishedObjectList
    let pages: [String: GeneratedPage]
    let log: @Sendable (String) -> Void

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = Date()
        let path = request.uri.path
        let declared = objects.current()
        var response: Response
        if let page = pages[path] {
            response = await page.response(to: request, log: log)
        } else if let key = key(for: path), let headers = headers(of: key, declared) {
            response = StaticFile.response(path: root + "/" + key, inside: root, request: request)
            if response.status == .ok || response.status == .partialContent || response.status == .notModified {
                response.headers[.cacheControl] = headers.cacheControl
                if response.status != .notModified {
                    response.headers[.contentType] = headers.contentType
                }
            }
        } else {
            response = Response(status: .notFound)
        }
        let milliseconds = Int(Date().timeIntervalSince(started) * 1000)
        let range = request.headers[.range].map { " (\($0))" } ?? ""
        log("\(request.method) \(path)\(range) \(response.status.code) \(milliseconds) ms")
        return response
    }

    /// The object key for a URL path, or nil outside the base path.
    private func key(for path: String) -> String? {
        guard let decoded = path.removingPercentEncoding else { return nil }
        let prefix = basePath + "/"
        guard decoded.hasPrefix(prefix) else { return nil }
        let key = String(decoded.dropFirst(prefix.count))
        return isValidKey(key) ? key : nil
    }

    /// The headers `key` is served with; nil when it is not served.
    private func headers(of key: String, _ declared: [String: ObjectMetadata]?) -> (cacheControl: String, contentType: String)? {
        guard let declared else {
            // Without an objects file: everything but dot files and modelcast's own files.
            guard !key.split(separator: "/").contains(where: { $0.hasPrefix(".") }), !key.hasPrefix("_modelcast/"), key != "_headers" else { return nil }
            return (defaultCacheControl(key), ContentType.forArtifact(named: key))
        }
        if let metadata = declared[key] { return (metadata.cacheControl, metadata.contentType) }
        // Stored and proven by a publish that is verifying its staged release through this
        // server (`--verify-url`); read only for a key the list above does not have.
        if let staged = StagedObjectsFile.read(root: root)?[key] { return (staged.cacheControl, staged.contentType) }
        return nil
    }

    private func defaultCacheControl(_ key: String) -> String {
        key.hasPrefix("models/") || key.hasPrefix("manifests/") || key.hasPrefix(KeySet.folder) ? CachePolicy.immutable : CachePolicy.manifestDefault
    }
}

/// A page made when it is asked for (the release page), never stored in the directory:
/// GET and HEAD, `Cache-Control: no-store`; a failure to make it is a 500 naming why.
package struct GeneratedPage: Sendable {
    package let contentType: String
    package let make: @Sendable () async throws -> Data

    package init(contentType: String, make: @escaping @Sendable () async throws -> Data) {
        self.contentType = contentType
        self.make = make
    }

    func response(to request: Request, log: @Sendable (String) -> Void) async -> Response {
        guard request.method == .get || request.method == .head else {
            return Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD"])
        }
        do {
            let body = try await make()
            let headers: HTTPFields = [.contentType: contentType, .cacheControl: "no-store", .contentLength: String(body.count)]
            guard request.method == .get else { return Response(status: .ok, headers: headers) }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        } catch {
            log("cannot make \(request.uri.path): \(error)")
            return Response(status: .internalServerError, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: "cannot make this page: \(error)\n")))
        }
    }
}

/// One regular file answered as a static host does: GET and HEAD, validators, conditional
/// requests and a single byte range, all from the one open file (so the headers and the
/// body describe the same file even if the path is replaced meanwhile).
enum StaticFile {
    static let chunkSize = 256 * 1024

    static func response(path: String, inside root: String, request: Request) -> Response {
        guard request.method == .get || request.method == .head else {
            return Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD"])
        }
        guard let served = openServedFile(path, inside: root) else { return Response(status: .notFound) }
        let size = Int64(served.info.st_size)
        let (modified, modifiedNanoseconds) = Platform.modificationTime(served.info)
        let etag = HTTPValidators.entityTag(inode: UInt64(served.info.st_ino), modifiedSeconds: modified, modifiedNanoseconds: modifiedNanoseconds, size: size)
        var headers: HTTPFields = [
            .eTag: etag,
            .lastModified: HTTPValidators.imfFixdate(modified),
            .acceptRanges: "bytes",
        ]
        if preconditionsAnswerNotModified(request, etag: etag, modified: modified) { return notModified(headers, size: size) }

        let status: HTTPResponse.Status
        let slice: ClosedRange<Int64>?
        switch rangeAnswer(request, etag: etag, modified: modified, size: size) {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            headers[.contentLength] = "0"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .partial(let range):
            status = .partialContent
            slice = range
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
        case .whole:
            status = .ok
            slice = size > 0 ? 0...(size - 1) : nil
        }
        let length = slice.map { $0.upperBound - $0.lowerBound + 1 } ?? 0
        headers[.contentLength] = String(length)
        guard request.method == .get, let slice else { return Response(status: status, headers: headers) }
        return Response(status: status, headers: headers, body: body(reading: served.file, slice: slice, size: size, path: path))
    }

    /// The regular file at `path`, opened, with its status; nil (a 404) for anything else,
    /// or for a file reached through a link that leaves `root`.
    private static func openServedFile(_ path: String, inside root: String) -> (file: FileDescriptor, info: stat)? {
        // O_NONBLOCK: opening a FIFO must not hang the request; it is refused below.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        let file = FileDescriptor(fd: fd, path: path)
        // A descriptor whose status cannot be read is answered as any file serve does not serve.
        guard let info = try? file.status(), case .regular = FileType(mode: info.st_mode) else {
            return nil
        }
        // The file actually opened must lie inside the served directory: nothing reached
        // through a symbolic link (the file's, or a directory's on the way) that leaves it.
        // Checked on the open descriptor, so a link swapped in meanwhile changes nothing.
        guard let opened = Platform.openedPath(fd), let realRoot = realPath(root), opened.hasPrefix(realRoot == "/" ? "/" : realRoot + "/") else {
            return nil
        }
        return (file, info)
    }

    /// Preconditions (RFC 9110 §13.2.2): If-None-Match, else If-Modified-Since. True when
    /// they call for a 304.
    private static func preconditionsAnswerNotModified(_ request: Request, etag: String, modified: Int) -> Bool {
        if let ifNoneMatch = request.headers[.ifNoneMatch] {
            return HTTPValidators.noneMatchHits(ifNoneMatch, etag: etag)
        }
        guard let ifModifiedSince = request.headers[.ifModifiedSince], let since = HTTPValidators.httpDate(ifModifiedSince) else { return false }
        return modified <= since
    }

    /// Range is defined for GET only; on HEAD it MUST be ignored (§14.2). If-Range
    /// that does not match means the whole representation (§13.1.5).
    private static func rangeAnswer(_ request: Request, etag: String, modified: Int, size: Int64) -> ByteRangeAnswer {
        guard request.method == .get, let range = request.headers[.range] else { return .whole }
        let ifRange = request.headers[.ifRange]
        guard ifRange.map({ HTTPValidators.ifRangeMatches($0, etag: etag, modifiedSeconds: modified) }) ?? true else { return .whole }
        return ByteRangeAnswer.forRange(range, size: size)
    }

    /// A GET's body: `slice` of the open file, read a chunk at a time as it is written.
    private static func body(reading file: FileDescriptor, slice: ClosedRange<Int64>, size: Int64, path: String) -> ResponseBody {
        let shared = OpenFile(file)
        return ResponseBody(contentLength: Int(slice.upperBound - slice.lowerBound + 1)) { writer in
            var offset = slice.lowerBound
            while offset <= slice.upperBound {
                let count = Int(min(Int64(chunkSize), slice.upperBound - offset + 1))
                let bytes = try shared.file.read(at: offset, count: count)
                // The file shrank under us: end the response short rather than pad it.
                guard !bytes.isEmpty else { throw ModelCastError.io(operation: "read", path: path, reason: "ends at byte \(offset), the file had \(size) bytes when the response began") }
                try await writer.write(ByteBuffer(bytes: bytes))
                offset += Int64(bytes.count)
            }
            try await writer.finish(nil)
        }
    }

    /// 304 with the validators; Content-Length is the 200's, as RFC 9110 §8.6 allows.
    private static func notModified(_ headers: HTTPFields, size: Int64) -> Response {
        var headers = headers
        headers[.acceptRanges] = nil
        headers[.contentLength] = String(size)
        return Response(status: .notModified, headers: headers)
    }

    /// The open file, handed to the body writer (only it reads from the file then).
    // @unchecked: FileDescriptor is a class; once handed over, only the body writer
    // reads from it (positional reads), and it is closed once, after the last.
    final class OpenFile: @unchecked Sendable {
        let file: FileDescriptor
        init(_ file: FileDescriptor) { self.file = file }
    }
}
