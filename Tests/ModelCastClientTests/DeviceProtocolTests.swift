import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// The example device speaking the conformance kit's client protocol
/// (`conformance/CLIENT-CLI.md`): `init`, `update`, `state` and `revert` against a target
/// the CLI published and `modelcast serve` serves, with the protocol's exit statuses, every
/// `state` checked against `conformance/state.schema.json`, and bad input refused before
/// anything is written.
final class DeviceProtocolTests: XCTestCase {
    let device = modelcastBinary.replacingOccurrences(of: "/modelcast", with: "/modelcast-device")

    /// Runs the device with `arguments` and checks its exit status.
    @discardableResult
    func expect(_ status: Int32, _ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> ProcessOutput {
        let result = try runProcess(device, arguments)
        XCTAssertEqual(result.status, status, "\(arguments): \(result.stdout) \(result.stderr)", file: file, line: line)
        return result
    }

    /// `state --dir directory`: exit 0, one JSON document valid against the protocol's schema.
    func state(_ directory: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let result = try expect(0, ["state", "--dir", directory], file: file, line: line)
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            jsonschema.Draft202012Validator(schema).validate(json.load(sys.stdin))
            """
        let valid = try runProcess("/usr/bin/env", ["python3", "-c", script, repositoryRoot + "/conformance/state.schema.json"], stdin: result.stdout)
        XCTAssertEqual(valid.status, 0, "state.schema.json: \(valid.stderr)\n\(result.stdout)", file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], file: file, line: line)
    }

    /// The entry of `name` in a state document.
    func model(_ state: [String: Any], _ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try XCTUnwrap((state["models"] as? [String: Any])?[name] as? [String: Any], "\(state)", file: file, line: line)
    }

    func sha256(_ path: String) throws -> String {
        try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: path))).hex
    }

    /// The one file of `entry`: its path relative to `directory` holds the bytes its digest names.
    func onlyFile(_ entry: [String: Any], in directory: String, file: StaticString = #filePath, line: UInt = #line) throws -> (path: String, sha256: String) {
        let files = try XCTUnwrap(entry["files"] as? [[String: String]], file: file, line: line)
        XCTAssertEqual(files.count, 1, "\(files)", file: file, line: line)
        let path = try XCTUnwrap(files.first?["path"], file: file, line: line)
        let digest = try XCTUnwrap(files.first?["sha256"], file: file, line: line)
        XCTAssertEqual(try sha256(directory + "/" + path), digest, file: file, line: line)
        return (path, digest)
    }

    func testInitUpdateStateRevertThroughTheProtocol() throws {
        let site = try ClientTests.Site()
        let v1 = try site.work.write("v1/m.bin", patternBytes(40_000, seed: 1))
        let v2 = try site.work.write("v2/m.bin", patternBytes(41_000, seed: 2))
        try site.publish([v1], version: "1.0.0")
        try site.start()
        let phone = site.work.at("phone")
        let setup = ["init", "--dir", phone, "--manifest-url", site.base + "/manifest.json", "--public-key", site.work.at("k.pub"),
                     "--device", "memory=8589934592,platform=linux", "--min-rate", "512", "--rate-window", "10", "--deadline", "20",
                     "--max-install", "1000000", "--app-version", "2.0"]
        try expect(0, setup)
        XCTAssertTrue(FileManager.default.fileExists(atPath: phone + "/device.json"))
        XCTAssertEqual(site.requests, [], "init makes no request")

        let empty = try state(phone)
        XCTAssertEqual(empty["protocol"] as? Int, 1)
        XCTAssertTrue(empty["sequence"] is NSNull, "\(empty)")
        XCTAssertEqual((empty["models"] as? [String: Any])?.count, 0)

        try expect(0, ["update", "--dir", phone])
        let first = try state(phone)
        XCTAssertEqual(first["sequence"] as? Int, 1)
        var m = try model(first, "m")
        XCTAssertEqual(m["version"] as? String, "1.0.0")
        XCTAssertTrue(m["variant"] is NSNull)
        XCTAssertEqual(m["previous"] as? [String], [])
        XCTAssertTrue(m["refused"] is NSNull)
        let installed = try onlyFile(m, in: phone)
        XCTAssertTrue(installed.path.hasPrefix("models/m/versions/1.0.0-") && installed.path.hasSuffix("/m.bin"), installed.path)
        XCTAssertEqual(installed.sha256, try sha256(v1))

        try site.publish([v2], version: "2.0.0")
        try expect(0, ["update", "--dir", phone])
        m = try model(try state(phone), "m")
        XCTAssertEqual(m["version"] as? String, "2.0.0")
        XCTAssertEqual(m["previous"] as? [String], ["1.0.0"])
        XCTAssertEqual(try onlyFile(m, in: phone).sha256, try sha256(v2))

        // A second init replaces the configuration and keeps the models and the trusted sequence.
        try expect(0, setup + ["--device-id", "phone-2"])
        let reverted = try expect(0, ["revert", "--dir", phone, "m", "--reason", "garbled output"])
        XCTAssertTrue(reverted.stdout.contains("reverted m to 1.0.0"), reverted.stdout)
        let afterRevert = try state(phone)
        XCTAssertEqual(afterRevert["sequence"] as? Int, 2)
        m = try model(afterRevert, "m")
        XCTAssertEqual(m["version"] as? String, "1.0.0")
        XCTAssertEqual(m["previous"] as? [String], [])
        XCTAssertEqual(m["refused"] as? String, "2.0.0")

        let nothingKept = try expect(1, ["revert", "--dir", phone, "m", "--reason", "still garbled"])
        XCTAssertTrue(nothingKept.stderr.hasPrefix("modelcast-device: model 'm': no version before '1.0.0'"), nothingKept.stderr)
        XCTAssertEqual(nothingKept.stderr.split(separator: "\n").count, 1, nothingKept.stderr)

        // The refusal holds: an update leaves m on 1.0.0.
        try expect(0, ["update", "--dir", phone])
        m = try model(try state(phone), "m")
        XCTAssertEqual(m["version"] as? String, "1.0.0")
        XCTAssertEqual(m["refused"] as? String, "2.0.0")

        // The digests are the disk's now, not what was downloaded.
        let path = try onlyFile(m, in: phone).path
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: phone + "/" + path))
        try handle.write(contentsOf: Data("changed".utf8))
        try handle.close()
        XCTAssertNotEqual(try onlyFile(try model(try state(phone), "m"), in: phone).sha256, try sha256(v1))
    }

    /// `--device` chooses the variant, `--policy` limits an update, `--request` installs
    /// one model whatever its policy (and nothing else).
    func testDevicePolicyAndRequest() throws {
        let site = try VariantSite()
        try site.publish([
            .init(name: "m", variants: [
                .init(name: "big", requires: ["min_memory": Int64(8) << 30, "platforms": ["ios": "17.0"]],
                      file: try site.work.write("v1/big.bin", patternBytes(30_000, seed: 1))),
                .init(name: "small", file: try site.work.write("v1/small.bin", patternBytes(10_000, seed: 2))),
            ], download: "essential"),
            .init(name: "extra", download: "on-demand", file: try site.work.write("v1/extra.bin", patternBytes(5_000, seed: 3))),
        ], version: "1.0.0")
        try site.site.start()
        let phone = site.work.at("phone")
        try expect(0, ["init", "--dir", phone, "--manifest-url", site.site.base + "/manifest.json",
                       "--device", "memory=17179869184,platform=ios", "--device", "os-version=17.4,capability=camera"])
        try expect(0, ["update", "--dir", phone, "--policy", "essential"])
        var models = try XCTUnwrap(try state(phone)["models"] as? [String: [String: Any]])
        XCTAssertEqual(models.keys.sorted(), ["m"])
        XCTAssertEqual(models["m"]?["variant"] as? String, "big")
        try expect(0, ["update", "--dir", phone, "--request", "extra"])
        models = try XCTUnwrap(try state(phone)["models"] as? [String: [String: Any]])
        XCTAssertEqual(models.keys.sorted(), ["extra", "m"])

        let small = site.work.at("small")
        try expect(0, ["init", "--dir", small, "--manifest-url", site.site.base + "/manifest.json", "--device", "memory=4294967296,platform=ios,os-version=17.4"])
        try expect(0, ["update", "--dir", small])
        models = try XCTUnwrap(try state(small)["models"] as? [String: [String: Any]])
        XCTAssertEqual(models["m"]?["variant"] as? String, "small")
        XCTAssertEqual(models.keys.sorted(), ["extra", "m"], "the default policy, on-demand, updates every model")
    }

    /// A refusal exits 1, a network failure 3, each with one line on stderr saying why; the
    /// one-shot form exits 3 for a network failure too.
    func testRefusalsExitOneAndNetworkFailuresExitThree() throws {
        let site = try ClientTests.Site()
        try site.publish([try site.work.write("v1/m.bin", patternBytes(10_000, seed: 1))], version: "1.0.0")
        try site.start()
        let manifest = site.base + "/manifest.json"
        let keys = try modelcast(["keygen", "--unencrypted", "--public-key", site.work.at("other.pub"), "--secret-key", site.work.at("other.key")])
        XCTAssertEqual(keys.status, 0, keys.stderr)

        let stranger = site.work.at("stranger")
        try expect(0, ["init", "--dir", stranger, "--manifest-url", manifest, "--public-key", site.work.at("other.pub")])
        let refused = try expect(1, ["update", "--dir", stranger])
        XCTAssertTrue(refused.stderr.hasPrefix("modelcast-device: " + manifest + ": bad signature"), refused.stderr)
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.stderr)
        let untouched = try state(stranger)
        XCTAssertTrue(untouched["sequence"] is NSNull)
        XCTAssertEqual((untouched["models"] as? [String: Any])?.count, 0)

        let lost = site.work.at("lost")
        try expect(0, ["init", "--dir", lost, "--manifest-url", site.base + "/nowhere/manifest.json"])
        let missing = try expect(3, ["update", "--dir", lost])
        XCTAssertTrue(missing.stderr.contains("HTTP 404"), missing.stderr)

        let phone = site.work.at("phone")
        try expect(0, ["init", "--dir", phone, "--manifest-url", manifest, "--public-key", site.work.at("k.pub"), "--deadline", "5"])
        site.stopServer()
        let offline = try expect(3, ["update", "--dir", phone])
        XCTAssertTrue(offline.stderr.hasPrefix("modelcast-device: "), offline.stderr)
        try expect(3, ["--manifest", manifest, "--dir", site.work.at("one-shot")])
    }

    /// Every bad value given to `init` exits 2 naming it (control characters escaped) and
    /// writes nothing: no directory where there was none, the old configuration unchanged
    /// where there was one.
    func testBadInitValuesExitTwoAndWriteNothing() throws {
        let work = try Scratch("modelcast-device-protocol")
        let notAKey = try work.write("not-a-key.pub", text: "hello\n")
        let notAPEM = try work.write("not-a-pem.pem", text: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
        let url = "http://127.0.0.1:9/models/manifest.json"
        let bad: [(arguments: [String], named: String)] = [
            (["--manifest-url", "ftp://example.com/manifest.json"], "ftp://example.com/manifest.json"),
            (["--manifest-url", "not a url"], "not a url"),
            (["--manifest-url", "http://u:p@example.com/manifest.json"], "--manifest-url"),
            (["--manifest-url", "http://example.com/channels/NOT_A_CHANNEL/manifest.json"], "NOT_A_CHANNEL"),
            (["--manifest-url", url, "--public-key", work.at("missing.pub")], work.at("missing.pub")),
            (["--manifest-url", url, "--public-key", notAKey], notAKey),
            (["--manifest-url", url, "--model-signing-public-key", notAPEM], notAPEM),
            (["--manifest-url", url, "--device", "colour=red"], "colour"),
            (["--manifest-url", url, "--device", "memory=lots"], "lots"),
            (["--manifest-url", url, "--device", "memory=1,memory=2"], "memory"),
            (["--manifest-url", url, "--device", "platform=amiga"], "amiga"),
            (["--manifest-url", url, "--device", "accelerator=tpu"], "tpu"),
            (["--manifest-url", url, "--device", "os-version=seventeen"], "seventeen"),
            (["--manifest-url", url, "--device", "memory"], "memory"),
            (["--manifest-url", url, "--min-rate", "-1"], "-1"),
            (["--manifest-url", url, "--min-rate", "fast"], "fast"),
            (["--manifest-url", url, "--rate-window", "0"], "--rate-window"),
            (["--manifest-url", url, "--deadline", "1e3"], "1e3"),
            (["--manifest-url", url, "--max-install", "0"], "--max-install"),
            (["--manifest-url", url, "--app-version", "x.y"], "x.y"),
            (["--manifest-url", url, "--storage-budget", "-1"], "'-1'"),
            (["--manifest-url", url, "--storage-budget", "4GB"], "'4GB'"),
            (["--manifest-url", url, "--storage-budget", "1\u{1b}[2J"], "1\\u{1b}[2J"),
            (["--manifest-url", url, "--device-id", "a\u{1b}[31mb"], "a\\u{1b}[31mb"),
            (["--manifest-url", url, "--bogus", "1"], "--bogus"),
            (["--manifest-url", url, "stray"], "stray"),
            (["--manifest-url", url, "--app-version", "1.0", "--app-version", "2.0"], "--app-version"),
            (["--manifest-url"], "--manifest-url"),
            ([], "--manifest-url"),
        ]
        let fresh = work.at("fresh")
        let configured = work.at("configured")
        try expect(0, ["init", "--dir", configured, "--manifest-url", url])
        let before = try Data(contentsOf: URL(fileURLWithPath: configured + "/device.json"))
        for (arguments, named) in bad {
            for directory in [fresh, configured] {
                let result = try expect(2, ["init", "--dir", directory] + arguments)
                XCTAssertTrue(result.stderr.hasPrefix("modelcast-device: ") && result.stderr.contains(named), "\(arguments): \(result.stderr)")
                XCTAssertFalse(result.stderr.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" }, result.stderr)
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: fresh), "\(arguments) wrote \(fresh)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: configured + "/device.json")), before, "\(arguments)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: configured), ["device.json"])
        try expect(2, ["init", "--manifest-url", url])
    }

    /// `update`, `state` and `revert` on a directory `init` never configured exit 3 and
    /// create nothing; a usage mistake in any call exits 2.
    func testCallsWithoutConfigurationAndUsageMistakes() throws {
        let work = try Scratch("modelcast-device-protocol")
        let nowhere = work.at("never-configured")
        for arguments in [["update", "--dir", nowhere], ["state", "--dir", nowhere], ["revert", "--dir", nowhere, "m", "--reason", "x"]] {
            let result = try expect(3, arguments)
            XCTAssertTrue(result.stderr.contains("no configuration") && result.stderr.contains(nowhere), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: nowhere), "\(arguments) created \(nowhere)")
        }
        let configured = work.at("configured")
        try expect(0, ["init", "--dir", configured, "--manifest-url", "http://127.0.0.1:9/manifest.json"])
        let mistakes: [[String]] = [
            ["update", "--dir", configured, "--policy", "sometimes"],
            ["update", "--dir", configured, "--request", "../m"],
            ["update", "--dir", configured, "--network"],
            ["update", "--dir", configured, "--bogus"],
            ["update"],
            ["update", "--dir", "--policy", "essential"],
            ["state"],
            ["state", "--dir", configured, "extra"],
            ["revert", "--dir", configured],
            ["revert", "--dir", configured, "m"],
            ["revert", "--dir", configured, "m", "n", "--reason", "x"],
        ]
        for arguments in mistakes {
            let result = try expect(2, arguments)
            XCTAssertTrue(result.stderr.hasPrefix("modelcast-device: "), "\(arguments): \(result.stderr)")
        }
        // Issue 50's update flags: each bad value named, escaped.
        for (flag, value) in [("--accept-licence", "../m"), ("--in-use", "../m"), ("--network", "wifi"), ("--charging", "maybe"),
                              ("--network", "unmetered\u{1b}[2J")] {
            let result = try expect(2, ["update", "--dir", configured, flag, value])
            XCTAssertTrue(result.stderr.contains(flag) && result.stderr.contains(quotedValue(value)), "\(flag) \(value): \(result.stderr)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: configured), ["device.json"])
    }
}
