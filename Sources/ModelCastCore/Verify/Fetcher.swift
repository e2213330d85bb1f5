import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A response as the verifier sees it.
public struct FetchResponse: Sendable {
    /// Final HTTP status (after redirects).
    public var status: Int
    /// Header fields by lower-cased name; repeated fields joined with ", ".
    public var headers: [String: String]
    /// Every redirect followed, as "STATUS FROM -> TO".
    public var redirects: [String]
    /// Body bytes handed to the consumer.
    public var bytesRead: Int64
    /// True when the body had more than the limit (reading stopped there).
    public var exceededLimit: Bool
}

/// Fetches objects the way a device would (plain GETs, no credentials), streaming
/// the body to a consumer and never reading more than a limit.
public protocol ObjectFetcher: Sendable {
    /// GETs `url` (with a byte range, if given), follows up to five redirects, and
    /// hands at most `limit` body bytes to `consume`; one more byte sets `exceededLimit`.
    func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse
}

/// Errors while fetching.
public enum FetchError: Error, Sendable, LocalizedError, CustomStringConvertible {
    case timedOut(url: String, seconds: Int)
    case transport(url: String, message: String)
    case tooManyRedirects(url: String)

    public var description: String {
        switch self {
        case .timedOut(let url, let seconds): return "\(url): no complete response within \(seconds) s"
        case .transport(let url, let message): return "\(url): \(message)"
        case .tooManyRedirects(let url): return "\(url): more than 5 redirects"
        }
    }

    public var errorDescription: String? { description }

    /// Worth retrying: a failed connection (refused, reset, dropped mid-body, silent past
    /// the idle timeout) may be transient. A request past its deadline is not: its time
    /// is spent. Nor is a redirect loop.
    var isTransient: Bool {
        if case .transport = self { return true }
        return false
    }
}

/// HTTP through async-http-client: no automatic redirects (each one is checked),
/// no decompression (a Content-Encoding is seen as the device would get it), and
/// an idle-read timeout so a stalled server fails instead of hanging.
public final class HTTPFetcher: ObjectFetcher, @unchecked Sendable {
    private let client: HTTPClient
    static let maxRedirects = 5

    /// `idleTimeout`: the longest silence tolerated while reading.
    public init(connectTimeout: TimeInterval = 10, idleTimeout: TimeInterval = 15) {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(connectTimeout * 1000)), read: .milliseconds(Int64(idleTimeout * 1000))),
            decompression: .disabled)
        configuration.httpVersion = .automatic
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Closes the connection pool; call once when done.
    public func shutdown() async {
        try? await client.shutdown()
    }

    public func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        let seconds = max(1, Int(deadline.timeIntervalSinceNow.rounded(.up)))
        return try await withDeadline(deadline, onTimeout: FetchError.timedOut(url: url, seconds: seconds)) {
            try await self.fetchFollowingRedirects(url, range: range, limit: limit, deadline: deadline, consume: consume)
        }
    }

    private func fetchFollowingRedirects(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        var current = url
        var redirects: [String] = []
        for _ in 0...Self.maxRedirects {
            var request = HTTPClientRequest(url: current)
            request.method = .GET
            // A server that compresses for devices does it for verify too; only what verify
            // can decode is asked for (URLSession also offers br).
            request.headers.add(name: "Accept-Encoding", value: ContentDecoding.acceptEncoding)
            request.headers.add(name: "User-Agent", value: "modelcast-verify/\(ModelCastVersion.current)")
            if let range { request.headers.add(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound)") }
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, deadline: .now() + .milliseconds(Int64(max(1, deadline.timeIntervalSinceNow) * 1000)))
            } catch let error as FetchError {
                throw error
            } catch {
                throw FetchError.transport(url: current, message: String(describing: error))
            }
            var headers: [String: String] = [:]
            for (name, value) in response.headers {
                let key = name.lowercased()
                headers[key] = headers[key].map { $0 + ", " + value } ?? value
            }
            let status = Int(response.status.code)
            if (300..<400).contains(status), let location = headers["location"] {
                let next = URL(string: location, relativeTo: URL(string: current))?.absoluteURL.absoluteString ?? location
                redirects.append("\(status) \(current) -> \(next)")
                current = next
                continue
            }
            var read: Int64 = 0
            var exceeded = false
            do {
                for try await buffer in response.body {
                    let available = Int64(buffer.readableBytes)
                    let take = min(available, limit - read)
                    if take > 0 {
                        try buffer.withUnsafeReadableBytes { try consume(UnsafeRawBufferPointer(rebasing: $0[0..<Int(take)])) }
                        read += take
                    }
                    if available > take {
                        exceeded = true
                        break  // never download beyond what the manifest promised
                    }
                }
            } catch let error as FetchError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw FetchError.transport(url: current, message: "reading the body failed after \(read) bytes: \(error)")
            }
            return FetchResponse(status: status, headers: headers, redirects: redirects, bytesRead: read, exceededLimit: exceeded)
        }
        throw FetchError.tooManyRedirects(url: url)
    }
}

/// Serves objects from a published directory as if it were the host: URLs under
/// the base URL map to files, headers come from `_modelcast/objects.json` (what
/// the uploader will set). Lets `verify DIR` check a release before it is synced.
public struct DirectoryFetcher: ObjectFetcher {
    public let root: String
    public let baseURL: String
    /// Headers by key, from the object-metadata file.
    public let declared: [String: ObjectMetadata]

    /// Reads `_modelcast/objects.json` under `root` for the base URL and headers.
    public init(root: String, baseURL: String? = nil) throws {
        self.root = root
        let path = root + "/_modelcast/objects.json"
        var declared: [String: ObjectMetadata] = [:]
        var base = baseURL
        if let data = FileManager.default.contents(atPath: path) {
            struct File: Decodable {
                // Optional here so that a missing field is reported with its object's key.
                struct Object: Decodable {
                    let key: String?
                    let cache_control: String?
                    let content_type: String?
                    let size: Int64?
                    let sha256: String?
                }
                let base_url: String
                let objects: [Object]
            }
            let file: File
            do { file = try JSONDecoder().decode(File.self, from: data) } catch {
                throw ModelCastError.usage("cannot read \(path): \(describe(decodingError: error))")
            }
            base = base ?? file.base_url
            for (index, object) in file.objects.enumerated() {
                // An entry that cannot be used would otherwise serve its object with no headers.
                guard let key = object.key else { throw ModelCastError.usage("cannot read \(path): objects[\(index)] has no key") }
                func refuse(_ reason: String) -> ModelCastError { .usage("cannot read \(path): the entry for key '\(key)' \(reason)") }
                guard let cacheControl = object.cache_control else { throw refuse("has no cache_control") }
                guard let contentType = object.content_type else { throw refuse("has no content_type") }
                guard let size = object.size, size >= 0 else { throw refuse("has no non-negative size") }
                guard let sha256 = object.sha256 else { throw refuse("has no sha256") }
                guard let digest = SHA256Digest(hex: sha256) else { throw refuse("has sha256 '\(sha256)', not a hex SHA-256") }
                declared[key] = ObjectMetadata(cacheControl: cacheControl, contentType: contentType, size: size, sha256: digest)
            }
        }
        guard let base else {
            throw ModelCastError.usage("\(root) has no _modelcast/objects.json to say which URL it is served from; pass --base-url")
        }
        self.baseURL = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.declared = declared
    }

    /// The key a URL maps to, or nil when it lies outside the base URL.
    public func key(for url: String) -> String? {
        guard url.hasPrefix(baseURL + "/") else { return nil }
        return String(url.dropFirst(baseURL.count + 1)).removingPercentEncoding
    }

    public func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        guard let key = key(for: url), (try? validateKey(key)) != nil,
              let info = try linkStatus(root + "/" + key), case .regular = FileType(mode: info.st_mode) else {
            return FetchResponse(status: 404, headers: [:], redirects: [], bytesRead: 0, exceededLimit: false)
        }
        let size = Int64(info.st_size)
        var headers: [String: String] = ["accept-ranges": "bytes"]
        if let metadata = declared[key] {
            headers["cache-control"] = metadata.cacheControl
            headers["content-type"] = metadata.contentType
        }
        let file = try FileDescriptor.openForReading(root + "/" + key)
        var start: Int64 = 0
        var end = size - 1
        var status = 200
        if let range {
            guard range.lowerBound < size else {
                return FetchResponse(status: 416, headers: headers, redirects: [], bytesRead: 0, exceededLimit: false)
            }
            start = range.lowerBound
            end = min(range.upperBound, size - 1)
            status = 206
            headers["content-range"] = "bytes \(start)-\(end)/\(size)"
        }
        headers["content-length"] = String(end - start + 1)
        var read: Int64 = 0
        var offset = start
        var exceeded = false
        while offset <= end {
            let count = Int(min(1 << 20, end - offset + 1))
            let chunk = try file.read(at: offset, count: count)
            if chunk.isEmpty { break }
            let take = Int(min(Int64(chunk.count), limit - read))
            if take > 0 { try chunk.withUnsafeBytes { try consume(UnsafeRawBufferPointer(rebasing: $0[0..<take])) } }
            read += Int64(take)
            offset += Int64(chunk.count)
            if take < chunk.count {
                exceeded = true
                break
            }
        }
        return FetchResponse(status: status, headers: headers, redirects: [], bytesRead: read, exceededLimit: exceeded)
    }
}

/// Runs `operation`, throwing `onTimeout` (and cancelling it) if `deadline` passes first.
func withDeadline<T: Sendable>(_ deadline: Date, onTimeout: Error, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            let nanoseconds = UInt64(max(0, deadline.timeIntervalSinceNow) * 1_000_000_000)
            try await Task.sleep(nanoseconds: nanoseconds)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw onTimeout }
        guard let value = first else { throw onTimeout }
        return value
    }
}
