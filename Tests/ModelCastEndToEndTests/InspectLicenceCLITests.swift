import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 50's `inspect`: the install size publish writes for the model (the same code, so
/// the same number as the manifest's), and the licence the model file declares, read from
/// files each format's own writer made (scripts/make-licence-models.py): shown escaped and
/// cut, whatever the file holds, and never taken by publish as the manifest's licence.
final class InspectLicenceCLITests: XCTestCase {
    func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    /// The `licence (file)` row of inspect's text, nil when there is none.
    func licenceRow(_ text: String) -> String? {
        text.split(separator: "\n").first { $0.hasPrefix("licence (file)") }
            .map { String($0.dropFirst("licence (file)".count)).trimmingCharacters(in: .whitespaces) }
    }

    func testEachFormatsDeclaredLicenceIsShown() throws {
        let models = try InterfaceModels.licenceModels()
        let cases: [(file: String, row: String?, json: [String: String]?)] = [
            ("licensed.gguf", "apache-2.0 (Apache License 2.0, https://www.apache.org/licenses/LICENSE-2.0)",
             ["text": "apache-2.0", "name": "Apache License 2.0", "url": "https://www.apache.org/licenses/LICENSE-2.0"]),
            ("licensed.mlpackage", "MIT", ["text": "MIT"]),
            ("licensed.mlmodel", "BSD-3-Clause", ["text": "BSD-3-Clause"]),
            ("licensed.onnx", "Apache-2.0", ["text": "Apache-2.0"]),
            // A licence key of another type than a string is no licence; the file stays valid.
            ("typed.gguf", nil, nil),
            ("unlicensed.gguf", nil, nil),
        ]
        var documents: [String] = []
        for (file, row, expected) in cases {
            let text = try modelcast(["inspect", models.at(file), "--no-hash"])
            XCTAssertEqual(text.status, 0, text.stderr)
            XCTAssertEqual(licenceRow(text.stdout), row, file)
            let out = try modelcast(["inspect", models.at(file), "--no-hash", "--json"])
            XCTAssertEqual(out.status, 0, out.stderr)
            let report = try json(out.stdout)
            XCTAssertEqual(report["declared_licence"] as? [String: String], expected, file)
            XCTAssertNil(report["declared_licence_error"], file)
            documents.append(out.stdout)
        }
        try validateAgainstSchema(documents, "inspect.schema.json")
    }

    /// A licence of an escape sequence, a newline, a bidi override and 10 KB more: escaped
    /// for the terminal and cut at 256 characters, in text and in JSON, for every format.
    func testAHostileDeclaredLicenceIsEscapedAndCut() throws {
        let models = try InterfaceModels.licenceModels()
        let shown = #"\u{1B}[31mGPL\u{A}\u{202E}evil"#
        var documents: [String] = []
        for file in ["hostile.gguf", "hostile.mlmodel", "hostile.onnx"] {
            let text = try modelcast(["inspect", models.at(file), "--no-hash"])
            XCTAssertEqual(text.status, 0, text.stderr)
            XCTAssertFalse(text.stdout.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" }, file)
            let row = try XCTUnwrap(licenceRow(text.stdout), file)
            XCTAssertEqual(row, shown + String(repeating: "A", count: 256 - shown.count) + "…", file)
            let out = try modelcast(["inspect", models.at(file), "--no-hash", "--json"])
            XCTAssertEqual(out.status, 0, out.stderr)
            let licence = try XCTUnwrap((try json(out.stdout))["declared_licence"] as? [String: String], file)
            XCTAssertEqual(licence, ["text": row], "JSON carries the same escaped, cut text")
            documents.append(out.stdout)
        }
        try validateAgainstSchema(documents, "inspect.schema.json")
    }

    /// inspect's install size is what publish writes in the manifest for the same model: a
    /// file, a directory published as a zip, and the same directory as a tree (`--no-zip`).
    func testInstallSizeIsWhatPublishWrites() throws {
        let work = try Scratch()
        let models = try InterfaceModels.licenceModels()
        let cases: [(model: String, extra: [String])] = [
            (models.at("licensed.gguf"), []),
            ("examples/models/TinyClassifier.mlpackage", []),
            ("examples/models/TinyClassifier.mlpackage", ["--no-zip"]),
        ]
        for (index, (model, extra)) in cases.enumerated() {
            let inspected = try modelcast(["inspect", model, "--json", "--no-hash"])
            XCTAssertEqual(inspected.status, 0, inspected.stderr)
            let size = try XCTUnwrap(try json(inspected.stdout)["install_size"] as? Int, model)
            let site = work.at("site\(index)")
            let published = try modelcast(["publish", model, "--version", "1.0.0", "--base-url", "https://cdn.example.com/m", "--to", site] + extra)
            XCTAssertEqual(published.status, 0, published.stderr)
            let manifest = try json(try String(contentsOfFile: site + "/manifest.json", encoding: .utf8))
            let entries = try XCTUnwrap(manifest["models"] as? [String: [String: Any]])
            XCTAssertEqual(entries.count, 1)
            XCTAssertEqual((entries.values.first?["storage"] as? [String: Int])?["install_size"], size, "\(model) \(extra)")
            let text = try modelcast(["inspect", model, "--no-hash"])
            XCTAssertTrue(text.stdout.contains("\ninstall size "), text.stdout)
        }
    }

    /// A stated licence other than the file's gets a one-line note; the manifest carries the
    /// stated one. The same licence in another case gets none.
    func testPublishNotesAStatedLicenceTheFileContradicts() throws {
        let work = try Scratch()
        let model = try InterfaceModels.licenceModels().at("licensed.gguf")
        let other = try modelcast(["publish", model, "--version", "1.0.0", "--base-url", "https://cdn.example.com/m", "--to", work.at("a"), "--licence", "MIT"])
        XCTAssertEqual(other.status, 0, other.stderr)
        XCTAssertTrue(other.stderr.contains("note: model licensed: \(model) declares licence apache-2.0 (Apache License 2.0, https://www.apache.org/licenses/LICENSE-2.0); the manifest names MIT, as stated (the file's is not used)"), other.stderr)
        let manifest = try json(try String(contentsOfFile: work.at("a/manifest.json"), encoding: .utf8))
        XCTAssertEqual(((manifest["models"] as? [String: [String: Any]])?["licensed"]?["licence"] as? [String: String])?["spdx"], "MIT")
        let same = try modelcast(["publish", model, "--version", "1.0.0", "--base-url", "https://cdn.example.com/m", "--to", work.at("b"), "--licence", "Apache-2.0"])
        XCTAssertEqual(same.status, 0, same.stderr)
        XCTAssertFalse(same.stderr.contains("declares licence"), same.stderr)
    }
}
