import Foundation
import XCTest
import ModelCastTestSupport
import Yams

/// Runs the built `modelcast` binary as a user would.
final class InspectPackCLITests: XCTestCase {
    let golden = repositoryRoot + "/Tests/ModelCastEndToEndTests/Golden"

    func testVersionAndHelp() throws {
        let version = try modelcast(["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertEqual(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "0.1.0")
        let help = try modelcast(["--help"])
        XCTAssertEqual(help.status, 0)
        for word in ["inspect", "pack", "Publish on-device ML models"] { XCTAssertTrue(help.stdout.contains(word), word) }
        let packHelp = try modelcast(["pack", "--help"])
        for word in ["--compression", "--no-zip", "--out", "--json", "deterministic zip"] {
            XCTAssertTrue(packHelp.stdout.contains(word), "pack --help lacks \(word)")
        }
    }

    func testInspectGolden() throws {
        for (model, name) in [
            ("examples/models/tiny-llm.gguf", "inspect-gguf"),
            ("examples/models/tiny-llm-mmproj.gguf", "inspect-mmproj"),
            ("examples/models/TinyClassifier.mlpackage", "inspect-mlpackage"),
        ] {
            let text = try modelcast(["inspect", model])
            XCTAssertEqual(text.status, 0, text.stderr)
            XCTAssertEqual(text.stderr, "")
            try assertGolden(text.stdout, named: name + ".txt", in: golden)
            let json = try modelcast(["inspect", model, "--json"])
            XCTAssertEqual(json.status, 0, json.stderr)
            try assertGolden(json.stdout, named: name + ".json", in: golden)
        }
    }

    /// Inspect shows a model's interface: an indented block in text, an `interface` member in
    /// JSON equal to what the format's own writer reports (scripts/make-interface-models.py).
    func testInspectShowsTheInterface() throws {
        let out = try Scratch()
        try shell("python3 '\(repositoryRoot)/scripts/make-interface-models.py' '\(out.path)'")
        let text = try modelcast(["inspect", out.at("onnx/graph.onnx"), "--no-hash"])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.hasSuffix("""
            artifact      graph.onnx (file, application/octet-stream)
            interface
              format  onnx
              input   'x' tensor FLOAT batch×3×224×224
              input   'mask' tensor INT64 batch×?
              output  'logits' tensor FLOAT batch×10
              output  'tokens' sequence of tensor INT64 unknown rank

            """), text.stdout)
        let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out.at("expected.json")))) as? [String: Any]
        var documents: [String] = []
        for model in ["coreml/classifier.mlpackage", "gguf/llm.gguf", "onnx/graph.onnx"] {
            let json = try modelcast(["inspect", out.at(model), "--json", "--no-hash"])
            XCTAssertEqual(json.status, 0, json.stderr)
            let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            XCTAssertEqual(report?["interface"] as? NSDictionary, expected?[model] as? NSDictionary, model)
            documents.append(json.stdout)
        }
        try validateAgainstSchema(documents, "inspect.schema.json")
    }

    func testPackJSONGoldenAndStdoutCarriesOnlyTheResult() throws {
        let out = try Scratch()
        for (model, name) in [
            ("examples/models/tiny-llm.gguf", "pack-gguf"),
            ("examples/models/TinyClassifier.mlpackage", "pack-mlpackage"),
        ] {
            let result = try modelcast(["pack", model, "--out", out.path, "--json"])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertEqual(result.stderr, "", "stderr must stay quiet when it is not a terminal")
            try assertGolden(result.stdout.replacingOccurrences(of: out.path, with: "<OUT>"), named: name + ".json", in: golden)
        }
        // The text form is one line: PATH<TAB>SIZE<TAB>SHA256, usable in $(…).
        let line = try modelcast(["pack", "examples/models/tiny-llm.gguf", "-o", out.at("copy.gguf")])
        XCTAssertEqual(line.status, 0, line.stderr)
        let fields = line.stdout.trimmingCharacters(in: .newlines).split(separator: "\t").map(String.init)
        XCTAssertEqual(fields.count, 3, line.stdout)
        XCTAssertEqual(fields.first, out.at("copy.gguf"))
        XCTAssertEqual(fields[1], "1024")
        let expected = try shell("sha256sum '\(out.at("copy.gguf"))' | cut -d' ' -f1").trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(fields[2], expected)
        XCTAssertEqual(out.listing(), ["TinyClassifier.mlpackage.zip", "copy.gguf", "tiny-llm.gguf"])
    }

    func testSameBytesWhateverTimeZoneAndLocale() throws {
        let out = try Scratch()
        var hashes = Set<String>()
        for (index, environment) in [
            ["TZ": "UTC", "LANG": "C.UTF-8"],
            ["TZ": "Asia/Kolkata", "LC_ALL": "C"],
            ["TZ": "America/St_Johns", "LC_ALL": "POSIX"],
        ].enumerated() {
            var env = ProcessInfo.processInfo.environment
            env.removeValue(forKey: "LC_ALL")
            env.merge(environment) { $1 }
            let result = try modelcast(["pack", "examples/models/TinyClassifier.mlpackage", "-o", out.at("\(index).zip")], environment: env)
            XCTAssertEqual(result.status, 0, result.stderr)
            hashes.insert(String(result.stdout.split(separator: "\t")[2]))
        }
        XCTAssertEqual(hashes.count, 1, "\(hashes)")
    }

    func testRefusalsExitNonZeroNameTheValueAndLeaveNothing() throws {
        let src = try Scratch(), out = try Scratch()
        try src.write("M/a.bin", [1])
        XCTAssertEqual(symlink("/etc/hostname", src.at("M/link")), 0)
        try src.mkdir("Empty")
        try src.write("broken.gguf", Array("GGUF".utf8) + [3, 0, 0, 0] + [UInt8](repeating: 0xff, count: 16))
        let cases: [([String], String)] = [
            (["pack", src.at("missing.gguf"), "-o", out.path], "no such file or directory: \(src.at("missing.gguf"))"),
            (["pack", src.at("M"), "-o", out.path], "symbolic link refused: \(src.at("M/link")) -> /etc/hostname"),
            (["pack", src.at("Empty"), "-o", out.path], "directory contains no files: \(src.at("Empty"))"),
            (["pack", src.at("broken.gguf"), "-o", out.path], "invalid GGUF model \(src.at("broken.gguf")): absurd tensor count"),
            (["inspect", src.at("broken.gguf")], "invalid GGUF model \(src.at("broken.gguf"))"),
            (["pack", src.at("Empty"), "--no-zip", "-o", out.path], "directory contains no files"),
        ]
        for (arguments, message) in cases {
            let result = try modelcast(arguments)
            XCTAssertNotEqual(result.status, 0, "\(arguments)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): stderr was \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "\(arguments)")
            XCTAssertEqual(out.listing(), [], "\(arguments) left output behind")
        }
        try src.write("D/a.bin", [1])
        // --no-zip lists a tree: the tree's refusals hold, and nothing is left behind.
        XCTAssertEqual(symlink("a.bin", src.at("D/link.bin")), 0)
        let noZip = try modelcast(["pack", src.at("D"), "--no-zip", "-o", out.path + "/"])
        XCTAssertEqual(noZip.status, 1)
        XCTAssertTrue(noZip.stderr.contains("symbolic link refused: \(src.at("D/link.bin"))"), noZip.stderr)
        XCTAssertEqual(out.listing(), [])
        unlink(src.at("D/link.bin"))
        let usage = try modelcast(["pack", src.at("D"), "--no-zip", "--compression", "deflate"])
        XCTAssertEqual(usage.status, 2, "usage errors exit 2")
        XCTAssertTrue(usage.stderr.contains("--compression deflate needs a zip"), usage.stderr)
        let badChoice = try modelcast(["pack", src.at("D"), "--compression", "zstd"])
        XCTAssertEqual(badChoice.status, 2)
        XCTAssertTrue(badChoice.stderr.contains("zstd"), badChoice.stderr)
        XCTAssertEqual(out.listing(), [])
    }

    /// Root reads every file, so the unreadable-file case runs as `nobody` through setpriv.
    func testUnreadableFileIsRefusedForAnUnprivilegedUser() throws {
        let setpriv = which("setpriv")
        try XCTSkipIf(getuid() == 0 && setpriv == nil, "needs setpriv (util-linux) to drop root")
        let src = try Scratch(), out = try Scratch()
        chmod(src.path, 0o755)
        chmod(out.path, 0o777)
        try src.write("U/ok.bin", [1])
        try src.write("U/secret.bin", [2])
        chmod(src.at("U"), 0o755)
        chmod(src.at("U/secret.bin"), 0)
        let arguments = ["pack", src.at("U"), "-o", out.path + "/"]
        let result = getuid() == 0
            ? try runProcess(setpriv!, ["--reuid=65534", "--regid=65534", "--clear-groups", modelcastBinary] + arguments, cwd: "/")
            : try modelcast(arguments)
        XCTAssertEqual(result.status, 3, "an unreadable file is an I/O failure: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains("cannot read \(src.at("U/secret.bin")): Permission denied"), result.stderr)
        XCTAssertEqual(out.listing(), [])
    }

    /// Killing pack mid-write leaves neither a partial artifact nor its temporary file.
    func testInterruptedPackLeavesNothingBehind() throws {
        let src = try Scratch(), out = try Scratch()
        let fd = open(src.at("big.bin"), O_CREAT | O_WRONLY, 0o644)
        XCTAssertEqual(ftruncate(fd, 3 << 30), 0)
        close(fd)
        for signal in [SIGTERM, SIGINT] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: modelcastBinary)
            process.arguments = ["pack", src.at("big.bin"), "-o", out.path + "/"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Wait until the temporary file exists, so the signal lands mid-write.
            let deadline = Date().addingTimeInterval(20)
            while out.listing().isEmpty && Date() < deadline && process.isRunning { usleep(2_000) }
            XCTAssertTrue(process.isRunning, "pack finished before it could be interrupted")
            kill(process.processIdentifier, signal)
            process.waitUntilExit()
            XCTAssertNotEqual(process.terminationStatus, 0)
            XCTAssertEqual(out.listing(), [], "signal \(signal) left files behind")
        }
    }
}

final class ExamplesTests: XCTestCase {
    /// The committed example models are exactly what their script builds.
    func testExampleScriptRebuildsTheCommittedModels() throws {
        let out = try Scratch()
        try shell("python3 '\(repositoryRoot)/examples/make-examples.py' '\(out.path)' >/dev/null")
        let rebuilt = try snapshot(out.path)
        XCTAssertFalse(rebuilt.isEmpty)
        XCTAssertEqual(rebuilt, try snapshot(repositoryRoot + "/examples/models"))
    }
}

final class PipelineExampleTests: XCTestCase {
    /// The example pipeline publishes, serves and verifies on loopback, end to end.
    func testPipelineScriptPublishesServesAndVerifies() throws {
        let site = try Scratch()
        let port = try freeLoopbackPort()
        var environment = ProcessInfo.processInfo.environment
        environment["MODELCAST"] = modelcastBinary
        environment["PORT"] = String(port)
        let result = try runProcess("/bin/bash", [repositoryRoot + "/examples/pipeline.sh", "2.0.0", site.at("site")], environment: environment)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("published sequence 1"), result.stdout)
        XCTAssertTrue(result.stdout.contains("OK: "), result.stdout)
        XCTAssertTrue(result.stdout.contains("PASS  artifact.sha256"), result.stdout)
    }

    /// The example CI workflow is valid YAML with the steps it promises: it publishes
    /// straight to the bucket (where the history is), never to a fresh directory that
    /// is then uploaded, and every flag it uses exists. (CIWorkflowTests runs it.)
    func testCIWorkflowExampleParses() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/examples/ci/publish-model.yml", encoding: .utf8)
        let document = try XCTUnwrap(try Yams.load(yaml: text) as? [String: Any])
        let jobs = try XCTUnwrap(document["jobs"] as? [String: Any])
        let publish = try XCTUnwrap(jobs["publish"] as? [String: Any])
        let steps = try XCTUnwrap(publish["steps"] as? [[String: Any]])
        XCTAssertEqual(steps.compactMap { $0["name"] as? String }, [
            "Build modelcast", "Publish to the bucket (artifacts first, manifest last)", "Verify what devices will download",
        ])
        let commands = steps.compactMap { $0["run"] as? String }.joined(separator: "\n")
        XCTAssertTrue(commands.contains("--to \"$MODEL_BUCKET\""), commands)
        XCTAssertTrue(commands.contains("--verify-url"), commands)
        XCTAssertTrue(commands.contains("modelcast verify \"$MODEL_BASE_URL/manifest.json\""), commands)
        XCTAssertFalse(commands.contains("upload-aws.sh"), "uploading a directory made on a fresh runner restarts the history")
        XCTAssertFalse(commands.contains("--to site"), commands)
        for (command, flags) in [("publish", ["--to", "--verify-url", "--endpoint", "--region", "--expires-in", "--json"]), ("verify", ["--public-key", "--json"])] {
            let help = try modelcast([command, "--help"]).stdout
            for flag in flags { XCTAssertTrue(help.contains(flag), "\(command) has no \(flag)") }
        }
    }

    /// The scheduled re-sign example parses, re-signs with the key from a secret, and
    /// verifies with the public key; every flag it uses exists.
    func testRefreshWorkflowExampleParses() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/examples/ci/refresh-manifest.yml", encoding: .utf8)
        let document = try XCTUnwrap(try Yams.load(yaml: text) as? [String: Any])
        let on = try XCTUnwrap(document["on"] as? [String: Any])
        XCTAssertNotNil(on["schedule"])
        let steps = try XCTUnwrap(((document["jobs"] as? [String: Any])?["refresh"] as? [String: Any])?["steps"] as? [[String: Any]])
        let resign = try XCTUnwrap(steps.first { $0["name"] as? String == "Re-sign the live manifest" })
        XCTAssertNotNil((resign["env"] as? [String: Any])?["MODELCAST_SIGNING_KEY"])
        let commands = steps.compactMap { $0["run"] as? String }.joined(separator: "\n")
        XCTAssertTrue(commands.contains("modelcast resign"), commands)
        XCTAssertTrue(commands.contains("--public-key"), commands)
        for (command, flags) in [("resign", ["--expires-in", "--json"]), ("verify", ["--public-key", "--strict", "--json"])] {
            let help = try modelcast([command, "--help"]).stdout
            for flag in flags { XCTAssertTrue(help.contains(flag), "\(command) has no \(flag)") }
        }
    }
}
