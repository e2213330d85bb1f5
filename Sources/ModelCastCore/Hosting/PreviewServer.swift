import Foundation
import Hummingbird
import Logging
import NIOCore

/// A local preview of the CDN: serves a published directory with the headers its
/// hosting files declare (from `_modelcast/objects.json`), with HEAD, Range and
/// ETag support, and logs each request. Only the published objects are served:
/// staging files, the hosting files themselves and anything else in the
/// directory answer 404, as they would on the real host. It is for local testing
/// and examples, not for the internet, so it binds to loopback by default.
public struct PreviewServer: Sendable {
    public let root: String
    public let host: String
    public let port: Int
    /// The URL path the directory is served under (from the objects file's base URL, or given).
    public let basePath: String
    /// Headers per key; nil when the directory has no objects file (then defaults apply).
    let declared: [String: ObjectMetadata]?
    let log: @Sendable (String) -> Void

    /// Reads `root/_modelcast/objects.json` when it is there.
    public init(root: String, host: String = "127.0.0.1", port: Int = 8080, basePath: String? = nil, log: @escaping @Sendable (String) -> Void) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ModelCastError.notFound(path: root)
        }
        self.root = root
        self.host = host
        self.port = port
        self.log = log
        let objectsFile = root + "/_modelcast/objects.json"
        if FileManager.default.fileExists(atPath: objectsFile) {
            let fetcher = try DirectoryFetcher(root: root)
            declared = fetcher.declared
            self.basePath = basePath ?? URLParts.path(of: fetcher.baseURL)
        } else {
            declared = nil
            self.basePath = basePath ?? ""
        }
    }

    /// Runs until SIGINT or SIGTERM. `onReady` receives the base URL once listening
    /// (with the actual port when `port` is 0).
    public func run(onReady: @escaping @Sendable (String) async -> Void) async throws {
        let router = Router()
        router.add(middleware: PublishedObjectsMiddleware(basePath: basePath, declared: declared, log: log))
        router.add(middleware: FileMiddleware(root, urlBasePath: basePath.isEmpty ? nil : basePath, threadPool: .singleton, logger: Logger(label: "modelcast.serve")))
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
        try await app.runService()
    }
}

/// Admits only published objects and gives them their declared headers.
struct PublishedObjectsMiddleware<Context: RequestContext>: RouterMiddleware {
    let basePath: String
    let declared: [String: ObjectMetadata]?
    let log: @Sendable (String) -> Void

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = Date()
        let path = request.uri.path
        var response: Response
        if let key = key(for: path), isServed(key) {
            do {
                response = try await next(request, context)
            } catch let error as HTTPResponseError {
                response = Response(status: error.status)
            }
            if response.status == .ok || response.status == .partialContent || response.status == .notModified {
                let metadata = declared?[key]
                response.headers[.cacheControl] = metadata?.cacheControl ?? defaultCacheControl(key)
                if response.status != .notModified {
                    response.headers[.contentType] = metadata?.contentType ?? ContentType.forArtifact(named: key)
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
        return (try? validateKey(key)) != nil ? key : nil
    }

    private func isServed(_ key: String) -> Bool {
        if let declared { return declared[key] != nil }
        // Without an objects file: everything but dot files and modelcast's own files.
        return !key.split(separator: "/").contains { $0.hasPrefix(".") } && !key.hasPrefix("_modelcast/") && key != "_headers"
    }

    private func defaultCacheControl(_ key: String) -> String {
        key.hasPrefix("models/") || key.hasPrefix("manifests/") ? CachePolicy.immutable : CachePolicy.manifestDefault
    }
}
