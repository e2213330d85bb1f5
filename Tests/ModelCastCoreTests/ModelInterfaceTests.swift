import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport

/// The interface contract (issue 28): each reader against what the format's own writer wrote
/// (coremltools, gguf-py, onnx, run by scripts/make-interface-models.py), the JSON form and
/// its parser, the differences, and hostile input.
final class ModelInterfaceTests: XCTestCase {
    /// The models and expectations the script writes (`InterfaceModels`: made once for every test process).
    func models() throws -> String { try InterfaceModels.made().path }

    func expected() throws -> [String: JSONValue] {
        let value = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: models() + "/expected.json")))
        guard case .object(let members) = value else { throw NSError(domain: "expected.json", code: 1) }
        return Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value) })
    }

    func interface(_ relative: String) throws -> ModelInterface {
        try XCTUnwrap(ModelInterface.read(path: models() + "/" + relative), "\(relative) has no interface")
    }

    // MARK: - Readers against the writers

    func testEachReaderReadsWhatTheWriterWrote() throws {
        let expected = try expected()
        XCTAssertEqual(expected.count, 19)
        for (relative, value) in expected.sorted(by: { $0.key < $1.key }) {
            let read = try interface(relative)
            XCTAssertEqual(read.jsonValue().serialized(), value.serialized(), relative)
            XCTAssertEqual(read.format, value["format"]?.stringValue, relative)
        }
    }

    func testCoreMLClassifierAndFeatures() throws {
        guard case .coreML(let classifier) = try interface("coreml/classifier.mlpackage") else { return XCTFail("not Core ML") }
        XCTAssertEqual(classifier.inputs.map(\.name), ["image"])
        XCTAssertEqual(classifier.outputs.map(\.name), ["classLabel", "classLabel_probs"])
        guard case .image(let image) = classifier.inputs[0].type else { return XCTFail("image input expected") }
        XCTAssertEqual([image.width, image.height], [32, 32])
        XCTAssertEqual(image.colorSpace.name, "RGB")
        XCTAssertEqual(classifier.classifier?.classCount, 5)
        XCTAssertEqual(classifier.classifier?.predictedFeature, "classLabel")
        // A neural network classifier keeps its labels in the model type, not in a classify op.
        guard case .coreML(let network) = try interface("coreml/nn-classifier.mlmodel") else { return XCTFail("not Core ML") }
        XCTAssertEqual(network.classifier?.classCount, 3)
        XCTAssertEqual(network.classifier?.labelsSHA256, try labelDigest(["cat", "dog", "bird"]))
        // A regressor is no classifier, though it names a predicted feature.
        guard case .coreML(let regressor) = try interface("coreml/regressor.mlpackage") else { return XCTFail("not Core ML") }
        XCTAssertNil(regressor.classifier)
    }

    func testGGUFDigestsDoNotDependOnKeyOrder() throws {
        XCTAssertEqual(try interface("gguf/llm.gguf"), try interface("gguf/llm-reordered.gguf"))
        guard case .gguf(let named) = try interface("gguf/llm-named-templates.gguf"), case .gguf(let plain) = try interface("gguf/llm.gguf") else {
            return XCTFail("not GGUF")
        }
        XCTAssertEqual(named.tokenizerSHA256, plain.tokenizerSHA256, "chat templates are not part of the tokenizer digest")
        XCTAssertNotEqual(named.chatTemplateSHA256, plain.chatTemplateSHA256)
        XCTAssertEqual(plain.vocabularySize, 100)
        XCTAssertEqual(plain.contextLength, 4096)
        XCTAssertEqual(plain.embeddingLength, 64)
    }

    func testONNXInputThatIsAnInitializerIsLeftOut() throws {
        guard case .onnx(let graph) = try interface("onnx/graph.onnx") else { return XCTFail("not ONNX") }
        XCTAssertEqual(graph.inputs.map(\.name), ["x", "mask"])
        XCTAssertEqual(graph.outputs.map(\.name), ["logits", "tokens"])
        XCTAssertEqual(graph.inputs[0].type, .tensor(element: NamedCode(1), shape: [.param("batch"), .value(3), .value(224), .value(224)]))
        XCTAssertEqual(graph.inputs[1].type, .tensor(element: NamedCode(7), shape: [.param("batch"), .unknown]))
    }

    func testFormatsWithoutAnInterfaceGiveNil() throws {
        let scratch = try Scratch()
        XCTAssertNil(try ModelInterface.read(path: scratch.write("weights.bin", [1, 2, 3])))
        XCTAssertNil(try ModelInterface.read(path: scratch.write("m.tflite", [0, 0, 0, 0] + Array("TFL3".utf8) + [0, 0])))
        try scratch.write("Model.mlmodelc/coremldata.bin", [0])
        XCTAssertNil(try ModelInterface.read(path: scratch.at("Model.mlmodelc")))
    }

    func testUnreadableInterfaceNamesTheFile() throws {
        // A package shaped like Core ML whose model.mlmodel is not a model specification.
        let scratch = try Scratch()
        _ = try scratch.write("TinyClassifier.mlpackage/Manifest.json",
                              Array(try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/examples/models/TinyClassifier.mlpackage/Manifest.json"))))
        _ = try scratch.write("TinyClassifier.mlpackage/Data/com.apple.CoreML/model.mlmodel", [0x08, 0x07, 0x6B] + patternBytes(100, seed: 3))
        let example = scratch.at("TinyClassifier.mlpackage")
        XCTAssertThrowsError(try ModelInterface.read(path: example)) { error in
            let message = (error as? ModelCastError)?.message ?? ""
            XCTAssertTrue(message.contains("TinyClassifier.mlpackage/Data/com.apple.CoreML/model.mlmodel"), message)
        }
        let result = try ModelInterface.readResult(ModelInspector.describe(example))
        guard case .failure = result else { return XCTFail("expected a failure kept as a value, got \(String(describing: result))") }
    }

    /// Specifications no writer at hand makes: an ML program whose classify operation names a
    /// const holding integer labels, a multi-function model, a stateful model.
    func testHandMadeSpecificationsTheWritersDoNotMake() throws {
        func feature(_ name: String, _ type: [UInt8]) -> [UInt8] { Proto.message(1, Array(name.utf8)) + Proto.message(3, type) }
        func entry(_ key: String, _ value: [UInt8]) -> [UInt8] { Proto.message(1, Array(key.utf8)) + Proto.message(2, value) }
        let array = Proto.message(5, Proto.message(1, Proto.varint(1) + Proto.varint(4)) + Proto.tag(2, 0) + Proto.varint(65568))
        let labels = Proto.message(3, Proto.message(1, Proto.message(5, Proto.message(1, [3, 7, 9].flatMap { Proto.varint($0) }))))
        let const = Proto.message(1, Array("const".utf8)) + Proto.message(3, Proto.message(1, Array("labels".utf8)))
            + Proto.message(5, entry("val", labels))
        let classify = Proto.message(1, Array("classify".utf8))
            + Proto.message(2, entry("classes", Proto.message(1, Proto.message(1, Array("labels".utf8)))))
        let block = Proto.message(3, const) + Proto.message(3, classify)
        let function = Proto.message(2, Array("CoreML7".utf8)) + Proto.message(3, entry("CoreML7", block))
        let program = Proto.message(2, entry("main", function))
        let description = Proto.message(1, feature("x", array)) + Proto.message(10, feature("label", Proto.message(1, [])))
            + Proto.message(11, Array("label".utf8))
        let classifier = try CoreMLInterfaceReader.read(bytes: Proto.message(2, description) + Proto.message(502, program), path: "p.mlmodel")
        XCTAssertEqual(classifier.classifier?.classCount, 3)
        XCTAssertEqual(classifier.classifier?.labelsSHA256, try labelDigest(["3", "7", "9"]))
        XCTAssertEqual(classifier.classifier?.predictedFeature, "label")
        XCTAssertNil(classifier.classifier?.probabilitiesOutput)
        // A multi-function model: the default function's features; a state.
        let state = Proto.message(8, Proto.message(1, Proto.message(1, Proto.varint(2)) + Proto.tag(2, 0) + Proto.varint(65552)))
        let first = Proto.message(1, Array("first".utf8)) + Proto.message(2, feature("a", Proto.message(2, [])))
        let second = Proto.message(1, Array("second".utf8)) + Proto.message(2, feature("b", Proto.message(3, [])))
            + Proto.message(3, feature("c", Proto.message(1, []))) + Proto.message(6, feature("s", state))
        let functions = Proto.message(20, first) + Proto.message(20, second) + Proto.message(21, Array("second".utf8))
        let multi = try CoreMLInterfaceReader.read(bytes: Proto.message(2, functions), path: "f.mlmodel")
        XCTAssertEqual(multi, CoreMLInterface(
            inputs: [CoreMLFeature(name: "b", type: .string)], outputs: [CoreMLFeature(name: "c", type: .int64)],
            states: [CoreMLFeature(name: "s", type: .state(CoreMLArray(dataType: NamedCode(65552), shape: [2])))]))
        XCTAssertEqual(try ModelInterface(json: ModelInterface.coreML(multi).jsonValue()), .coreML(multi))
        let missing = Proto.message(20, first) + Proto.message(21, Array("third".utf8))
        XCTAssertThrowsError(try CoreMLInterfaceReader.read(bytes: Proto.message(2, missing), path: "f.mlmodel")) { error in
            XCTAssertTrue("\(error)".contains("none is the default 'third'"), "\(error)")
        }
    }

    // MARK: - JSON form

    func testJSONFormRoundTripsAndIsDeterministic() throws {
        for relative in try expected().keys.sorted() {
            let read = try interface(relative)
            let json = read.jsonValue()
            XCTAssertEqual(try ModelInterface(json: json), read, relative)
            // Through text, as the manifest carries it, and in the manifest's canonical order.
            let text = json.serialized()
            XCTAssertEqual(try ModelInterface(json: JSONValue(parsing: Data(text.utf8))), read, relative)
            XCTAssertEqual(Release.canonical(json), json, "\(relative): members must already be sorted")
            XCTAssertEqual(try interface(relative).jsonValue().serialized(), text, relative)
        }
    }

    func testJSONExampleForEachFormat() throws {
        XCTAssertEqual(try interface("onnx/graph.onnx").jsonValue().serialized(nestedAt: 0), """
            {
              "format": "onnx",
              "inputs": [
                {
                  "element_type": "FLOAT",
                  "name": "x",
                  "shape": [
                    "batch",
                    3,
                    224,
                    224
                  ],
                  "type": "tensor"
                },
                {
                  "element_type": "INT64",
                  "name": "mask",
                  "shape": [
                    "batch",
                    null
                  ],
                  "type": "tensor"
                }
              ],
              "outputs": [
                {
                  "element_type": "FLOAT",
                  "name": "logits",
                  "shape": [
                    "batch",
                    10
                  ],
                  "type": "tensor"
                },
                {
                  "element": {
                    "element_type": "INT64",
                    "type": "tensor"
                  },
                  "name": "tokens",
                  "type": "sequence"
                }
              ]
            }
            """)
    }

    func testJSONParserRefusesMalformedInterfaces() throws {
        let digest = String(repeating: "ab", count: 32)
        let cases: [(String, String)] = [
            (#"[]"#, "interface: [] is not a JSON object"),
            (#"{"format": "tflite"}"#, "interface.format: 'tflite' is not a known interface format"),
            (#"{"inputs": []}"#, "interface.format: (missing) is required"),
            (#"{"format": "gguf", "inputs": []}"#, "interface: 'inputs' is not a member"),
            (#"{"format": "gguf", "context_length": -1}"#, "interface.context_length: -1 is not a whole number 0 or more"),
            (#"{"format": "gguf", "context_length": 1.5}"#, "interface.context_length: 1.5 is not a whole number"),
            (#"{"format": "gguf", "tokenizer_sha256": "\#(digest.uppercased())"}"#, "interface.tokenizer_sha256: 'ABAB"),
            (#"{"format": "gguf", "architecture": ""}"#, "interface.architecture: '' is empty"),
            (#"{"format": "onnx", "inputs": [], "outputs": [{"name": "y", "type": "tensor", "element_type": "FLOAT", "shape": [-3]}]}"#,
             "interface.outputs[0].shape[0]: -3 is not a whole number 0 or more"),
            (#"{"format": "onnx", "inputs": [{"name": "x", "type": "tensor", "element_type": "FLOAT"}, {"name": "x", "type": "unspecified"}], "outputs": []}"#,
             "interface.inputs[1].name: 'x' names two items"),
            (#"{"format": "onnx", "inputs": [{"name": "x", "type": "tensor", "element_type": "FLOAT", "key_type": "INT64"}], "outputs": []}"#,
             "interface.inputs[0]: 'key_type' is not a member"),
            (#"{"format": "onnx", "inputs": [{"name": "x", "type": "tensor", "element_type": 1}], "outputs": []}"#,
             "interface.inputs[0].element_type: 1 must be written by its name FLOAT"),
            (#"{"format": "onnx", "inputs": [{"name": "x", "type": "tensor", "element_type": "FLOAT", "shape": [\#(Array(repeating: "1", count: 65).joined(separator: ","))]}], "outputs": []}"#,
             "has more than 64 items"),
            (#"{"format": "coreml", "inputs": [{"name": "x", "type": "image", "width": 1, "height": 1, "color_space": "CMYK"}], "outputs": []}"#,
             "interface.inputs[0].color_space: 'CMYK' is not one of BGR, GRAYSCALE, GRAYSCALE_FLOAT16, RGB"),
            (#"{"format": "coreml", "inputs": [{"name": "x", "type": "multiArray", "data_type": "FLOAT32", "shape": [1], "shape_range": [[5, 2]]}], "outputs": []}"#,
             "interface.inputs[0].shape_range[0]: [5,2] is an empty range"),
            (#"{"format": "coreml", "inputs": [], "outputs": [], "classifier": {"class_count": 3}}"#,
             "interface.classifier.labels_sha256: (missing) is required"),
            (#"{"format": "coreml", "inputs": [{"name": "x", "type": "float"}], "outputs": []}"#, "interface.inputs[0].type: 'float' is not a Core ML feature type"),
            (#"{"format": "coreml", "inputs": "x", "outputs": []}"#, "interface.inputs: 'x' is not an array"),
        ]
        for (text, expected) in cases {
            let value = try JSONValue(parsing: Data(text.utf8))
            XCTAssertThrowsError(try ModelInterface(json: value), text) { error in
                let message = (error as? ManifestValueError)?.description ?? "\(error)"
                XCTAssertTrue(message.contains(expected), "\(text)\n  gave: \(message)\n  want: \(expected)")
            }
        }
        // A sequence nested deeper than the parser follows.
        var nested = #"{"type": "unspecified"}"#
        for _ in 0..<20 { nested = #"{"type": "sequence", "element": \#(nested)}"# }
        let deep = try JSONValue(parsing: Data(#"{"format": "onnx", "inputs": [\#(nested.dropLast()), "name": "x"}], "outputs": []}"#.utf8))
        XCTAssertThrowsError(try ModelInterface(json: deep)) { error in
            XCTAssertTrue("\(error)".contains("nests types more than 16 deep"), "\(error)")
        }
    }

    // MARK: - Differences

    func testDifferencesNameEachChange() throws {
        let pairs: [(String, String, [String])] = [
            ("coreml/classifier.mlpackage", "coreml/classifier-size.mlpackage", ["input 'image' size 32×32 → 48×48"]),
            ("coreml/classifier.mlpackage", "coreml/classifier-classes.mlpackage", ["class count 5 → 6"]),
            ("coreml/regressor.mlpackage", "coreml/regressor-shape.mlpackage", ["input 'x' shape 1×8 → 1×16"]),
            ("gguf/llm.gguf", "gguf/llm-vocab.gguf", ["vocabulary 100 → 101 tokens", "tokenizer changed"]),
            ("gguf/llm.gguf", "gguf/llm-template.gguf", ["chat template changed"]),
            ("gguf/llm.gguf", "gguf/llm-reordered.gguf", []),
            ("onnx/graph.onnx", "onnx/graph-shape.onnx", ["input 'x' shape batch×3×224×224 → batch×3×256×256"]),
            ("gguf/llm.gguf", "coreml/classifier.mlpackage", ["format gguf → coreml"]),
            ("coreml/regressor.mlpackage", "coreml/classifier.mlpackage", [
                "input 'x' removed", "input 'image' added (image 32×32 RGB)",
                "output 'y' removed", "output 'classLabel' added (string)", "output 'classLabel_probs' added (dictionary string)",
                "classifier added (5 classes)",
            ]),
        ]
        for (old, new, expected) in pairs {
            XCTAssertEqual(try interface(new).differences(from: interface(old)), expected, "\(old) → \(new)")
        }
        for relative in try expected().keys {
            XCTAssertEqual(try interface(relative).differences(from: interface(relative)), [], relative)
        }
    }

    func testDifferencesOfEditedInterfaces() throws {
        guard case .onnx(let graph) = try interface("onnx/graph.onnx"), case .coreML(let classifier) = try interface("coreml/classifier.mlpackage") else {
            return XCTFail("unexpected formats")
        }
        var fewer = graph
        fewer.outputs.removeFirst()
        fewer.inputs.reverse()
        fewer.inputs[0].type = .tensor(element: NamedCode(10), shape: [.param("batch"), .unknown])
        XCTAssertEqual(ModelInterface.onnx(fewer).differences(from: .onnx(graph)), [
            "input 'mask' element type INT64 → FLOAT16", "input order 'x', 'mask' → 'mask', 'x'", "output 'logits' removed",
        ])
        var relabelled = classifier
        relabelled.classifier?.labelsSHA256 = try labelDigest(["a", "b", "c", "d", "e"])
        relabelled.classifier?.predictedFeature = "label"
        relabelled.inputs[0].isOptional = true
        relabelled.outputs[1].type = .multiArray(CoreMLArray(dataType: NamedCode(65568), shape: [1, 5]))
        XCTAssertEqual(ModelInterface.coreML(relabelled).differences(from: .coreML(classifier)), [
            "input 'image' optional no → yes",
            "output 'classLabel_probs' type dictionary string → multiArray FLOAT32 1×5",
            "class labels changed (same count, 5)", "predicted feature 'classLabel' → 'label'",
        ])
        let before = GGUFInterface(architecture: "llama", contextLength: 4096, vocabularySize: 32000)
        let after = GGUFInterface(architecture: "qwen2", contextLength: 8192, embeddingLength: 896, vocabularySize: 32064,
                                  chatTemplateSHA256: try labelDigest(["t"]))
        XCTAssertEqual(ModelInterface.gguf(after).differences(from: .gguf(before)), [
            "architecture 'llama' → 'qwen2'", "context length 4096 → 8192", "embedding length none → 896",
            "vocabulary 32000 → 32064 tokens", "chat template added",
        ])
    }

    /// Issue 50: each difference is breaking or compatible by its facet: an added output, a
    /// chat template and a larger context length are compatible; shapes, types, classes,
    /// vocabulary, architecture and a smaller context length are breaking.
    func testEachDifferenceIsBreakingOrCompatible() throws {
        func kinds(_ new: ModelInterface, _ old: ModelInterface) -> [String] {
            new.changes(from: old).map { "\($0.facet.rawValue) \($0.kind.rawValue): \($0.description)" }
        }
        XCTAssertEqual(kinds(try interface("gguf/llm-template.gguf"), try interface("gguf/llm.gguf")), ["chat_template compatible: chat template changed"])
        XCTAssertEqual(kinds(try interface("gguf/llm-vocab.gguf"), try interface("gguf/llm.gguf")), [
            "vocabulary breaking: vocabulary 100 → 101 tokens", "tokenizer breaking: tokenizer changed",
        ])
        let short = GGUFInterface(architecture: "llama", contextLength: 4096, embeddingLength: 896)
        var long = short
        long.contextLength = 8192
        XCTAssertEqual(kinds(.gguf(long), .gguf(short)), ["context_length compatible: context length 4096 → 8192"])
        XCTAssertEqual(kinds(.gguf(short), .gguf(long)), ["context_length breaking: context length 8192 → 4096"])
        long.architecture = "qwen2"
        long.embeddingLength = 1024
        XCTAssertEqual(kinds(.gguf(long), .gguf(short)).filter { $0.contains("breaking") }, [
            "architecture breaking: architecture 'llama' → 'qwen2'", "embedding_length breaking: embedding length 896 → 1024",
        ])

        XCTAssertEqual(kinds(try interface("coreml/classifier-size.mlpackage"), try interface("coreml/classifier.mlpackage")), ["inputs breaking: input 'image' size 32×32 → 48×48"])
        XCTAssertEqual(kinds(try interface("coreml/classifier-classes.mlpackage"), try interface("coreml/classifier.mlpackage")), ["class_count breaking: class count 5 → 6"])
        guard case .coreML(let classifier) = try interface("coreml/classifier.mlpackage"), case .onnx(let graph) = try interface("onnx/graph.onnx") else {
            return XCTFail("unexpected formats")
        }
        var extra = classifier
        extra.outputs.append(CoreMLFeature(name: "embedding", type: .multiArray(CoreMLArray(dataType: NamedCode(65568), shape: [1, 16]))))
        XCTAssertEqual(kinds(.coreML(extra), .coreML(classifier)), ["output_added compatible: output 'embedding' added (multiArray FLOAT32 1×16)"])
        XCTAssertEqual(kinds(.coreML(classifier), .coreML(extra)), ["outputs breaking: output 'embedding' removed"])

        XCTAssertEqual(kinds(try interface("onnx/graph-shape.onnx"), try interface("onnx/graph.onnx")), ["inputs breaking: input 'x' shape batch×3×224×224 → batch×3×256×256"])
        var more = graph
        more.outputs.append(ONNXValueInfo(name: "features", type: .tensor(element: NamedCode(1), shape: [.param("batch"), .value(64)])))
        XCTAssertEqual(kinds(.onnx(more), .onnx(graph)), ["output_added compatible: output 'features' added (tensor FLOAT batch×64)"])
        var typed = graph
        typed.outputs[0].type = .tensor(element: NamedCode(10), shape: nil)
        XCTAssertTrue(kinds(.onnx(typed), .onnx(graph)).allSatisfy { $0.hasPrefix("outputs breaking: ") }, "\(kinds(.onnx(typed), .onnx(graph)))")
        XCTAssertEqual(kinds(.gguf(short), .onnx(graph)), ["format breaking: format onnx → gguf"])
    }

    /// Issue 50: an added output and a reorder, as coremltools and onnx write them. Core ML
    /// apps feed and read features by name, so a reorder is compatible; onnxruntime hands
    /// outputs back in graph order, so an ONNX output reorder is breaking (an input reorder
    /// is not: every runtime API feeds inputs by name).
    func testAddedOutputsAndReordersFromTheWriters() throws {
        func kinds(_ new: String, _ old: String) throws -> [String] {
            try interface(new).changes(from: try interface(old)).map { "\($0.facet.rawValue) \($0.kind.rawValue): \($0.description)" }
        }
        XCTAssertEqual(try kinds("coreml/regressor-output.mlpackage", "coreml/regressor.mlpackage").map { String($0.prefix(41)) },
                       ["output_added compatible: output 'z' added"])
        XCTAssertEqual(try kinds("coreml/regressor-reordered.mlpackage", "coreml/regressor-output.mlpackage"), ["order compatible: output order 'y', 'z' → 'z', 'y'"])
        XCTAssertEqual(try kinds("coreml/regressor.mlpackage", "coreml/regressor-output.mlpackage"), ["outputs breaking: output 'z' removed"])
        XCTAssertEqual(try kinds("onnx/graph-output.onnx", "onnx/graph.onnx"), ["output_added compatible: output 'pooled' added (tensor FLOAT batch×3)"])
        XCTAssertEqual(try kinds("onnx/graph-reordered.onnx", "onnx/graph.onnx"), ["order breaking: output order 'logits', 'tokens' → 'tokens', 'logits'"])
        guard case .onnx(let graph) = try interface("onnx/graph.onnx") else { return XCTFail("not ONNX") }
        var swapped = graph
        swapped.inputs.reverse()
        XCTAssertEqual(ModelInterface.onnx(swapped).changes(from: .onnx(graph)).map(\.kind), [.compatible], "inputs are fed by name")
    }

    /// The config file's kinds replace each facet's default, even a direction-dependent one
    /// (a larger context length made breaking); a variant's override its model's; a facet
    /// cannot be both.
    func testAModelsOwnKindsOverrideTheDefaults() throws {
        let template = try interface("gguf/llm-template.gguf").changes(from: try interface("gguf/llm.gguf"))
        let vocabulary = try interface("gguf/llm-vocab.gguf").changes(from: try interface("gguf/llm.gguf"))
        let strict = try InterfaceKinds(compatible: [], breaking: [.chatTemplate, .contextLength])
        XCTAssertEqual(template.map(strict.classify).map(\.kind), [.breaking])
        XCTAssertEqual(template.map(strict.classify).map(\.line), ["chat template changed (breaking by the config file)"])
        let lenient = try InterfaceKinds(compatible: [.vocabulary, .tokenizer], breaking: [])
        XCTAssertEqual(vocabulary.map(lenient.classify).map(\.kind), [.compatible, .compatible])
        XCTAssertEqual(vocabulary.map(InterfaceKinds().classify), vocabulary, "no override: the defaults")
        let longer = InterfaceDifference(.contextLength, "context length 4096 → 8192", kind: .compatible)
        XCTAssertEqual(strict.classify(longer).kind, .breaking)
        // A variant's kinds over its model's.
        let merged = strict.overridden(by: try InterfaceKinds(compatible: [.chatTemplate], breaking: []))
        XCTAssertEqual(template.map(merged.classify).map(\.kind), [.compatible])
        XCTAssertEqual(merged.classify(longer).kind, .breaking, "the model's other facets stay")
        var model = PublishRequest.Model(name: "llm", version: "1.0.0", files: [])
        model.interfaceKinds = strict
        var variant = PublishRequest.Variant(name: "big", version: "1.0.0", files: [])
        variant.interfaceKinds = try InterfaceKinds(compatible: [.chatTemplate], breaking: [])
        model.variants = [variant, PublishRequest.Variant(name: "small", version: "1.0.0", files: [])]
        XCTAssertEqual(model.units.map(\.interfaceKinds), [merged, strict])
        XCTAssertThrowsError(try InterfaceKinds(compatible: [.tokenizer], breaking: [.vocabulary, .tokenizer])) {
            XCTAssertEqual($0 as? InterfaceKindsConflict, InterfaceKindsConflict(facet: .tokenizer))
        }
    }

    /// The publish report's JSON Schema lists the facets InterfaceFacet has, no more.
    func testThePublishReportSchemaListsEveryFacet() throws {
        let schema = try JSONValue(parsing: Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/schema/cli/publish-report.schema.json")))
        guard case .array(let names)? = schema["properties"]?["interface_changes"]?["items"]?["properties"]?["facet"]?["enum"] else {
            return XCTFail("no facet enum in the schema")
        }
        XCTAssertEqual(names, InterfaceFacet.allCases.map { .string($0.rawValue) })
    }

    // MARK: - Hostile input

    /// A reader's answer to hostile bytes: a value or a clean `invalidModel` error, nothing else.
    func survives(_ read: () throws -> Any, _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            _ = try read()
        } catch let error as ModelCastError {
            guard case .invalidModel = error else { return XCTFail("\(label): \(error)", file: file, line: line) }
        } catch {
            XCTFail("\(label): unexpected \(error)", file: file, line: line)
        }
    }

    /// The file with the body of its top-level field `number` cut at every length (its length
    /// prefix fixed), so each nested message along the way ends early in turn.
    func everyTruncation(of number: UInt32, in bytes: [UInt8]) throws -> [[UInt8]] {
        var reader = ProtobufReader(source: ProtobufSource(bytes: bytes, path: "t", format: "t"), trail: "")
        var tagStart = reader.offset
        while let field = try reader.next() {
            defer { tagStart = reader.offset }
            guard field.number == number, case .bytes(let span) = field.value else { continue }
            let body = Array(bytes[Int(span.start)..<Int(span.start + span.count)])
            let after = Array(bytes[Int(span.start + span.count)...])
            return (0..<body.count).map { Array(bytes[..<Int(tagStart)]) + Proto.message(UInt64(number), Array(body[..<$0])) + after }
        }
        XCTFail("no field \(number)")
        return []
    }

    func testEveryTruncationIsRefusedOrReadNeverTrapped() throws {
        let classifier = try Array(Data(contentsOf: URL(fileURLWithPath: models() + "/coreml/classifier.mlpackage/Data/com.apple.CoreML/model.mlmodel")))
        // The description, then the ML program (where the class labels are).
        var cases = try everyTruncation(of: 2, in: classifier) + everyTruncation(of: 502, in: classifier)
        for relative in ["coreml/nn-classifier.mlmodel", "coreml/flexible.mlmodel", "coreml/flexible-image.mlmodel"] {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: models() + "/" + relative)))
            cases += try everyTruncation(of: 2, in: bytes) + (0..<bytes.count).map { Array(bytes[..<$0]) }
        }
        XCTAssertGreaterThan(cases.count, 3000)
        var refused = 0
        for (index, bytes) in cases.enumerated() {
            survives({ try CoreMLInterfaceReader.read(bytes: bytes, path: "cut.mlmodel") }, "Core ML cut \(index)")
            if (try? CoreMLInterfaceReader.read(bytes: bytes, path: "cut.mlmodel")) == nil { refused += 1 }
        }
        // Most cuts end inside a field; a few end between fields and read a smaller interface.
        XCTAssertGreaterThan(refused, cases.count * 3 / 4)
        let onnx = try Array(Data(contentsOf: URL(fileURLWithPath: models() + "/onnx/graph.onnx")))
        for (index, bytes) in try (everyTruncation(of: 7, in: onnx) + (0..<onnx.count).map { Array(onnx[..<$0]) }).enumerated() {
            survives({ try ONNXInterfaceReader.read(bytes: bytes, path: "cut.onnx") }, "ONNX cut \(index)")
        }
    }

    func testRandomByteFlipsAreRefusedOrReadNeverTrapped() throws {
        let coreML = try Array(Data(contentsOf: URL(fileURLWithPath: models() + "/coreml/classifier.mlpackage/Data/com.apple.CoreML/model.mlmodel")))
        let onnx = try Array(Data(contentsOf: URL(fileURLWithPath: models() + "/onnx/graph.onnx")))
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int { state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407; return Int(state >> 33) }
        for round in 0..<3000 {
            var mutated = round % 2 == 0 ? coreML : onnx
            for _ in 0...(round % 4) { mutated[next() % mutated.count] ^= UInt8(1 + next() % 255) }
            if round % 2 == 0 {
                survives({ try CoreMLInterfaceReader.read(bytes: mutated, path: "model.mlmodel") }, "core ml flip \(round)")
            } else {
                survives({ try ONNXInterfaceReader.read(bytes: mutated, path: "graph.onnx") }, "onnx flip \(round)")
            }
        }
    }

    func testHostileLengthsVarintsAndGroupsAreRefusedByName() throws {
        let cases: [([UInt8], String)] = [
            // Model.description claiming 2^63 bytes.
            (Proto.tag(2, 2) + Proto.varint(1 << 63), "field 2 at byte 0 claims 9223372036854775808 bytes"),
            // A description whose first input claims 2^63 bytes.
            (Proto.message(2, Proto.tag(1, 2) + Proto.varint(1 << 63)), "description: field 1 at byte 2 claims"),
            // A varint of 11 bytes.
            ([0x08] + Array(repeating: 0xff, count: 10) + [0x01], "exceeds 64 bits"),
            // Field number 0, a group, an invalid wire type.
            ([0x00], "bad field number 0"), ([0x13], "is a group"), ([0x16], "invalid wire type 6"),
            // No description at all.
            (Proto.tag(1, 0) + Proto.varint(7), "the model has no description"),
            // An input with a name that is not UTF-8.
            (Proto.message(2, Proto.message(1, Proto.message(1, [0xff, 0xfe]) + Proto.message(3, Proto.message(1, [])))), "name is not valid UTF-8"),
            // A negative shape dimension.
            (Proto.message(2, Proto.message(1, Proto.message(1, Array("x".utf8)) + Proto.message(3, Proto.message(5, Proto.tag(1, 0) + Proto.varint(UInt64(bitPattern: -3)))))),
             "shape has a negative dimension -3"),
        ]
        for (bytes, expected) in cases {
            XCTAssertThrowsError(try CoreMLInterfaceReader.read(bytes: bytes, path: "hostile.mlmodel")) { error in
                let message = (error as? ModelCastError)?.message ?? "\(error)"
                XCTAssertTrue(message.contains(expected) && message.contains("hostile.mlmodel"), "\(message)\n  want: \(expected)")
            }
        }
    }

    func testNestingTenThousandDeepIsRefusedNotOverflowed() throws {
        // Pipeline classifiers inside pipeline classifiers: Model{200: {1: {1: Model{…}}}}.
        let model = Proto.nested(Array(repeating: [200, 1, 1], count: 10_000).flatMap { $0 }, innermost: [])
        let description = Proto.message(2, Proto.message(1, Proto.message(1, Array("x".utf8)) + Proto.message(3, Proto.message(1, []))))
        XCTAssertThrowsError(try CoreMLInterfaceReader.read(bytes: description + model, path: "deep.mlmodel")) { error in
            XCTAssertTrue("\(error)".contains("nested more than 64 deep"), "\(error)")
        }
        // ONNX sequence types of sequence types: TypeProto{4: {1: TypeProto{…}}}.
        let type = Proto.nested(Array(repeating: [4, 1], count: 10_000).flatMap { $0 }, innermost: [])
        let graph = Proto.message(7, Proto.message(11, Proto.message(1, Array("x".utf8)) + Proto.message(2, type)))
        XCTAssertThrowsError(try ONNXInterfaceReader.read(bytes: graph, path: "deep.onnx")) { error in
            XCTAssertTrue("\(error)".contains("nested more than 64 deep"), "\(error)")
        }
        // A deep field the reader does not need is skipped by its length, not descended into.
        let unknown = Proto.nested(Array(repeating: 9, count: 10_000), innermost: [])
        XCTAssertEqual(try ONNXInterfaceReader.read(bytes: Proto.message(7, []) + Proto.message(30, unknown), path: "skip.onnx"), ONNXInterface(inputs: [], outputs: []))
    }

    func testHostileGGUFInterfaceValuesAreRefusedByName() throws {
        let scratch = try Scratch()
        func gguf(_ entries: [(String, UInt32, [UInt8])]) -> [UInt8] {
            var bytes = Array("GGUF".utf8) + GGUFBuilder.u32(3) + GGUFBuilder.u64(0) + GGUFBuilder.u64(UInt64(entries.count))
            for (key, type, value) in entries { bytes += GGUFBuilder.string(key) + GGUFBuilder.u32(type) + value }
            return bytes
        }
        let arch = ("general.architecture", UInt32(8), GGUFBuilder.string("llama"))
        let cases: [([(String, UInt32, [UInt8])], String)] = [
            ([arch, ("llama.context_length", 5, GGUFBuilder.u32(UInt32(bitPattern: -1)))], "llama.context_length is -1"),
            ([arch, ("llama.context_length", 6, GGUFBuilder.u32(0))], "llama.context_length has type 6, expected an integer"),
            ([arch, ("tokenizer.ggml.tokens", 8, GGUFBuilder.string("a"))], "tokenizer.ggml.tokens has type 8"),
            ([arch, ("tokenizer.ggml.tokens", 9, GGUFBuilder.u32(5) + GGUFBuilder.u64(1) + GGUFBuilder.u32(0))], "is an array of type 5"),
            ([arch, ("tokenizer.ggml.model", 8, GGUFBuilder.string("a")), ("tokenizer.ggml.model", 8, GGUFBuilder.string("b"))], "tokenizer.ggml.model appears twice"),
            ([arch, ("tokenizer.ggml.tokens", 9, GGUFBuilder.u32(8) + GGUFBuilder.u64(1 << 40))], "array of 1099511627776 elements does not fit"),
        ]
        for (index, (entries, expected)) in cases.enumerated() {
            let path = try scratch.write("m\(index).gguf", gguf(entries))
            XCTAssertThrowsError(try GGUFReader.readInterface(path: path)) { error in
                let message = (error as? ModelCastError)?.message ?? "\(error)"
                XCTAssertTrue(message.contains(expected) && message.contains(path), "\(message)\n  want: \(expected)")
            }
        }
        // Another architecture's sizes (a vision tower's) are no concern of this one's.
        let path = try scratch.write("ok.gguf", gguf([("clip.vision.context_length", 6, GGUFBuilder.u32(0)), arch,
                                                      ("llama.context_length", 4, GGUFBuilder.u32(2048))]))
        XCTAssertEqual(try GGUFReader.readInterface(path: path), GGUFInterface(architecture: "llama", contextLength: 2048))
    }

    func labelDigest(_ labels: [String]) throws -> SHA256Digest {
        let digest = try ClassLabelDigest()
        labels.forEach(digest.add)
        return digest.finish().sha256
    }
}

/// A few protobuf wire-format encoders for hand-made hostile messages.
enum Proto {
    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value
        var out: [UInt8] = []
        while value >= 0x80 { out.append(UInt8(value & 0x7f) | 0x80); value >>= 7 }
        return out + [UInt8(value)]
    }

    static func tag(_ number: UInt64, _ wire: UInt64) -> [UInt8] { varint(number << 3 | wire) }

    /// A length-delimited field.
    static func message(_ number: UInt64, _ body: [UInt8]) -> [UInt8] { tag(number, 2) + varint(UInt64(body.count)) + body }

    /// Messages nested in each other, the field numbers from the outside in, without copying
    /// each level (10,000 levels would copy quadratically): the headers, then `innermost`.
    static func nested(_ numbers: [UInt64], innermost: [UInt8]) -> [UInt8] {
        var length = UInt64(innermost.count)
        var headers: [[UInt8]] = []
        for number in numbers.reversed() {
            let header = tag(number, 2) + varint(length)
            length += UInt64(header.count)
            headers.append(header)
        }
        return headers.reversed().flatMap { $0 } + innermost
    }
}
