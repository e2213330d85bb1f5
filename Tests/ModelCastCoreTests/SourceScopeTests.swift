import Foundation
import XCTest
import ModelCastTestSupport
@testable import ModelCastCore

/// Issue 48, item 5: SOURCE (a manifest URL, s3:// target, directory or manifest file) is
/// told apart once, by `ReadSource`, and `withSource` closes what it opened on every path.
final class SourceScopeTests: XCTestCase {
    struct Boom: Error {}

    func testEachKindOfSourceIsToldApart() throws {
        let work = try Scratch()
        _ = try work.mkdir("site")
        _ = try work.write("manifest.json", text: "{}")
        XCTAssertEqual(try ReadSource("https://cdn.example.com/m/manifest.json"), .manifestURL("https://cdn.example.com/m/manifest.json"))
        XCTAssertEqual(try ReadSource("HTTP://127.0.0.1:8080/manifest.json"), .manifestURL("HTTP://127.0.0.1:8080/manifest.json"))
        XCTAssertEqual(try ReadSource("s3://models/prod"), .bucket("s3://models/prod"))
        XCTAssertEqual(try ReadSource(work.at("site")), .directory(work.at("site")))
        XCTAssertEqual(try ReadSource(work.at("manifest.json")), .manifestFile(work.at("manifest.json")))
        // A path whose name has a ':' is a path when it exists.
        _ = try work.mkdir("a:b")
        XCTAssertEqual(try ReadSource(work.at("a:b")), .directory(work.at("a:b")))
    }

    /// Each bad SOURCE is refused naming the value: escaped when it holds a control
    /// character, with its password redacted, with the likely meaning of a mistyped scheme.
    func testBadSourcesAreRefusedNamingTheValue() throws {
        let cases: [(String, String)] = [
            ("", "SOURCE is empty"),
            ("https://cdn.example.com/m\u{1b}[31m/manifest.json", "SOURCE 'https://cdn.example.com/m\\u{1b}[31m/manifest.json' holds a control character"),
            ("site\n", "SOURCE 'site\\u{a}' holds a control character"),
            ("gs://bucket/models", "has the scheme 'gs:', which modelcast does not read"),
            ("gs://bucket/models", "did you mean s3://bucket/models?"),
            ("https:/cdn.example.com/manifest.json", "did you mean https://cdn.example.com/manifest.json?"),
            ("https://deploy:hunter2@cdn.example.com/manifest.json", "the manifest URL 'https://<redacted>@cdn.example.com/manifest.json' carries a user name or password"),
            ("http://", "'http://' is not a manifest URL"),
            ("https://:443/manifest.json", "is not a manifest URL"),
            ("s3://B/models", "'B' in s3://B/models is not a valid bucket name"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try ReadSource(text), text) { error in
                let shown = String(describing: error)
                XCTAssertTrue(shown.contains(message), "\(text): \(shown)")
                XCTAssertFalse(shown.contains("hunter2"), "\(text): a password was shown: \(shown)")
                XCTAssertEqual(ExitStatus(for: error), .refused, text)
            }
        }
        let missing = "/nonexistent/\(UUID().uuidString)/manifest.json"
        XCTAssertThrowsError(try ReadSource(missing)) { error in
            guard case ModelCastError.notFound(let path) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, missing)
        }
    }

    /// The scope's HTTP client is shut down when the body throws, and when it returns.
    func testTheHTTPClientIsShutDownWhenTheBodyThrowsOrReturns() async throws {
        var client: HTTPFetcher?
        do {
            _ = try await withSource(.manifestURL("https://cdn.test/manifest.json"), environment: [:]) { scope -> Int in
                client = scope.http()
                XCTAssertTrue(client === scope.http(), "one client per scope")
                throw Boom()
            }
            XCTFail("the error did not reach the caller")
        } catch is Boom {}
        XCTAssertEqual(client?.isShutDown, true, "a failing body left the client open")
        let returned = try await withSource(.manifestURL("https://cdn.test/manifest.json"), environment: [:]) { scope in scope.http() }
        XCTAssertTrue(returned.isShutDown)
    }

    /// Where a task hands out the client its scope opened.
    actor Opened {
        var client: HTTPFetcher?
        func set(_ client: HTTPFetcher) { self.client = client }
    }

    /// A cancelled body (a Ctrl-C'd task) still closes the scope.
    func testTheHTTPClientIsShutDownWhenTheTaskIsCancelled() async throws {
        let opened = Opened()
        let task = Task {
            try await withSource(.manifestURL("https://cdn.test/manifest.json"), environment: [:]) { scope in
                await opened.set(scope.http())
                try await Task.sleep(for: .seconds(60))
            }
        }
        while await opened.client == nil { try await Task.sleep(for: .milliseconds(5)) }
        task.cancel()
        let result = await task.result
        XCTAssertThrowsError(try result.get())
        let client = await opened.client
        XCTAssertEqual(client?.isShutDown, true)
    }

    /// A store opened beside SOURCE is closed with it, and a failed open leaves nothing
    /// open: the scope the body saw is closed.
    func testStoresAreClosedWithTheScope() async throws {
        let work = try Scratch()
        _ = try work.mkdir("site")
        var seen: SourceScope?
        do {
            try await withSource(try ReadSource(work.at("site")), environment: [:]) { scope in
                seen = scope
                _ = try scope.storage()
                _ = try scope.open(TargetSettings(target: work.at("site")))
                var s3 = TargetSettings(target: work.at("site"))
                s3.endpoint = "https://example.com"
                _ = try scope.open(s3)  // refused: an S3 flag for a directory
            }
            XCTFail("the refused open did not throw")
        } catch {
            XCTAssertTrue(String(describing: error).contains("apply to s3:// targets"), "\(error)")
        }
        XCTAssertEqual(seen?.isClosed, true)
        // A manifest URL has no store to open.
        try await withSource(.manifestURL("https://cdn.test/manifest.json"), environment: [:]) { scope in
            XCTAssertThrowsError(try scope.storage())
        }
    }

    /// A manifest FILE is read with the limit a manifest URL has (4 MiB), not whole: a file
    /// a mistyped path names (a disk image, a model) is refused, named, and not loaded.
    func testAManifestFileIsReadWithALimit() async throws {
        let work = try Scratch()
        let big = work.at("big.json")
        FileManager.default.createFile(atPath: big, contents: nil)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: big))
        try handle.truncate(atOffset: (4 << 20) + 1)  // sparse: nothing is written
        try handle.close()
        do {
            _ = try await withSource(try ReadSource(big), environment: [:]) { try await $0.manifest(key: "manifest.json") }
            XCTFail("a manifest file over 4 MiB was read")
        } catch let error as ModelCastError {
            XCTAssertTrue(error.message.contains(big) && error.message.contains("larger than"), error.message)
        }
        let small = try work.write("m.json", text: "{}")
        let read = try await withSource(try ReadSource(small), environment: [:]) { try await $0.manifest(key: "manifest.json") }
        XCTAssertEqual(read, Data("{}".utf8))
    }
}