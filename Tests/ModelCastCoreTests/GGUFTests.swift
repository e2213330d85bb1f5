import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

final class GGUFTests: XCTestCase {
    private func validBuilder() -> GGUFBuilder {
        var b = GGUFBuilder()
        b.addString("general.architecture", "llama")
        b.addString("general.name", "unit")
        b.addUInt32("general.file_type", 15)
        // An array of strings, as tokenizers store vocabularies.
        b.addRaw(GGUFBuilder.string("tokenizer.ggml.tokens") + GGUFBuilder.u32(9) + GGUFBuilder.u32(8) + GGUFBuilder.u64(2)
            + GGUFBuilder.string("a") + GGUFBuilder.string("b"))
        // Q4_K: 256 elements per 144-byte block; F32: 4 bytes each.
        b.tensors = [("blk.0.w", [256, 2], 12, 0), ("norm", [16], 0, 288)]
        b.dataBytes = 288 + 64
        return b
    }

    private func check(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> Result<GGUFSummary, ModelCastError> {
        let scratch = try Scratch()
        let path = try scratch.write("m.gguf", bytes)
        do { return .success(try GGUFReader.read(path: path)) } catch let error as ModelCastError { return .failure(error) }
    }

    private func assertInvalid(_ bytes: [UInt8], contains fragment: String, file: StaticString = #filePath, line: UInt = #line) throws {
        switch try check(bytes) {
        case .success: XCTFail("expected a GGUF error containing '\(fragment)'", file: file, line: line)
        case .failure(let error):
            guard case .invalidModel(_, let format, let reason) = error else { return XCTFail("unexpected \(error)", file: file, line: line) }
            XCTAssertEqual(format, "GGUF", file: file, line: line)
            XCTAssertTrue(reason.contains(fragment), "'\(reason)' does not contain '\(fragment)'", file: file, line: line)
            XCTAssertTrue(error.message.contains("m.gguf"), "message must name the file: \(error.message)", file: file, line: line)
        }
    }

    func testValidFileSummary() throws {
        let summary = try check(validBuilder().build()).get()
        XCTAssertEqual(summary.version, 3)
        XCTAssertEqual(summary.architecture, "llama")
        XCTAssertEqual(summary.name, "unit")
        XCTAssertEqual(summary.quantization, "Q4_K_M")
        XCTAssertEqual(summary.tensorCount, 2)
        XCTAssertEqual(summary.metadataCount, 4)
        XCTAssertEqual(summary.parameterCount, 512 + 16)
        XCTAssertEqual(summary.dataEnd - summary.dataOffset, 288 + 64)
    }

    func testQuantizationFallsBackToDominantTensorType() throws {
        var b = GGUFBuilder()
        b.tensors = [("big", [64], 8, 0), ("small", [4], 0, 96)]  // Q8_0: 2 blocks = 68 bytes; F32: 16 bytes
        b.dataBytes = 112
        XCTAssertEqual(try check(b.build()).get().quantization, "Q8_0")
    }

    func testExampleModelsAreValid() throws {
        let summary = try GGUFReader.read(path: repositoryRoot + "/examples/models/tiny-llm.gguf")
        XCTAssertEqual(summary.architecture, "llama")
        XCTAssertEqual(summary.quantization, "Q8_0")
        let projector = try GGUFReader.read(path: repositoryRoot + "/examples/models/tiny-llm-mmproj.gguf")
        XCTAssertEqual(projector.architecture, "clip")
    }

    func testWrongMagic() throws {
        var b = validBuilder()
        b.magic = Array("GGML".utf8)
        try assertInvalid(b.build(), contains: "bad magic")
    }

    func testTruncatedTensorData() throws {
        let bytes = validBuilder().build()
        try assertInvalid(Array(bytes.dropLast(10)), contains: "truncated: tensor norm")
    }

    func testTruncatedInsideHeader() throws {
        let bytes = validBuilder().build()
        try assertInvalid(Array(bytes.prefix(40)), contains: "truncated")
        try assertInvalid(Array(bytes.prefix(6)), contains: "truncated")
    }

    func testAbsurdCounts() throws {
        var b = validBuilder()
        b.tensorCountOverride = 1 << 40
        try assertInvalid(b.build(), contains: "absurd tensor count")
        b = validBuilder()
        b.metadataCountOverride = UInt64.max
        try assertInvalid(b.build(), contains: "absurd metadata count")
    }

    func testHugeArrayCountIsRefused() throws {
        var b = GGUFBuilder()
        b.addRaw(GGUFBuilder.string("x") + GGUFBuilder.u32(9) + GGUFBuilder.u32(4) + GGUFBuilder.u64(1 << 60))
        try assertInvalid(b.build(), contains: "does not fit")
    }

    func testHugeStringLengthIsRefused() throws {
        var b = GGUFBuilder()
        b.addRaw(GGUFBuilder.string("general.name") + GGUFBuilder.u32(8) + GGUFBuilder.u64(1 << 50))
        try assertInvalid(b.build(), contains: "exceeds")
    }

    func testVersions() throws {
        var b = validBuilder()
        b.version = 1
        try assertInvalid(b.build(), contains: "version 1 is obsolete")
        b.version = 99
        try assertInvalid(b.build(), contains: "unsupported GGUF version 99")
        b.version = UInt32(3).byteSwapped
        try assertInvalid(b.build(), contains: "big-endian")
    }

    func testMisalignedTensorOffset() throws {
        var b = validBuilder()
        b.tensors[1].offset = 290
        try assertInvalid(b.build(), contains: "not aligned")
    }

    func testBadAlignmentValue() throws {
        var b = validBuilder()
        b.addUInt32("general.alignment", 24)
        try assertInvalid(b.build(), contains: "power of two")
    }

    func testUnknownValueType() throws {
        var b = GGUFBuilder()
        b.addRaw(GGUFBuilder.string("weird") + GGUFBuilder.u32(77) + GGUFBuilder.u32(0))
        try assertInvalid(b.build(), contains: "unknown value type 77")
    }

    func testTooManyDimensions() throws {
        var b = GGUFBuilder()
        b.tensors = [("t", [1, 1, 1, 1, 1], 0, 0)]
        b.dataBytes = 32
        try assertInvalid(b.build(), contains: "5 dimensions")
    }

    func testRowNotMultipleOfBlock() throws {
        var b = GGUFBuilder()
        b.tensors = [("t", [100], 12, 0)]
        b.dataBytes = 1024
        try assertInvalid(b.build(), contains: "not a multiple")
    }

    /// The valid file, its last tensor's type made unknown, then cut from its end: refused
    /// for the unknown type, never accepted as whole (issue 24, item 6).
    func testTruncatedFileWithAnUnknownLastTensorTypeIsRefused() throws {
        var valid = validBuilder()
        valid.tensors = [("blk.0.w", [256, 2], 12, 0), ("norm", [16], 77, 288)]
        let whole = valid.build()
        try assertInvalid(whole, contains: "tensor norm has type 77")
        try assertInvalid(Array(whole.prefix(whole.count - 40)), contains: "tensor norm has type 77")
    }

    /// GGUF strings are UTF-8: a key or a value that is not is refused, not repaired.
    func testInvalidUTF8StringsAreRefused() throws {
        var b = validBuilder()
        b.addRaw(GGUFBuilder.string("general.description") + GGUFBuilder.u32(8) + GGUFBuilder.u64(3) + [0xC3, 0x28, 0xFF])
        try assertInvalid(b.build(), contains: "not valid UTF-8")
        var key = validBuilder()
        key.addRaw(GGUFBuilder.u64(3) + [0x61, 0xFF, 0x62] + GGUFBuilder.u32(4) + GGUFBuilder.u32(1))
        try assertInvalid(key.build(), contains: "not valid UTF-8")
    }
}

// MARK: - Sizes, offsets and counts that overflow 64 bits (issue #11 item 1)

final class GGUFOverflowTests: XCTestCase {
    private func assertInvalid(_ builder: GGUFBuilder, contains fragments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let scratch = try Scratch()
        let path = try scratch.write("m.gguf", builder.build())
        do {
            let summary = try GGUFReader.read(path: path)
            XCTFail("expected a GGUF error, got \(summary)", file: file, line: line)
        } catch let error as ModelCastError {
            guard case .invalidModel(let named, let format, let reason) = error else { return XCTFail("unexpected \(error)", file: file, line: line) }
            XCTAssertEqual(named, path, file: file, line: line)
            XCTAssertEqual(format, "GGUF", file: file, line: line)
            for fragment in fragments {
                XCTAssertTrue(reason.contains(fragment), "'\(reason)' does not contain '\(fragment)'", file: file, line: line)
            }
        }
    }

    /// The reported crash: an aligned offset 32 bytes short of 2^64 made `data start + offset` trap.
    func testTensorOffsetNearTwoToThe64IsRefusedNamingTheTensorAndField() throws {
        var b = GGUFBuilder()
        b.addString("general.architecture", "llama")
        b.tensors = [("token_embd.weight", [64, 2], 8, 0xFFFF_FFFF_FFFF_FFE0)]  // Q8_0
        b.dataBytes = 136
        try assertInvalid(b, contains: ["tensor token_embd.weight", "offset 18446744073709551584", "overflows"])
    }

    /// Found by the issue 24 campaign (gguf-py refused it: "array is too big"): a zero
    /// extent made every later extent pass, so a shape of [0, 2^62, 8] was accepted. Each
    /// extent is a non-negative int64 (ggml's `ne`), and the extents other than zero must
    /// multiply to less than 2^63, so every reader can represent the shape.
    func testAZeroExtentDoesNotHideAnOverflowingShape() throws {
        var b = GGUFBuilder()
        b.addString("general.architecture", "llama")
        b.tensors = [("empty", [0, 1 << 62, 8], 0, 0)]
        b.dataBytes = 32
        try assertInvalid(b, contains: ["tensor empty", "shape overflows"])
        b.tensors = [("negative", [0, UInt64(1) << 63], 0, 0)]
        try assertInvalid(b, contains: ["tensor negative", "shape overflows"])
        // Found in the campaign's second run: [9151314442816847904, 0] F32 (gguf-py: "array
        // is too big"): the shape's bytes, zero extents counted as one, exceed 2^63.
        b.tensors = [("wide", [9_151_314_442_816_847_904, 0], 0, 0)]
        try assertInvalid(b, contains: ["tensor wide", "overflows"])
        // An empty tensor with a representable shape is valid.
        b.tensors = [("empty", [0, 4096, 8], 0, 0)]
        let scratch = try Scratch()
        XCTAssertNoThrow(try GGUFReader.read(path: try scratch.write("empty.gguf", b.build())), "a [0, 4096, 8] tensor is valid")
    }

    /// Elements × bytes per element: 2^61 F64 elements fit the shape check but not a 64-bit byte count.
    func testTensorByteSizeOverflowIsRefusedNamingTheTensor() throws {
        var b = GGUFBuilder()
        b.tensors = [("huge", [1 << 31, 1 << 30], 28, 0)]  // F64, 8 bytes each
        b.dataBytes = 32
        try assertInvalid(b, contains: ["tensor huge", "size", "2305843009213693952 elements", "overflows"])
    }

    /// Offset plus size: each fits, their sum does not.
    func testTensorEndOverflowIsRefusedNamingTheTensor() throws {
        var b = GGUFBuilder()
        b.tensors = [("tail", [1 << 60], 0, 0xC000_0000_0000_0000)]  // F32: 2^62 bytes from 3 × 2^62
        b.dataBytes = 32
        try assertInvalid(b, contains: ["tensor tail", "overflows"])
    }

    /// Tensors of a type this reader does not know still count parameters; the sum must not wrap.
    /// Four tensors of 2^62 elements each: the parameter count would pass 2^64. A known
    /// type makes the first one far larger than the file, and an unknown one is refused
    /// by its type, so the sum's own overflow check is now a second line; no trap either way.
    func testParameterCountOverflowIsRefused() throws {
        var b = GGUFBuilder()
        b.tensors = (0..<4).map { ("t\($0)", [1 << 62], 250, 0) }
        b.dataBytes = 32
        try assertInvalid(b, contains: ["t0", "type 250"])
        b.tensors = (0..<4).map { ("t\($0)", [1 << 62], 24, 0) }
        try assertInvalid(b, contains: ["t0"])
    }

    /// A tensor of an unknown type has no known size, so whether the file is whole cannot
    /// be checked: it is refused, naming the tensor and the type (issue 24, item 6), and a
    /// truncated file whose last tensor has an unknown type is refused like any other.
    func testUnknownTensorTypesAreRefused() throws {
        var b = GGUFBuilder()
        b.tensors = [("future", [4], 250, 1 << 20)]
        b.dataBytes = 32
        try assertInvalid(b, contains: ["tensor future has type 250, which this modelcast does not know"])
        b.tensors = [("future", [4], 250, 0xFFFF_FFFF_FFFF_FFE0)]
        try assertInvalid(b, contains: ["tensor future has type 250"])
    }

    /// A huge `general.alignment` is a power of two, so rounding the header end up to it must be checked too.
    func testLargestAlignmentDoesNotTrap() throws {
        var b = GGUFBuilder()
        b.addUInt32("general.alignment", 1 << 31)
        b.tensors = [("t", [8], 0, 0)]
        b.dataBytes = 32
        try assertInvalid(b, contains: ["truncated"])
    }
}
