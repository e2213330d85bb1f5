import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, item 4: a target signed with key A took a manifest signed with key B
/// without a word, and every device that pinned A would refuse all later updates. Each
/// signing command refuses another key, naming both key ids, and leaves the target as
/// it was; `--rotate-key` makes the switch on purpose.
final class KeyRotationCLITests: XCTestCase {
    func keygen(_ work: Scratch, _ name: String) throws -> (secret: String, id: String, base64: String) {
        let result = try modelcast(["keygen", "--unencrypted", "--public-key", work.at(name + ".pub"), "--secret-key", work.at(name + ".key")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = try String(contentsOfFile: work.at(name + ".pub"), encoding: .utf8).split(separator: "\n")
        // The key id is bytes 2..<10 of the public key, a little-endian number shown in hex as minisign does.
        let raw = try XCTUnwrap(Data(base64Encoded: String(lines[1])))
        let id = String(raw[2..<10].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, radix: 16, uppercase: true)
        return (work.at(name + ".key"), id, String(lines[1]))
    }

    func testAnotherSigningKeyNeedsRotateKey() throws {
        let work = try Scratch()
        let a = try keygen(work, "a"), b = try keygen(work, "b")
        let site = work.at("site")
        func publish(_ version: String, _ extra: [String], environment: [String: String]? = nil) throws -> ProcessOutput {
            let file = try work.write("in/\(version).bin", patternBytes(2000, seed: UInt32(version.first!.asciiValue!)))
            return try PublishRun(["m=" + file], name: nil, version: version, baseURL: "https://cdn.example.com/m", to: site, extra, environment: environment).run()
        }
        XCTAssertEqual(try publish("1.0.0", ["--sign", a.secret]).status, 0)
        XCTAssertEqual(try publish("2.0.0", ["--sign", a.secret]).status, 0)
        XCTAssertEqual(try publish("3.0.0", ["--sign", a.secret, "--channel", "beta"]).status, 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json.minisig"))
        var environment = ProcessInfo.processInfo.environment
        environment["MODELCAST_SIGNING_KEY"] = try String(contentsOfFile: b.secret, encoding: .utf8)
        let attempts: [(label: String, run: () throws -> ProcessOutput)] = [
            ("publish with $MODELCAST_SIGNING_KEY", { try publish("4.0.0", [], environment: environment) }),
            ("publish --sign", { try publish("4.0.0", ["--sign", b.secret]) }),
            ("rollback", { try modelcast(["rollback", site, "--version", "1.0.0", "--sign", b.secret]) }),
            ("resign", { try modelcast(["resign", site, "--sign", b.secret]) }),
            ("promote", { try modelcast(["promote", site, "--from", "beta", "--to", "stable", "--sign", b.secret]) }),
        ]
        for attempt in attempts {
            let result = try attempt.run()
            let label = "\(attempt.label): exit \(result.status)\n\(result.stderr)"
            XCTAssertEqual(result.status, 1, label)
            for fragment in [a.id, b.id, "--rotate-key"] { XCTAssertTrue(result.stderr.contains(fragment), "\(label)\nmissing \(fragment)") }
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json.minisig")), before, "\(label): the target is as it was")
        }
        // The same key goes on; --rotate-key switches on purpose, and the new pair verifies with B.
        XCTAssertEqual(try modelcast(["resign", site, "--sign", a.secret]).status, 0)
        let rotated = try publish("4.0.0", ["--sign", b.secret, "--rotate-key"])
        XCTAssertEqual(rotated.status, 0, rotated.stderr)
        let stock = try runProcess("/usr/bin/env", ["minisign", "-Vm", site + "/manifest.json", "-P", b.base64])
        XCTAssertEqual(stock.status, 0, stock.stderr)
        XCTAssertEqual(try modelcast(["resign", site, "--sign", a.secret]).status, 1, "after the rotation, B is the key")
    }
}
