import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

final class PackTests: XCTestCase {
    /// Builds the same model tree; `reverse` creates entries in the opposite order.
    private func makeTree(in scratch: Scratch, reverse: Bool, mtime: Int) throws -> String {
        var files: [(String, [UInt8])] = [
            ("Model.mlpackage/Manifest.json", Array(#"{"rootModelIdentifier":"R","itemInfoEntries":{"R":{"path":"com.apple.CoreML/model.mlmodel"}}}"#.utf8)),
            ("Model.mlpackage/Data/com.apple.CoreML/model.mlmodel", [0x08, 0x07] + patternBytes(300)),
            ("Model.mlpackage/Data/com.apple.CoreML/weights/weight.bin", patternBytes(70_000, seed: 9)),
            ("Model.mlpackage/Data/com.apple.CoreML/weights/a.bin", patternBytes(10, seed: 2)),
            ("Model.mlpackage/Data/com.apple.CoreML/Zeta.bin", [1]),
            ("Model.mlpackage/Data/com.apple.CoreML/zz/b.bin", [2]),
        ]
        if reverse { files.reverse() }
        for (path, bytes) in files {
            try scratch.write(path, bytes)
            var times = [timeval(tv_sec: mtime, tv_usec: 0), timeval(tv_sec: mtime, tv_usec: 0)]
            XCTAssertEqual(utimes(scratch.at(path), &times), 0)
        }
        return scratch.at("Model.mlpackage")
    }

    func testSameTreeGivesIdenticalZipWhateverMtimeUmaskOrderAndTimeZone() throws {
        let a = try Scratch(), b = try Scratch(), out = try Scratch()
        let treeA = try makeTree(in: a, reverse: false, mtime: 1_600_000_000)
        let oldMask = umask(0o077)
        let treeB = try makeTree(in: b, reverse: true, mtime: 1_700_000_123)
        umask(oldMask)
        let first = try Packer().pack(treeA, options: PackOptions(output: out.at("a.zip")))
        setenv("TZ", "Pacific/Chatham", 1)
        tzset()
        defer { unsetenv("TZ"); tzset() }
        let second = try Packer().pack(treeB, options: PackOptions(output: out.at("b.zip")))
        XCTAssertEqual(first.sha256, second.sha256)
        XCTAssertEqual(first.size, second.size)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out.at("a.zip"))), try Data(contentsOf: URL(fileURLWithPath: out.at("b.zip"))))
        // The hash taken in the write path is the hash of the bytes on disk.
        XCTAssertEqual(first.sha256, try StreamDigester.digest(ofFileAt: out.at("a.zip")).sha256)
        // Digest-only (inspect) agrees with what pack wrote.
        XCTAssertEqual(try Packer().digest(ModelInspector.describe(treeA)).sha256, first.sha256)
    }

    func testZipUnpacksIdenticallyWithUnzipBsdtarAndPython() throws {
        let src = try Scratch(), out = try Scratch()
        let tree = try makeTree(in: src, reverse: false, mtime: 1_650_000_000)
        try src.write("Model.mlpackage/run.sh", text: "#!/bin/sh\necho hi\n")
        chmod(src.at("Model.mlpackage/run.sh"), 0o755)
        try src.mkdir("Model.mlpackage/Data/empty")
        let result = try Packer().pack(tree, options: PackOptions(output: out.path + "/"))
        XCTAssertEqual(result.name, "Model.mlpackage.zip")
        XCTAssertEqual(result.format, .zip)
        XCTAssertEqual(result.files, 7)
        let zip = result.path
        try shell("unzip -tq '\(zip)'")
        for (tool, command) in [
            ("unzip", "unzip -q '\(zip)' -d '\(out.at("unzip"))'"),
            ("bsdtar", "mkdir -p '\(out.at("bsdtar"))' && bsdtar -xf '\(zip)' -C '\(out.at("bsdtar"))'"),
            ("python", "python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; z.extractall(sys.argv[2])' '\(zip)' '\(out.at("python"))'"),
        ] {
            try shell(command)
            try shell("diff -r '\(tree)' '\(out.at(tool))/Model.mlpackage'")
        }
        // Modes are fixed: 0755 for directories and executables, 0644 for the rest.
        let modes = try shell("python3 -c 'import sys, zipfile; [print(oct(i.external_attr >> 16), i.filename) for i in zipfile.ZipFile(sys.argv[1]).infolist()]' '\(zip)'")
        XCTAssertTrue(modes.contains("0o100755 Model.mlpackage/run.sh"), modes)
        XCTAssertTrue(modes.contains("0o100644 Model.mlpackage/Manifest.json"), modes)
        XCTAssertTrue(modes.contains("0o40755 Model.mlpackage/Data/empty/"), modes)
        // Entries are sorted bytewise ("Zeta.bin" before "model.mlmodel").
        let names = modes.split(separator: "\n").map { String($0.split(separator: " ")[1]) }
        XCTAssertEqual(names, names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    func testNamesAreNFCAndFlaggedUTF8() throws {
        let src = try Scratch(), out = try Scratch()
        let decomposed = "Cafe\u{0301}.bin"  // NFD on disk
        try src.write("M/\(decomposed)", [1, 2, 3])
        try src.write("M/plain.bin", [4])
        let result = try Packer().pack(src.at("M"), options: PackOptions(output: out.at("m.zip")))
        let listing = try shell("python3 -c 'import sys, zipfile; [print(i.flag_bits & 0x800, i.filename.encode().hex()) for i in zipfile.ZipFile(sys.argv[1]).infolist()]' '\(result.path)'")
        let nfcHex = Array("M/Caf\u{00E9}.bin".utf8).map { String(format: "%02x", $0) }.joined()
        XCTAssertTrue(listing.contains("2048 \(nfcHex)"), listing)
        XCTAssertTrue(listing.contains("0 " + Array("M/plain.bin".utf8).map { String(format: "%02x", $0) }.joined()), listing)
    }

    func testDeflateOption() throws {
        let src = try Scratch(), out = try Scratch()
        try src.write("D/zeros.bin", [UInt8](repeating: 0, count: 100_000))
        let result = try Packer().pack(src.at("D"), options: PackOptions(output: out.at("d.zip"), compression: .deflate))
        XCTAssertLessThan(result.size, 10_000)
        XCTAssertEqual(result.compression, .deflate)
        try shell("unzip -tq '\(result.path)'")
    }

    func testSingleFileIsCopiedAsIsOrZippedOnRequest() throws {
        let src = try Scratch(), out = try Scratch()
        let bytes = patternBytes(50_000)
        let model = try src.write("model.onnx", [0x08, 0x09] + bytes)
        let copy = try Packer().pack(model, options: PackOptions(output: out.path))
        XCTAssertEqual(copy.path, out.at("model.onnx"))
        XCTAssertEqual(copy.format, .file)
        XCTAssertEqual(copy.sha256, try SHA256Hasher.digest([0x08, 0x09] + bytes))
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: copy.path)), Data([0x08, 0x09] + bytes))
        let zipped = try Packer().pack(model, options: PackOptions(output: out.path, zip: true))
        XCTAssertEqual(zipped.name, "model.onnx.zip")
        try shell("unzip -tq '\(zipped.path)'")
        // Packing a file onto itself only hashes it.
        let same = try Packer().pack(model, options: PackOptions(output: src.path))
        XCTAssertEqual(same.sha256, copy.sha256)
        XCTAssertEqual(src.listing(), ["model.onnx"])
    }

    // MARK: - Refused inputs: each names the path, and leaves no output behind.

    private func assertRefused(_ model: String, options: PackOptions? = nil, out: Scratch, _ check: (ModelCastError) -> Void, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try Packer().pack(model, options: options ?? PackOptions(output: out.path + "/")), file: file, line: line) { error in
            guard let error = error as? ModelCastError else { return XCTFail("unexpected \(error)", file: file, line: line) }
            check(error)
        }
        XCTAssertEqual(out.listing(), [], "output left behind", file: file, line: line)
    }

    func testMissingPath() throws {
        let out = try Scratch()
        assertRefused("/no/such/model.gguf", out: out) { XCTAssertEqual($0, .notFound(path: "/no/such/model.gguf")) }
    }

    func testEmptyDirectory() throws {
        let src = try Scratch(), out = try Scratch()
        try src.mkdir("Empty.mlpackage/Data/nothing")
        assertRefused(src.at("Empty.mlpackage"), out: out) { XCTAssertEqual($0, .emptyDirectory(path: src.at("Empty.mlpackage"))) }
    }

    func testSymlinksInsideTheTree() throws {
        let src = try Scratch(), out = try Scratch()
        try src.write("M/real.bin", [1])
        XCTAssertEqual(symlink("real.bin", src.at("M/inside.bin")), 0)
        assertRefused(src.at("M"), out: out) { XCTAssertEqual($0, .symlink(path: src.at("M/inside.bin"), target: "real.bin")) }
        unlink(src.at("M/inside.bin"))
        XCTAssertEqual(symlink("/etc/passwd", src.at("M/outside")), 0)
        assertRefused(src.at("M"), out: out) {
            XCTAssertEqual($0, .symlink(path: src.at("M/outside"), target: "/etc/passwd"))
            XCTAssertTrue($0.message.contains(src.at("M/outside")))
        }
    }

    func testFifoAndSocket() throws {
        let src = try Scratch(), out = try Scratch()
        try src.write("M/real.bin", [1])
        XCTAssertEqual(mkfifo(src.at("M/pipe"), 0o644), 0)
        assertRefused(src.at("M"), out: out) { XCTAssertEqual($0, .specialFile(path: src.at("M/pipe"), kind: "FIFO")) }
        assertRefused(src.at("M/pipe"), out: out) { XCTAssertEqual($0, .specialFile(path: src.at("M/pipe"), kind: "FIFO")) }
        unlink(src.at("M/pipe"))

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let socketPath = src.at("M/sock")
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(socketPath.utf8)
            raw.copyBytes(from: bytes.prefix(raw.count - 1))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0)
        assertRefused(src.at("M"), out: out) { XCTAssertEqual($0, .specialFile(path: socketPath, kind: "socket")) }
    }

    func testNamesCollidingAfterNFCOrCaseFolding() throws {
        let src = try Scratch(), out = try Scratch()
        try src.write("N/caf\u{00E9}.bin", [1])
        try src.write("N/cafe\u{0301}.bin", [2])
        assertRefused(src.at("N"), out: out) { error in
            guard case .nameCollision(_, _, let rule) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(rule, "Unicode NFC normalisation")
            XCTAssertTrue(error.message.contains(src.at("N")))
        }
        try src.write("C/Weights.bin", [1])
        try src.write("C/weights.bin", [2])
        assertRefused(src.at("C"), out: out) { error in
            guard case .nameCollision(let a, let b, let rule) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(rule, "case folding")
            XCTAssertEqual(Set([a, b]), [src.at("C/Weights.bin"), src.at("C/weights.bin")])
        }
    }

    func testNonUTF8Name() throws {
        let src = try Scratch(), out = try Scratch()
        try src.write("B/ok.bin", [1])
        let bad: [CChar] = Array((src.at("B") + "/").utf8CString.dropLast()) + [CChar(bitPattern: 0xff), 0x41, 0]
        let fd = open(bad, O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        close(fd)
        assertRefused(src.at("B"), out: out) { error in
            guard case .nonUTF8Name(let path) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(path.hasPrefix(src.at("B") + "/"))
        }
    }

    /// Names a device refuses to create (`PathSegment`), which packing zipped as they were:
    /// publish made live a zip every device then refused to unpack. (NFD names are not
    /// among them: packing normalises them to NFC.)
    func testNamesNoDeviceCreatesAreRefused() throws {
        let src = try Scratch(), out = try Scratch()
        // A path past the 1,024 bytes a device creates, each name short (verify refused it).
        let deep = Array(repeating: String(repeating: "d", count: 250), count: 4).joined(separator: "/") + "/" + String(repeating: "w", count: 60) + ".bin"
        for (index, name) in ["a\u{2215}b.bin", "zero\u{200B}width.bin", "\u{2024}\u{2024}", deep].enumerated() {
            let model = "L\(index)"
            try src.write(model + "/ok.bin", [1])
            try src.write(model + "/" + name, [2])
            assertRefused(src.at(model), out: out) { error in
                guard case .unsafeName(let path, let rule) = error else { return XCTFail("\(name): \(error)") }
                XCTAssertEqual(path, src.at(model + "/" + name))
                XCTAssertTrue(error.message.contains("no device can create"), error.message)
                XCTAssertFalse(rule.isEmpty)
                XCTAssertEqual(error.exitStatus, .refused)
            }
        }
    }

    func testUnreadableFileWhenNotRoot() throws {
        try XCTSkipIf(getuid() == 0, "root reads everything; the end-to-end test runs this case as an unprivileged user")
        let src = try Scratch(), out = try Scratch()
        try src.write("U/secret.bin", [1])
        chmod(src.at("U/secret.bin"), 0)
        assertRefused(src.at("U"), out: out) { XCTAssertEqual($0, .unreadable(path: src.at("U/secret.bin"), reason: "Permission denied")) }
    }

    func testUsageMistakes() throws {
        let src = try Scratch(), out = try Scratch()
        try src.write("M/a.bin", [1])
        assertRefused(src.at("M"), options: PackOptions(output: out.path, zip: false), out: out) {
            XCTAssertTrue($0.message.contains("--no-zip") && $0.message.contains(src.at("M")), $0.message)
        }
        assertRefused(src.at("M"), options: PackOptions(output: src.at("M/inner.zip")), out: out) {
            XCTAssertTrue($0.message.contains("inside the model directory"), $0.message)
        }
        XCTAssertEqual(src.listing(), ["M", "M/a.bin"])
        assertRefused(src.at("M"), options: PackOptions(output: out.at("missing/dir/x.zip")), out: out) {
            XCTAssertTrue($0.message.contains(out.at("missing/dir")), $0.message)
        }
    }

    /// A file over 4 GiB (sparse, so the test stays fast on disk) needs zip64.
    func testZip64ForFilesOver4GiB() throws {
        let src = try Scratch(), out = try Scratch()
        let size: Int64 = (4 << 30) + 12_345
        try src.mkdir("Big")
        let fd = open(src.at("Big/huge.bin"), O_CREAT | O_WRONLY, 0o644)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(ftruncate(fd, off_t(size)), 0)
        close(fd)
        try src.write("Big/small.txt", text: "after the big one\n")
        let result = try Packer().pack(src.at("Big"), options: PackOptions(output: out.path + "/"))
        XCTAssertGreaterThan(result.size, size)
        let report = try shell("""
            python3 -c '
            import sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            for i in z.infolist(): print(i.filename, i.file_size, i.compress_size)
            print(z.read("Big/small.txt").decode().strip())
            ' '\(result.path)'
            """)
        XCTAssertTrue(report.contains("Big/huge.bin \(size) \(size)"), report)
        XCTAssertTrue(report.contains("after the big one"), report)
        try shell("unzip -l '\(result.path)' | grep -q huge.bin")
    }
}
