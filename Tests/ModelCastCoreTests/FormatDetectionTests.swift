import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

final class FormatDetectionTests: XCTestCase {
    private let manifest = """
        {"fileFormatVersion":"1.0.0","itemInfoEntries":{"ROOT":{"path":"com.apple.CoreML/model.mlmodel"}},"rootModelIdentifier":"ROOT"}
        """

    func testExamplesDetected() throws {
        let models = repositoryRoot + "/examples/models"
        XCTAssertEqual(try ModelInspector.describe(models + "/tiny-llm.gguf").kind, .gguf)
        let package = try ModelInspector.describe(models + "/TinyClassifier.mlpackage")
        XCTAssertEqual(package.kind, .mlpackage)
        XCTAssertEqual(package.fileCount, 3)
        XCTAssertTrue(package.details.contains { $0.key == "root_model_path" && $0.value == "Data/com.apple.CoreML/model.mlmodel" })
    }

    func testEachKind() throws {
        let s = try Scratch()
        try s.write("a.mlmodel", [0x08, 0x07, 0x12, 0x00])
        try s.write("a.onnx", [0x08, 0x0a, 0x12, 0x03])
        try s.write("a.tflite", [0x1c, 0, 0, 0] + Array("TFL3".utf8) + [0, 0])
        try s.write("weights.bin", [1, 2, 3])
        try s.write("renamed.bin", Array("GGUF".utf8) + GGUFBuilder.u32(3) + GGUFBuilder.u64(0) + GGUFBuilder.u64(0))
        try s.write("Compiled.mlmodelc/coremldata.bin", [0])
        try s.write("plain/x.txt", [1])
        try s.write("P.mlpackage/Manifest.json", text: manifest)
        try s.write("P.mlpackage/Data/com.apple.CoreML/model.mlmodel", [0x08, 0x07])
        let expected: [(String, ModelKind)] = [
            ("a.mlmodel", .mlmodel), ("a.onnx", .onnx), ("a.tflite", .tflite), ("weights.bin", .file),
            ("renamed.bin", .gguf), ("Compiled.mlmodelc", .mlmodelc), ("plain", .directory), ("P.mlpackage", .mlpackage),
        ]
        for (name, kind) in expected {
            XCTAssertEqual(try ModelInspector.describe(s.at(name)).kind, kind, name)
        }
        XCTAssertEqual(try ModelInspector.describe(s.at("a.onnx")).details.first?.value, "10")
    }

    private func assertInvalid(_ path: String, format: String, reason fragment: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try ModelInspector.describe(path), file: file, line: line) { error in
            guard case .invalidModel(let p, let f, let reason)? = error as? ModelCastError else {
                return XCTFail("unexpected \(error)", file: file, line: line)
            }
            XCTAssertEqual(p, path, file: file, line: line)
            XCTAssertEqual(f, format, file: file, line: line)
            XCTAssertTrue(reason.contains(fragment), "'\(reason)' lacks '\(fragment)'", file: file, line: line)
        }
    }

    func testClaimedFormatsThatFailTheirCheck() throws {
        let s = try Scratch()
        try s.write("bad.gguf", Array("NOPE1234".utf8))
        assertInvalid(s.at("bad.gguf"), format: "GGUF", reason: "bad magic")
        try s.write("bad.tflite", Array("12345678".utf8))
        assertInvalid(s.at("bad.tflite"), format: "TensorFlow Lite", reason: "TFL3")
        try s.write("bad.onnx", [0xff, 0x01])
        assertInvalid(s.at("bad.onnx"), format: "ONNX", reason: "first byte 0xff")
        try s.write("empty.mlmodel", [])
        assertInvalid(s.at("empty.mlmodel"), format: "Core ML (.mlmodel)", reason: "empty")
        try s.write("NoManifest.mlpackage/Data/x", [1])
        assertInvalid(s.at("NoManifest.mlpackage"), format: "Core ML package", reason: "Manifest.json is missing")
        try s.write("NoRoot.mlpackage/Manifest.json", text: manifest)
        assertInvalid(s.at("NoRoot.mlpackage"), format: "Core ML package", reason: "Data/com.apple.CoreML/model.mlmodel")
        try s.write("BadJSON.mlpackage/Manifest.json", text: "{nope")
        assertInvalid(s.at("BadJSON.mlpackage"), format: "Core ML package", reason: "not a JSON object")
        try s.write("Escape.mlpackage/Manifest.json", text: manifest.replacingOccurrences(of: "com.apple.CoreML/model.mlmodel", with: "../../etc/passwd"))
        assertInvalid(s.at("Escape.mlpackage"), format: "Core ML package", reason: "unsafe path")
        try s.write("Bad.mlmodelc/model.mil", [1])
        assertInvalid(s.at("Bad.mlmodelc"), format: "compiled Core ML model", reason: "coremldata.bin")
    }

    func testTopLevelSymlinkToAFileIsFollowed() throws {
        let s = try Scratch()
        try s.write("real.gguf", Array("GGUF".utf8) + GGUFBuilder.u32(3) + GGUFBuilder.u64(0) + GGUFBuilder.u64(0))
        XCTAssertEqual(symlink("real.gguf", s.at("latest.gguf")), 0)
        XCTAssertEqual(try ModelInspector.describe(s.at("latest.gguf")).kind, .gguf)
    }
}
