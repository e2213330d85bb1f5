import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, item 7: errors a newcomer meets first say what is wrong and what to do.
final class NewcomerErrorsCLITests: XCTestCase {
    func testFirstErrorsNameTheValueAndSuggest() throws {
        let work = try Scratch()
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let site = work.at("site")
        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", "http://127.0.0.1:1/m", "--to", site]).status, 0)

        // serve on a port in use names the address and what to do.
        let port = try freeLoopbackPort()
        let first = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", String(port)])
        XCTAssertTrue(first.firstLine.contains(":\(port)"), first.firstLine)
        let second = try modelcast(["serve", site, "--port", String(port)])
        XCTAssertEqual(second.status, 3, second.stderr)
        XCTAssertTrue(second.stderr.contains("127.0.0.1:\(port)") && second.stderr.contains("already in use") && second.stderr.contains("--port 0"), second.stderr)
        XCTAssertFalse(second.stderr.contains("bind(descriptor"), second.stderr)
        XCTAssertTrue(second.stderr.hasPrefix("Error: listen failed for 127.0.0.1:\(port): the port is already in use"), second.stderr)
        withExtendedLifetime(first) {}

        // --keep -1 is a bad value, not a missing one.
        let keep = try modelcast(["prune", site, "--keep", "-1"])
        XCTAssertEqual(keep.status, 1, keep.stderr)
        XCTAssertTrue(keep.stderr.contains("--keep -1") && !keep.stderr.contains("Missing value"), keep.stderr)

        // --to "" says the target is empty.
        let empty = try modelcast(["publish", gguf, "--version", "1.0.1", "--base-url", "http://127.0.0.1:1/m", "--to", ""])
        XCTAssertEqual(empty.status, 1, empty.stderr)
        XCTAssertTrue(empty.stderr.contains("the target is empty"), empty.stderr)

        // A mistyped command gets the closest one.
        let typo = try modelcast(["pubish", gguf])
        XCTAssertEqual(typo.status, 2, typo.stderr)
        XCTAssertTrue(typo.stderr.contains("'pubish' (did you mean 'publish'?)"), typo.stderr)

        // Every unknown config key at once, each with the closest known one.
        let config = try work.write("modelcast.yml", text: """
            base_ur: https://cdn.example.com/m
            chanel: beta
            models:
              m:
                versoin: 1.0.0
                files: [\(gguf)]
            """)
        let keys = try modelcast(["publish", "--config", config, "--to", site])
        XCTAssertEqual(keys.status, 1, keys.stderr)
        for fragment in ["'base_ur' (did you mean 'base_url'?)", "'chanel' (did you mean 'channel'?)", "'models.m.versoin' (did you mean 'version'?)"] {
            XCTAssertTrue(keys.stderr.contains(fragment), "missing \(fragment): \(keys.stderr)")
        }

        // --endpoint-url (the aws cli's spelling) is accepted for --endpoint.
        let alias = try modelcast(["verify", "s3://bucket/prefix", "--endpoint-url", "http://127.0.0.1:1", "--json"],
                                  environment: ["AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? ""])
        XCTAssertFalse(alias.stderr.contains("Unknown option"), alias.stderr)
        XCTAssertEqual(alias.status, 3, "the endpoint was used (and is down): \(alias.stderr)")
    }
}
