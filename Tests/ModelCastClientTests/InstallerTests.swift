import Foundation
import XCTest
@testable import ModelCastClient
import ModelCastFormat
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
}
