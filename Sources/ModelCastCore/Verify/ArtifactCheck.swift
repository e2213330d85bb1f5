import Foundation

/// What a check says of one source: it runs on what the source reads, or the source
/// cannot answer what it asks, and the report says so (`skip`, with the reason).
enum SourceStatement: Sendable, Equatable {
    case runs
    /// The reason is the report's detail after the object's label.
    case skipped(String)
}

/// One check of an object a manifest names, written once for every source: the report
/// lines it writes, what it says of each source, and the check itself on what was read
/// (downloaded and hashed, or proven by a store's checksum). `ArtifactChecks.all` lists
/// every check; `ArtifactVerification` runs them, or reports them skipped, the same way
/// for each object, so no source can drop one silently.
protocol ArtifactCheck: Sendable {
    /// The report lines it writes; no other check (nor the read) writes them.
    var ids: [VerifyCheckID] { get }

    /// Whether it can check an object read from `source`, and why not when it cannot.
    /// Stated by each check, with no default: a new check says it for every source.
    func statement(for source: FetchedFrom) -> SourceStatement

    /// Whether `read` is an object it checks at all (a zip, a non-empty body, an artifact
    /// with a segment index); nothing is reported for one it does not.
    func concerns(_ read: ArtifactRead) -> Bool

    /// Before a download: what it must fetch first (its failures logged) and what watches
    /// the bytes as they stream to the hasher, in the same read; nil when nothing does.
    func prepare(_ object: ExpectedObject, with verification: ArtifactVerification, deadline: Date, log: CheckLog) async -> (any BodyWatcher)?

    /// Checks what was read, logging its lines.
    func run(_ read: ArtifactRead, with verification: ArtifactVerification, log: CheckLog) async
}

extension ArtifactCheck {
    func concerns(_ read: ArtifactRead) -> Bool { true }

    func prepare(_ object: ExpectedObject, with verification: ArtifactVerification, deadline: Date, log: CheckLog) async -> (any BodyWatcher)? { nil }
}

/// Sees an object's bytes as they are downloaded (restarted with the download on a retry).
protocol BodyWatcher: Sendable {
    func append(_ chunk: UnsafeRawBufferPointer) throws
    func reset()
}

/// Every check of an object, in the order its lines appear in a report.
enum ArtifactChecks {
    static let all: [any ArtifactCheck] = [
        ContentEncodingCheck(), SizeCheck(), DigestCheck(), HeadersCheck(), RangeCheck(), SegmentsCheck(), ZipCheck(),
    ]

    /// The lines of the read itself, which every source makes in its own way (a download's
    /// answer and redirects, a store's proof): not a check a source could skip.
    static let readIDs: [VerifyCheckID] = [.artifactFetch, .artifactRedirect, .artifactStatus]
}
