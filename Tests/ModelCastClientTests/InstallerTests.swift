import Foundation
import XCTest
@testable import ModelCastClient
import ModelCastCore
@_spi(ModelCastTooling) import ModelCastFormat
import ModelCastTestSupport

/// The client's zip unpacking refuses every entry that could leave the model's
/// directory or is not a plain file, before writing anything.
final class InstallerTests: XCTestCase {
    /// Writes a zip with Python's zipfile: each entry a name, its bytes, and whether it is a symbolic link.
    func makeZip(_ path: String, _ entries: [(name: String, text: String, link: Bool)]) throws {
        let script = """
            import json, sys, zipfile
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED) as z:
                for name, text, link in json.loads(sys.argv[2]):
                    info = zipfile.ZipInfo(name)
                    info.create_system = 3
                    mode = 0o120777 if link else 0o40755 if name.endswith("/") else 0o100644
                    info.external_attr = (mode << 16) | (0x10 if name.endswith("/") else 0)
                    z.writestr(info, text)
            """
        let json = String(decoding: try JSONSerialization.data(withJSONObject: entries.map { [$0.name, $0.text, $0.link] as [Any] }), as: UTF8.self)
        let result = try runProcess("/usr/bin/env", ["python3", "-c", script, path, json])
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testUnsafeEntriesAreRefusedBeforeAnythingIsWritten() throws {
        let scratch = try Scratch()
        let installer = Installer(directory: URL(fileURLWithPath: scratch.at("models")))
        let cases: [(label: String, entries: [(name: String, text: String, link: Bool)], reason: String)] = [
            ("climbs out", [("M.mlpackage/ok", "a", false), ("M.mlpackage/../escape.txt", "b", false)], "entry 'M.mlpackage/../escape.txt' could leave the model's directory: it has a segment '..' that is made only of dots (it would name a directory above)"),
            ("another root", [("Other/x", "a", false)], "entry 'Other/x' is outside M.mlpackage/"),
            ("absolute", [("/etc/x", "a", false)], "entry '/etc/x' is outside M.mlpackage/"),
            ("symbolic link", [("M.mlpackage/link", "/etc/passwd", true)], "entry 'M.mlpackage/link' is a symbolic link"),
            ("empty segment", [("M.mlpackage//x", "a", false)], "entry 'M.mlpackage//x' could leave the model's directory: it has a segment '' that is empty (a file or directory name is needed)"),
            ("twice", [("M.mlpackage/a", "1", false), ("M.mlpackage/a", "2", false)], "entry 'M.mlpackage/a' appears twice"),
        ]
        for (index, item) in cases.enumerated() {
            let zip = scratch.at("z\(index).zip")
            try makeZip(zip, item.entries)
            let destination = URL(fileURLWithPath: scratch.at("out\(index)/inside"))
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
            XCTAssertThrowsError(try installer.unpack(URL(fileURLWithPath: zip), into: destination, expectedRoot: try PathSegment("M.mlpackage"), model: "M", file: "M.mlpackage.zip"), item.label) { error in
                guard case ClientError.unsafeArchive(_, let file, let reason) = error else { return XCTFail("\(item.label): \(error)") }
                XCTAssertEqual(file, "M.mlpackage.zip", item.label)
                XCTAssertEqual(reason, item.reason, item.label)
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.at("out\(index)/escape.txt")), item.label)
            if item.label != "twice" {
                XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: destination.path), [], "\(item.label): nothing written before the check")
            }
        }
        // A zip modelcast would write unpacks whole.
        let good = scratch.at("good.zip")
        try makeZip(good, [("M.mlpackage/", "", false), ("M.mlpackage/Data/w.bin", "weights", false), ("M.mlpackage/Manifest.json", "{}", false)])
        let destination = URL(fileURLWithPath: scratch.at("good-out"))
        try installer.unpack(URL(fileURLWithPath: good), into: destination, expectedRoot: try PathSegment("M.mlpackage"), model: "M", file: "M.mlpackage.zip")
        XCTAssertEqual(try String(contentsOf: destination.appendingPathComponent("M.mlpackage/Data/w.bin"), encoding: .utf8), "weights")
    }

    /// Issue 24, item 4, the client's side: bytes the checked entry list does not show.
    /// (a) an Info-ZIP Unicode Path extra field (0x7075) giving an entry a second name,
    /// which unzip and bsdtar use; (b) a local entry the central directory does not list
    /// (first, or between two), which a streaming extractor writes; (c) bytes between
    /// entries. Each is refused before anything is written, naming what it found.
    func testZipBytesTheEntryListDoesNotShowAreRefused() throws {
        let scratch = try Scratch()
        let installer = Installer(directory: URL(fileURLWithPath: scratch.at("models")))
        let script = #"""
            import io, struct, sys, zipfile, zlib
            path, mode = sys.argv[1], sys.argv[2]
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
                if mode.startswith("unicode:"):
                    name, hidden = "M.mlpackage/ok", mode.split(":", 1)[1].encode()
                    info = zipfile.ZipInfo(name)
                    info.extra = struct.pack("<HHBI", 0x7075, 5 + len(hidden), 1, zlib.crc32(name.encode())) + hidden
                    z.writestr(info, b"payload")
                else:
                    for name in ["M.mlpackage/a", "M.mlpackage/hidden", "M.mlpackage/b"]:
                        z.writestr(name, b"payload of " + name.encode())
            data = bytearray(buffer.getvalue())
            end = len(data) - 22
            count, size, start = struct.unpack_from("<HII", data, end + 10)
            headers, at = [], start
            while at < end:
                n, e, c = struct.unpack_from("<HHH", data, at + 28)
                headers.append((at, 46 + n + e + c))
                at += 46 + n + e + c
            if mode.startswith("hidden-"):
                at, length = headers[0 if mode == "hidden-first" else 1]
                del data[at:at + length]
                end -= length
                struct.pack_into("<HHI", data, end + 8, count - 1, count - 1, size - length)
            elif mode == "gap":
                second = struct.unpack_from("<I", data, headers[1][0] + 42)[0]
                data[second:second] = b"\0" * 100
                start += 100
                for at, _ in headers[1:]:
                    struct.pack_into("<I", data, at + 100 + 42, struct.unpack_from("<I", data, at + 100 + 42)[0] + 100)
                struct.pack_into("<I", data, end + 100 + 16, start)
            open(path, "wb").write(data)
            """#
        let cases: [(mode: String, reason: String)] = [
            ("unicode:../../evil", "an Info-ZIP Unicode Path extra field (0x7075)"),
            ("unicode:/tmp/evil", "an Info-ZIP Unicode Path extra field (0x7075)"),
            ("unicode:M.mlpackage/ok", "an Info-ZIP Unicode Path extra field (0x7075)"),
            ("hidden-first", "that no listed entry accounts for"),
            ("hidden-between", "that no listed entry accounts for"),
            ("gap", "that no listed entry accounts for"),
        ]
        for (index, item) in cases.enumerated() {
            let zip = scratch.at("z\(index).zip")
            let made = try runProcess("/usr/bin/env", ["python3", "-c", script, zip, item.mode])
            XCTAssertEqual(made.status, 0, made.stderr)
            // Python's own reader still opens it: the bytes are a zip, only not an honest one.
            XCTAssertEqual(try runProcess("/usr/bin/env", ["python3", "-c", "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).namelist()", zip]).status, 0, item.mode)
            let destination = URL(fileURLWithPath: scratch.at("out\(index)/a/b/inside"))
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
            XCTAssertThrowsError(try installer.unpack(URL(fileURLWithPath: zip), into: destination, expectedRoot: try PathSegment("M.mlpackage"), model: "M", file: "M.mlpackage.zip"), item.mode) { error in
                guard case ClientError.unsafeArchive(let model, let file, let reason) = error else { return XCTFail("\(item.mode): \(error)") }
                XCTAssertEqual([model, file], ["M", "M.mlpackage.zip"], item.mode)
                XCTAssertTrue(reason.contains(item.reason), "\(item.mode): \(reason)")
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: destination.path), [], "\(item.mode): nothing written")
            XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.at("out\(index)/a/evil")), item.mode)
        }
    }

    /// Issue 48, item 2: one set of device rules. Zips verify refuses on rules a device
    /// shares (names that collide on a case-insensitive volume, an encrypted entry, a zip
    /// version no specification defines, a non-ASCII name without the UTF-8 flag) used to
    /// unpack on a device; the device now reads them with verify's reader and refuses each
    /// for the reason verify gives, before anything is written.
    func testTheDeviceRefusesWhatVerifyRefusesOnTheDevicesRules() async throws {
        let scratch = try Scratch()
        let installer = Installer(directory: URL(fileURLWithPath: scratch.at("models")))
        let script = #"""
            import struct, sys, zipfile
            path, mode = sys.argv[1], sys.argv[2]
            with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
                z.writestr("M.mlpackage/", b"")
                if mode == "folded":
                    z.writestr("M.mlpackage/Foo.bin", b"1")
                    z.writestr("M.mlpackage/foo.bin", b"2")
                elif mode == "encrypted":
                    z.writestr("M.mlpackage/a.bin", b"payload")
                    z.infolist()[-1].flag_bits |= 1  # the central directory's flags only
                else:
                    z.writestr("M.mlpackage/Café.bin", b"payload")
            data = bytearray(open(path, "rb").read())
            for signature, version, flags in ((b"PK\x01\x02", 6, 8), (b"PK\x03\x04", 4, 6)):
                at = data.find(signature)
                while at >= 0:
                    if mode == "version" and signature == b"PK\x01\x02":
                        data[at + version] = 104
                    if mode == "no-utf8-flag":
                        struct.pack_into("<H", data, at + flags, struct.unpack_from("<H", data, at + flags)[0] & ~0x0800)
                    at = data.find(signature, at + 4)
            open(path, "wb").write(data)
            """#
        for (index, mode) in ["folded", "encrypted", "version", "no-utf8-flag"].enumerated() {
            let zip = scratch.at("z\(index).zip")
            let made = try runProcess("/usr/bin/env", ["python3", "-c", script, zip, mode])
            XCTAssertEqual(made.status, 0, made.stderr)
            let verified = try await ZipInspector.inspect(FileBytes(path: zip))
            let first = try XCTUnwrap(verified.problems.first, "\(mode): verify refuses it")
            let destination = URL(fileURLWithPath: scratch.at("out\(index)"))
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
            XCTAssertThrowsError(try installer.unpack(URL(fileURLWithPath: zip), into: destination, expectedRoot: try PathSegment("M.mlpackage"), model: "M", file: "M.mlpackage.zip"), mode) { error in
                XCTAssertEqual(error as? ClientError, .unsafeArchive(model: "M", file: "M.mlpackage.zip", reason: first.message), mode)
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: destination.path), [], "\(mode): nothing written")
        }
    }

    /// A zip whose headers declare 1,000 bytes for an entry that inflates to 300 MB (about
    /// 300 KB on the wire) is refused as soon as the entry passes its declared size: the
    /// bytes actually written are counted, not the headers believed.
    func testAnEntryInflatingPastItsDeclaredSizeIsRefused() throws {
        let scratch = try Scratch()
        let zip = scratch.at("bomb.zip")
        let script = """
            import sys, zipfile, zlib
            path = sys.argv[1]
            with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("M.mlpackage/", b"")
                z.writestr("M.mlpackage/weights.bin", b"\\0" * (300 << 20))
            data = bytearray(open(path, "rb").read())
            name = b"M.mlpackage/weights.bin"
            patched = 0
            for signature, offset in ((b"PK\\x03\\x04", 22), (b"PK\\x01\\x02", 24)):
                at = data.find(signature)
                while at >= 0:
                    name_at = at + (30 if offset == 22 else 46)
                    if data[name_at:name_at + len(name)] == name:
                        data[at + offset:at + offset + 4] = (1000).to_bytes(4, "little")
                        patched += 1
                    at = data.find(signature, at + 4)
            assert patched == 2, patched
            open(path, "wb").write(data)
            """
        let made = try runProcess("/usr/bin/env", ["python3", "-c", script, zip])
        XCTAssertEqual(made.status, 0, made.stderr)
        let zipSize = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: zip)[.size] as? Int)
        XCTAssertLessThan(zipSize, 1 << 20, "the bomb is small on the wire")
        let installer = Installer(directory: URL(fileURLWithPath: scratch.at("models")))
        let destination = URL(fileURLWithPath: scratch.at("out"))
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        XCTAssertThrowsError(try installer.unpack(URL(fileURLWithPath: zip), into: destination, expectedRoot: try PathSegment("M.mlpackage"), model: "M", file: "M.mlpackage.zip")) { error in
            XCTAssertEqual(error as? ClientError, .unsafeArchive(model: "M", file: "M.mlpackage.zip", reason: "entry 'M.mlpackage/weights.bin' inflates past the 1000 bytes it declares"))
        }
        let written = (try? FileManager.default.attributesOfItem(atPath: scratch.at("out/M.mlpackage/weights.bin"))[.size] as? Int) ?? 0
        XCTAssertLessThanOrEqual(written, 1000, "no more than the declared size reached the disk")
    }

    /// A file error reads as the system's reason ("No space left on device", here from a
    /// real write to /dev/full), never as a Foundation error domain and code.
    func testFileErrorsReadAsTheSystemsReason() throws {
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: "/dev/full"))
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data(repeating: 1, count: 1 << 16))
            try handle.synchronize()
            XCTFail("/dev/full took the bytes")
        } catch {
            let wrapped = ClientError.io(URL(fileURLWithPath: "/dev/full"), error)
            XCTAssertEqual(wrapped, .io(path: "/dev/full", reason: "No space left on device"), "\(error)")
            XCTAssertFalse(wrapped.errorDescription?.contains("Domain") ?? true)
        }
    }
}
