import Foundation
import XCTest
import ModelCastTestSupport
@testable import ModelCastCore

/// Issue 48, item 6: each verify check of an object is written once and states, for each
/// kind of source, whether it runs there or is reported skipped. Before, the checks were
/// written twice (a download's and a store's proof) and `verify s3://` dropped the
/// segment check without a word.
final class ArtifactCheckSourcesTests: XCTestCase {
    /// Every `artifact.*` line belongs to exactly one check (or to the read itself): a new
    /// line cannot be written outside the one list, where its check states its sources.
    func testEveryArtifactLineBelongsToOneCheck() {
        let claimed = ArtifactChecks.all.flatMap(\.ids) + ArtifactChecks.readIDs
        XCTAssertEqual(claimed.count, Set(claimed).count, "a line written by two checks: \(claimed.map(\.rawValue))")
        let artifactLines = VerifyCheckID.allCases.filter { $0.rawValue.hasPrefix("artifact.") }
        XCTAssertEqual(Set(artifactLines).subtracting(claimed).map(\.rawValue).sorted(), [], "artifact lines no check claims (add the check to ArtifactChecks.all, stating its sources)")
        for check in ArtifactChecks.all {
            for source in FetchedFrom.allCases {
                if case .skipped(let reason) = check.statement(for: source) {
                    XCTAssertFalse(reason.isEmpty, "\(check.ids[0].rawValue) through \(source): a skip says why")
                }
            }
        }
    }

    /// Through each kind of source (a server, a directory's files, a store's API), one
    /// object every check concerns — a zip with a segment index — and one served encoded:
    /// each check either writes a line that is not `skip`, or exactly the skip its
    /// statement gives for that source. Nothing is left out silently.
    func testEveryCheckRunsOrIsReportedSkippedThroughEverySource() async throws {
        let fixture = try Fixture()
        for source in FetchedFrom.allCases {
            let report = try await fixture.verify(through: source)
            for check in ArtifactChecks.all {
                let lines = report.checks.filter { line in check.ids.contains { $0.rawValue == line.check } }
                switch check.statement(for: source) {
                case .runs:
                    XCTAssertTrue(lines.contains { $0.status != .skip }, "\(check.ids[0].rawValue) through \(source) ran without a line: \(report.text)")
                    XCTAssertFalse(lines.contains { $0.status == .skip }, "\(check.ids[0].rawValue) through \(source) runs, yet was skipped: \(report.text)")
                case .skipped(let reason):
                    XCTAssertEqual(Set(lines.map(\.status)), [.skip], "\(check.ids[0].rawValue) through \(source): \(report.text)")
                    XCTAssertTrue(lines.contains { $0.detail == "m 1.0.0/model.zip: \(reason)" }, "\(check.ids[0].rawValue) through \(source): \(lines)")
                }
            }
            // The fixture itself is sound: nothing fails but the encoded object's encoding.
            let failures = report.checks.filter { $0.status == .fail }.map { "\($0.check) \($0.subject)" }
            XCTAssertEqual(failures, ["artifact.content-encoding \(fixture.origin(of: Fixture.encodedURL, source))"], "through \(source): \(report.text)")
        }
    }

    /// A store has no bytes to cut a segment index with: `verify s3://` says so, where it
    /// used to say nothing at all about the artifact's segments.
    func testAStoreReportsTheSegmentCheckSkipped() async throws {
        let report = try await Fixture().verify(through: .storeAPI)
        let segments = report.checks.filter { $0.check == VerifyCheckID.artifactSegments.rawValue }
        XCTAssertEqual(segments.map(\.status), [.skip], report.text)
        XCTAssertTrue(segments.first?.detail.contains("not checked through the store's API") ?? false, "\(segments)")
    }
}

/// A release of two objects served from memory as each kind of source serves them: a
/// stored zip with its segment index, and a plain file served with a Content-Encoding.
private struct Fixture {
    static let base = "https://cdn.test/ml"
    static let zipURL = base + "/models/m/1.0.0/model.zip"
    static let indexURL = base + "/models/m/segments/index.mcsx"
    static let encodedURL = base + "/models/n/1.0.0/n.bin"

    let scratch: Scratch
    let objects: [String: [UInt8]]
    let manifest: Data

    init() throws {
        scratch = try Scratch()
        let zipPath = scratch.at("model.zip")
        try shell(#"python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1], "w"); z.writestr("Model/config.json", "{}"); z.writestr("Model/weights.bin", bytes(range(256)) * 64); z.close()' '\#(zipPath)'"#)
        let zip = Array(try Data(contentsOf: URL(fileURLWithPath: zipPath)))
        // The index as publish writes it: the zip cut at its entries by the scheme.
        let hasher = SegmentHasher(regions: SegmentPlan.regions(path: zipPath, size: Int64(zip.count)))
        try zip.withUnsafeBytes { try hasher.update($0) }
        let zipDigest = try SHA256Hasher.digest(Data(zip))
        let index = try SegmentIndex(scheme: SegmentScheme.name, artifactSize: Int64(zip.count), artifactSHA256: zipDigest.bytes, segments: try hasher.finish()).encoded()
        let plain = Array("plain bytes, served encoded".utf8)
        objects = [Self.zipURL: zip, Self.indexURL: index, Self.encodedURL: plain]
        let segments = SegmentIndexObject(key: "models/m/segments/index.mcsx", url: Self.indexURL, sha256: try SHA256Hasher.digest(Data(index)).hex, size: Int64(index.count))
        let files = [
            "m": ReleaseFile(name: "model.zip", key: "models/m/1.0.0/model.zip", url: Self.zipURL, sha256: zipDigest.hex, size: Int64(zip.count),
                             contentType: "application/zip", segments: segments),
            "n": ReleaseFile(name: "n.bin", key: "models/n/1.0.0/n.bin", url: Self.encodedURL, sha256: try SHA256Hasher.digest(Data(plain)).hex,
                             size: Int64(plain.count), contentType: "application/octet-stream"),
        ]
        let release = Release(sequence: 1, publishedAt: "2026-11-22T00:00:00Z", channel: "stable", profile: "modelcast",
                              models: files.mapValues { ReleaseModel(version: "1.0.0", files: [$0]) })
        manifest = Data(try ManifestProfile.modelcast.render(release).serialized().utf8)
        // A directory's file must be on disk: verify cuts it again from its structure.
        for (url, bytes) in objects { try Data(bytes).write(to: URL(fileURLWithPath: scratch.at(Self.fileName(url)))) }
    }

    static func fileName(_ url: String) -> String { String(url.split(separator: "/").last!) }

    /// Where a source reads `url` from, as the report names it: a directory's file, else the URL.
    func origin(of url: String, _ source: FetchedFrom) -> String {
        source == .files ? scratch.at(Self.fileName(url)) : url
    }

    func verify(through source: FetchedFrom) async throws -> VerifyReport {
        var options = VerifyOptions()
        options.expectedPrefixes = [Self.base]
        options.retries = 0
        let fetcher = MemorySource(reads: source, objects: objects, directory: source == .files ? scratch.path : nil)
        return await Verifier(fetcher: fetcher, options: options).verify(manifestURL: Self.base + "/manifest.json", localManifest: manifest)
    }
}

/// Serves objects from memory as `reads` says: every answer with the artifact headers
/// (the encoded object with `Content-Encoding: gzip`), ranges as 206s (`FakeHost`), and
/// for a store a proof by checksum instead of a download.
private struct MemorySource: ObjectFetcher {
    let reads: FetchedFrom
    let objects: [String: [UInt8]]
    /// For a directory's files: where they are on disk.
    let directory: String?

    func origin(of url: String) -> String { directory.map { $0 + "/" + Fixture.fileName(url) } ?? url }

    static func headers(_ url: String) -> [String: String] {
        var headers = ["cache-control": CachePolicy.immutable, "content-type": url.hasSuffix(".zip") ? "application/zip" : "application/octet-stream"]
        if url == Fixture.encodedURL { headers["content-encoding"] = "gzip" }
        return headers
    }

    func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        let objects = self.objects
        let host = VerifyRulesTests.FakeHost { url in objects[url].map { (200, Self.headers(url), $0) } ?? (404, [:], []) }
        return try await host.fetch(url, range: range, limit: limit, deadline: deadline, consume: consume)
    }

    func prove(_ url: String, size: Int64, sha256: SHA256Digest) async throws -> ProvenObject? {
        guard reads == .storeAPI else { return nil }
        guard let body = objects[url] else { return ProvenObject(status: 404, headers: [:], size: 0, content: .sizeDiffers) }
        var headers = Self.headers(url)
        headers["content-length"] = String(body.count)
        let same = try SHA256Hasher.digest(Data(body)).hex == sha256.hex
        return ProvenObject(status: 200, headers: headers, size: Int64(body.count), content: same ? .proven("the store's checksum") : .differs(actualSHA256: nil, detail: "differs"))
    }
}
