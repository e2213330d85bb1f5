import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

/// CRC-64/NVME from its definition (polynomial 0xAD93D23594C93659 reflected, initial
/// value and final XOR all ones), a byte table built bit by bit: the reference the folded
/// code is checked against.
private let referenceTable: [UInt64] = (0..<256).map { byte in
    var value = UInt64(byte)
    for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0x9A6C_9329_AC4B_C9B5 : value >> 1 }
    return value
}

func referenceCRC64NVME(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.withUnsafeBufferPointer { buffer in
        var register = UInt64.max
        referenceTable.withUnsafeBufferPointer { table in
            for byte in buffer { register = (register >> 8) ^ table[Int((register ^ UInt64(byte)) & 0xFF)] }
        }
        return ~register
    }
}

func referenceCRC64NVME(_ bytes: [UInt8]) -> UInt64 { referenceCRC64NVME(bytes[...]) }

final class CRC64NVMETests: XCTestCase {
    func testCheckValueAndEncoding() throws {
        let check = CRC64NVME.checksum(Array("123456789".utf8))
        XCTAssertEqual(check.value, 0xAE8B_1486_0A79_9888, "the catalogued check value of CRC-64/NVME")
        XCTAssertEqual(check.bytes, [0xAE, 0x8B, 0x14, 0x86, 0x0A, 0x79, 0x98, 0x88], "big-endian, as S3 sends it")
        XCTAssertEqual(CRC64NVME(base64: check.base64), check)
        XCTAssertEqual(CRC64NVME.checksum([]).value, 0)
        for bad in ["", "AAAA", "AAAAAA==", "not base64", "AAAAAAAAAAAAAA=="] {
            XCTAssertNil(CRC64NVME(base64: bad), bad)
        }
    }

    /// Every length around the folded paths' block sizes (64-byte blocks from 128 bytes
    /// on, 256-byte blocks from 256 where the CPU has VPCLMULQDQ), at unaligned offsets,
    /// fed whole and in pieces, against the bit-by-bit reference.
    func testEveryPathMatchesTheReference() {
        let bytes = patternBytes(70_000, seed: 31)
        var lengths = Array(0...300) + [511, 512, 513, 767, 768, 769, 1023, 1024, 1025, 2047, 2048, 2049, 4096 + 17, 65_536, 69_990]
        lengths.append(contentsOf: (0..<20).map { 1000 + $0 * 2_999 })
        for length in lengths {
            for offset in [0, 1, 7] where offset + length <= bytes.count {
                let slice = bytes[offset..<(offset + length)]
                let expected = referenceCRC64NVME(slice)
                XCTAssertEqual(CRC64NVME.checksum(Array(slice)).value, expected, "length \(length), offset \(offset)")
                // In pieces of uneven sizes: the running value continues.
                var crc = CRC64NVME()
                var start = slice.startIndex
                var piece = 1
                while start < slice.endIndex {
                    let end = min(slice.endIndex, start + piece)
                    Array(bytes[start..<end]).withUnsafeBytes { crc.update($0) }
                    start = end
                    piece = piece * 3 + 61
                }
                XCTAssertEqual(crc.value, expected, "length \(length) in pieces")
            }
        }
        print("CRC-64/NVME carry-less path in use: \(CRC64NVME.isAccelerated)")
    }

    /// The CRC of A followed by B from the CRCs of A and B: how parts' checksums give the
    /// whole object's, for any part size.
    func testCombiningPartsGivesTheWhole() throws {
        let bytes = patternBytes(100_003, seed: 5)
        let whole = referenceCRC64NVME(bytes)
        for partSize in [1, 7, 64, 1000, 4096, 50_000, 100_003, 200_000] {
            let crcs = stride(from: 0, to: bytes.count, by: partSize).map { CRC64NVME.checksum(Array(bytes[$0..<min($0 + partSize, bytes.count)])) }
            let parts = PartDigests(partSize: Int64(partSize), crcs: crcs)
            XCTAssertEqual(parts.fullObjectCRC(size: Int64(bytes.count))?.value, whole, "part size \(partSize)")
            XCTAssertNil(parts.fullObjectCRC(size: Int64(bytes.count + partSize)), "a part count the size does not give")
            XCTAssertNil(try parts.composite(), "CRC parts have no SHA-256 composite")
        }
        XCTAssertEqual(CRC64NVME.checksum([1, 2]).followed(by: CRC64NVME(), length: 0), CRC64NVME.checksum([1, 2]))
    }

    /// AWS's own implementation (awscrt, which moto uses for the checksums it keeps) agrees.
    func testAWSCommonRuntimeAgrees() throws {
        let scratch = try Scratch()
        var paths: [String] = []
        var expected: [String] = []
        for (index, size) in [0, 1, 127, 128, 129, 1000, 65_537, 3 << 20].enumerated() {
            let bytes = patternBytes(size, seed: UInt32(index + 40))
            paths.append(try scratch.write("f\(index)", bytes))
            expected.append(CRC64NVME.checksum(bytes).base64)
        }
        let script = """
        import base64, sys
        from awscrt import checksums
        for path in sys.argv[1:]:
            print(base64.b64encode(checksums.crc64nvme(open(path, 'rb').read()).to_bytes(8, 'big')).decode())
        """
        let result = try runProcess("/usr/bin/env", ["python3", "-c", script] + paths)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.split(separator: "\n").map(String.init), expected)
    }
}
