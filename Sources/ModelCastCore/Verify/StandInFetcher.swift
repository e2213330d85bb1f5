import Foundation

/// Fetches through `inner` with every URL under `production` (a base URL) read from the
/// same path under `standIn` instead: a preview server (`modelcast serve`) standing in for
/// the CDN a release was published for. The manifest's URLs are checked as written.
package struct StandInFetcher: ObjectFetcher {
    package let inner: any ObjectFetcher
    package let production: String
    package let standIn: String

    /// `manifestURL` is the manifest's URL on the stand-in: its target's root stands in
    /// for `production`.
    package init(_ inner: any ObjectFetcher, production: String, manifestURL: String) {
        self.inner = inner
        self.production = production.hasSuffix("/") ? String(production.dropLast()) : production
        let root = targetRoot(ofManifestURL: manifestURL)
        self.standIn = root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    package func origin(of url: String) -> String {
        url.hasPrefix(production + "/") ? standIn + url.dropFirst(production.count) : url
    }

    package func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        try await inner.fetch(origin(of: url), range: range, limit: limit, deadline: deadline, consume: consume)
    }
}
