import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// What an install may take of the disk: a zip's unpacked size (its entries' declared
/// sizes) is checked against `maxInstallBytes` and the volume's free space before a byte
/// is unpacked, so an honest zip bomb (a small download that truly unpacks to far more)
/// is refused with the model, the size and the limit named, and leaves nothing behind.
/// A plain file, hard-linked into its version, needs room for its download only.
final class InstallSpaceTests: XCTestCase {
    /// A directory model whose zip (deflated) is small and unpacks to `zeros` bytes of
    /// zeros plus a short text file: returns the directory and its unpacked size.
    func zipBomb(_ site: ClientTests.Site, zeros: Int64) throws -> (path: String, unpacked: Int64) {
        let directory = try site.work.mkdir("bomb/Big.bundle")
        let text = try site.work.write("bomb/Big.bundle/info.txt", text: "zeros, truthfully declared\n")
        let weights = directory + "/weights.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: weights, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: weights))
        try handle.truncate(atOffset: UInt64(zeros))
        try handle.close()
        let textSize = Int64(try Data(contentsOf: URL(fileURLWithPath: text)).count)
        return (directory, zeros + textSize)
    }

    /// The error `update()` throws (a failure of the test when it returns).
    func failure(of updater: ModelUpdater, file: StaticString = #filePath, line: UInt = #line) async -> ClientError? {
        do {
            let outcome = try await updater.update()
            XCTFail("installed: \(outcome)", file: file, line: line)
        } catch let error as ClientError {
            return error
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
        return nil
    }

    /// Nothing of a refused version is left under the device's directory: no version, no
    /// staging directory, no `current` link, no download.
    func assertNothingLeft(_ device: String, file: StaticString = #filePath, line: UInt = #line) {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: device + "/models/m/versions")) ?? []
        XCTAssertEqual(versions, [], "versions or staging left behind", file: file, line: line)
        XCTAssertNil(try? FileManager.default.destinationOfSymbolicLink(atPath: device + "/models/m/current"), file: file, line: line)
        let downloads = (try? FileManager.default.contentsOfDirectory(atPath: device + "/downloads")) ?? []
        XCTAssertEqual(downloads, [], "downloads left behind", file: file, line: line)
    }

    /// `maxInstallBytes`: a 32 MiB cap refuses a zip of a few KiB that declares 64 MiB,
    /// before unpacking it; a plain file over the cap is refused before it is downloaded.
    func testTheInstallCapRefusesAZipBombBeforeUnpackingAndABigFileBeforeDownloading() async throws {
        let site = try ClientTests.Site()
        let bomb = try zipBomb(site, zeros: 64 << 20)
        try site.publish([bomb.path], version: "1.0.0", ["--compression", "deflate"])
        try site.start()
        let zip = try XCTUnwrap(FileManager.default.subpaths(atPath: site.root)?.first { $0.hasSuffix("Big.bundle.zip") })
        let zipSize = Int64(try Data(contentsOf: URL(fileURLWithPath: site.root + "/" + zip)).count)
        XCTAssertLessThan(zipSize, 1 << 20, "a small download")
        var configuration = site.configuration()
        configuration.maxInstallBytes = 32 << 20
        let device = try ModelUpdater(configuration)
        let error = await failure(of: device)
        XCTAssertEqual(error, .installTooLarge(model: "m", version: "1.0.0", bytes: bomb.unpacked, limit: 32 << 20))
        assertNothingLeft(site.work.at("device"))

        // A plain file of 2 MiB under a 1 MiB cap: its size is the manifest's, so nothing is fetched.
        try site.publish([try site.work.write("plain/m.bin", patternBytes(2 << 20, seed: 3))], version: "2.0.0")
        configuration.maxInstallBytes = 1 << 20
        let before = site.requests.filter { $0.contains("/models/models/") }.count
        let plainError = await failure(of: try ModelUpdater(configuration))
        XCTAssertEqual(plainError, .installTooLarge(model: "m", version: "2.0.0", bytes: 2 << 20, limit: 1 << 20))
        XCTAssertEqual(site.requests.filter { $0.contains("/models/models/") }.count, before, "nothing downloaded: \(site.requests)")
        configuration.maxInstallBytes = 2 << 20
        let fits = try await ModelUpdater(configuration).update()
        XCTAssertEqual(fits, .updated(sequence: 2, models: ["m": "2.0.0"]), "a cap equal to the size is met")
    }

    /// On a 48 MiB volume, a zip of a few KiB that declares 64 MiB is refused before it is
    /// unpacked: the volume never gets close to full (the attack this answers filled a
    /// 100 MiB volume to 8 KiB free before refusing), and the error names the model, the
    /// size and the free space. The manifest publish writes gives the size
    /// (`storage.install_size`), so the refusal comes before the download; a manifest that
    /// understates it is caught by the zip's own entries, before anything is unpacked. A
    /// plain file of 22 MiB installs on a 40 MiB volume: it is hard-linked, so it needs its
    /// download's room only, not twice its size.
    func testFreeSpaceIsCheckedBeforeUnpackingAndAPlainFileNeedsItsSizeOnce() async throws {
        guard getuid() == 0 else { throw XCTSkip("a small volume (a tmpfs mount) needs root") }
        let site = try ClientTests.Site()
        let bomb = try zipBomb(site, zeros: 64 << 20)
        try site.publish([bomb.path], version: "1.0.0", ["--compression", "deflate"])
        try site.start()
        let volume = try SmallVolume(megabytes: 48)
        var configuration = site.configuration()
        configuration.directory = URL(fileURLWithPath: volume.path + "/device")
        let early = await failure(of: try ModelUpdater(configuration))
        guard case .insufficientSpace(let earlyModel, let needed, let free) = early else { return XCTFail("\(String(describing: early))") }
        XCTAssertEqual(earlyModel, "m")
        XCTAssertGreaterThan(needed, bomb.unpacked)
        XCTAssertLessThanOrEqual(free, 48 << 20)
        XCTAssertEqual(site.requests.filter { $0.contains("/models/models/") }, [], "nothing downloaded")

        // The same release with its install size understated (unsigned, to a device that pins no key).
        let manifestPath = site.root + "/manifest.json"
        let published = try String(contentsOfFile: manifestPath, encoding: .utf8)
        let lying = published.replacingOccurrences(of: "\"install_size\": \(bomb.unpacked)", with: "\"install_size\": 1")
        XCTAssertTrue(lying.contains("\"install_size\": 1"), "the manifest gives the zip's unpacked size")
        try lying.write(toFile: manifestPath, atomically: true, encoding: .utf8)
        configuration.publicKeys = []
        let watch = FreeSpaceWatch(volume.path)
        let error = await failure(of: try ModelUpdater(configuration))
        let lowest = watch.stop()
        guard case .insufficientSpaceToInstall(let model, let version, let bytes, let available, let reserve) = error else {
            return XCTFail("\(String(describing: error)); lowest free space \(lowest)")
        }
        XCTAssertEqual([model, version], ["m", "1.0.0"])
        XCTAssertEqual(bytes, bomb.unpacked)
        XCTAssertLessThanOrEqual(available, 48 << 20)
        XCTAssertGreaterThan(available, 47 << 20)
        XCTAssertGreaterThan(reserve, 0)
        XCTAssertGreaterThan(lowest, 47 << 20, "nothing was unpacked (the lowest free space seen: \(lowest) bytes)")
        assertNothingLeft(volume.path + "/device")
        try published.write(toFile: manifestPath, atomically: true, encoding: .utf8)  // publish goes on only from what it wrote

        let plain = try SmallVolume(megabytes: 40)
        try site.publish([try site.work.write("plain/m.bin", patternBytes(22 << 20, seed: 4))], version: "2.0.0")
        configuration.directory = URL(fileURLWithPath: plain.path + "/device")
        let outcome = try await ModelUpdater(configuration).update()
        XCTAssertEqual(outcome, .updated(sequence: 2, models: ["m": "2.0.0"]))
    }

    /// A device whose volume is nearly full still follows a rollback to a version it keeps:
    /// nothing is downloaded or written, so the free-space reserve is not asked for.
    func testARollbackToAKeptVersionNeedsNoFreeSpace() async throws {
        guard getuid() == 0 else { throw XCTSkip("a small volume (a tmpfs mount) needs root") }
        let site = try ClientTests.Site()
        try site.publish([try site.work.write("v1/m.bin", patternBytes(1 << 20, seed: 1))], version: "1.0.0")
        try site.start()
        let volume = try SmallVolume(megabytes: 24)
        var configuration = site.configuration()
        configuration.directory = URL(fileURLWithPath: volume.path + "/device")
        _ = try await ModelUpdater(configuration).update()
        try site.publish([try site.work.write("v2/m.bin", patternBytes(1 << 20, seed: 2))], version: "2.0.0")
        let second = try await ModelUpdater(configuration).update()
        XCTAssertEqual(second, .updated(sequence: 2, models: ["m": "2.0.0"]))
        // The app's other data fills the volume to about 4 MiB free, below the 16 MiB reserve.
        var info = statvfs()
        XCTAssertEqual(statvfs(volume.path, &info), 0)
        let free = Int64(info.f_bavail) * Int64(info.f_frsize)
        XCTAssertTrue(FileManager.default.createFile(atPath: volume.path + "/filler", contents: Data(count: Int(free - (4 << 20)))))
        try site.run(["rollback", site.root, "--version", "1.0.0"])
        let outcome = try await ModelUpdater(configuration).update()
        XCTAssertEqual(outcome, .updated(sequence: 3, models: ["m": "1.0.0"]))
    }
}

/// A tmpfs of a given size mounted for a test (root only) in a scratch directory of its
/// own, unmounted before that directory is removed.
final class SmallVolume {
    private let scratch: Scratch
    var path: String { scratch.path }

    init(megabytes: Int) throws {
        scratch = try Scratch("modelcast-volume")
        let mounted = try runProcess("/usr/bin/env", ["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", scratch.path])
        guard mounted.status == 0 else { throw XCTSkip("cannot mount a tmpfs at \(scratch.path): \(mounted.stderr)") }
    }

    deinit { _ = try? runProcess("/usr/bin/env", ["umount", scratch.path]) }
}

/// Samples the free space of a volume every millisecond until stopped; keeps the lowest.
final class FreeSpaceWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var lowest = Int64.max
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    init(_ path: String) {
        Thread { [self] in
            while lock.withLock({ running }) {
                var info = statvfs()
                if statvfs(path, &info) == 0 {
                    let free = Int64(info.f_bavail) * Int64(info.f_frsize)
                    lock.withLock { lowest = min(lowest, free) }
                }
                usleep(1000)
            }
            done.signal()
        }.start()
    }

    /// Stops sampling; the lowest free space seen, in bytes.
    func stop() -> Int64 {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { lowest }
    }
}
