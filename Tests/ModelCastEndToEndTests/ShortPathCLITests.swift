import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, item 1: `pack tiny-llm.gguf --out d` died with SIGILL (Foundation's path
/// methods trap on one-character strings on Linux). Every command that takes a path is
/// run with one-character and other odd names, as a newcomer types them: each exits
/// with a documented status (0-3), never a signal or a backtrace.
final class ShortPathCLITests: XCTestCase {
    func testNoCommandCrashesOnOneCharacterOrOddPaths() throws {
        let work = try Scratch()
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let package = repositoryRoot + "/examples/models/TinyClassifier.mlpackage"
        // "/" and ".." would write outside the scratch directory: PathTextTests covers them.
        for (index, name) in ["d", "é", "./d", "d/", ".", "", " "].enumerated() {
            let cwd = work.at("case\(index)")
            try FileManager.default.createDirectory(atPath: cwd, withIntermediateDirectories: true)
            let commands: [[String]] = [
                ["pack", gguf, "--out", name],
                ["pack", package, "--out", name],
                ["inspect", name],
                ["publish", "m=" + gguf, "--version", "1.0.0", "--base-url", "https://cdn.example.com/m", "--to", name],
                ["verify", name],
                ["history", name],
                ["rollback", name, "--version", "1.0.0"],
                ["prune", name, "--keep", "1"],
                ["keygen", "--unencrypted", "--public-key", name, "--secret-key", name + "k"],
            ]
            for arguments in commands {
                let result = try modelcast(arguments, cwd: cwd)
                let label = "modelcast \(arguments.map { $0.debugDescription }.joined(separator: " ")) in \(cwd): exit \(result.status)\n\(result.stderr.prefix(600))"
                XCTAssertTrue((0...3).contains(result.status), label)
                XCTAssertFalse(result.stderr.contains("Program crashed") || result.stderr.contains("Backtracing"), label)
            }
        }
    }
}
