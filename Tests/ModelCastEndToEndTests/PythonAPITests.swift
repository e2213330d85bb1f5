import Foundation
import XCTest
import ModelCastTestSupport

/// The Python API covers the CLI (python/tests/test_coverage.py, with this build's binary):
/// every command `modelcast --help` lists has a function or a documented reason, each
/// function runs its command, and secrets reach the binary's environment only. Here, so
/// that a change to the CLI that the API does not follow fails the suite it is made in.
/// The API's other tests (each function against the real binary, Ctrl-C and SIGTERM) run
/// once, in scripts/test-install, with the installed wheel: the package and binary users get.
final class PythonAPITests: XCTestCase {
    func testThePythonAPICoversTheCLI() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["MODELCAST_TEST_BINARY"] = modelcastBinary
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  // nothing written into python/tests
        let run = try runProcess("/usr/bin/env", ["python3", "-m", "unittest", "discover", "-s", repositoryRoot + "/python/tests", "-p", "test_coverage.py"],
                                 cwd: repositoryRoot, environment: environment)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        // unittest reports on standard error: "Ran N tests" then "OK".
        XCTAssertTrue(run.stderr.contains("\nOK"), run.stderr)
        let ran = run.stderr.components(separatedBy: "Ran ").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) } ?? 0
        XCTAssertGreaterThanOrEqual(ran, 4, "the coverage tests all ran: \(run.stderr)")
    }
}
