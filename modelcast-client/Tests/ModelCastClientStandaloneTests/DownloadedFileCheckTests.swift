import Foundation
import XCTest
@testable import ModelCastClient
import ModelCastFormat

/// The check a background download's file passes before the installer may take it: its
/// size, then its SHA-256 read from the disk; a file that fails is deleted.
final class DownloadedFileCheckTests: XCTestCase {
    private func checkedFile(_ entry: ManifestSite.Entry) throws -> (CheckedFile, ModelName) {
        let text = ManifestSite.manifest(version: "1.0.0", sequence: 1, files: [entry], base: "https://cdn.example.com")
        let model = try XCTUnwrap(try Release.decode(Data(text.utf8), source: "test").checkedModels().first)
        return (model.files[0], model.name)
    }

    private func candidate(_ data: Data, in scratch: Scratch) throws -> URL {
        let url = scratch.at("downloads/x.task")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        return url
    }

    func testAFileWithTheManifestsSizeAndDigestTakesItsPlace() throws {
        let scratch = try Scratch()
        let data = testBytes(100_000)
        let (file, model) = try checkedFile(.init(name: "m.bin", path: "m.bin", sha256: sha256Hex(data), size: Int64(data.count)))
        let destination = scratch.at("downloads/" + file.sha256.rawValue)
        let proven = try DownloadedFileCheck.prove(try candidate(data, in: scratch), as: file, model: model, into: destination)
        XCTAssertEqual(proven, destination)
        XCTAssertEqual(try Data(contentsOf: destination), data)
        XCTAssertEqual(filesUnder(scratch.at("downloads")), [file.sha256.rawValue])
    }

    func testAFileOfAnotherSizeIsRefusedAndDeleted() throws {
        let scratch = try Scratch()
        let data = testBytes(100_000)
        for served in [data.prefix(99_999), data + Data([0])] {
            let (file, model) = try checkedFile(.init(name: "m.bin", path: "m.bin", sha256: sha256Hex(data), size: Int64(data.count)))
            let destination = scratch.at("downloads/" + file.sha256.rawValue)
            XCTAssertThrowsError(try DownloadedFileCheck.prove(try candidate(Data(served), in: scratch), as: file, model: model, into: destination)) { error in
                XCTAssertEqual(error as? ClientError, .sizeMismatch(model: "m", file: "m.bin", expected: 100_000, actual: Int64(served.count)))
            }
            XCTAssertEqual(filesUnder(scratch.at("downloads")), [], "nothing of a refused file stays")
        }
    }

    func testAFileWithAnotherDigestIsRefusedAndDeleted() throws {
        let scratch = try Scratch()
        let data = testBytes(100_000)
        var tampered = data
        tampered[50_000] ^= 1
        let (file, model) = try checkedFile(.init(name: "m.bin", path: "m.bin", sha256: sha256Hex(data), size: Int64(data.count)))
        let destination = scratch.at("downloads/" + file.sha256.rawValue)
        XCTAssertThrowsError(try DownloadedFileCheck.prove(try candidate(tampered, in: scratch), as: file, model: model, into: destination)) { error in
            XCTAssertEqual(error as? ClientError, .hashMismatch(model: "m", file: "m.bin", expected: sha256Hex(data), actual: sha256Hex(tampered)))
        }
        XCTAssertEqual(filesUnder(scratch.at("downloads")), [])
    }

    func testBackgroundDownloadSettingsAreValidated() throws {
        func configuration(_ background: BackgroundDownloads) -> ClientConfiguration {
            ClientConfiguration(manifestURL: URL(string: "https://cdn.example.com/manifest.json")!, directory: URL(fileURLWithPath: "/tmp/x"),
                                deviceID: "d", backgroundDownloads: background)
        }
        XCTAssertNoThrow(try configuration(BackgroundDownloads(identifier: "com.example.app.models")).validate())
        for (bad, named) in [(BackgroundDownloads(identifier: ""), "identifier ''"), (BackgroundDownloads(identifier: "a\nb"), "identifier 'a\\u{a}b'"),
                             (BackgroundDownloads(identifier: "ok", minimumFileSize: -1), "minimumFileSize -1")] {
            XCTAssertThrowsError(try configuration(bad).validate()) { error in
                guard case .configuration(let reason) = error as? ClientError else { return XCTFail("\(error)") }
                XCTAssertTrue(reason.contains(named), reason)
            }
        }
    }
}
