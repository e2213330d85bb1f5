import Foundation
import XCTest
import ModelCastFormat

/// A model's licence, download conditions and storage as every reader meets them (issue
/// 50): parsed, written back the same, shared by a model's variants (licence, conditions)
/// or each variant's own (storage), and an unknown value kept so the model waits.
/// The hostile values are the shared vectors' (`conformance/vectors/manifest`).
final class ModelPoliciesFormatTests: XCTestCase {
    let sha = String(repeating: "a", count: 64)

    func file(_ name: String) -> String {
        #"{"name": "\#(name)", "key": "models/llm/\#(name)", "url": "https://cdn.example.com/models/llm/\#(name)", "sha256": "\#(sha)", "size": 10, "content_type": "application/octet-stream"}"#
    }

    func manifest(model fields: String) -> Data {
        Data(#"{"format": "modelcast-manifest", "format_version": 1, "sequence": 1, "published_at": "2026-01-01T00:00:00Z", "channel": "stable", "models": {"llm": {"version": "1.0.0", "files": [\#(file("llm.gguf"))]\#(fields)}}}"#.utf8)
    }

    let gated = #", "download": "on-demand", "licence": {"spdx": "LicenseRef-Llama-3.2", "url": "https://example.com/LICENSE", "acceptance": "required"}, "download_conditions": {"network": "unmetered", "charging": "required"}, "storage": {"install_size": 7000000000, "priority": 10}"#

    func testTheFieldsParseAndWriteBackTheSame() throws {
        let release = try Release.decode(manifest(model: gated), source: "test")
        let model = try XCTUnwrap(try release.checkedModels().first)
        XCTAssertEqual(model.licence, CheckedLicence(terms: try LicenceTerms(spdx: "LicenseRef-Llama-3.2", url: "https://example.com/LICENSE"), acceptance: .required))
        XCTAssertEqual(model.conditions, DownloadConditions(network: .unmetered, cellularMax: nil, charging: .required))
        XCTAssertEqual(model.storage, StorageHint(installSize: 7_000_000_000, priority: 10))
        XCTAssertEqual(model.licence?.terms.description, "LicenseRef-Llama-3.2 (https://example.com/LICENSE)")

        let written = Data(release.jsonValue().serialized().utf8)
        XCTAssertEqual(try Release.decode(written, source: "written"), release)
        let text = String(decoding: written, as: UTF8.self)
        XCTAssertTrue(text.contains(#""download_conditions": {"#), text)
        XCTAssertFalse(text.contains("cellular_max"), "absent stays absent")
    }

    func testAModelWithoutThemHasNoConditions() throws {
        let model = try XCTUnwrap(try Release.decode(manifest(model: ""), source: "test").checkedModels().first)
        XCTAssertNil(model.licence)
        XCTAssertEqual(model.conditions, .none)
        XCTAssertNil(model.storage)
        let priority = try XCTUnwrap(try Release.decode(manifest(model: #", "storage": {"install_size": 5}"#), source: "t").checkedModels().first?.storage?.priority)
        XCTAssertEqual(priority, StorageHint.defaultPriority)
    }

    func testUnknownValuesAreKeptNotRefused() throws {
        let fields = #", "licence": {"spdx": "MIT", "acceptance": "twice"}, "download_conditions": {"network": "satellite", "charging": "sometimes"}"#
        let model = try XCTUnwrap(try Release.decode(manifest(model: fields), source: "test").checkedModels().first)
        XCTAssertEqual(model.licence?.acceptance, .unknown("twice"))
        XCTAssertEqual(model.conditions.network, .unknown("satellite"))
        XCTAssertEqual(model.conditions.charging, .unknown("sometimes"))
    }

    func testBadValuesAreRefusedByTheirPath() {
        let cases: [(String, String)] = [
            (#", "licence": {"spdx": "MIT\u001b[2J"}"#, "models.llm.licence.spdx: 'MIT\\u{1b}[2J'"),
            (#", "licence": {"url": "https://user:secret@example.com/L"}"#, "models.llm.licence.url"),
            (#", "licence": {}"#, "models.llm.licence: {} names no licence"),
            (#", "download_conditions": {"cellular_max": -1}"#, "models.llm.download_conditions.cellular_max: -1"),
            (#", "storage": {"install_size": 9223372036854775807}"#, "models.llm.storage.install_size"),
            (#", "storage": {"install_size": 1, "priority": 101}"#, "models.llm.storage.priority: 101"),
        ]
        for (fields, mentions) in cases {
            XCTAssertThrowsError(try Release.decode(manifest(model: fields), source: "test"), fields) { error in
                let text = String(describing: error)
                XCTAssertTrue(text.contains(mentions), "\(fields): \(text)")
                XCTAssertFalse(text.contains("secret"), "a password is never shown: \(text)")
            }
        }
    }

    func testVariantsShareTheLicenceAndHaveTheirOwnStorage() throws {
        let variant = { (name: String, size: Int, extra: String) in
            #"{"name": "\#(name)", "requires": {}, "version": "1.0.0", "files": [\#(self.file(name + ".gguf"))], "storage": {"install_size": \#(size)}\#(extra)}"#
        }
        func release(_ first: String, own: Int = 100) -> Data {
            Data(#"{"format": "modelcast-manifest", "format_version": 1, "sequence": 1, "published_at": "2026-01-01T00:00:00Z", "channel": "stable", "models": {"llm": {"version": "1.0.0", "files": [\#(file("big.gguf"))], "storage": {"install_size": \#(own)}, "licence": {"spdx": "MIT", "acceptance": "required"}, "variant": "big", "variants": [\#(first), \#(variant("small", 10, ""))]}}}"#.utf8)
        }
        let model = try XCTUnwrap(try Release.decode(release(variant("big", 100, "")), source: "t").checkedModels().first)
        XCTAssertEqual(model.variants.map { $0.model.storage?.installSize }, [100, 10])
        XCTAssertEqual(model.variants.map { $0.model.licence?.acceptance }, [.required, .required], "a variant carries its model's licence")

        XCTAssertThrowsError(try Release.decode(release(variant("big", 100, #", "licence": {"spdx": "MIT"}"#)), source: "t")) { error in
            XCTAssertTrue(String(describing: error).contains("licence or download_conditions of its own"), "\(error)")
        }
        XCTAssertThrowsError(try Release.decode(release(variant("big", 100, ""), own: 99), source: "t")) { error in
            XCTAssertTrue(String(describing: error).contains("storage other than its variant"), "\(error)")
        }
    }

    func testAnAppNamesTermsAsTheManifestDoes() throws {
        XCTAssertEqual(try LicenceTerms(spdx: "MIT", url: nil).description, "MIT")
        XCTAssertThrowsError(try LicenceTerms(spdx: nil, url: nil))
        XCTAssertThrowsError(try LicenceTerms(spdx: "MIT  OR Apache-2.0", url: nil), "double spaces")
        XCTAssertThrowsError(try LicenceTerms(spdx: "MIT", url: "http://u:p@x.example/"))
        let data = try JSONEncoder().encode(try LicenceTerms(spdx: "MIT", url: "https://x.example/L"))
        XCTAssertEqual(try JSONDecoder().decode(LicenceTerms.self, from: data), try LicenceTerms(spdx: "MIT", url: "https://x.example/L"))
        XCTAssertThrowsError(try JSONDecoder().decode(LicenceTerms.self, from: Data(#"{"spdx": "M\nIT"}"#.utf8)), "stored terms are parsed again")
    }
}
