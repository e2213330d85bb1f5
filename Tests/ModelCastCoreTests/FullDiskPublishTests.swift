import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Issue 24, item 11, in process: a file system that fills up at any point of a publish
/// to a directory (a tmpfs of 4 KiB to 240 KiB, step 4 KiB) fails with an I/O failure
/// (exit status 3, `ExitStatus(for:)` as the CLI maps it) wherever the write failed, never
/// a refusal (1). Moved from PublishSafetyTests.testAFullDiskIsAnIOFailureAtEveryFillLevel,
/// which started a process per level; that class keeps one full disk through the CLI.
/// Needs root for the mounts.
final class FullDiskPublishTests: XCTestCase {
    func testAFullDiskIsAnIOFailureAtEveryFillLevel() async throws {
        let work = try Scratch()
        let mountPoint = try work.mkdir("disk")
        let models = [repositoryRoot + "/examples/models/tiny-llm.gguf", repositoryRoot + "/examples/models/tiny-llm-mmproj.gguf"]
        var statuses: [Int: ExitStatus] = [:]
        for kib in stride(from: 4, through: 240, by: 4) {
            let mounted = try runProcess("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kib)k", "tmpfs", mountPoint])
            guard mounted.status == 0 else { throw XCTSkip("cannot mount a tmpfs here (\(mounted.stderr)): needs root") }
            defer { _ = try? runProcess("/bin/umount", [mountPoint]) }
            do {
                try await TargetCommands(DirectoryStorage(root: mountPoint + "/site"))
                    .publish(models, name: nil, version: "1.0.0", baseURL: "https://cdn.example.com/models")
                statuses[kib] = .success
            } catch {
                statuses[kib] = ExitStatus(for: error)
                XCTAssertEqual(ExitStatus(for: error), .io, "\(kib) KiB: \(error)")
                XCTAssertTrue("\(error)".contains("No space left on device"), "\(kib) KiB: \(error)")
            }
        }
        XCTAssertTrue(statuses.values.contains(.io) && statuses.values.contains(.success),
                      "the sweep crosses the size a publish needs: \(statuses.sorted { $0.key < $1.key })")
    }
}
