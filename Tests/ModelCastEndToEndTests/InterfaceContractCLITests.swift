import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The interface contract through `publish`, on models written by the formats' own writers
/// (`scripts/make-interface-models.py`: coremltools, gguf, onnx): the manifest records each
/// model's interface; a new version whose interface differs is refused naming each
/// difference, with the target as it was; `--interface-change` needs `min_app_version` to
/// rise; NomLens's `num_classes` must be the classifier's class count; variants are checked
/// one by one.
final class InterfaceContractCLITests: XCTestCase {
    let base = "https://cdn.example.com/m"
    nonisolated(unsafe) static var models: Scratch?

    /// The writers' models, made once for the class (coremltools takes a few seconds).
    func writerModels() throws -> Scratch {
        if let models = Self.models { return models }
        let scratch = try Scratch("modelcast-interface-models")
        let made = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/scripts/make-interface-models.py", scratch.path])
        XCTAssertEqual(made.status, 0, made.stderr)
        Self.models = scratch
        return scratch
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
        try assertRefused("llm", first: "gguf/llm.gguf", second: "gguf/llm-template.gguf", expected: ["chat template changed"])
        try assertRefused("graph", first: "onnx/graph.onnx", second: "onnx/graph-shape.onnx", expected: ["input 'x' shape batch×3×224×224 → batch×3×256×256"])
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
    /// cannot be read is published with a warning and no contract.
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
        let standIn = try publish(["m=\(scratch.at("Stand-in.mlpackage"))", "--version", "1.1.0"], to: target, epoch: 1_790_000_100)
        XCTAssertEqual(standIn.status, 0, standIn.stderr)
        XCTAssertTrue(standIn.stderr.contains("m: its interface could not be read, so it is published without one and no interface contract is checked for it"), standIn.stderr)
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
