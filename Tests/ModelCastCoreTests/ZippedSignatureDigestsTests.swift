import Foundation
import XCTest
import ModelCastFormat
@testable import ModelCastCore
import ModelCastTestSupport

/// Issue 49: a signed directory's files are hashed as they are zipped (`PackResult.entryDigests`),
/// not read a second time to sign, so the OpenSSF model signature states the bytes the zip holds.
final class ZippedSignatureDigestsTests: XCTestCase {
    func testTheStatementOfAZippedDirectoryStatesTheBytesZipped() throws {
        let scratch = try Scratch()
        let weights = patternBytes(5000, seed: 3)
        try scratch.write("M.pkg/Manifest.json", text: "{}")
        try scratch.write("M.pkg/Data/weights.bin", weights)
        try scratch.mkdir("M.pkg/Data/empty")
        let description = try ModelInspector.describe(scratch.at("M.pkg"))
        for compression in [ZipCompression.store, .deflate] {
            let packed = try Packer().digest(description, compression: compression, segments: true, entryDigests: true)
            XCTAssertEqual(packed.entryDigests, ["M.pkg/Manifest.json": try SHA256Hasher.digest(Array("{}".utf8)),
                                                 "M.pkg/Data/weights.bin": try SHA256Hasher.digest(weights)], "\(compression)")
        }
        XCTAssertNil(try Packer().digest(description).entryDigests, "not asked for")
        let packed = try Packer().digest(description, entryDigests: true)
        let key = "models/m/1.0.0/M.pkg.zip"
        let model = ReleaseModel(version: "1.0.0", files: [ReleaseFile(name: packed.name, key: key, url: "https://cdn.example.com/" + key,
                                                                       sha256: packed.sha256.hex, size: packed.size, contentType: packed.contentType)])
        // The file changes on disk after it was zipped: the statement states the zipped bytes.
        let changed = patternBytes(5000, seed: 4)
        try scratch.write("M.pkg/Data/weights.bin", changed)
        let statement = try ModelSignatures.statement(of: model, name: "m", label: "m", descriptions: [description],
                                                      zipped: [key: try XCTUnwrap(packed.entryDigests)])
        XCTAssertEqual(statement.files[try ModelFilePath("Data/weights.bin")]?.rawValue, try SHA256Hasher.digest(weights).hex)
        XCTAssertEqual(statement.files.count, 2, "\(statement.files)")
        // Without the zip's digests (none were made) the files are hashed where they are.
        let reread = try ModelSignatures.statement(of: model, name: "m", label: "m", descriptions: [description])
        XCTAssertEqual(reread.files[try ModelFilePath("Data/weights.bin")]?.rawValue, try SHA256Hasher.digest(changed).hex)
    }
}
