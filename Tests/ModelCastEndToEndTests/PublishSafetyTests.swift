import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The paths a new user takes first, where a publish must never break devices
/// (issue 10): what plain paths mean, dropped models, sequences that go back,
/// build metadata, control characters, already-expired manifests.
final class PublishSafetyTests: XCTestCase {
    let base = "https://cdn.example.com/models"
    let gguf = "examples/models/tiny-llm.gguf"
    let mmproj = "examples/models/tiny-llm-mmproj.gguf"

    func publish(_ arguments: [String], epoch: Int? = 1_790_000_000, environment extra: [String: String] = [:]) throws -> ProcessOutput {
        var environment = epoch.map { pinnedEnvironment(epoch: $0) } ?? ProcessInfo.processInfo.environment.filter { $0.key != "SOURCE_DATE_EPOCH" }
        environment.merge(extra) { $1 }
        return try modelcast(["publish"] + arguments, environment: environment)
    }

    @discardableResult
    func publishOK(_ arguments: [String], epoch: Int? = 1_790_000_000, file: StaticString = #filePath, line: UInt = #line) throws -> ProcessOutput {
        let result = try publish(arguments, epoch: epoch)
        XCTAssertEqual(result.status, 0, "publish \(arguments) failed: \(result.stderr)", file: file, line: line)
        return result
    }

    func manifest(_ site: Scratch) throws -> Release {
        try Release.decode(Data(contentsOf: URL(fileURLWithPath: site.at("manifest.json"))), source: "live manifest")
    }

    // MARK: 1. Plain paths are the files of one model

    /// No --name: a GGUF and its projector are one model named after the first file.
    func testPlainPathsWithoutNameAreOneModel() throws {
        let site = try Scratch()
        try publishOK([gguf, mmproj, "--version", "1.0.0", "--base-url", base, "--to", site.path])
        let live = try manifest(site)
        XCTAssertEqual(live.models.keys.sorted(), ["tiny-llm"])
        XCTAssertEqual(live.models["tiny-llm"]?.files.map(\.name), ["tiny-llm.gguf", "tiny-llm-mmproj.gguf"])
        // NAME=PATH still makes separate models, and plain paths beside them form one more.
        let other = try Scratch()
        try publishOK(["big=" + mmproj, gguf, "--version", "1.0.0", "--base-url", base, "--to", other.path])
        XCTAssertEqual(try manifest(other).models.keys.sorted(), ["big", "tiny-llm"])
    }

    // MARK: 2. A publish never silently drops a live model

    func testPublishThatWouldDropALiveModelIsRefused() throws {
        let site = try Scratch(), input = try Scratch()
        try publishOK([gguf, "--version", "1.0.0", "--base-url", base, "--to", site.path])
        let renamed = try input.write("other.gguf", Array(try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/" + gguf))))
        let before = try snapshot(site.path)
        let refused = try publish([renamed, "--version", "1.2.0", "--base-url", base, "--to", site.path])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("would drop model tiny-llm"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--remove-model tiny-llm"), refused.stderr)
        XCTAssertEqual(refused.stdout, "")
        XCTAssertEqual(try snapshot(site.path), before, "a refused publish changes nothing")

        let unknown = try publish([renamed, "--version", "1.2.0", "--base-url", base, "--to", site.path, "--remove-model", "nope"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.stderr.contains("--remove-model nope: the live manifest has no model named nope (it has tiny-llm)"), unknown.stderr)
        XCTAssertEqual(try snapshot(site.path), before)

        try publishOK([renamed, "--version", "1.2.0", "--base-url", base, "--to", site.path, "--remove-model", "tiny-llm"])
        XCTAssertEqual(try manifest(site).models.keys.sorted(), ["other"])
    }

    // MARK: 3. Sequences never go back

    /// The newest history record deleted: the live manifest is explained by no record,
    /// so publish refuses; with --adopt-live it continues above the live sequence.
    func testSequenceNeverGoesBackWhenHistoryIsLost() throws {
        let site = try Scratch()
        try publishOK([gguf, "--version", "1.0.0", "--base-url", base, "--to", site.path])
        try publishOK([gguf, "--version", "1.1.0", "--base-url", base, "--to", site.path])
        XCTAssertEqual(unlink(site.at("manifests/00000002.json")), 0)
        let before = try snapshot(site.path)
        let refused = try publish([gguf, "--version", "1.2.0", "--base-url", base, "--to", site.path])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("\(site.path)/manifest.json (sequence 2) matches no history record"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--adopt-live"), refused.stderr)
        XCTAssertEqual(try snapshot(site.path), before)

        try publishOK([gguf, "--version", "1.2.0", "--base-url", base, "--to", site.path, "--adopt-live"])
        let live = try manifest(site)
        XCTAssertEqual(live.sequence, 3, "above the live sequence 2, never the reused 2")
        XCTAssertEqual(live.rollback?.sequence, 2)

        // An empty history beside a live manifest: the same.
        try FileManager.default.removeItem(atPath: site.at("manifests"))
        XCTAssertEqual(try publish([gguf, "--version", "1.3.0", "--base-url", base, "--to", site.path]).status, 1)
        try publishOK([gguf, "--version", "1.3.0", "--base-url", base, "--to", site.path, "--adopt-live"])
        XCTAssertEqual(try manifest(site).sequence, 4)
    }

    /// A profile without a sequence field: the signature's trusted comment still knows it.
    func testSequenceFromTheSignatureWhenTheProfileHasNone() throws {
        let site = try Scratch(), keys = try Scratch()
        XCTAssertEqual(try modelcast(["keygen", "--unencrypted", "--public-key", keys.at("k.pub"), "--secret-key", keys.at("k.key")]).status, 0)
        let nomlens = ["--profile", "nomlens", "--meta", "num_classes=3", "--meta", "class_list_version=v1", "--meta", "training_date=2026-01-01",
                       "--base-url", base, "--to", site.path, "--sign", keys.at("k.key")]
        try publishOK([gguf, "--version", "1.0.0"] + nomlens)
        try publishOK([gguf, "--version", "1.1.0"] + nomlens)
        try publishOK([gguf, "--version", "1.2.0"] + nomlens)
        try FileManager.default.removeItem(atPath: site.at("manifests"))
        try publishOK([gguf, "--version", "1.3.0", "--adopt-live"] + nomlens)
        let signature = try String(contentsOfFile: site.at("manifest.json.minisig"), encoding: .utf8)
        XCTAssertTrue(signature.contains("sequence:4\t"), signature)
    }

    /// The manifest, the history and its index deleted, the signature kept: its trusted
    /// comment still witnesses sequence 3, so the next publish is 4, not 1 (issue 24, item 9).
    func testSequenceFromASignatureLeftWithoutItsManifest() throws {
        let site = try Scratch(), keys = try Scratch()
        XCTAssertEqual(try modelcast(["keygen", "--unencrypted", "--public-key", keys.at("k.pub"), "--secret-key", keys.at("k.key")]).status, 0)
        for version in ["1.0.0", "1.1.0", "1.2.0"] {
            try publishOK([gguf, "--version", version, "--base-url", base, "--to", site.path, "--sign", keys.at("k.key")])
        }
        for gone in ["manifest.json", "manifests", "_modelcast"] { try FileManager.default.removeItem(atPath: site.at(gone)) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: site.at("manifest.json.minisig")))
        try publishOK([gguf, "--version", "1.3.0", "--base-url", base, "--to", site.path, "--sign", keys.at("k.key")])
        XCTAssertEqual(try manifest(site).sequence, 4)
    }

    /// Temporary files a killed run left in the target (`.NAME.modelcast-PID-RANDOM.tmp`)
    /// are removed by the next command that takes the target's lock, so a sync of the
    /// directory never uploads them; files of the same look that are not ours stay (issue 24, item 3).
    func testTemporaryFilesAKilledRunLeftAreRemovedByTheNext() throws {
        let site = try Scratch()
        try publishOK([gguf, "--version", "1.0.0", "--base-url", base, "--to", site.path])
        let leftovers = [".manifest.json.modelcast-4242-1a2b.tmp", "models/tiny-llm/1.0.0/.tiny-llm.gguf.modelcast-7-ff.tmp",
                         "manifests/.00000001.json.modelcast-12-abc.tmp", "_modelcast/.objects.json.modelcast-99-0.tmp"]
        let kept = [".keep", "notes.modelcast-1-2.tmp", ".x.modelcast-pid-ff.tmp", "models/.modelcast-1-2.tmp"]
        for path in leftovers + kept { _ = try site.write(path, Array("leftover".utf8)) }
        try publishOK([gguf, "--version", "1.1.0", "--base-url", base, "--to", site.path])
        for path in leftovers { XCTAssertFalse(FileManager.default.fileExists(atPath: site.at(path)), "\(path) is still there") }
        for path in kept { XCTAssertTrue(FileManager.default.fileExists(atPath: site.at(path)), "\(path) was removed") }
    }

    /// A file system too small for a publish, through the CLI: exit status 3, an I/O
    /// failure, saying so (issue 24, item 11). The sweep of every fill level (4 KiB to
    /// 240 KiB) runs in process: FullDiskPublishTests. Needs root for the mount.
    func testAFullDiskIsAnIOFailure() throws {
        let work = try Scratch()
        let mountPoint = try work.mkdir("disk")
        let mounted = try runProcess("/bin/mount", ["-t", "tmpfs", "-o", "size=8k", "tmpfs", mountPoint])
        guard mounted.status == 0 else { throw XCTSkip("cannot mount a tmpfs here (\(mounted.stderr)): needs root") }
        defer { _ = try? runProcess("/bin/umount", [mountPoint]) }
        let result = try publish([gguf, mmproj, "--version", "1.0.0", "--base-url", base, "--to", mountPoint + "/site"])
        XCTAssertEqual(result.status, 3, result.stderr)
        XCTAssertTrue(result.stderr.contains("No space left on device"), result.stderr)
    }

    // MARK: 4. Build metadata does not make another version

    func testBuildMetadataIsTheSameVersion() throws {
        let site = try Scratch(), input = try Scratch()
        try publishOK([gguf, "--name", "m", "--version", "1.11.0+build.6", "--base-url", base, "--to", site.path])
        let before = try snapshot(site.path)
        let changed = try input.write("m.gguf", Array(try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/" + mmproj))))
        let refused = try publish([changed, "--name", "m", "--version", "1.11.0+build.7", "--base-url", base, "--to", site.path])
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("1.11.0+build.7 of model m has the same precedence as 1.11.0+build.6"), refused.stderr)
        XCTAssertEqual(try snapshot(site.path), before)

        let same = try publishOK([gguf, "--name", "m", "--version", "1.11.0+build.7", "--base-url", base, "--to", site.path], epoch: 1_790_000_100)
        XCTAssertTrue(same.stdout.hasPrefix("unchanged:"), same.stdout)
        XCTAssertEqual(try snapshot(site.path), before, "the same bytes under equal precedence are a no-op")
    }

    // MARK: 5. Stored content is proven before a manifest names it again

    func flipByte(_ path: String, at offset: Int = 100) throws {
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[offset] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))
    }

    /// A stored artifact damaged in place (same size) is never put live again: not by
    /// rollback, not by resign, and a re-publish never calls it "unchanged".
    func testDamagedStoredArtifactNeverGoesLiveAgain() throws {
        let site = try Scratch()
        try publishOK([gguf, "--name", "m", "--version", "1.0.0", "--base-url", base, "--to", site.path])
        try publishOK([mmproj, "--name", "m", "--version", "1.1.0", "--base-url", base, "--to", site.path, "--interface-change", "--min-app-version", "1.1"])
        let old = "models/m/1.0.0/tiny-llm.gguf", current = "models/m/1.1.0/tiny-llm-mmproj.gguf"
        try flipByte(site.at(old))
        var before = try snapshot(site.path)
        let rollback = try modelcast(["rollback", site.path, "--version", "1.0.0"])
        XCTAssertEqual(rollback.status, 1, rollback.stderr)
        XCTAssertTrue(rollback.stderr.contains(old), rollback.stderr)
        XCTAssertTrue(rollback.stderr.contains("b67f7c0f2554d969e9bd3d1e3efbb2faa71537a42d6e3c4ec85de5f65b82bb71"), "names the expected sha256: \(rollback.stderr)")
        XCTAssertEqual(try snapshot(site.path), before)

        try flipByte(site.at(current))
        before = try snapshot(site.path)
        let again = try publish([mmproj, "--name", "m", "--version", "1.1.0", "--base-url", base, "--to", site.path, "--interface-change", "--min-app-version", "1.1"])
        XCTAssertNotEqual(again.status, 0, again.stdout)
        XCTAssertFalse(again.stdout.contains("unchanged"), again.stdout)
        XCTAssertTrue(again.stderr.contains(current), again.stderr)
        XCTAssertEqual(try snapshot(site.path), before)
        let resign = try modelcast(["resign", site.path, "--expires-in", "30d"])
        XCTAssertEqual(resign.status, 1, resign.stderr)
        XCTAssertTrue(resign.stderr.contains(current), resign.stderr)
        XCTAssertEqual(try snapshot(site.path), before)
    }

    // MARK: 6. Control characters in names

    func testControlCharactersInNamesAreRefused() throws {
        let input = try Scratch(), site = try Scratch()
        try input.write("Model.mlpackage/Data/weights.bin", patternBytes(64))
        try input.write("Model.mlpackage/Data/bad\nname.bin", patternBytes(64))
        let top = try input.write("evil\tname.gguf", Array(try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/" + gguf))))
        for (path, shown) in [(input.at("Model.mlpackage"), "Data/bad\\nname.bin"), (top, "evil\\tname.gguf")] {
            for command in [["inspect", path], ["pack", path, "--out", input.at("dist")],
                            ["publish", path, "--name", "m", "--version", "1.0.0", "--base-url", base, "--to", site.path]] {
                let result = try modelcast(command)
                XCTAssertEqual(result.status, 1, "\(command): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains("file name contains a control character: "), "\(command): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains(shown), "\(command): \(result.stderr)")
                XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
                XCTAssertEqual(result.stdout, "")
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: input.at("dist")))
        XCTAssertEqual(try snapshot(site.path), [:])
    }

    // MARK: 13. A manifest that is expired when written

    func testAlreadyExpiredManifestIsRefused() throws {
        let site = try Scratch()
        let result = try publish([gguf, "--version", "1.0.0", "--base-url", base, "--to", site.path, "--expires-in", "30d"], epoch: 1_700_000_000)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("SOURCE_DATE_EPOCH=1700000000"), result.stderr)
        XCTAssertTrue(result.stderr.contains("--expires-in 30d"), result.stderr)
        XCTAssertTrue(result.stderr.contains("2023-12-14T22:13:20Z"), "the expiry it would have: \(result.stderr)")
        XCTAssertEqual(try snapshot(site.path), [:])
        // Not yet expired: fine.
        try publishOK([gguf, "--version", "1.0.0", "--base-url", base, "--to", site.path, "--expires-in", "30d"], epoch: nil)
    }

    // MARK: Two writers on one directory

    /// A publish waits for another holding the directory's lock, says so on stderr
    /// (through the log the command passes in), and completes once the lock is free.
    func testASecondWriterWaitsForTheLockAndSaysSo() throws {
        let site = try Scratch()
        try publishOK([gguf, "--version", "1.0.0", "--base-url", base, "--to", site.path])
        let fd = open(site.path, O_RDONLY | O_DIRECTORY)
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        let errors = site.at("../stderr-\(UUID().uuidString).log")
        XCTAssertTrue(FileManager.default.createFile(atPath: errors, contents: nil))
        defer { try? FileManager.default.removeItem(atPath: errors) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: modelcastBinary)
        process.arguments = ["publish", gguf, "--version", "1.1.0", "--base-url", base, "--to", site.path]
        process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: errors)
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        var said = ""
        while Date() < deadline {
            said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            if said.contains("waiting for another publish to \(site.path) to finish") { break }
            usleep(20_000)
        }
        XCTAssertTrue(said.contains("waiting for another publish to \(site.path) to finish"), said)
        XCTAssertTrue(process.isRunning, "it waits while the lock is held")
        flock(fd, LOCK_UN)
        close(fd)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(try manifest(site).sequence, 2)
    }
}
