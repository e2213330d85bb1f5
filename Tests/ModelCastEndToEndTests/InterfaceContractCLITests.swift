import Foundation
import XCTest
import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport

/// The interface contract through `publish`, on models written by the formats' own writers
/// (`scripts/make-interface-models.py`: coremltools, gguf, onnx): the manifest records each
/// model's interface; a new version whose interface differs is refused naming each
/// difference, with the target as it was; `--interface-change` needs `min_app_version` to
/// rise; NomLens's `num_classes` must be the classifier's class count; variants are checked
/// one by one.
final class InterfaceContractCLITests: XCTestCase {
    let base = "https://cdn.example.com/m"
    /// The writers' models (`InterfaceModels`: made once for every test process; coremltools takes a few seconds).
    func writerModels() throws -> InterfaceModels {
        try InterfaceModels.made()
    }

    func publish(_ arguments: [String], to target: String, epoch: Int = 1_790_000_000) throws -> ProcessOutput {
        try modelcast(["publish"] + arguments + ["--base-url", base, "--to", target], environment: pinnedEnvironment(epoch: epoch))
    }

    /// Publishes `first` as 1.0.0, then refuses `second` as 1.1.0 with `expected` named,
    /// leaving the target as it was.
    func assertRefused(_ name: String, first: String, second: String, expected: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let models = try writerModels()
        let scratch = try Scratch()
        let target = scratch.at("out")
        let v1 = try publish(["\(name)=\(models.at(first))", "--version", "1.0.0"], to: target)
        XCTAssertEqual(v1.status, 0, v1.stderr, file: file, line: line)
        let before = try snapshot(target)
        let v2 = try publish(["\(name)=\(models.at(second))", "--version", "1.1.0"], to: target, epoch: 1_790_000_100)
        XCTAssertEqual(v2.status, 1, file: file, line: line)
        for text in expected + ["\(name) 1.0.0 → 1.1.0", "--interface-change"] {
            XCTAssertTrue(v2.stderr.contains(text), "\(text) in \(v2.stderr)", file: file, line: line)
        }
        XCTAssertEqual(try snapshot(target), before, "nothing written", file: file, line: line)
    }

    func testEachFormatsBreakingChangeIsRefusedByName() throws {
        try assertRefused("classifier", first: "coreml/classifier.mlpackage", second: "coreml/classifier-classes.mlpackage", expected: ["class count 5 → 6"])
        try assertRefused("classifier", first: "coreml/classifier.mlpackage", second: "coreml/classifier-size.mlpackage", expected: ["input 'image' size 32×32 → 48×48"])
        try assertRefused("regressor", first: "coreml/regressor.mlpackage", second: "coreml/regressor-shape.mlpackage", expected: ["input 'x' shape 1×8 → 1×16"])
        try assertRefused("llm", first: "gguf/llm.gguf", second: "gguf/llm-vocab.gguf", expected: ["vocabulary 100 → 101 tokens"])
        try assertRefused("graph", first: "onnx/graph.onnx", second: "onnx/graph-shape.onnx", expected: ["input 'x' shape batch×3×224×224 → batch×3×256×256"])
    }

    /// Issue 50: a chat-template fix is a compatible change: it publishes without
    /// `--interface-change` or a higher `--min-app-version`, noted in the report (text and
    /// `--json`), and a device on the old version updates to it; a vocabulary change after it
    /// is still refused. Models written by llama.cpp's gguf writer (bench/delta_models.py).
    func testAChatTemplateFixPublishesWithoutFlagsAndTheDeviceUpdates() throws {
        let work = try Scratch("modelcast-interface-template")
        func gguf(_ path: String, _ flags: [String]) throws -> String {
            try FileManager.default.createDirectory(atPath: PathText.parent(path), withIntermediateDirectories: true)
            let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/bench/delta_models.py", "gguf", path, "--layers", "1", "--width", "64", "--vocab", "300"] + flags)
            XCTAssertEqual(made.status, 0, made.stderr)
            return path
        }
        let v1 = try gguf(work.at("v1/m.gguf"), [])
        let fixed = try gguf(work.at("v2/m.gguf"), ["--template", "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}"])
        let vocab = try gguf(work.at("v3/m.gguf"), ["--template", "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}", "--vocab", "301"])
        let device = modelcastBinary.replacingOccurrences(of: "/modelcast", with: "/modelcast-device")
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let base = "http://127.0.0.1:\(port)/ok"
        let site = try work.atMadeParent("sites/ok")
        func publish(_ path: String, _ version: String, _ extra: [String] = []) throws -> ProcessOutput {
            try modelcast(["publish", path, "--name", "m", "--version", version, "--base-url", base, "--to", site] + extra)
        }
        XCTAssertEqual(try publish(v1, "1.0.0").status, 0)
        let first = try runProcess(device, ["--manifest", base + "/manifest.json", "--dir", work.at("phone")])
        XCTAssertEqual(first.status, 0, first.stderr)

        let note = "compatible interface change: m 1.0.0 → 1.1.0: chat template changed"
        let published = try publish(fixed, "1.1.0", ["--json"])
        XCTAssertEqual(published.status, 0, published.stderr)
        XCTAssertTrue(published.stderr.contains(note), published.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(published.stdout.utf8)) as? [String: Any])
        XCTAssertEqual((report["warnings"] as? [String])?.filter { $0.contains("interface change") }, [note], "\(report)")
        XCTAssertEqual(report["interface_changes"] as? [[String: String]],
                       [["model": "m", "from": "1.0.0", "to": "1.1.0", "facet": "chat_template", "kind": "compatible", "description": "chat template changed"]], "\(report)")
        let manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))) as? [String: Any])
        XCTAssertNil(manifest["min_app_version"], "a compatible change does not raise min_app_version")
        let updated = try runProcess(device, ["--manifest", base + "/manifest.json", "--dir", work.at("phone")])
        XCTAssertEqual(updated.status, 0, updated.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: work.at("phone/models/m/current/m.gguf"))), try Data(contentsOf: URL(fileURLWithPath: fixed)))

        let before = try snapshot(site)
        let refused = try publish(vocab, "1.2.0")
        XCTAssertEqual(refused.status, 1, refused.stderr)
        for text in ["m 1.1.0 → 1.2.0: vocabulary 300 → 301 tokens", "--interface-change"] {
            XCTAssertTrue(refused.stderr.contains(text), "\(text) in \(refused.stderr)")
        }
        XCTAssertEqual(try snapshot(site), before, "nothing written")
    }

    /// Publishes `model` at each version in turn to a fresh target with `--json`, returning
    /// each run (its report parsed when it succeeded).
    func publishInTurn(_ name: String, _ steps: [(path: String, version: String)], extra: [String] = []) throws -> [(run: ProcessOutput, report: [String: Any]?)] {
        let scratch = try Scratch()
        return try steps.enumerated().map { index, step in
            let run = try publish(["\(name)=\(step.path)", "--version", step.version, "--json"] + extra, to: scratch.at("out"), epoch: 1_790_000_000 + 100 * index)
            return (run, run.status == 0 ? try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] : nil)
        }
    }

    /// Issue 50 with coremltools' and onnx's own models: an added output is compatible in
    /// both (published without flags, noted in the report and `interface_changes`); a Core ML
    /// reorder is compatible (features are fed and read by name); an ONNX output reorder is
    /// breaking (onnxruntime returns outputs in graph order). Each format's breaking shape
    /// change is refused in testEachFormatsBreakingChangeIsRefusedByName.
    func testAddedOutputsAndReordersOfCoreMLAndONNX() throws {
        let models = try writerModels()
        let coreML = try publishInTurn("regressor", [(models.at("coreml/regressor.mlpackage"), "1.0.0"), (models.at("coreml/regressor-output.mlpackage"), "1.1.0"),
                                                     (models.at("coreml/regressor-reordered.mlpackage"), "1.2.0")])
        XCTAssertEqual(coreML.map(\.run.status), [0, 0, 0], coreML.map(\.run.stderr).joined())
        XCTAssertTrue(coreML[1].run.stderr.contains("compatible interface change: regressor 1.0.0 → 1.1.0: output 'z' added (multiArray"), coreML[1].run.stderr)
        XCTAssertTrue(coreML[2].run.stderr.contains("compatible interface change: regressor 1.1.0 → 1.2.0: output order 'y', 'z' → 'z', 'y'"), coreML[2].run.stderr)
        XCTAssertEqual((coreML[1].report?["interface_changes"] as? [[String: String]])?.map { [$0["facet"], $0["kind"]] }, [["output_added", "compatible"]])
        XCTAssertEqual(coreML[2].report?["interface_changes"] as? [[String: String]],
                       [["model": "regressor", "from": "1.1.0", "to": "1.2.0", "facet": "order", "kind": "compatible", "description": "output order 'y', 'z' → 'z', 'y'"]])

        let onnx = try publishInTurn("graph", [(models.at("onnx/graph.onnx"), "1.0.0"), (models.at("onnx/graph-output.onnx"), "1.1.0"),
                                               (models.at("onnx/graph-reordered.onnx"), "1.2.0")])
        XCTAssertEqual(onnx.map(\.run.status), [0, 0, 1], onnx.map(\.run.stderr).joined())
        XCTAssertTrue(onnx[1].run.stderr.contains("compatible interface change: graph 1.0.0 → 1.1.0: output 'pooled' added (tensor FLOAT batch×3)"), onnx[1].run.stderr)
        XCTAssertEqual(onnx[1].report?["interface_changes"] as? [[String: String]],
                       [["model": "graph", "from": "1.0.0", "to": "1.1.0", "facet": "output_added", "kind": "compatible", "description": "output 'pooled' added (tensor FLOAT batch×3)"]])
        for text in ["graph 1.1.0 → 1.2.0: output 'pooled' removed; output order 'logits', 'tokens' → 'tokens', 'logits'", "--interface-change"] {
            XCTAssertTrue(onnx[2].run.stderr.contains(text), "\(text) in \(onnx[2].run.stderr)")
        }
    }

    /// Issue 50: the config file classifies facets per model. Making `chat_template`
    /// breaking refuses a template fix; making the vocabulary (and the tokenizer, which a
    /// vocabulary change changes too) compatible publishes a vocabulary change with the note
    /// and `interface_changes`. A hostile value is refused naming the file, the key and
    /// the value, escaped, with nothing written.
    func testTheConfigFileClassifiesFacetsPerModel() throws {
        let models = try writerModels()
        let scratch = try Scratch()
        let target = scratch.at("out")
        func config(_ model: String, _ version: String, _ interface: String) throws -> String {
            try scratch.write("modelcast-\(version).yml", text: """
                models:
                  llm:
                    version: \(version)
                    files: [\(models.at(model))]
                    interface: \(interface)

                """)
        }
        func publish(_ file: String, epoch: Int) throws -> ProcessOutput {
            try self.publish(["--config", file, "--json"], to: target, epoch: epoch)
        }
        XCTAssertEqual(try publish(try config("gguf/llm.gguf", "1.0.0", "{breaking: [chat_template]}"), epoch: 1_790_000_000).status, 0)
        let before = try snapshot(target)
        let strict = try publish(try config("gguf/llm-template.gguf", "1.1.0", "{breaking: [chat_template]}"), epoch: 1_790_000_100)
        XCTAssertEqual(strict.status, 1, strict.stderr)
        for text in ["llm 1.0.0 → 1.1.0: chat template changed (breaking by the config file)", "--interface-change"] {
            XCTAssertTrue(strict.stderr.contains(text), "\(text) in \(strict.stderr)")
        }
        XCTAssertEqual(try snapshot(target), before, "nothing written")

        let lenient = try publish(try config("gguf/llm-vocab.gguf", "1.1.0", "{compatible: [vocabulary, tokenizer]}"), epoch: 1_790_000_100)
        XCTAssertEqual(lenient.status, 0, lenient.stderr)
        XCTAssertTrue(lenient.stderr.contains("compatible interface change: llm 1.0.0 → 1.1.0: vocabulary 100 → 101 tokens (compatible by the config file); tokenizer changed (compatible by the config file)"), lenient.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lenient.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(report["interface_changes"] as? [[String: String]], [
            ["model": "llm", "from": "1.0.0", "to": "1.1.0", "facet": "vocabulary", "kind": "compatible", "description": "vocabulary 100 → 101 tokens"],
            ["model": "llm", "from": "1.0.0", "to": "1.1.0", "facet": "tokenizer", "kind": "compatible", "description": "tokenizer changed"],
        ])
        let manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: target + "/manifest.json"))) as? [String: Any])
        XCTAssertNil(manifest["min_app_version"], "a compatible change does not raise min_app_version")

        let after = try snapshot(target)
        let hostile = try config("gguf/llm-template.gguf", "1.2.0", "{compatible: [\"chat\\u001B]0;pwned\\u0007template\"]}")
        let refused = try publish(hostile, epoch: 1_790_000_200)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("config \(hostile): models.llm.interface.compatible[0]: 'chat\\u{1b}]0;pwned\\u{7}template' is not an interface facet (known: format, "), refused.stderr)
        XCTAssertFalse(containsControlCharacter(refused.stderr.replacingOccurrences(of: "\n", with: "")), refused.stderr.debugDescription)
        XCTAssertEqual(try snapshot(target), after, "nothing written")
    }

    func testTheManifestRecordsTheInterfaceAndSameInterfaceGoesThrough() throws {
        let models = try writerModels()
        let scratch = try Scratch()
        let target = scratch.at("out")
        XCTAssertEqual(try publish(["llm=\(models.at("gguf/llm.gguf"))", "--version", "1.0.0"], to: target).status, 0)
        let manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: target + "/manifest.json"))) as? [String: Any])
        let interface = try XCTUnwrap(((manifest["models"] as? [String: Any])?["llm"] as? [String: Any])?["interface"] as? [String: Any])
        XCTAssertEqual(interface["format"] as? String, "gguf")
        XCTAssertEqual(interface["vocabulary_size"] as? Int, 100, "\(interface)")
        // The same metadata written in another order is the same interface: a new version goes through.
        let same = try publish(["llm=\(models.at("gguf/llm-reordered.gguf"))", "--version", "1.1.0"], to: target, epoch: 1_790_000_100)
        XCTAssertEqual(same.status, 0, same.stderr)
        // Re-publishing 1.1.0 unchanged writes nothing.
        let again = try publish(["llm=\(models.at("gguf/llm-reordered.gguf"))", "--version", "1.1.0"], to: target, epoch: 1_790_000_200)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("unchanged"), again.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target + "/manifests/00000003.json"))
    }

    func testAnIntendedChangeNeedsAHigherMinAppVersion() throws {
        let models = try writerModels()
        let scratch = try Scratch()
        let target = scratch.at("out")
        let first = try publish(["classifier=\(models.at("coreml/classifier.mlpackage"))", "--version", "1.0.0", "--min-app-version", "2.0"], to: target)
        XCTAssertEqual(first.status, 0, first.stderr)
        let before = try snapshot(target)
        let next = ["classifier=\(models.at("coreml/classifier-classes.mlpackage"))", "--version", "2.0.0", "--interface-change"]
        for (extra, expected) in [([], "must rise above the live release's (2.0)"), (["--min-app-version", "2.0.0"], "must rise above the live release's (2.0), not 2.0.0")] {
            let refused = try publish(next + extra, to: target, epoch: 1_790_000_100)
            XCTAssertEqual(refused.status, 1)
            XCTAssertTrue(refused.stderr.contains(expected), refused.stderr)
            XCTAssertEqual(try snapshot(target), before)
        }
        let accepted = try publish(next + ["--min-app-version", "2.1"], to: target, epoch: 1_790_000_100)
        XCTAssertEqual(accepted.status, 0, accepted.stderr)
        XCTAssertTrue(accepted.stderr.contains("interface change (--interface-change): classifier 1.0.0 → 2.0.0: class count 5 → 6"), accepted.stderr)
        let manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: target + "/manifest.json"))) as? [String: Any])
        XCTAssertEqual(manifest["min_app_version"] as? String, "2.1")
    }

    func testNomLensNumClassesIsCheckedAgainstTheModel() throws {
        let models = try writerModels()
        let scratch = try Scratch()
        let fields = ["--profile", "nomlens", "--name", "food", "--version", "1.0.0", "--meta", "class_list_version=v1", "--meta", "training_date=2026-01-01"]
        let wrong = try publish([models.at("coreml/classifier.mlpackage")] + fields + ["--meta", "num_classes=4"], to: scratch.at("wrong"))
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stderr.contains("model food: num_classes 4 does not match the model: its classifier has 5 classes"), wrong.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.at("wrong")))
        let right = try publish([models.at("coreml/classifier.mlpackage")] + fields + ["--meta", "num_classes=5"], to: scratch.at("right"))
        XCTAssertEqual(right.status, 0, right.stderr)
    }

    /// A model that becomes a format without an interface is a change; one whose interface
    /// cannot be read is refused when an earlier version's could (its first version goes
    /// through with a warning), unless --allow-unreadable-interface says so.
    func testAFormatWithoutAnInterfaceAndAnUnreadableOne() throws {
        let models = try writerModels()
        let scratch = try Scratch()
        let plain = try scratch.write("m.bin", patternBytes(500, seed: 1))
        let target = scratch.at("out")
        XCTAssertEqual(try publish(["m=\(models.at("gguf/llm.gguf"))", "--version", "1.0.0"], to: target).status, 0)
        let refused = try publish(["m=\(plain)", "--version", "1.1.0"], to: target, epoch: 1_790_000_100)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("m 1.0.0 → 1.1.0: format gguf → one without an interface modelcast reads"), refused.stderr)
        // A package shaped like Core ML whose model.mlmodel is not a model specification.
        _ = try scratch.write("Stand-in.mlpackage/Manifest.json", Array(try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/examples/models/TinyClassifier.mlpackage/Manifest.json"))))
        _ = try scratch.write("Stand-in.mlpackage/Data/com.apple.CoreML/model.mlmodel", [0x08, 0x07, 0x6B] + patternBytes(100, seed: 3))
        let before = try snapshot(target)
        let standIn = try publish(["m=\(scratch.at("Stand-in.mlpackage"))", "--version", "1.1.0"], to: target, epoch: 1_790_000_100)
        XCTAssertEqual(standIn.status, 1, standIn.stderr)
        for text in ["m: its interface could not be read (", "model m 1.1.0: its interface could not be read (", "so it cannot be compared with 1.0.0's", "--allow-unreadable-interface"] {
            XCTAssertTrue(standIn.stderr.contains(text), "\(text) in \(standIn.stderr)")
        }
        XCTAssertEqual(try snapshot(target), before, "nothing written")
        let allowed = try publish(["m=\(scratch.at("Stand-in.mlpackage"))", "--version", "1.1.0", "--allow-unreadable-interface"], to: target, epoch: 1_790_000_100)
        XCTAssertEqual(allowed.status, 0, allowed.stderr)
        XCTAssertTrue(allowed.stderr.contains("model m 1.1.0 is published without an interface (--allow-unreadable-interface)"), allowed.stderr)
        // A model whose first version cannot be read has nothing to be compared with: a warning only.
        let first = try publish(["m=\(scratch.at("Stand-in.mlpackage"))", "--version", "1.0.0"], to: scratch.at("first"))
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stderr.contains("m: its interface could not be read ("), first.stderr)
        // After an accepted change to a format without an interface, its next version is no change.
        let moved = scratch.at("moved")
        XCTAssertEqual(try publish(["m=\(models.at("gguf/llm.gguf"))", "--version", "1.0.0"], to: moved).status, 0)
        let toPlain = try publish(["m=\(plain)", "--version", "1.1.0", "--interface-change", "--min-app-version", "2.0"], to: moved, epoch: 1_790_000_100)
        XCTAssertEqual(toPlain.status, 0, toPlain.stderr)
        let plainAgain = try publish(["m=\(try scratch.write("m2.bin", patternBytes(500, seed: 2)))", "--version", "1.2.0", "--min-app-version", "2.0"], to: moved, epoch: 1_790_000_200)
        XCTAssertEqual(plainAgain.status, 0, plainAgain.stderr)
    }

    /// A version published without an interface is no gap in the contract: the next one is
    /// compared with the last interface recorded (1.0.0's), and the refusal says so.
    func testTheVersionAfterOneWithoutAnInterfaceIsComparedWithTheLastRecorded() throws {
        let models = try writerModels()
        let scratch = try Scratch()
        let target = scratch.at("out")
        // The ONNX graph cut short: still an .onnx model, but its interface cannot be read.
        let whole = try Data(contentsOf: URL(fileURLWithPath: models.at("onnx/graph.onnx")))
        let corrupt = try scratch.write("corrupt.onnx", Array(whole.prefix(whole.count / 2)))
        XCTAssertEqual(try publish(["graph=\(models.at("onnx/graph.onnx"))", "--version", "1.0.0"], to: target).status, 0)
        let unreadable = try publish(["graph=\(corrupt)", "--version", "1.1.0", "--allow-unreadable-interface"], to: target, epoch: 1_790_000_100)
        XCTAssertEqual(unreadable.status, 0, unreadable.stderr)
        let manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: target + "/manifest.json"))) as? [String: Any])
        XCTAssertNil(((manifest["models"] as? [String: Any])?["graph"] as? [String: Any])?["interface"], "1.1.0 records no interface")

        let before = try snapshot(target)
        let changed = try publish(["graph=\(models.at("onnx/graph-shape.onnx"))", "--version", "1.2.0"], to: target, epoch: 1_790_000_200)
        XCTAssertEqual(changed.status, 1, changed.stderr)
        XCTAssertTrue(changed.stderr.contains("graph 1.1.0 → 1.2.0 (compared with 1.0.0's interface, the last one recorded: 1.1.0 was published without one): input 'x' shape batch×3×224×224 → batch×3×256×256"), changed.stderr)
        XCTAssertTrue(changed.stderr.contains("--interface-change"), changed.stderr)
        XCTAssertEqual(try snapshot(target), before, "nothing written")
        // The same interface as 1.0.0's goes through.
        let same = try publish(["graph=\(models.at("onnx/graph.onnx"))", "--version", "1.2.0"], to: target, epoch: 1_790_000_200)
        XCTAssertEqual(same.status, 0, same.stderr)
    }

    /// Each variant is compared with the live variant of its name.
    func testVariantsAreCheckedOneByOne() throws {
        let models = try writerModels()
        let scratch = try Scratch()
        let target = scratch.at("out")
        func variants(_ big: String, _ version: String) -> [String] {
            ["--name", "llm", "--version", version, "--variant", "big=\(models.at(big))", "--variant", "small=\(models.at("gguf/llm.gguf"))"]
        }
        XCTAssertEqual(try publish(variants("gguf/llm.gguf", "1.0.0"), to: target).status, 0)
        let refused = try publish(variants("gguf/llm-vocab.gguf", "1.1.0"), to: target, epoch: 1_790_000_100)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("llm@big 1.0.0 → 1.1.0: vocabulary 100 → 101 tokens"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("llm@small"), refused.stderr)
    }
}
