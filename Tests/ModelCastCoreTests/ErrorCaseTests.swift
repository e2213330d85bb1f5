import XCTest
@testable import ModelCastCore

/// The runtime cases that replaced `.usage` for what a target holds keep the messages and
/// the exit status `.usage` gave them (a pipeline reads the number, a person the text).
final class ErrorCaseTests: XCTestCase {
    func testRuntimeCasesKeepTheirMessages() {
        XCTAssertEqual(
            FormatError.invalidRecord(source: "release record /t/_modelcast/history/1.json", reason: "sequence is missing").message,
            "cannot read release record /t/_modelcast/history/1.json: sequence is missing")
        XCTAssertEqual(
            FormatError.invalidRecord(source: "/t/_modelcast/objects.json", reason: "objects[0] has no key").message,
            "cannot read /t/_modelcast/objects.json: objects[0] has no key")
        XCTAssertEqual(
            ModelCastError.invalidManifest(source: "https://cdn.test/manifest.json", reason: "url is missing or not a string").message,
            "manifest https://cdn.test/manifest.json: url is missing or not a string")
        XCTAssertEqual(
            ModelCastError.undecodableBody(url: "http://h/manifest.json", encoding: "br", reason: "not supported").message,
            "http://h/manifest.json: cannot decode its Content-Encoding 'br': not supported")
        XCTAssertEqual(
            ModelCastError.expiredManifest(publishedAt: "2020-01-01T00:00:00Z", origin: "SOURCE_DATE_EPOCH", validity: "1d",
                                           expiresAt: "2020-01-02T00:00:00Z", now: "2024-05-01T12:00:00Z").message,
            "the manifest would be expired before it is published: published_at 2020-01-01T00:00:00Z (SOURCE_DATE_EPOCH) plus --expires-in 1d is 2020-01-02T00:00:00Z, and it is now 2024-05-01T12:00:00Z; unset SOURCE_DATE_EPOCH or give a longer --expires-in")
        XCTAssertEqual(
            ModelCastError.expiredManifest(publishedAt: "2020-01-01T00:00:00Z", origin: nil, validity: "1d",
                                           expiresAt: "2020-01-02T00:00:00Z", now: "2024-05-01T12:00:00Z").message,
            "the manifest would be expired before it is published: published_at 2020-01-01T00:00:00Z plus --expires-in 1d is 2020-01-02T00:00:00Z, and it is now 2024-05-01T12:00:00Z; unset SOURCE_DATE_EPOCH or give a longer --expires-in")
        for error in [ModelCastError.targetState("a"), .versionConflict("b"), .liveReleaseConflict("c"),
                      .rollbackTargetUnavailable("d"), .commitFailed("f")] {
            XCTAssertEqual(String(describing: error), error.message)
        }
        for error in [FormatError.invalidInlineSignature("e"), .invalidValue("g")] {
            XCTAssertEqual(String(describing: error), error.message)
        }
    }

    func testRuntimeCasesExitAsUsageDid() {
        let runtime: [any Error] = [
            ModelCastError.targetState("x"), ModelCastError.versionConflict("x"), ModelCastError.liveReleaseConflict("x"),
            ModelCastError.rollbackTargetUnavailable("x"), FormatError.invalidRecord(source: "s", reason: "r"),
            ModelCastError.invalidManifest(source: "s", reason: "r"), FormatError.invalidInlineSignature("x"),
            ModelCastError.undecodableBody(url: "u", encoding: "e", reason: "r"),
            ModelCastError.expiredManifest(publishedAt: "p", origin: nil, validity: "v", expiresAt: "e", now: "n"),
            ModelCastError.commitFailed("x"), FormatError.invalidValue("x"),
        ]
        for error in runtime {
            XCTAssertEqual(ExitStatus(for: error), ModelCastError.usage("x").exitStatus, "\(error)")
            XCTAssertEqual(ExitStatus(for: error), .refused, "\(error)")
        }
    }
}
