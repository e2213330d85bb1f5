#if os(Linux) || os(macOS)
import Foundation
import XCTest
@testable import ModelCastClient

/// Failures the client used to pass over in silence (`try?`), each now reported or handled
/// on purpose: a file `installedState()` cannot examine, a download's part file that
/// cannot be opened, a file that cannot be hashed, a model directory that cannot be listed
/// before it is removed. The tests run as root here, so a refused permission cannot make
/// the failure: a name that is not UTF-8 (Foundation lists it under another name, which
/// then names nothing) or a directory where a file belongs does.
final class SwallowedFailureTests: XCTestCase {
    private struct Rig {
        let scratch: Scratch
        let site: ManifestSite
        let nginx: LocalNginx
        let entry: ManifestSite.Entry

        init() throws {
            scratch = try Scratch()
            site = try ManifestSite(root: scratch.at("site"))
            nginx = try LocalNginx(root: site.root, work: scratch.at("nginx"))
            entry = try site.serve(testBytes(1000), at: "m/1.0.0/m.bin")
            try site.publish(version: "1.0.0", sequence: 1, files: [entry], base: nginx.base)
        }

        var directory: URL { scratch.at("device") }

        func updater() throws -> ModelUpdater {
            try ModelUpdater(ClientConfiguration(manifestURL: URL(string: nginx.base + "/manifest.json")!, directory: directory, deviceID: "d", retries: 0))
        }
    }

    /// Creates a file named `name` plus the byte 0xFF (not UTF-8) in `directory`.
    private func plantUnreadableName(_ name: String, in directory: URL) throws {
        let path = Array(directory.appendingPathComponent(name).path.utf8) + [0xFF, 0]
        let descriptor = path.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY, 0o644) }
        guard descriptor >= 0 else { throw TestFailure("cannot create the planted file: errno \(errno)") }
        close(descriptor)
    }

    /// `installedState()` promises every regular file of the version in use, or
    /// `ClientError.io`: a file it cannot examine is not left out of the state unsaid.
    func testInstalledStateThrowsForAFileItCannotExamine() async throws {
        let rig = try Rig()
        let updater = try rig.updater()
        _ = try await updater.update()
        let version = try XCTUnwrap(updater.installed("m")).directory
        let before = try await updater.installedState()
        XCTAssertEqual(before.models.first?.files.map(\.path), ["models/m/versions/\(version.lastPathComponent)/m.bin"])
        try plantUnreadableName("planted", in: version)
        do {
            let state = try await updater.installedState()
            XCTFail("a state without the planted file: \(state.models.first?.files.map(\.path) ?? [])")
        } catch let error as ClientError {
            guard case .io(let path, _) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(path.hasPrefix(version.appendingPathComponent("planted").path), path)
        }
    }

    /// A part file that cannot be opened fails the download as `io` with the system's
    /// reason (`ClientError.io`: "the reason is the system's"), not a generic one.
    func testAPartFileThatCannotBeOpenedFailsWithTheSystemsReason() async throws {
        let rig = try Rig()
        let part = rig.directory.appendingPathComponent("downloads/\(rig.entry.sha256).part")
        try FileManager.default.createDirectory(at: part, withIntermediateDirectories: true)
        let updater = try rig.updater()
        do {
            _ = try await updater.update()
            XCTFail("the update went through a directory where its part file belongs")
        } catch let error as ClientError {
            XCTAssertEqual(error, .io(path: part.path, reason: "Is a directory"))
        }
        XCTAssertNil(updater.installed("m"))
    }

    func testHashingAFileThatIsNotThereFailsWithTheSystemsReason() throws {
        let scratch = try Scratch()
        let missing = scratch.at("missing.bin")
        XCTAssertThrowsError(try hash(of: missing)) { error in
            XCTAssertEqual(error as? ClientError, .io(path: missing.path, reason: "No such file or directory"))
        }
    }

    /// `Installer.remove` touches a model directory only when it holds nothing but what the
    /// client creates: one it cannot list may hold anything, so it is left alone.
    func testAModelDirectoryThatCannotBeListedIsNotRemoved() {
        XCTAssertTrue(Installer.holdsOnlyClientEntries(["current", "versions", ".current-1"]))
        XCTAssertTrue(Installer.holdsOnlyClientEntries([]))
        XCTAssertFalse(Installer.holdsOnlyClientEntries(["current", "versions", "app-cache"]))
        XCTAssertFalse(Installer.holdsOnlyClientEntries(nil), "a directory that could not be listed")
    }
}
#endif
