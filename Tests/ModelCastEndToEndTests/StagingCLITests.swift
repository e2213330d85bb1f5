import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// A directory target is what gets synced to the host (`aws s3 sync`, `rclone sync`):
/// staged artifacts wait outside it, so a killed publish leaves nothing there to upload.
final class StagingCLITests: XCTestCase {
    let base = "https://cdn.example.com/models"

    func publishOK(_ arguments: [String], epoch: Int = 1_790_000_000, file: StaticString = #filePath, line: UInt = #line) throws {
        let environment = pinnedEnvironment(epoch: epoch)
        let result = try modelcast(["publish"] + arguments, environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
    }

    /// Every file under `root` (dot files too) that is neither an object the hosting
    /// files list nor a hosting file: what a sync would upload that was never published.
    func unpublishedFiles(_ root: String) throws -> [String] {
        let objects = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/_modelcast/objects.json")))
        let text = String(decoding: try JSONSerialization.data(withJSONObject: objects), as: UTF8.self)
        var stray: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            if relative == "_headers" || relative.hasPrefix("_modelcast/") { continue }
            if !text.contains("\"\(relative.replacingOccurrences(of: "/", with: "\\/"))\"") && !text.contains("\"\(relative)\"") {
                stray.append(relative)
            }
        }
        return stray.sorted()
    }

    /// kill -9 while a 300 MB artifact is being staged: the target holds nothing that is
    /// not a published object (the staged file waits beside it, not in it), the live
    /// manifest is intact, and the next publish succeeds and removes the stale file.
    func testKilledPublishLeavesNoStagingFileInTheTarget() throws {
        let work = try Scratch(), src = try Scratch()
        let site = work.at("site")
        let staging = work.at(".modelcast-staging-site")
        try publishOK(["examples/models/tiny-llm.gguf", "--name", "big", "--version", "1.0.0", "--base-url", base, "--to", site])
        XCTAssertEqual(try unpublishedFiles(site), [])
        XCTAssertFalse(FileManager.default.fileExists(atPath: staging), "a finished publish leaves no staging directory")
        let liveBefore = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))

        // 300 MB: a real GGUF header, then a pattern (not sparse, so staging takes a while).
        let header = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/examples/models/tiny-llm.gguf"))
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: try src.write("big.gguf", Array(header))))
        try handle.seekToEnd()
        let chunk = Data(patternBytes(1 << 20, seed: 9))
        for _ in 0..<300 { try handle.write(contentsOf: chunk) }
        try handle.close()

        let process = Process()
        process.executableURL = URL(fileURLWithPath: modelcastBinary)
        process.arguments = ["publish", src.at("big.gguf"), "--version", "1.1.0", "--base-url", base, "--to", site]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && process.isRunning && ((try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []).isEmpty {
            usleep(2_000)
        }
        XCTAssertTrue(process.isRunning, "publish finished before it could be killed")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()

        let left = (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? []
        XCTAssertEqual(left.count, 1, "the killed publish was staging there: \(left)")
        XCTAssertTrue(left.allSatisfy { $0.hasSuffix(".tmp") }, "\(left)")
        XCTAssertEqual(try unpublishedFiles(site), [], "a sync of the target would upload these")
        XCTAssertFalse(FileManager.default.fileExists(atPath: site + "/.modelcast-staging"))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), liveBefore)
        let live = try Release.decode(liveBefore, source: "live")
        for file in live.models.values.flatMap(\.files) {
            XCTAssertEqual(try StreamDigester.digest(ofFileAt: site + "/" + file.key).sha256.hex, file.sha256)
        }

        // The next publish removes the stale file (under the target's lock) and succeeds.
        try publishOK(["examples/models/tiny-llm-mmproj.gguf", "--name", "big", "--version", "1.1.0", "--base-url", base, "--to", site,
                       "--interface-change", "--min-app-version", "1.1"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: staging), "the stale staging file and directory are gone")
        XCTAssertEqual(try unpublishedFiles(site), [])
        for name in try FileManager.default.contentsOfDirectory(atPath: site + "/_modelcast") {
            let content = try String(contentsOfFile: site + "/_modelcast/" + name, encoding: .utf8)
            XCTAssertFalse(content.contains(".modelcast-staging") || content.contains(".tmp"), "\(name) names a staging file")
        }
        XCTAssertEqual(work.listing().filter { !$0.hasPrefix("site") }, [], "nothing else beside the target")
    }

    /// The staging directory is a private sibling of the target (same file system, so
    /// storing is a link), created on demand; where that sibling cannot be trusted (a
    /// symbolic link planted there) staging falls back inside the target, whose `list`
    /// and hosting files never show it.
    func testStagingDirectoryIsAPrivateSiblingOfTheTarget() throws {
        let work = try Scratch()
        try work.mkdir("site")
        let storage = DirectoryStorage(root: work.at("site") + "/")
        let directory = try storage.stagingDirectory()
        XCTAssertEqual(directory, work.at(".modelcast-staging-site"))
        var info = stat()
        XCTAssertEqual(lstat(directory, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFDIR)
        XCTAssertEqual(info.st_mode & 0o077, 0, "only the owner may write (or read) staged files")
        try work.write(".modelcast-staging-site/.a.modelcast-1-1.tmp", [1, 2, 3])
        storage.removeStaleStaging()
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory), "stale files and their directory are removed")
        XCTAssertEqual(try storage.stagingDirectory(), directory, "made again on demand")
        storage.cleanUpStaging()
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory))
        XCTAssertEqual(work.listing(), ["site"])

        // A link planted at the sibling's name is not followed: staging stays inside the target.
        let elsewhere = try Scratch()
        XCTAssertEqual(symlink(elsewhere.path, work.at(".modelcast-staging-site")), 0)
        let fallback = try storage.stagingDirectory()
        XCTAssertEqual(fallback, work.at("site/.modelcast-staging"))
        try work.write("site/.modelcast-staging/.b.modelcast-1-1.tmp", [1])
        try work.write("site/.modelcast-staging/.c.modelcast-1-1.tmp", [1])
        storage.removeStaleStaging()
        storage.cleanUpStaging()
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.at("site/.modelcast-staging")))
        XCTAssertEqual(elsewhere.listing(), [])
    }

    /// A target that is a mount point (another device than its parent) stages inside
    /// itself, since a link cannot cross file systems. Uses /dev/shm where it is its own mount.
    func testMountPointTargetStagesInside() throws {
        var shm = stat(), dev = stat()
        guard stat("/dev/shm", &shm) == 0, stat("/dev", &dev) == 0, shm.st_dev != dev.st_dev, access("/dev/shm", W_OK) == 0,
              !FileManager.default.fileExists(atPath: "/dev/shm/.modelcast-staging") else {
            throw XCTSkip("/dev/shm is not a writable mount point here")
        }
        let storage = DirectoryStorage(root: "/dev/shm")
        XCTAssertEqual(try storage.stagingDirectory(), "/dev/shm/.modelcast-staging")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/dev/.modelcast-staging-shm"))
        storage.cleanUpStaging()
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/dev/shm/.modelcast-staging"))
    }
}
