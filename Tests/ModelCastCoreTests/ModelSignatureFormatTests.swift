import Foundation
import XCTest
import ModelCastFormat

/// `model_signature` as every reader meets it (hostile values refused by their JSON path,
/// on a model and on a variant), and `ModelSignatureSubject`, the one rule the CLI and the
/// client share for what a signature covers and how its files are named.
final class ModelSignatureFormatTests: XCTestCase {
    let sha = String(repeating: "a", count: 64)

    func file(_ name: String, path: String? = nil, contentType: String = "application/octet-stream") -> String {
        let placed = path.map { #", "path": "\#($0)""# } ?? ""
        return #"{"name": "\#(name)"\#(placed), "key": "models/llm/\#(name)", "url": "https://cdn.example.com/models/llm/\#(name)", "sha256": "\#(sha)", "size": 10, "content_type": "\#(contentType)"}"#
    }

    func signature(key: String = "models/llm/signatures/\(String(repeating: "b", count: 64)).sigstore.json",
                   url: String = "https://cdn.example.com/models/llm/signatures/b.sigstore.json", sha256: String? = nil, size: String = "1500") -> String {
        #"{"key": "\#(key)", "url": "\#(url)", "sha256": "\#(sha256 ?? String(repeating: "b", count: 64))", "size": \#(size)}"#
    }

    func manifest(model: String) -> Data {
        Data(#"{"format": "modelcast-manifest", "format_version": 1, "sequence": 1, "published_at": "2026-01-01T00:00:00Z", "channel": "stable", "models": {"llm": \#(model)}}"#.utf8)
    }

    func testHostileSignatureObjectsAreRefusedByPath() throws {
        let plain = #"{"version": "1.0.0", "files": [\#(file("m.gguf"))], "model_signature": %@}"#
        let table: [(object: String, field: String)] = [
            (signature(key: "../../etc/passwd"), "models.llm.model_signature.key"),
            (signature(key: "/abs/x.sigstore.json"), "models.llm.model_signature.key"),
            (signature(key: "a\\u0007b"), "models.llm.model_signature.key"),
            (signature(url: "javascript:alert(1)"), "models.llm.model_signature.url"),
            (signature(url: "file:///etc/passwd"), "models.llm.model_signature.url"),
            (signature(sha256: String(repeating: "B", count: 64)), "models.llm.model_signature.sha256"),
            (signature(sha256: "abc"), "models.llm.model_signature.sha256"),
            (signature(size: "0"), "models.llm.model_signature.size"),
            (signature(size: "-1"), "models.llm.model_signature.size"),
            (signature(size: "33554433"), "models.llm.model_signature.size"),
            (signature(size: "9223372036854775807"), "models.llm.model_signature.size"),
        ]
        for (index, row) in table.enumerated() {
            let data = manifest(model: plain.replacingOccurrences(of: "%@", with: row.object))
            XCTAssertThrowsError(try Release.decode(data, source: "test"), "row \(index)") { error in
                XCTAssertTrue(String(describing: error).contains(row.field), "row \(index): \(row.field) in \(error)")
            }
        }
        // On a variant, and a model whose own signature is not its default variant's.
        let variant = #"{"name": "q4", "requires": {}, "version": "1.0.0", "files": [\#(file("m.gguf"))], "model_signature": \#(signature(size: "0"))}"#
        let withVariant = #"{"version": "1.0.0", "files": [\#(file("m.gguf"))], "variant": "q4", "variants": [\#(variant)], "model_signature": \#(signature(size: "0"))}"#
        XCTAssertThrowsError(try Release.decode(manifest(model: withVariant), source: "test")) { error in
            XCTAssertTrue(String(describing: error).contains("model_signature.size"), "\(error)")
        }
        let good = #"{"name": "q4", "requires": {}, "version": "1.0.0", "files": [\#(file("m.gguf"))], "model_signature": \#(signature())}"#
        let differs = #"{"version": "1.0.0", "files": [\#(file("m.gguf"))], "variant": "q4", "variants": [\#(good)]}"#
        XCTAssertThrowsError(try Release.decode(manifest(model: differs), source: "test")) { error in
            XCTAssertTrue(String(describing: error).contains("model signature or storage other than its variant"), "\(error)")
        }
        let valid = try Release.decode(manifest(model: plain.replacingOccurrences(of: "%@", with: signature())), source: "test")
        XCTAssertEqual(try valid.checkedModels().first?.modelSignature?.size, 1500)
        XCTAssertTrue(valid.referencedKeys.contains { $0.hasSuffix(".sigstore.json") }, "prune keeps a named bundle")
    }

    /// Each shape a device installs, its subject, names and ignore paths.
    func testSubjectsNameTheInstalledFilesAsModelSigningDoes() throws {
        func model(_ files: String, tree: String? = nil) throws -> CheckedModel {
            let treeField = tree.map { #""tree": "\#($0)", "# } ?? ""
            let release = try Release.decode(manifest(model: #"{\#(treeField)"version": "1.0.0", "files": [\#(files)]}"#), source: "test")
            return try XCTUnwrap(try release.checkedModels().first)
        }
        let single = try model(file("m.gguf"))
        XCTAssertEqual(ModelSignatureSubject(single), .file(try PathSegment("m.gguf")))
        XCTAssertEqual(ModelSignatureSubject(single).knownFiles(of: single).digests.keys.map(\.rawValue), ["."])

        let package = try model(file("X.mlpackage.zip", contentType: "application/zip"))
        let packageSubject = ModelSignatureSubject(package)
        XCTAssertEqual(packageSubject, .directory(try PathSegment("X.mlpackage")))
        XCTAssertEqual(packageSubject.knownFiles(of: package).zipped.map(\.prefix), [""])
        XCTAssertEqual(try ModelSignatureSubject.resourceName(ofArchiveEntry: "X.mlpackage/Data/model.mlmodel", prefix: "").rawValue, "Data/model.mlmodel")
        XCTAssertEqual(packageSubject.ignorePaths.map(\.rawValue), [".git", ".gitattributes", ".github", ".gitignore"])

        let tree = try model(file("a.bin", path: "sub/a.bin"), tree: "T.mlpackage")
        XCTAssertEqual(ModelSignatureSubject(tree), .directory(try PathSegment("T.mlpackage")))
        XCTAssertEqual(ModelSignatureSubject(tree).knownFiles(of: tree).digests.keys.map(\.rawValue), ["sub/a.bin"])

        let several = try model(file("m.gguf") + ", " + file("X.mlpackage.zip", contentType: "application/zip"))
        let subject = ModelSignatureSubject(several)
        XCTAssertEqual(subject, .versionDirectory)
        XCTAssertEqual(subject.subjectName(model: several.name), "llm")
        XCTAssertEqual(subject.knownFiles(of: several).digests.keys.map(\.rawValue), ["m.gguf"])
        XCTAssertEqual(subject.knownFiles(of: several).zipped.map(\.prefix), ["X.mlpackage/"])
        XCTAssertEqual(try ModelSignatureSubject.resourceName(ofArchiveEntry: "X.mlpackage/Manifest.json", prefix: "X.mlpackage/").rawValue,
                       "X.mlpackage/Manifest.json")
        XCTAssertTrue(subject.ignorePaths.map(\.rawValue).contains(".modelcast-version.json"), "the client's own records are left out")
        // A zip entry whose name model signing cannot hold is refused, not renamed.
        XCTAssertThrowsError(try ModelSignatureSubject.resourceName(ofArchiveEntry: "X.mlpackage/../../etc", prefix: ""))
        // A zip named without an extension before .zip is a file, not a package.
        let zipFile = try model(file("weights.zip", contentType: "application/zip"))
        XCTAssertEqual(ModelSignatureSubject(zipFile), .file(try PathSegment("weights.zip")))
    }
}
