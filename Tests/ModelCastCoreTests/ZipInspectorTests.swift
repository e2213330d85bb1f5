import Foundation
import XCTest
@testable import ModelCastCore
@_spi(ModelCastTooling) import ModelCastFormat
import ModelCastTestSupport

final class ZipInspectorTests: XCTestCase {
    // MARK: - Helpers

    private func inspect(_ path: String, maxCentralDirectory: Int = 64 << 20, maxEntries: Int = ZipInspector.defaultMaxEntries) async throws -> ZipInspection {
        try await ZipInspector.inspect(FileBytes(path: path), maxCentralDirectory: maxCentralDirectory, maxEntries: maxEntries)
    }

    /// Runs a Python script file with `arguments` (a file avoids quoting the script for the shell).
    @discardableResult
    private func python(_ script: String, _ arguments: String..., in scratch: Scratch) throws -> String {
        let file = try scratch.write("script-\(UUID().uuidString).py", text: script)
        return try shell("python3 '\(file)' " + arguments.map { "'\($0)'" }.joined(separator: " "))
    }

    /// Writes `name` with Python's zipfile; `body` is Python run with the archive open as `zf`.
    private func craft(_ body: String, in scratch: Scratch, name: String = "crafted.zip", options: String = "") throws -> String {
        let path = scratch.at(name)
        let indented = body.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
        try python("import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], \"w\"\(options)) as zf:\n\(indented)\n", path, in: scratch)
        return path
    }

    private func contents(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }
    private func save(_ bytes: [UInt8], to path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }
    private func u32(_ bytes: [UInt8], _ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
    private func put(_ value: Int, width: Int, into bytes: inout [UInt8], at: Int) {
        for index in 0..<width { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }

    /// Each central directory header's name and position, walked from the end record (no zip64, no comment).
    private func centralHeaders(_ bytes: [UInt8]) -> [(name: String, at: Int)] {
        var headers: [(name: String, at: Int)] = []
        var at = u32(bytes, bytes.count - 22 + 16)
        while u32(bytes, at) == 0x0201_4b50 {
            let lengths = [28, 30, 32].map { Int(bytes[at + $0]) | Int(bytes[at + $0 + 1]) << 8 }
            headers.append((String(decoding: bytes[(at + 46)..<(at + 46 + lengths[0])], as: UTF8.self), at))
            at += 46 + lengths.reduce(0, +)
        }
        return headers
    }

    /// The entry and end a "data ends at" problem names (data running past the central
    /// directory start, or over the next local header); nil for any other problem.
    private func dataOverrun(_ problem: ZipProblem?) -> (entry: String, end: Int64)? {
        switch problem {
        case let .dataPastDirectory(entry, _, end, _)?, let .dataOverlapsNextHeader(entry, _, end, _, _)?: (entry, end)
        default: nil
        }
    }

    /// True for bytes no entry accounts for: before the first local header, or after an entry's data.
    private func isUnaccounted(_ problem: ZipProblem) -> Bool {
        switch problem {
        case .bytesBeforeFirstHeader, .unaccountedBytes: true
        default: false
        }
    }

    /// Asserts that inspecting `path` throws `.invalidModel` for format "zip", naming `path`, with `reason` in the reason.
    private func assertInvalid(_ path: String, reason expected: String, maxCentralDirectory: Int = 64 << 20, maxEntries: Int = ZipInspector.defaultMaxEntries, file: StaticString = #filePath, line: UInt = #line) async {
        do {
            let inspection = try await inspect(path, maxCentralDirectory: maxCentralDirectory, maxEntries: maxEntries)
            XCTFail("expected an error, got \(inspection.entries.count) entries and problems \(inspection.problems)", file: file, line: line)
        } catch let error as ModelCastError {
            guard case .invalidModel(let named, let format, let reason) = error else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(named, path, file: file, line: line)
            XCTAssertEqual(format, "zip", file: file, line: line)
            XCTAssertTrue(reason.contains(expected), reason, file: file, line: line)
            XCTAssertTrue(error.message.contains(path), error.message, file: file, line: line)
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
        }
    }

    // MARK: - Archives modelcast makes

    func testPackedTreeHasNoProblemsInEitherCompression() async throws {
        let src = try Scratch(), out = try Scratch()
        let files: [(String, [UInt8])] = [
            ("Model.mlpackage/Manifest.json", Array(#"{"rootModelIdentifier":"R","itemInfoEntries":{"R":{"path":"com.apple.CoreML/model.mlmodel"}}}"#.utf8)),
            ("Model.mlpackage/Data/com.apple.CoreML/model.mlmodel", [0x08, 0x07] + patternBytes(300)),
            ("Model.mlpackage/Data/com.apple.CoreML/weights/weight.bin", patternBytes(70_000, seed: 9)),
            ("Model.mlpackage/Data/Caf\u{00E9} \u{65E5}\u{672C}.bin", patternBytes(17, seed: 4)),
        ]
        for (path, bytes) in files { try src.write(path, bytes) }
        let expectedDirectories = [
            "Model.mlpackage/", "Model.mlpackage/Data/", "Model.mlpackage/Data/com.apple.CoreML/",
            "Model.mlpackage/Data/com.apple.CoreML/weights/",
        ]
        for compression in ZipCompression.allCases {
            let result = try Packer().pack(src.at("Model.mlpackage"), options: PackOptions(output: out.at("\(compression).zip"), compression: compression))
            let inspection = try await inspect(result.path)
            XCTAssertEqual(inspection.problems, [], "\(compression)")
            XCTAssertFalse(inspection.isZip64)
            let byName = Dictionary(uniqueKeysWithValues: inspection.entries.map { ($0.name, $0) })
            XCTAssertEqual(Set(byName.keys), Set(files.map(\.0) + expectedDirectories))
            for (path, bytes) in files {
                let entry = try XCTUnwrap(byName[path], path)
                XCTAssertEqual(entry.uncompressedSize, Int64(bytes.count), path)
                XCTAssertFalse(entry.isDirectory || entry.isSymlink || entry.isEncrypted, path)
                XCTAssertEqual(entry.unixMode, 0o100644, path)
                XCTAssertEqual(entry.method, compression == .store ? 0 : 8, path)
                if compression == .store { XCTAssertEqual(entry.compressedSize, entry.uncompressedSize, path) }
            }
            for path in expectedDirectories {
                let entry = try XCTUnwrap(byName[path], path)
                XCTAssertTrue(entry.isDirectory, path)
                XCTAssertEqual(entry.uncompressedSize, 0, path)
            }
            XCTAssertEqual(inspection.totalUncompressedSize, Int64(files.reduce(0) { $0 + $1.1.count }))
            XCTAssertEqual(inspection.entries.map(\.localHeaderOffset).min(), 0)
        }
    }

    func testPackedExampleMLPackageHasNoProblems() async throws {
        let out = try Scratch()
        let model = repositoryRoot + "/examples/models/TinyClassifier.mlpackage"
        let result = try Packer().pack(model, options: PackOptions(output: out.path + "/"))
        let inspection = try await inspect(result.path)
        XCTAssertEqual(inspection.problems, [])
        XCTAssertEqual(inspection.entries.filter { !$0.isDirectory }.count, result.files)
        XCTAssertTrue(inspection.entries.allSatisfy { $0.name.hasPrefix("TinyClassifier.mlpackage/") })
        var total: Int64 = 0
        for case let relative as String in FileManager.default.enumerator(atPath: model)! {
            let attributes = try FileManager.default.attributesOfItem(atPath: model + "/" + relative)
            if attributes[.type] as? FileAttributeType == .typeRegular { total += (attributes[.size] as! NSNumber).int64Value }
        }
        XCTAssertEqual(inspection.totalUncompressedSize, total)
    }

    // MARK: - Unsafe names and types

    func testNamesThatEscapeOrMeanSomethingElseOnWindows() async throws {
        let scratch = try Scratch()
        let cases: [(python: String, problems: [ZipProblem])] = [
            (#""../evil.txt""#, [.pathEscapes(entry: "../evil.txt", index: 0)]),
            (#""Model/../../evil.txt""#, [.pathEscapes(entry: "Model/../../evil.txt", index: 0)]),
            (#""/etc/passwd""#, [.absolutePath(entry: "/etc/passwd", index: 0)]),
            (#""a\\b.txt""#, [.backslashInName(entry: #"a\b.txt"#, index: 0)]),
            (#""C:evil""#, [.windowsDrivePrefix(entry: "C:evil", index: 0, drive: "C")]),
            (#""ok\\..\\..\\evil""#, [
                .backslashInName(entry: #"ok\..\..\evil"#, index: 0),
                .pathEscapes(entry: #"ok\..\..\evil"#, index: 0),
            ]),
            (#""bell\x1b[31m.txt""#, [.controlCharacter(entry: "bell\u{1B}[31m.txt", index: 0, scalar: "\u{1B}")]),
        ]
        for (index, testCase) in cases.enumerated() {
            let zip = try craft("zf.writestr(\(testCase.python), b\"payload\")", in: scratch, name: "case\(index).zip")
            let inspection = try await inspect(zip)
            XCTAssertEqual(inspection.entries.count, 1, testCase.python)
            XCTAssertEqual(inspection.problems, testCase.problems, testCase.python)
        }
    }

    /// Names a device refuses to create (`RelativePath`: its rules, once), which verify let
    /// through: publish could make live a zip every device then refused to unpack.
    func testNamesNoDeviceCreatesAreRefusedAsTheDeviceRefusesThem() async throws {
        let scratch = try Scratch()
        let cases: [(python: String, entry: String, rule: String)] = [
            (#""Model/e\u0301.bin""#, "Model/e\u{301}.bin", "is not in Unicode normal form C"),
            (#""Model/a\u2215b.bin""#, "Model/a\u{2215}b.bin", "looks like one (U+2215)"),
            (#""Model/a\u200bb.bin""#, "Model/a\u{200B}b.bin", "invisible character (U+200B)"),
            (#""Model//b.bin""#, "Model//b.bin", "is empty"),
            (#""Model/\u2024\u2024/b.bin""#, "Model/\u{2024}\u{2024}/b.bin", "made only of dots"),
            (#""Model/" + "x" * 256"#, "Model/" + String(repeating: "x", count: 256), "longer than 255 bytes"),
        ]
        for (index, testCase) in cases.enumerated() {
            let zip = try craft("zf.writestr(\(testCase.python), b\"payload\")", in: scratch, name: "case\(index).zip")
            let inspection = try await inspect(zip)
            XCTAssertEqual(inspection.entries.map(\.name), [testCase.entry], testCase.python)
            guard inspection.problems.count == 1, case let .unsafeName(entry, 0, rule) = inspection.problems[0] else {
                XCTFail("\(testCase.python): \(inspection.problems)")
                continue
            }
            XCTAssertEqual(entry, testCase.entry)
            XCTAssertTrue(rule.contains(testCase.rule), "\(testCase.python): \(rule)")
            XCTAssertTrue(inspection.problems[0].message.contains("no device can create"), inspection.problems[0].message)
        }
        // A directory entry's trailing "/" is no empty segment; an ordinary name passes.
        let fine = try craft(#"zf.writestr("Model/", b""); zf.writestr("Model/caf\u00e9.bin", b"x")"#, in: scratch, name: "fine.zip")
        let inspection = try await inspect(fine)
        XCTAssertEqual(inspection.problems, [])
    }

    func testSymlinksAndSpecialFiles() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"""
            link = zipfile.ZipInfo("Model/weights.bin")
            link.create_system = 3
            link.external_attr = 0o120777 << 16
            zf.writestr(link, "/etc/passwd")
            fifo = zipfile.ZipInfo("Model/pipe")
            fifo.create_system = 3
            fifo.external_attr = 0o010644 << 16
            zf.writestr(fifo, "")
            zf.writestr("Model/real.bin", b"data")
            """#, in: scratch)
        let inspection = try await inspect(zip)
        XCTAssertEqual(inspection.problems, [
            .symbolicLink(entry: "Model/weights.bin", index: 0, mode: 0o120777),
            .specialFile(entry: "Model/pipe", index: 1, mode: 0o010644),
        ])
        XCTAssertEqual(inspection.entries.map(\.isSymlink), [true, false, false])
    }

    func testDuplicateNamesExactAndAfterNormalisationAndCaseFolding() async throws {
        let scratch = try Scratch()
        let exact = try craft(#"""
            zf.writestr("a.txt", b"first")
            zf.writestr("a.txt", b"second")
            """#, in: scratch, name: "exact.zip")
        let exactProblems = try await inspect(exact).problems
        XCTAssertEqual(exactProblems, [.duplicateName(entry: "a.txt", index: 1, firstIndex: 0)])

        let folded = try craft(#"""
            zf.writestr("Foo.bin", b"1")
            zf.writestr("foo.bin", b"2")
            zf.writestr("Caf\u00e9.bin", b"3")
            zf.writestr("Cafe\u0301.bin", b"4")
            zf.writestr("dir/", b"")
            zf.writestr("DIR", b"5")
            """#, in: scratch, name: "folded.zip")
        let inspection = try await inspect(folded)
        XCTAssertEqual(inspection.problems, [
            // The NFD spelling is also a name no device creates (it is refused alone too).
            .unsafeName(entry: "Cafe\u{0301}.bin", index: 3, rule: "has a segment \(quotedValue("Cafe\u{0301}.bin")) that is not in Unicode normal form C (two spellings of one name)"),
            .foldedNameCollision(entry: "foo.bin", index: 1, other: "Foo.bin"),
            .foldedNameCollision(entry: "Cafe\u{0301}.bin", index: 3, other: "Caf\u{00E9}.bin"),
            .foldedNameCollision(entry: "DIR", index: 5, other: "dir/"),
        ])
        // The two spellings of "Café" stay distinct in the entries (bytes differ).
        XCTAssertEqual(inspection.entries.map { Array($0.name.utf8) }.filter { $0.first == UInt8(ascii: "C") }.count, 2)
    }

    func testEncryptedEntry() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"""
            zf.writestr("plain.bin", b"visible")
            zf.writestr("secret.bin", b"hidden")
            zf.infolist()[-1].flag_bits |= 1  # zipfile resets flags while writing; set it for the central directory
            """#, in: scratch)
        let inspection = try await inspect(zip)
        XCTAssertEqual(inspection.problems, [
            .encrypted(entry: "secret.bin", index: 1),
            // Only the central directory was flagged: the two records disagree.
            .localHeaderDiffers(entry: "secret.bin", index: 1, offset: 46, field: .flags, local: 0, central: 1, fromZip64: false),
        ])
        XCTAssertEqual(inspection.entries.map(\.isEncrypted), [false, true])
    }

    // MARK: - Archives that do not parse, or whose sizes do not add up

    func testTruncatedAndNonZipFilesAreRefusedNamingTheSource() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"zf.writestr("a.bin", b"x" * 100)"#, in: scratch)
        let whole = try contents(zip)
        for dropped in [1, 10, 22, 60] {
            let path = scratch.at("cut\(dropped).zip")
            try save(Array(whole.dropLast(dropped)), to: path)
            await assertInvalid(path, reason: "no end of central directory record in the last \(whole.count - dropped) bytes")
        }
        let tiny = try scratch.write("tiny.zip", [0x50, 0x4b, 0x05, 0x06])
        await assertInvalid(tiny, reason: "4 bytes is too short for a zip archive")
        await assertInvalid(repositoryRoot + "/examples/models/tiny-llm.gguf", reason: "no end of central directory record")
        let directorySize = u32(whole, whole.count - 22 + 12)
        XCTAssertEqual(directorySize, 46 + "a.bin".utf8.count)
        await assertInvalid(zip, reason: "central directory is \(directorySize) bytes, more than the limit of \(directorySize - 1) bytes", maxCentralDirectory: directorySize - 1)

        do {
            _ = try FileBytes(path: scratch.at("missing.zip"))
            XCTFail("opened a missing file")
        } catch let error as ModelCastError {
            XCTAssertEqual(error, .notFound(path: scratch.at("missing.zip")))
        }
        do {
            _ = try FileBytes(path: scratch.path)
            XCTFail("opened a directory")
        } catch let error as ModelCastError {
            XCTAssertEqual(error, .invalidModel(path: scratch.path, format: "zip", reason: "a directory, not a zip archive"))
        }
    }

    func testEntryCountThatDisagreesWithTheCentralDirectory() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"""
            for i in range(3):
                zf.writestr(f"entries/with-a-fairly-long-name-number-{i}.bin", b"x" * 10)
            """#, in: scratch)
        var bytes = try contents(zip)
        let end = bytes.count - 22
        let directorySize = u32(bytes, end + 12)
        let capacity = directorySize / 46
        XCTAssertGreaterThanOrEqual(capacity, 5)
        put(5, width: 2, into: &bytes, at: end + 8)
        put(5, width: 2, into: &bytes, at: end + 10)
        try save(bytes, to: zip)
        let inspection = try await inspect(zip)
        XCTAssertEqual(inspection.problems, [.entryCountMismatch(declared: 5, found: 3)])
        XCTAssertEqual(inspection.entries.count, 3)

        put(capacity + 1, width: 2, into: &bytes, at: end + 8)
        put(capacity + 1, width: 2, into: &bytes, at: end + 10)
        try save(bytes, to: zip)
        await assertInvalid(zip, reason: "claims \(capacity + 1) entries, more than a \(directorySize)-byte central directory can hold (at most \(capacity))")
    }

    func testOffsetsAndSizesThatDoNotAddUp() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"""
            zf.writestr("a.bin", b"a" * 100)
            zf.writestr("b.bin", b"b" * 100)
            """#, in: scratch)
        let original = try contents(zip)
        let end = original.count - 22
        let directory = u32(original, end + 16)
        let second = directory + 46 + "a.bin".utf8.count  // Python writes no extra fields here
        XCTAssertEqual(u32(original, second), 0x0201_4b50)
        let secondOffset = u32(original, second + 42)
        let clean = try await inspect(zip)
        XCTAssertEqual(clean.problems, [])
        XCTAssertEqual(clean.entries.map(\.localHeaderOffset), [0, Int64(secondOffset)])

        func problems(_ patch: (inout [UInt8]) -> Void) async throws -> [ZipProblem] {
            var bytes = original
            patch(&bytes)
            let path = scratch.at("patched.zip")
            try save(bytes, to: path)
            return try await inspect(path).problems
        }

        let beyond = try await problems { put(directory + 7, width: 4, into: &$0, at: second + 42) }
        XCTAssertEqual(beyond.first, .localHeaderBeyondDirectory(entry: "b.bin", index: 1, offset: Int64(directory + 7), directoryStart: Int64(directory)))
        // b.bin's bytes are then accounted for by no entry (issue 24, item 4).
        XCTAssertTrue(beyond.dropFirst().allSatisfy(isUnaccounted), "\(beyond)")

        // Both central directory entries point at the first local header.
        let shared = try await problems { put(0, width: 4, into: &$0, at: second + 42) }
        XCTAssertTrue(shared.contains(.localHeaderNameDiffers(entry: "b.bin", index: 1, offset: 0, localName: "a.bin", truncated: false)), "\(shared)")
        XCTAssertTrue(shared.contains(.dataOverlapsNextHeader(entry: "a.bin", index: 0, dataEnd: 135, nextEntry: "b.bin", nextOffset: 0)), "\(shared)")

        let longer = try await problems {
            put(5000, width: 4, into: &$0, at: second + 20)
            put(5000, width: 4, into: &$0, at: second + 24)
        }
        XCTAssertEqual(longer, [
            .localHeaderDiffers(entry: "b.bin", index: 1, offset: Int64(secondOffset), field: .compressedSize, local: 100, central: 5000, fromZip64: false),
            .localHeaderDiffers(entry: "b.bin", index: 1, offset: Int64(secondOffset), field: .uncompressedSize, local: 100, central: 5000, fromZip64: false),
            .dataPastDirectory(entry: "b.bin", index: 1, dataEnd: Int64(secondOffset + 35 + 5000), directoryStart: Int64(directory)),
        ])

        let overlapping = try await problems {
            put(secondOffset + 1, width: 4, into: &$0, at: directory + 20)
            put(secondOffset + 1, width: 4, into: &$0, at: directory + 24)
        }
        XCTAssertEqual(overlapping, [
            .localHeaderDiffers(entry: "a.bin", index: 0, offset: 0, field: .compressedSize, local: 100, central: UInt64(secondOffset + 1), fromZip64: false),
            .localHeaderDiffers(entry: "a.bin", index: 0, offset: 0, field: .uncompressedSize, local: 100, central: UInt64(secondOffset + 1), fromZip64: false),
            .dataOverlapsNextHeader(entry: "a.bin", index: 0, dataEnd: Int64(35 + secondOffset + 1), nextEntry: "b.bin", nextOffset: Int64(secondOffset)),
        ])

        let unequal = try await problems { put(99, width: 4, into: &$0, at: directory + 24) }
        XCTAssertEqual(unequal, [
            .storedSizesDiffer(entry: "a.bin", index: 0, compressed: 100, uncompressed: 99),
            .localHeaderDiffers(entry: "a.bin", index: 0, offset: 0, field: .uncompressedSize, local: 100, central: 99, fromZip64: false),
        ])

        let badSignature = try await problems { $0[secondOffset] = 0x51 }
        XCTAssertEqual(badSignature, [.localHeaderMissing(entry: "b.bin", index: 1, offset: Int64(secondOffset), signature: 0x0403_4b51)])

        let renamed = try await problems { $0[secondOffset + 30] = UInt8(ascii: "c") }
        XCTAssertEqual(renamed, [.localHeaderNameDiffers(entry: "b.bin", index: 1, offset: Int64(secondOffset), localName: "c.bin", truncated: false)])

        let multiDisk = try await problems {
            put(1, width: 2, into: &$0, at: end + 4)
            put(2, width: 2, into: &$0, at: second + 34)
        }
        XCTAssertEqual(multiDisk, [
            .endRecordDisk(.classic, disk: 1),
            .entryDisk(entry: "b.bin", index: 1, disk: 2),
        ])

        // A central directory that does not end where the end record starts.
        let shifted = try await problems { put(directory - 1, width: 4, into: &$0, at: end + 16) }
        XCTAssertEqual(shifted.first, .directoryGap(offset: UInt64(directory - 1), size: UInt64(end - directory), end: UInt64(end - 1), recordsStart: Int64(end)), "\(shifted)")
    }

    func testImplausibleCompressionRatio() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"zf.writestr("zeros.bin", b"\0" * 1000, compress_type=zipfile.ZIP_DEFLATED)"#, in: scratch)
        var bytes = try contents(zip)
        let before = try await inspect(zip)
        XCTAssertEqual(before.problems, [])
        let directory = u32(bytes, bytes.count - 22 + 16)
        put(4_000_000_000, width: 4, into: &bytes, at: directory + 24)
        try save(bytes, to: zip)
        let inspection = try await inspect(zip)
        XCTAssertEqual(inspection.totalUncompressedSize, 4_000_000_000)
        XCTAssertEqual(inspection.problems, [
            .localHeaderDiffers(entry: "zeros.bin", index: 0, offset: 0, field: .uncompressedSize, local: 1000, central: 4_000_000_000, fromZip64: false),
            .compressionRatio(total: 4_000_000_000, ratio: 1000, archiveSize: Int64(bytes.count)),
        ])
    }

    // MARK: - Zip64 and comments

    func testZip64ForcedByPython() async throws {
        let scratch = try Scratch()
        // force_zip64 puts zip64 fields in the local headers only (the values fit in 32 bits).
        let zip = try craft(#"""
            with zf.open("big.bin", "w", force_zip64=True) as f:
                f.write(b"x" * 1000)
            with zf.open("small.txt", "w", force_zip64=True) as f:
                f.write(b"hello")
            """#, in: scratch, options: ", allowZip64=True")
        let inspection = try await inspect(zip)
        XCTAssertEqual(inspection.problems, [])
        XCTAssertEqual(inspection.entries.map(\.name), ["big.bin", "small.txt"])
        XCTAssertEqual(inspection.entries.map(\.uncompressedSize), [1000, 5])
        XCTAssertEqual(try shell("python3 -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read(\"small.txt\").decode())' '\(zip)'"), "hello\n")

        // The data starts after the local header's 20-byte zip64 field, which the central
        // directory does not have: one byte more and big.bin reaches small.txt's header.
        var bytes = try contents(zip)
        let big = try XCTUnwrap(centralHeaders(bytes).first)
        XCTAssertEqual(big.name, "big.bin")
        put(1001, width: 4, into: &bytes, at: big.at + 20)
        put(1001, width: 4, into: &bytes, at: big.at + 24)
        try save(bytes, to: zip)
        let next = inspection.entries[1].localHeaderOffset
        XCTAssertEqual(next, 30 + 7 + 20 + 1000)
        let overlapping = try await inspect(zip)
        XCTAssertEqual(overlapping.problems, [
            .localHeaderDiffers(entry: "big.bin", index: 0, offset: 0, field: .compressedSize, local: 1000, central: 1001, fromZip64: true),
            .localHeaderDiffers(entry: "big.bin", index: 0, offset: 0, field: .uncompressedSize, local: 1000, central: 1001, fromZip64: true),
            .dataOverlapsNextHeader(entry: "big.bin", index: 0, dataEnd: next + 1, nextEntry: "small.txt", nextOffset: next),
        ])
    }

    func testZip64RecordsAndExtraFieldsEverywhere() async throws {
        let scratch = try Scratch()
        // Lowering zipfile's limit makes it write zip64 end records and central directory
        // extras for every value over 16: all three fields for big.bin, only the offset for later.txt.
        try python(#"""
            import sys, zipfile
            zipfile.ZIP64_LIMIT = 16
            with zipfile.ZipFile(sys.argv[1], "w", allowZip64=True) as zf:
                zf.writestr("tiny.txt", b"hello")
                zf.writestr("big.bin", b"x" * 1000)
                zf.writestr("later.txt", b"bye")
            """#, scratch.at("z64.zip"), in: scratch)
        let expected = try python(#"""
            import sys, zipfile
            for i in zipfile.ZipFile(sys.argv[1]).infolist():
                print(i.filename, i.file_size, i.compress_size, i.header_offset)
            """#, scratch.at("z64.zip"), in: scratch)
        let inspection = try await inspect(scratch.at("z64.zip"))
        XCTAssertEqual(inspection.problems, [])
        XCTAssertTrue(inspection.isZip64)
        let actual = inspection.entries.map { "\($0.name) \($0.uncompressedSize) \($0.compressedSize) \($0.localHeaderOffset)\n" }.joined()
        XCTAssertEqual(actual, expected)
        XCTAssertEqual(inspection.entries.map(\.usesZip64), [false, true, true])

        // Dropping the zip64 field from later.txt leaves its 0xFFFFFFFF offset unexplained.
        var bytes = try contents(scratch.at("z64.zip"))
        let extraID = bytes.count - 22 - 20 - 56 - 12  // later.txt's 12-byte zip64 field is the last thing in the central directory
        XCTAssertEqual(Array(bytes[extraID..<(extraID + 4)]), [0x01, 0x00, 0x08, 0x00])
        bytes[extraID] = 0x99
        try save(bytes, to: scratch.at("z64.zip"))
        let broken = try await inspect(scratch.at("z64.zip")).problems
        XCTAssertTrue(broken.contains(.zip64ValuesMissing(entry: "later.txt", index: 2, header: .central, fields: [.localHeaderOffset])), "\(broken)")
    }

    func testZip64FromLibarchiveWithDataDescriptors() async throws {
        let scratch = try Scratch()
        try scratch.write("Model/weights.bin", [UInt8](repeating: 7, count: 50_000))
        try scratch.write("Model/config.json", text: "{}\n")
        try shell("cd '\(scratch.path)' && bsdtar --format zip --options zip:zip64,zip:compression=deflate -cf z.zip Model")
        let inspection = try await inspect(scratch.at("z.zip"))
        XCTAssertEqual(inspection.problems, [])
        XCTAssertTrue(inspection.isZip64)
        let weights = try XCTUnwrap(inspection.entries.first { $0.name == "Model/weights.bin" })
        XCTAssertEqual(weights.uncompressedSize, 50_000)
        XCTAssertEqual(weights.method, 8)
        XCTAssertNotEqual(weights.flags & 0x0008, 0, "expected libarchive to use a data descriptor")

        // Whatever follows the data (the next local header, or the central directory)
        // must leave room for the descriptor, which is at least 12 bytes.
        var bytes = try contents(scratch.at("z.zip"))
        let nameLength = Int(bytes[Int(weights.localHeaderOffset) + 26]), extraLength = Int(bytes[Int(weights.localHeaderOffset) + 28])
        let dataEnd = weights.localHeaderOffset + 30 + Int64(nameLength + extraLength) + weights.compressedSize
        let following = inspection.entries.map(\.localHeaderOffset).filter { $0 > weights.localHeaderOffset }.min()
            ?? Int64(u32(bytes, bytes.count - 22 + 16))
        let descriptor = following - dataEnd
        XCTAssertEqual(descriptor, 24, "signature, CRC-32 and two 8-byte sizes")
        let header = try XCTUnwrap(centralHeaders(bytes).first { $0.name == weights.name })
        put(Int(weights.compressedSize + descriptor - 11), width: 4, into: &bytes, at: header.at + 20)
        try save(bytes, to: scratch.at("z.zip"))
        let tooLong = try await inspect(scratch.at("z.zip"))
        XCTAssertEqual(tooLong.problems.count, 1, "\(tooLong.problems)")
        let ending = dataOverrun(tooLong.problems.first), expectedEnd: Int64 = following + 1
        XCTAssertTrue(ending?.entry == "Model/weights.bin" && ending?.end == expectedEnd, "\(tooLong.problems)")
    }

    func testTrailingCommentsAndDataAfterTheEndRecord() async throws {
        let scratch = try Scratch()
        // The comment holds the end record's signature; the parser must not stop there.
        let short = try craft(#"""
            zf.writestr("a.bin", b"payload")
            zf.comment = b"release notes: PK\x05\x06 is not a record"
            """#, in: scratch, name: "short.zip")
        let inspection = try await inspect(short)
        XCTAssertEqual(inspection.problems, [])
        XCTAssertEqual(inspection.entries.map(\.name), ["a.bin"])

        // The longest comment puts the end record exactly 65,557 bytes from the end.
        let longest = try craft(#"""
            zf.writestr("a.bin", b"payload")
            zf.comment = b"c" * 65535
            """#, in: scratch, name: "longest.zip")
        let longestInspection = try await inspect(longest)
        XCTAssertEqual(longestInspection.problems, [])
        XCTAssertEqual(longestInspection.entries.map(\.name), ["a.bin"])

        var bytes = try contents(short)
        let endRecord = bytes.count - 22 - "release notes: PK\u{05}\u{06} is not a record".utf8.count
        bytes += Array("junk".utf8)
        try save(bytes, to: short)
        let junk = try await inspect(short)
        XCTAssertEqual(junk.problems, [.trailingBytes(count: 4, endRecordOffset: Int64(endRecord))])
    }

    // MARK: - Reads

    /// Bytes in memory, counting what is read (a stand-in for an HTTP source).
    final class CountingBytes: RandomAccessBytes, @unchecked Sendable {
        let bytes: [UInt8]
        let name = "memory"
        private let lock = NSLock()
        private var total = 0
        private var calls = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        var size: Int64 { Int64(bytes.count) }
        var bytesRead: Int { lock.lock(); defer { lock.unlock() }; return total }
        /// How many reads (over HTTP, how many Range requests) were made.
        var reads: Int { lock.lock(); defer { lock.unlock() }; return calls }
        func read(offset: Int64, count: Int) async throws -> [UInt8] {
            let start = min(Int(offset), bytes.count), end = min(start + count, bytes.count)
            lock.withLock { total += end - start; calls += 1 }
            return Array(bytes[start..<end])
        }
    }

    func testReadsFollowTheCentralDirectoryNotTheData() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"""
            for i in range(20):
                zf.writestr(f"part-{i:02}.bin", bytes([i]) * 100_000)
            """#, in: scratch)
        let source = CountingBytes(try contents(zip))
        let inspection = try await ZipInspector.inspect(source)
        XCTAssertEqual(inspection.problems, [])
        XCTAssertEqual(inspection.entries.count, 20)
        // The 65,557-byte tail, the locator probe, the central directory, 20 × (30 + 11) local header bytes.
        XCTAssertEqual(source.bytesRead, 65_557 + 20 + 20 * (46 + 11) + 20 * (30 + 11))
    }

    // MARK: - Local headers and data descriptors against the central directory (issue #11 item 3)

    private func u16(_ bytes: [UInt8], _ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }

    /// Runs `unzip -t` on `path`; true when unzip accepts the archive.
    private func unzipAccepts(_ path: String) throws -> Bool {
        try runProcess("/usr/bin/env", ["unzip", "-t", path]).status == 0
    }

    /// Extracts `path` read as a stream from standard input, as a device that unzips while
    /// downloading does: only local headers and data descriptors are read.
    private func streamingBsdtarAccepts(_ path: String) throws -> Bool {
        // Through a pipe: with a seekable standard input bsdtar would read the central directory instead.
        try runProcess("/bin/sh", ["-c", "cat '\(path)' | bsdtar -xOf - > /dev/null"]).status == 0
    }

    func testLocalHeaderFieldsThatDisagreeWithTheCentralDirectoryAreRefused() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"""
            zf.writestr("a.bin", b"a" * 100)
            zf.writestr("b.bin", b"hello world " * 20, compress_type=zipfile.ZIP_DEFLATED)
            """#, in: scratch)
        let original = try contents(zip)
        let clean = try await inspect(zip)
        XCTAssertEqual(clean.problems, [])
        XCTAssertTrue(try unzipAccepts(zip))
        func says(_ field: ZipProblem.Field, _ local: UInt64, _ central: UInt64) -> ZipProblem {
            .localHeaderDiffers(entry: "a.bin", index: 0, offset: 0, field: field, local: local, central: central, fromZip64: false)
        }
        let cases: [(field: String, at: Int, width: Int, value: Int, problem: ZipProblem)] = [
            ("method", 8, 2, 8, says(.method, 8, 0)),
            ("flags", 6, 2, 0x0800, says(.flags, 0x0800, 0)),
            ("descriptor-flag", 6, 2, 0x0008, says(.flags, 0x0008, 0)),
            ("crc", 14, 4, 0x1234_5678, says(.crc32, 0x1234_5678, UInt64(clean.entries[0].crc32))),
            ("compressed-size", 18, 4, 99, says(.compressedSize, 99, 100)),
            ("uncompressed-size", 22, 4, 99, says(.uncompressedSize, 99, 100)),
        ]
        for testCase in cases {
            var bytes = original
            put(testCase.value, width: testCase.width, into: &bytes, at: testCase.at)
            let path = scratch.at("\(testCase.field).zip")
            try save(bytes, to: path)
            let problems = try await inspect(path).problems
            XCTAssertEqual(problems, [testCase.problem], testCase.field)
            XCTAssertFalse(try unzipAccepts(path), "\(testCase.field): unzip -t accepts it, yet it was refused")
        }
    }

    func testDataDescriptorsThatDisagreeWithTheCentralDirectoryAreRefused() async throws {
        // modelcast's own zips (ZipWriter, laid out as libarchive wrote them) set bit 3 and defer each file's CRC-32 to a data descriptor.
        let src = try Scratch(), out = try Scratch()
        try src.write("M/a.bin", patternBytes(300))
        try src.write("M/b.bin", patternBytes(5, seed: 2))
        let packed = try Packer().pack(src.at("M"), options: PackOptions(output: out.at("m.zip")))
        let original = try contents(packed.path)
        let clean = try await inspect(packed.path)
        XCTAssertEqual(clean.problems, [])
        XCTAssertTrue(try streamingBsdtarAccepts(packed.path))
        let aIndex = try XCTUnwrap(clean.entries.firstIndex { $0.name == "M/a.bin" })
        let a = clean.entries[aIndex]
        XCTAssertNotEqual(a.flags & 0x0008, 0, "expected a data descriptor")
        let header = Int(a.localHeaderOffset)
        XCTAssertEqual(u32(original, header + 14), 0, "ZipWriter leaves the local CRC-32 to the descriptor")
        let descriptor = header + 30 + u16(original, header + 26) + u16(original, header + 28) + Int(a.compressedSize)
        XCTAssertEqual(u32(original, descriptor), 0x0807_4b50, "descriptor signature")
        XCTAssertEqual(u32(original, descriptor + 4), Int(a.crc32))
        func descriptorSays(_ field: ZipProblem.Field, _ found: UInt64, _ central: UInt64) -> ZipProblem {
            .descriptorDiffers(entry: "M/a.bin", index: aIndex, offset: Int64(descriptor), field: field, descriptor: found, central: central)
        }
        let crc = UInt64(a.crc32)
        let cases: [(field: String, at: Int, value: Int, problem: ZipProblem)] = [
            ("crc", descriptor + 4, Int(a.crc32 ^ 1), descriptorSays(.crc32, crc ^ 1, crc)),
            ("compressed-size", descriptor + 8, 301, descriptorSays(.compressedSize, 301, 300)),
            ("uncompressed-size", descriptor + 12, 299, descriptorSays(.uncompressedSize, 299, 300)),
            // Deferred values are zero in the local header; anything else must agree.
            ("local-crc", header + 14, 5, .localHeaderDiffers(entry: "M/a.bin", index: aIndex, offset: Int64(header), field: .crc32, local: 5, central: crc, fromZip64: false)),
        ]
        for testCase in cases {
            var bytes = original
            put(testCase.value, width: 4, into: &bytes, at: testCase.at)
            let path = out.at("\(testCase.field).zip")
            try save(bytes, to: path)
            let problems = try await inspect(path).problems
            XCTAssertEqual(problems, [testCase.problem], testCase.field)
            if testCase.field != "local-crc" {
                // unzip -t reads the central directory and the data, and passes these; a streaming reader fails them.
                XCTAssertFalse(try streamingBsdtarAccepts(path), "\(testCase.field): a streaming bsdtar accepts it")
            }
        }
    }

    func testZip64LocalExtraFieldsAreComparedToo() async throws {
        let scratch = try Scratch()
        // force_zip64 writes both sizes in the local header's zip64 field (local sizes 0xFFFFFFFF).
        let zip = try craft(#"""
            with zf.open("big.bin", "w", force_zip64=True) as f:
                f.write(b"x" * 1000)
            """#, in: scratch)
        let original = try contents(zip)
        let cleanProblems = try await inspect(zip).problems
        XCTAssertEqual(cleanProblems, [])
        let extra = 30 + "big.bin".utf8.count
        XCTAssertEqual(Array(original[extra..<(extra + 4)]), [0x01, 0x00, 0x10, 0x00], "zip64 field, 16 bytes")
        XCTAssertEqual(u32(original, 22), 0xFFFF_FFFF)

        var smaller = original
        put(999, width: 8, into: &smaller, at: extra + 4)
        try save(smaller, to: scratch.at("smaller.zip"))
        let smallerProblems = try await inspect(scratch.at("smaller.zip")).problems
        XCTAssertEqual(smallerProblems, [.localHeaderDiffers(entry: "big.bin", index: 0, offset: 0, field: .uncompressedSize, local: 999, central: 1000, fromZip64: true)])
        XCTAssertFalse(try unzipAccepts(scratch.at("smaller.zip")))

        var missing = original
        put(0x9999, width: 2, into: &missing, at: extra)
        try save(missing, to: scratch.at("missing.zip"))
        let missingProblems = try await inspect(scratch.at("missing.zip")).problems
        XCTAssertEqual(missingProblems, [.zip64ValuesMissing(entry: "big.bin", index: 0, header: .local(offset: 0), fields: [.uncompressedSize, .compressedSize])])
        XCTAssertFalse(try unzipAccepts(scratch.at("missing.zip")))
    }

    func testLocalHeadersAreReadInAFewCoalescedReads() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"""
            for i in range(2000):
                zf.writestr(f"small/{i:04}.bin", bytes([i % 256]) * 10)
            """#, in: scratch)
        let source = CountingBytes(try contents(zip))
        let inspection = try await ZipInspector.inspect(source)
        XCTAssertEqual(inspection.problems, [])
        XCTAssertEqual(inspection.entries.count, 2000)
        // The tail, the locator probe, the central directory, then the local headers in a few reads, not 2000.
        XCTAssertLessThanOrEqual(source.reads, 3 + 2, "reads: \(source.reads)")

        // modelcast's own zips: every file has a data descriptor, read along with its header.
        let src = try Scratch()
        for i in 0..<300 { try src.write("Model/part-\(i).bin", patternBytes(100 + i, seed: UInt32(i))) }
        let packed = try Packer().pack(src.at("Model"), options: PackOptions(output: scratch.at("packed.zip")))
        let packedSource = CountingBytes(try contents(packed.path))
        let packedInspection = try await ZipInspector.inspect(packedSource)
        XCTAssertEqual(packedInspection.problems, [])
        XCTAssertLessThanOrEqual(packedSource.reads, 3 + 2, "reads: \(packedSource.reads)")
    }

    /// Local headers whose extra fields claim 65,535 bytes each overlap every header after
    /// them: reading each claimed field in full would fetch the archive hundreds of times over.
    func testHostileLocalExtraLengthsDoNotMultiplyTheReads() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"""
            for i in range(300):
                zf.writestr(f"e/{i:03}", b"x" * 20)
            """#, in: scratch)
        var bytes = try contents(zip)
        let offsets = try await inspect(zip).entries.map { Int($0.localHeaderOffset) }
        for offset in offsets { put(0xFFFF, width: 2, into: &bytes, at: offset + 28) }
        let source = CountingBytes(bytes)
        let inspection = try await ZipInspector.inspect(source)
        XCTAssertEqual(inspection.problems.count, 300, "every entry overlaps the next header or the central directory")
        XCTAssertTrue(inspection.problems.allSatisfy { dataOverrun($0) != nil }, "\(inspection.problems.prefix(3))")
        // The tail, the locator, the central directory, and the local header area about once.
        XCTAssertLessThanOrEqual(source.bytesRead, 65_557 + 20 + 2 * bytes.count, "bytes read: \(source.bytesRead)")
        XCTAssertLessThanOrEqual(source.reads, 10, "reads: \(source.reads)")
    }

    // MARK: - Entry count cap (issue #11 item 4)

    func testEntryCountAboveTheCapIsRefusedFromTheEndRecordBeforeWalking() async throws {
        let scratch = try Scratch()
        try python(#"""
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w") as zf:
                for i in range(100_001):
                    zf.writestr(zipfile.ZipInfo(f"e/{i:06}"), b"")
            """#, scratch.at("many.zip"), in: scratch)
        let bytes = try contents(scratch.at("many.zip"))
        let source = CountingBytes(bytes)
        XCTAssertEqual(ZipInspector.defaultMaxEntries, 100_000)
        do {
            let inspection = try await ZipInspector.inspect(source)
            XCTFail("expected a refusal, got \(inspection.entries.count) entries")
        } catch let error as ModelCastError {
            guard case .invalidModel(let named, let format, let reason) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(named, "memory")
            XCTAssertEqual(format, "zip")
            XCTAssertTrue(reason.contains("end of central directory declares 100001 entries, more than the limit of 100000"), reason)
        }
        // Only the end records were read: the 65,557-byte tail, the locator, the zip64 record.
        XCTAssertLessThanOrEqual(source.bytesRead, 65_557 + 20 + 56)

        let raised = try await ZipInspector.inspect(CountingBytes(bytes), maxEntries: 100_001)
        XCTAssertEqual(raised.problems, [])
        XCTAssertEqual(raised.entries.count, 100_001)
        XCTAssertTrue(raised.isZip64)
    }

    func testEntryCapHoldsWhileWalkingWhenTheEndRecordUnderstatesTheCount() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"""
            for i in range(10):
                zf.writestr(f"e{i}", b"")
            """#, in: scratch)
        var bytes = try contents(zip)
        put(2, width: 2, into: &bytes, at: bytes.count - 22 + 8)
        put(2, width: 2, into: &bytes, at: bytes.count - 22 + 10)
        try save(bytes, to: zip)
        await assertInvalid(zip, reason: "central directory holds more than the limit of 5 entries (the end of central directory declares 2)", maxEntries: 5)
        let understated = try await inspect(zip, maxEntries: 10)
        XCTAssertEqual(understated.problems, [.entryCountMismatch(declared: 2, found: 10)])
        // Declared above the cap: refused before the central directory is read.
        let six = try craft(#"""
            for i in range(6):
                zf.writestr(f"e{i}", b"")
            """#, in: scratch, name: "six.zip")
        await assertInvalid(six, reason: "end of central directory declares 6 entries, more than the limit of 5", maxEntries: 5)
    }

    // MARK: - Issue 24 item 4: names and entries the central directory does not show

    /// An Info-ZIP Unicode Path extra field (0x7075) naming another path (here one that
    /// climbs out, and an absolute one) is refused, in the central directory and in the
    /// local header: unzip extracts to that name, not the one verify checks.
    func testUnicodePathExtraFieldsAreRefused() async throws {
        let scratch = try Scratch()
        for (index, hidden) in ["../../evil", "/tmp/evil", "M/ok"].enumerated() {
            let zip = try craft(#"""
                import struct, zlib
                name = "M/ok"
                hidden = sys.argv[2].encode()
                extra = struct.pack("<HHBI", 0x7075, 5 + len(hidden), 1, zlib.crc32(name.encode())) + hidden
                info = zipfile.ZipInfo(name)
                info.extra = extra
                zf.writestr(info, b"payload")
                """#.replacingOccurrences(of: "sys.argv[2]", with: "'\(hidden)'"), in: scratch, name: "unicode\(index).zip")
            let inspection = try await inspect(zip)
            let problems = inspection.problems
            XCTAssertTrue(problems.contains(.unicodePathField(entry: "M/ok", index: 0, header: .central, name: hidden)), "\(hidden): \(problems)")
            XCTAssertTrue(problems.contains(.unicodePathField(entry: "M/ok", index: 0, header: .local(offset: 0), name: hidden)), "\(hidden): \(problems)")
        }
    }

    /// Found by the issue 24 campaign: a central header whose "version needed to
    /// extract" is above 6.3 (the newest APPNOTE defines) passed verify, while Python's
    /// zipfile refuses to read the entry ("zip file version 10.4").
    func testAnEntryNeedingAnUndefinedZipVersionIsRefused() async throws {
        let scratch = try Scratch()
        let zip = try craft(#"zf.writestr("M/a", b"payload")"#, in: scratch, name: "version.zip")
        var bytes = try contents(zip)
        let header = centralHeaders(bytes)[0]
        put(104, width: 1, into: &bytes, at: header.at + 6)
        try save(bytes, to: zip)
        let inspection = try await inspect(zip)
        XCTAssertTrue(inspection.problems.contains(.unsupportedVersion(entry: "M/a", index: 0, needed: 104)), "\(inspection.problems)")
    }

    /// A local entry the central directory does not list (before the first listed one, or
    /// between two) leaves bytes no entry accounts for: refused, though a streaming
    /// extractor would write it. Data descriptors between entries are accounted for.
    func testLocalEntriesTheCentralDirectoryDoesNotListAreRefused() async throws {
        let scratch = try Scratch()
        for (label, names, hiddenIndex) in [("first", ["M/hidden", "M/a"], 0), ("between", ["M/a", "M/hidden", "M/b"], 1)] {
            let zip = try craft(names.map { "zf.writestr(\"\($0)\", b\"payload of \($0)\")" }.joined(separator: "\n"), in: scratch, name: "\(label).zip")
            // Drop the hidden entry's central directory header and fix the end record.
            var bytes = try contents(zip)
            let headers = centralHeaders(bytes)
            let hidden = headers[hiddenIndex]
            let length = 46 + [28, 30, 32].map { Int(bytes[hidden.at + $0]) | Int(bytes[hidden.at + $0 + 1]) << 8 }.reduce(0, +)
            bytes.removeSubrange(hidden.at..<(hidden.at + length))
            let end = bytes.count - 22
            put(names.count - 1, width: 2, into: &bytes, at: end + 8)
            put(names.count - 1, width: 2, into: &bytes, at: end + 10)
            put(u32(bytes, end + 12) - length, width: 4, into: &bytes, at: end + 12)
            try save(bytes, to: zip)
            let inspection = try await inspect(zip)
            XCTAssertEqual(inspection.entries.count, names.count - 1, label)
            XCTAssertTrue(inspection.problems.contains(where: isUnaccounted), "\(label): \(inspection.problems)")
        }
        // Streamed entries (data descriptors after each entry's data) still add up.
        let streamed = scratch.at("streamed.zip")
        try python(#"""
            import sys, zipfile
            class Unseekable:
                def __init__(self, f): self.f = f
                def write(self, b): return self.f.write(b)
                def flush(self): self.f.flush()
            with open(sys.argv[1], "wb") as raw:
                with zipfile.ZipFile(Unseekable(raw), "w", zipfile.ZIP_DEFLATED) as zf:
                    zf.writestr("M/a", b"a" * 1000)
                    zf.writestr("M/b", b"b" * 1000)
            """#, streamed, in: scratch)
        let inspection = try await inspect(streamed)
        XCTAssertTrue(inspection.entries.allSatisfy { $0.flags & 0x0008 != 0 }, "written with data descriptors")
        XCTAssertEqual(inspection.problems, [])
    }
}
