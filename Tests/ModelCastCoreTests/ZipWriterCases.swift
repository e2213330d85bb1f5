import Foundation
@testable import ModelCastCore

/// The trees `ZipWriterGoldenTests` zips: every shape of entry and every option `ZipWriter`
/// takes (store and deflate; directories, empty, executable and large files; UTF-8, long
/// and deeply nested names; reads of odd sizes; over 65,535 entries; the Zip64 thresholds).
/// The entries are made in memory, so no case depends on a file system.
struct ZipWriterCase {
    enum Content {
        /// Bytes given in full.
        case bytes([UInt8])
        /// `count` zero bytes, made as they are read (for the multi-gigabyte cases).
        case zeros(Int64)

        var size: Int64 {
            switch self {
            case .bytes(let bytes): Int64(bytes.count)
            case .zeros(let count): count
            }
        }
    }

    enum Entry {
        case directory(String)
        case file(String, Content, executable: Bool = false)
    }

    let name: String
    let compression: ZipCompression
    let entries: [Entry]
    /// The sizes `read` returns, in turn (cycling); nil fills the 1 MiB buffer as `Packer` does.
    var reads: [Int]? = nil
    /// Zips more than 4 GiB: run only with MODELCAST_ZIP64_TESTS=1 (tens of seconds each).
    var large = false

    /// The archive name's label: `store/mlpackage`.
    var label: String { "\(compression.rawValue)/\(name)" }

    /// Runs the case through `add…` and `finish` of a writer (`ZipWriter`; until it replaced
    /// libarchive, libarchive's too, to compare the two).
    func write(
        addDirectory: (String) throws -> Void,
        addFile: (String, Int64, Bool, (UnsafeMutableRawBufferPointer) throws -> Int, UnsafeMutableRawBufferPointer) throws -> Int64,
        finish: () throws -> Void
    ) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        for entry in entries {
            switch entry {
            case .directory(let name):
                try addDirectory(name)
            case .file(let name, let content, let executable):
                var position: Int64 = 0
                var turn = 0
                let read: (UnsafeMutableRawBufferPointer) throws -> Int = { into in
                    var count = Int(min(Int64(into.count), content.size - position))
                    if let reads, !reads.isEmpty {
                        count = min(count, reads[turn % reads.count])
                        turn += 1
                    }
                    guard count > 0 else { return 0 }
                    switch content {
                    case .bytes(let bytes):
                        bytes.withUnsafeBytes { source in
                            into.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(position)..<(Int(position) + count)]))
                        }
                    case .zeros:
                        into.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: count)
                    }
                    position += Int64(count)
                    return count
                }
                let written = try addFile(name, content.size, executable, read, buffer)
                precondition(written == content.size, "\(label): \(name) wrote \(written) of \(content.size) bytes")
            }
        }
        try finish()
    }

    /// Deterministic bytes that deflate well (words from a small vocabulary).
    static func text(_ count: Int, seed: UInt64) -> [UInt8] {
        let words = ["weight", "bias", "layer", "conv", "norm", "attention", "head", "0.125", "-1.5e-3", "{", "}", "\"", ":", ",", "\n"]
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 16)
        while bytes.count < count {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            bytes += Array(words[Int(state % UInt64(words.count))].utf8)
            bytes.append(0x20)
        }
        return Array(bytes.prefix(count))
    }

    /// Deterministic bytes that do not deflate (deflate falls back to stored blocks).
    static func noise(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    /// Every case, in both compressions.
    static let all: [ZipWriterCase] = ZipCompression.allCases.flatMap { compression in
        shapes.map { ZipWriterCase(name: $0.name, compression: compression, entries: $0.entries, reads: $0.reads, large: $0.large) }
    }

    private static let mlpackage: [Entry] = [
        .directory("Model.mlpackage/"),
        .directory("Model.mlpackage/Data/"),
        .directory("Model.mlpackage/Data/com.apple.CoreML/"),
        .file("Model.mlpackage/Data/com.apple.CoreML/model.mlmodel", .bytes(noise(3000, seed: 1))),
        .directory("Model.mlpackage/Data/com.apple.CoreML/weights/"),
        // Over 3 MiB: several 1 MiB reads, many 64 KiB deflate outputs.
        .file("Model.mlpackage/Data/com.apple.CoreML/weights/weight.bin", .bytes(text(3 << 20 | 12_345, seed: 2))),
        .file("Model.mlpackage/Manifest.json", .bytes(Array(#"{"fileFormatVersion":"1.0.0","itemInfoEntries":{"R":{"path":"com.apple.CoreML/model.mlmodel"}},"rootModelIdentifier":"R"}"#.utf8))),
    ]

    private static let longComponent = String(repeating: "n", count: 200)

    private static let shapes: [(name: String, entries: [Entry], reads: [Int]?, large: Bool)] = [
        // `pack --zip FILE`: one file, no directory entry.
        ("single-file", [.file("model.tflite", .bytes(noise(1000, seed: 3)))], nil, false),
        ("mlpackage", mlpackage, nil, false),
        // The same tree read a few bytes at a time, then across buffer boundaries: the bytes
        // must not depend on how the data arrives.
        ("mlpackage-odd-reads", mlpackage, [1, 7, 65_537, 4096, 1 << 20, 3], false),
        ("empty-files", [
            .directory("E/"),
            .file("E/a", .bytes([])),
            .file("E/b", .bytes([])),
            .directory("E/sub/"),
            .file("E/sub/c", .bytes([])),
            .file("E/sub/one", .bytes([0x41])),
        ], nil, false),
        ("executable", [
            .directory("Tool.bundle/"),
            .file("Tool.bundle/run", .bytes(Array("#!/bin/sh\necho hello\n".utf8)), executable: true),
            .file("Tool.bundle/data", .bytes(text(500, seed: 4))),
        ], nil, false),
        ("utf8-names", [
            .directory("Caf\u{00E9}.mlpackage/"),
            .file("Caf\u{00E9}.mlpackage/\u{65E5}\u{672C}\u{8A9E}.bin", .bytes(text(100, seed: 5))),
            .file("Caf\u{00E9}.mlpackage/emoji \u{1F600}.json", .bytes(Array("{}".utf8))),
            .file("Caf\u{00E9}.mlpackage/plain.txt", .bytes(Array("ascii".utf8))),
            .directory("Caf\u{00E9}.mlpackage/\u{0416}\u{0438}\u{0437}\u{043D}\u{044C}/"),
            .file("Caf\u{00E9}.mlpackage/\u{0416}\u{0438}\u{0437}\u{043D}\u{044C}/\u{00FC}ber", .bytes(noise(64, seed: 6))),
        ], nil, false),
        ("deep-long-names", {
            var entries: [Entry] = [.directory("D/")]
            var path = "D/"
            for level in 0..<16 {
                path += "\(level)-\(longComponent)/"
                entries.append(.directory(path))
            }
            entries.append(.file(path + "leaf-\(longComponent).bin", .bytes(text(2000, seed: 7))))
            return entries
        }(), nil, false),
        ("incompressible", [.directory("R/"), .file("R/noise.bin", .bytes(noise((2 << 20) + 777, seed: 8)))], nil, false),
        // More than 65,535 entries: the Zip64 end records.
        ("many-entries", [.directory("M/")] + (0..<65_540).map { .file("M/f\(String(format: "%05d", $0))", .bytes([])) }, nil, false),
        // Exactly 0xFFFFFFFF bytes (the largest file without Zip64 sizes), then a file over it
        // (Zip64 sizes), each followed by entries whose offsets are past 4 GiB.
        ("zip64-sizes-and-offsets", [
            .directory("Z/"),
            .file("Z/a-max32.bin", .zeros(0xFFFF_FFFF)),
            .file("Z/b-after.bin", .bytes(text(100, seed: 9))),
            .directory("Z/c-dir/"),
            .file("Z/d-over.bin", .zeros(0x1_0000_0000 + 4096)),
            .file("Z/e-after.bin", .bytes([])),
        ], nil, true),
        // A deflated file just at, and just over, 0xFF000000 bytes (Zip64 sizes from there).
        ("zip64-deflate-threshold", [
            .directory("T/"),
            .file("T/at.bin", .zeros(0xFF00_0000)),
            .file("T/over.bin", .zeros(0xFF00_0001)),
        ], nil, true),
    ]
}
