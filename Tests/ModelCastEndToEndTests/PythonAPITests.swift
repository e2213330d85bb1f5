import Foundation
import XCTest
import ModelCastTestSupport

/// The Python API's own tests (python/tests/test_*.py) with this build's binary: every CLI
/// command has a function or a documented reason (test_coverage), each function's typed
/// result and errors against the real binary (test_commands), and Ctrl-C / SIGTERM during a
/// publish (test_interrupt). scripts/test-install runs the same tests with the wheel.
final class PythonAPITests: XCTestCase {
    func testThePythonAPITestsPass() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["MODELCAST_TEST_BINARY"] = modelcastBinary
        environment["PYTHONDONTWRITEBYTECODE"] = "1"  // nothing written into python/tests
        let run = try runProcess("/usr/bin/env", ["python3", "-m", "unittest", "discover", "-s", repositoryRoot + "/python/tests", "-p", "test_*.py"],
                                 cwd: repositoryRoot, environment: environment)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        // unittest reports on standard error: "Ran N tests" then "OK".
        XCTAssertTrue(run.stderr.contains("\nOK"), run.stderr)
        let ran = run.stderr.components(separatedBy: "Ran ").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) } ?? 0
        XCTAssertGreaterThanOrEqual(ran, 15, "the coverage, command and interrupt tests all ran: \(run.stderr)")
    }
}
