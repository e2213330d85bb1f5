import Foundation
import NIOConcurrencyHelpers

/// Runs `body` with a scope for reading `source`, and closes whatever the scope opened —
/// its HTTP client, its stores — when `body` returns, throws or is cancelled. `settings`
/// say how to reach a bucket or directory SOURCE (the S3 flags); `log` receives a store's
/// notes; an HTTP read silent for `httpIdleTimeout` seconds fails.
package func withSource<T>(
    _ source: ReadSource, settings: TargetSettings? = nil, environment: [String: String], httpIdleTimeout: TimeInterval = 15,
    log: @escaping @Sendable (String) -> Void = { _ in }, _ body: (SourceScope) async throws -> T
) async throws -> T {
    let scope = SourceScope(source: source, settings: settings ?? TargetSettings(target: source.text), environment: environment,
                            httpIdleTimeout: httpIdleTimeout, log: log)
    do {
        let result = try await body(scope)
        await scope.close()
        return result
    } catch {
        await scope.close()
        throw error
    }
}

/// What a command opened to read its SOURCE, and what it reads beside it (verify's
/// `--origin`): each opened on first use, all closed by `withSource` on every path. A
/// client left open would leak its connections (and a debug build traps on it).
package final class SourceScope: Sendable {
    package let source: ReadSource
    private let settings: TargetSettings
    private let environment: [String: String]
    private let httpIdleTimeout: TimeInterval
    private let log: @Sendable (String) -> Void

    private struct Opened {
        var http: HTTPFetcher?
        var storage: (any Storage)?
        /// Every store opened, SOURCE's and those beside it, in order.
        var stores: [any Storage] = []
        var closed = false
    }
    private let opened = NIOLockedValueBox(Opened())

    init(source: ReadSource, settings: TargetSettings, environment: [String: String], httpIdleTimeout: TimeInterval, log: @escaping @Sendable (String) -> Void) {
        self.source = source
        self.settings = settings
        self.environment = environment
        self.httpIdleTimeout = httpIdleTimeout
        self.log = log
    }

    /// The HTTP client a manifest URL, and the objects a manifest names, are read with.
    package func http() -> HTTPFetcher {
        opened.withLockedValue { opened in
            precondition(!opened.closed, "SourceScope used after withSource ended")
            if let http = opened.http { return http }
            let http = HTTPFetcher(idleTimeout: httpIdleTimeout)
            opened.http = http
            return http
        }
    }

    /// The store a bucket or directory SOURCE is read through.
    package func storage() throws -> any Storage {
        switch source {
        case .bucket, .directory: break
        case .manifestURL(let text), .manifestFile(let text):
            throw ModelCastError.usage("\(redactingURLCredentials(text)) is a manifest, not a target: a published directory or s3://bucket/prefix is read through a store")
        }
        if let storage = opened.withLockedValue({ $0.storage }) { return storage }
        let storage = try open(settings)
        opened.withLockedValue { $0.storage = storage }
        return storage
    }

    /// Another target read beside SOURCE (verify's `--origin`), closed with the scope.
    package func open(_ settings: TargetSettings) throws -> any Storage {
        let storage = try settings.open(environment: environment, log: log)
        let closed = opened.withLockedValue { opened in
            if !opened.closed { opened.stores.append(storage) }
            return opened.closed
        }
        precondition(!closed, "SourceScope used after withSource ended")
        return storage
    }

    /// The most of a manifest a URL's body or a file gives that is read.
    static let manifestLimit = ManifestLimits.maxBytes

    /// The manifest SOURCE names (`key`, the channel's manifest key, for a target): a URL's
    /// body (HTTP 200 only) or a regular file's bytes, `manifestLimit` at most, or the
    /// stored manifest.
    package func manifest(key: String) async throws -> Data {
        switch source {
        case .manifestURL(let url):
            return try await http().getSmallObject(url, limit: Self.manifestLimit) ?? Data()  // nothing is absent: every other status threw
        case .bucket, .directory:
            guard let found = try await storage().get(key, limit: TargetLayout.recordLimit) else {
                throw ModelCastError.notFound(path: "\(source.text)/\(key)")
            }
            return found
        case .manifestFile(let path):
            return try readCapped(path, limit: Self.manifestLimit, what: "a manifest")
        }
    }

    /// Closes everything opened, once: the HTTP client, then each store.
    func close() async {
        let (http, stores) = opened.withLockedValue { opened -> (HTTPFetcher?, [any Storage]) in
            guard !opened.closed else { return (nil, []) }
            opened.closed = true
            return (opened.http, opened.stores)
        }
        await http?.shutdown()
        for store in stores { await store.close() }
    }

    /// True once `withSource` closed what the scope opened (tests).
    var isClosed: Bool { opened.withLockedValue { $0.closed } }
}
