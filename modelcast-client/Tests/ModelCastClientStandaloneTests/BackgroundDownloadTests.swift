#if os(Linux) || os(macOS)
import Foundation
import XCTest
@testable import ModelCastClient
import ModelCastFormat

/// The download-task path (`ClientConfiguration.backgroundDownloads`) against nginx on
/// 127.0.0.1: a good file installs; a wrong digest, a short file, an oversized one and an
/// error page are refused and leave nothing in the client's directory; a file the session
/// delivered while no update waited is proven and used; cancelling stops it. On Linux the
/// session is an ordinary one (swift-corelibs-foundation has no background sessions), so
/// what is tested is the client's side of it: the task, the file's check, the hand-over to
/// the installer. Suspension and relaunch by the system cannot be tested here.
final class BackgroundDownloadTests: XCTestCase {
    /// A device: its directory, the site, nginx serving it.
    private final class Rig {
        let scratch: Scratch
        let site: ManifestSite
        let nginx: LocalNginx
        /// Unique per test: one background session per identifier and process.
        let identifier = "test-" + UUID().uuidString

        init() throws {
            scratch = try Scratch()
            site = try ManifestSite(root: scratch.at("site"))
            nginx = try LocalNginx(root: site.root, work: scratch.at("nginx"))
        }

        var directory: URL { scratch.at("device") }
        var downloads: URL { directory.appendingPathComponent("downloads") }

        func updater(minimumFileSize: Int64 = 1 << 20, retries: Int = 1) throws -> ModelUpdater {
            try ModelUpdater(ClientConfiguration(
                manifestURL: URL(string: nginx.base + "/manifest.json")!, directory: directory, deviceID: "d", retries: retries,
                backgroundDownloads: .forTests(identifier, minimumFileSize: minimumFileSize)))
        }

        /// GETs nginx logged for `path`.
        func gets(_ path: String) -> Int { nginx.requests().filter { $0.hasPrefix("GET /\(path) ") }.count }
    }

    func testALargeFileComesThroughTheDownloadTaskAndInstallsSmallOnesStream() async throws {
        let rig = try Rig()
        let big = testBytes(3 << 20), small = testBytes(1000, seed: 2)
        let bigEntry = try rig.site.serve(big, at: "m/1.0.0/m.bin")
        let smallEntry = try rig.site.serve(small, at: "m/1.0.0/m-extra.bin")
        try rig.site.publish(version: "1.0.0", sequence: 1, files: [bigEntry, smallEntry], base: rig.nginx.base)
        let updater = try rig.updater()
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let installed = try XCTUnwrap(updater.installed("m"))
        XCTAssertEqual(try Data(contentsOf: installed.mainFile), big)
        XCTAssertTrue(installed.versionID.hasPrefix("1.0.0-"), installed.versionID)
        XCTAssertEqual(try Data(contentsOf: installed.directory.appendingPathComponent("m-extra.bin")), small)
        let transfers = await updater.lastDownloads.reduce(into: [String: FileDownload.Transfer]()) { $0[$1.file] = $1.transfer }
        XCTAssertEqual(transfers, ["m.bin": .downloadTask, "m-extra.bin": .stream])
        XCTAssertEqual(rig.gets("m/1.0.0/m.bin"), 1)
        XCTAssertEqual(filesUnder(rig.downloads), [], "the download is installed and tidied away")
    }

    /// The default (no `backgroundDownloads`): no session is made, and every file streams,
    /// a large one resumed from the part file an earlier launch left (a 206 for the rest).
    /// The package's only test of the plain path: the Apple workflow runs these tests alone.
    func testWithoutBackgroundDownloadsEveryFileStreamsAndResumes() async throws {
        let rig = try Rig()
        let big = testBytes(3 << 20), small = testBytes(1000, seed: 2)
        let bigEntry = try rig.site.serve(big, at: "m/1.0.0/m.bin")
        let smallEntry = try rig.site.serve(small, at: "m/1.0.0/m-extra.bin")
        try rig.site.publish(version: "1.0.0", sequence: 1, files: [bigEntry, smallEntry], base: rig.nginx.base)
        try FileManager.default.createDirectory(at: rig.downloads, withIntermediateDirectories: true)
        try big.prefix(1 << 20).write(to: rig.downloads.appendingPathComponent(bigEntry.sha256 + ".part"))
        let updater = try ModelUpdater(ClientConfiguration(
            manifestURL: URL(string: rig.nginx.base + "/manifest.json")!, directory: rig.directory, deviceID: "d"))
        XCTAssertNil(updater.downloader.background)
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let installed = try XCTUnwrap(updater.installed("m"))
        XCTAssertEqual(try Data(contentsOf: installed.mainFile), big)
        XCTAssertEqual(try Data(contentsOf: installed.directory.appendingPathComponent("m-extra.bin")), small)
        let downloads = await updater.lastDownloads.sorted { $0.file < $1.file }
        XCTAssertEqual(downloads.map(\.transfer), [.stream, .stream])
        XCTAssertEqual(downloads.map(\.fetchedBytes), [1000, Int64(big.count - (1 << 20))], "the part file's bytes are not fetched again")
        XCTAssertEqual(rig.nginx.statuses("/m/1.0.0/m.bin"), [206])
        XCTAssertEqual(filesUnder(rig.downloads), [])
    }

    #if canImport(FoundationNetworking)
    /// Linux has no background sessions: an app's `backgroundDownloads` (outside the tests,
    /// which ask for in-process download tasks) changes nothing, and a large file streams
    /// as it would without it — resumable from its part file, held to the minimum rate,
    /// read once — rather than going through a download task that gains nothing there.
    func testOnLinuxBackgroundDownloadsLeaveEveryFileStreamed() async throws {
        let rig = try Rig()
        let big = testBytes(3 << 20)
        let entry = try rig.site.serve(big, at: "m/1.0.0/m.bin")
        try rig.site.publish(version: "1.0.0", sequence: 1, files: [entry], base: rig.nginx.base)
        let updater = try ModelUpdater(ClientConfiguration(
            manifestURL: URL(string: rig.nginx.base + "/manifest.json")!, directory: rig.directory, deviceID: "d",
            backgroundDownloads: BackgroundDownloads(identifier: rig.identifier, minimumFileSize: 1 << 20)))
        XCTAssertNil(updater.downloader.background, "no session: there is nothing for one to do on Linux")
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertEqual(try Data(contentsOf: try XCTUnwrap(updater.installed("m")).mainFile), big)
        let transfers = await updater.lastDownloads.map(\.transfer)
        XCTAssertEqual(transfers, [.stream])
    }
    #endif

    func testAWrongDigestIsRefusedAndLeavesNothing() async throws {
        let rig = try Rig()
        let data = testBytes(2 << 20)
        var entry = try rig.site.serve(data, at: "m/1.0.0/m.bin")
        let claimed = sha256Hex(testBytes(2 << 20, seed: 9))
        entry.sha256 = claimed
        try rig.site.publish(version: "1.0.0", sequence: 1, files: [entry], base: rig.nginx.base)
        let updater = try rig.updater()
        await assertRefused(try await updater.update(), .hashMismatch(model: "m", file: "m.bin", expected: claimed, actual: sha256Hex(data)))
        XCTAssertEqual(rig.gets("m/1.0.0/m.bin"), 1, "a wrong digest is what the server holds: not tried again")
        try assertNothingLeft(rig, updater)
    }

    func testAShortFileIsRefusedAndLeavesNothing() async throws {
        let rig = try Rig()
        let whole = testBytes(2 << 20)
        let served = whole.prefix(whole.count - 4096)
        var entry = try rig.site.serve(Data(served), at: "m/1.0.0/m.bin")
        entry.sha256 = sha256Hex(whole)
        entry.size = Int64(whole.count)
        try rig.site.publish(version: "1.0.0", sequence: 1, files: [entry], base: rig.nginx.base)
        let updater = try rig.updater()
        await assertRefused(try await updater.update(), .sizeMismatch(model: "m", file: "m.bin", expected: Int64(whole.count), actual: Int64(served.count)))
        try assertNothingLeft(rig, updater)
    }

    func testAnOversizedFileIsRefusedAndLeavesNothing() async throws {
        let rig = try Rig()
        let expected = testBytes(1 << 20)
        let served = expected + testBytes(8 << 20, seed: 3)
        var entry = try rig.site.serve(served, at: "m/1.0.0/m.bin")
        entry.sha256 = sha256Hex(expected)
        entry.size = Int64(expected.count)
        try rig.site.publish(version: "1.0.0", sequence: 1, files: [entry], base: rig.nginx.base)
        let updater = try rig.updater()
        do {
            _ = try await updater.update()
            XCTFail("an oversized file was installed")
        } catch ClientError.sizeMismatch(let model, let file, let size, let actual) {
            XCTAssertEqual([model, file], ["m", "m.bin"])
            XCTAssertEqual(size, Int64(expected.count))
            XCTAssertGreaterThan(actual, size, "the announced or written length, past the manifest's size")
        }
        try assertNothingLeft(rig, updater)
    }

    func testAnErrorPageIsNotTakenForTheFile() async throws {
        let rig = try Rig()
        let data = testBytes(2 << 20)
        var entry = try rig.site.serve(data, at: "m/1.0.0/m.bin")
        entry.path = "m/1.0.0/missing.bin"
        try rig.site.publish(version: "1.0.0", sequence: 1, files: [entry], base: rig.nginx.base)
        let updater = try rig.updater()
        await assertRefused(try await updater.update(), .http(url: rig.nginx.base + "/m/1.0.0/missing.bin", status: 404))
        try assertNothingLeft(rig, updater)
    }

    /// A relaunched app: the session delivers a task that finished while no update waited.
    /// Its file waits under an unproven name; the next update proves it from the disk and
    /// installs it without downloading it again. A delivered file with wrong bytes is
    /// deleted and the file downloaded.
    func testAFileDeliveredWhileNoUpdateWaitedIsProvenBeforeItIsUsed() async throws {
        let rig = try Rig()
        let data = testBytes(2 << 20)
        let entry = try rig.site.serve(data, at: "m/1.0.0/m.bin")
        try rig.site.publish(version: "1.0.0", sequence: 1, files: [entry], base: rig.nginx.base)
        let updater = try rig.updater()
        let session = try XCTUnwrap(updater.downloader.background?.session)
        let sha = try SHA256Hex(entry.sha256)
        // A task no update waits for, as the system hands a relaunched app.
        let task = session.session.downloadTask(with: URL(string: rig.nginx.base + "/m/1.0.0/m.bin")!)
        task.taskDescription = BackgroundSession.taskDescription(sha)
        task.resume()
        let staged = session.staged(sha)
        for _ in 0..<400 where !FileManager.default.fileExists(atPath: staged.path) { try await Task.sleep(nanoseconds: 25_000_000) }
        XCTAssertEqual(try Data(contentsOf: staged), data, "the delivered file waits, unproven, under its own name")
        let first = try await updater.update()
        XCTAssertEqual(first, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertEqual(rig.gets("m/1.0.0/m.bin"), 1, "installed from the delivered file: not downloaded again")
        XCTAssertEqual(try Data(contentsOf: try XCTUnwrap(updater.installed("m")).mainFile), data)

        // The same for version 2, with the delivered file's bytes wrong.
        let next = testBytes(2 << 20, seed: 5)
        let nextEntry = try rig.site.serve(next, at: "m/2.0.0/m.bin")
        try rig.site.publish(version: "2.0.0", sequence: 2, files: [nextEntry], base: rig.nginx.base)
        var tampered = next
        tampered[10] ^= 1
        try FileManager.default.createDirectory(at: rig.downloads, withIntermediateDirectories: true)  // the last update tidied it away
        try tampered.write(to: session.staged(try SHA256Hex(nextEntry.sha256)))
        let second = try await updater.update()
        XCTAssertEqual(second, .updated(sequence: 2, models: ["m": "2.0.0"]))
        XCTAssertEqual(rig.gets("m/2.0.0/m.bin"), 1, "the wrong delivered file is dropped and the file downloaded")
        XCTAssertEqual(try Data(contentsOf: try XCTUnwrap(updater.installed("m")).mainFile), next)
        XCTAssertEqual(filesUnder(rig.downloads), [])
    }

    func testCancellingStopsTheDownloadTaskAndInstallsNothing() async throws {
        let rig = try Rig()
        let data = testBytes(4 << 20)  // 64 s at nginx's 64 KiB/s under /slow/
        let entry = try rig.site.serve(data, at: "slow/m.bin")
        try rig.site.publish(version: "1.0.0", sequence: 1, files: [entry], base: rig.nginx.base)
        let updater = try rig.updater()
        let update = Task { try await updater.update() }
        for _ in 0..<200 where rig.gets("slow/m.bin") == 0 && !FileManager.default.fileExists(atPath: rig.downloads.path) {
            try await Task.sleep(nanoseconds: 25_000_000)
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        let start = Date()
        update.cancel()
        do {
            _ = try await update.value
            XCTFail("the update finished")
        } catch is CancellationError {}
        XCTAssertLessThan(Date().timeIntervalSince(start), 3, "the cancel ends the call at once")
        XCTAssertNil(updater.installed("m"))
        XCTAssertEqual(filesUnder(rig.downloads).filter { !$0.hasSuffix(".resume") }, [], "no file of the cancelled transfer (resume data may stay)")
    }

    /// The app forwards `handleEventsForBackgroundURLSession`: its handler runs on the main
    /// queue once the session has delivered its events; another identifier is not ours.
    func testTheAppsBackgroundEventsHandlerIsCalledOnceTheSessionIsDone() throws {
        let scratch = try Scratch()
        let identifier = "test-" + UUID().uuidString
        let updater = try ModelUpdater(ClientConfiguration(
            manifestURL: URL(string: "http://127.0.0.1:1/manifest.json")!, directory: scratch.at("device"), deviceID: "d",
            backgroundDownloads: .forTests(identifier)))
        XCTAssertFalse(updater.handleEventsForBackgroundURLSession("another") { XCTFail("another session's handler was called") })
        let called = expectation(description: "the handler")
        let session = try XCTUnwrap(updater.downloader.background?.session)
        XCTAssertTrue(updater.handleEventsForBackgroundURLSession(identifier) {
            XCTAssertTrue(Thread.isMainThread)
            called.fulfill()
        })
        session.urlSessionDidFinishEvents(forBackgroundURLSession: session.session)
        session.urlSessionDidFinishEvents(forBackgroundURLSession: session.session)  // a second time: not called again
        wait(for: [called], timeout: 5)
    }

    func testOneIdentifierServesOneDirectory() throws {
        let scratch = try Scratch()
        let identifier = "test-" + UUID().uuidString
        func updater(_ directory: String) throws -> ModelUpdater {
            try ModelUpdater(ClientConfiguration(manifestURL: URL(string: "http://127.0.0.1:1/manifest.json")!, directory: scratch.at(directory),
                                                 deviceID: "d", backgroundDownloads: .forTests(identifier)))
        }
        let first = try updater("a")
        let again = try updater("a")
        XCTAssertTrue(first.downloader.background?.session === again.downloader.background?.session, "one session per identifier")
        XCTAssertThrowsError(try updater("b")) { error in
            guard case .configuration(let reason) = error as? ClientError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains(identifier), reason)
        }
    }

    private func assertRefused(_ call: @autoclosure () async throws -> UpdateOutcome, _ expected: ClientError,
                               file: StaticString = #filePath, line: UInt = #line) async {
        do {
            let outcome = try await call()
            XCTFail("installed: \(outcome)", file: file, line: line)
        } catch {
            XCTAssertEqual(error as? ClientError, expected, file: file, line: line)
        }
    }

    /// Nothing installed, nothing of the download kept (no proven, staged or partial file).
    private func assertNothingLeft(_ rig: Rig, _ updater: ModelUpdater, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(updater.installedModels(), [], file: file, line: line)
        XCTAssertEqual(filesUnder(rig.downloads), [], file: file, line: line)
        XCTAssertEqual(filesUnder(rig.directory.appendingPathComponent("models")), [], file: file, line: line)
    }
}
extension BackgroundDownloads {
    /// Settings whose session runs in the test process on every platform (see `inProcess`).
    static func forTests(_ identifier: String, minimumFileSize: Int64 = BackgroundDownloads.defaultMinimumFileSize) -> BackgroundDownloads {
        var settings = BackgroundDownloads(identifier: identifier, minimumFileSize: minimumFileSize)
        settings.inProcess = true
        return settings
    }
}
#endif
