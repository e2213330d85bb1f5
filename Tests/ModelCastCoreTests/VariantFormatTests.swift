import Foundation
import XCTest
import ModelCastFormat

/// The variant fields of the format, as every reader meets them: hostile values refused by
/// their JSON path, unknown requirements kept (a device skips that variant), and the
/// choice a device makes with its reasons.
final class VariantFormatTests: XCTestCase {
    let sha = String(repeating: "a", count: 64)
    let other = String(repeating: "b", count: 64)

    func file(_ name: String, _ sha256: String) -> String {
        #"{"name": "\#(name)", "key": "models/llm/\#(name)", "url": "https://cdn.example.com/models/llm/\#(name)", "sha256": "\#(sha256)", "size": 10, "content_type": "application/octet-stream"}"#
    }

    /// A manifest whose model `llm` has `variants` (JSON text) and `variant`.
    func manifest(variants: String, variant: String? = "small", download: String? = nil, own: String? = nil) -> Data {
        let fields = [
            #""version": "1.0.0""#, #""files": [\#(own ?? file("small.bin", sha))]"#,
            variant.map { #""variant": "\#($0)""# }, download.map { #""download": "\#($0)""# }, #""variants": \#(variants)"#,
        ].compactMap { $0 }.joined(separator: ", ")
        return Data(#"{"format": "modelcast-manifest", "format_version": 1, "sequence": 1, "published_at": "2026-01-01T00:00:00Z", "channel": "stable", "models": {"llm": {\#(fields)}}}"#.utf8)
    }

    var twoVariants: String {
        #"[{"name": "big", "requires": {"min_memory": 6442450944, "platforms": {"ios": "17.0"}, "accelerators": ["gpu"]}, "version": "1.0.0", "files": [\#(file("big.bin", other))]}, {"name": "small", "requires": {}, "version": "1.0.0", "files": [\#(file("small.bin", sha))]}]"#
    }

    func testAValidVariantsManifestParsesAndDevicesChoose() throws {
        let release = try Release.decode(manifest(variants: twoVariants, download: "on-demand"), source: "test")
        let model = try XCTUnwrap(try release.checkedModels().first)
        XCTAssertEqual(model.variants.map(\.name.rawValue), ["big", "small"])
        XCTAssertEqual(model.downloadPolicy, .onDemand)
        XCTAssertEqual(model.variants[0].requirements.minMemory, 6 << 30)

        let phone = DeviceProfile(physicalMemory: 8 << 30, platform: .ios, osVersion: "17.4", architecture: "arm64", accelerators: [.gpu])
        let bigChoice = model.choice(for: phone)
        XCTAssertEqual(bigChoice.chosen?.variant?.rawValue, "big")
        XCTAssertEqual(bigChoice.chosen?.files.map(\.name.rawValue), ["big.bin"])
        XCTAssertEqual(bigChoice.chosen?.name.rawValue, "llm", "a variant installs under the model's name")

        var small = phone
        small.physicalMemory = 4 << 30
        small.osVersion = "16.7"
        small.accelerators = []
        let choice = model.choice(for: small)
        XCTAssertEqual(choice.chosen?.variant?.rawValue, "small")
        XCTAssertEqual(choice.skipped.first?.reasons, [
            "needs 6 GiB of memory; the device has 4 GiB", "needs ios 17.0 or later; the device runs 16.7", "needs the GPU; the device has none known",
        ])
        // A device that knows nothing about itself meets no requirement on it.
        XCTAssertEqual(model.choice(for: DeviceProfile()).skipped.first?.reasons.count, 3)
    }

    func testUnknownRequirementsAreKeptAndSkipTheVariant() throws {
        let variants = #"[{"name": "big", "requires": {"min_vram": 1}, "version": "1.0.0", "files": [\#(file("big.bin", other))]}, {"name": "small", "requires": {}, "version": "1.0.0", "files": [\#(file("small.bin", sha))]}]"#
        let release = try Release.decode(manifest(variants: variants), source: "test")
        let model = try XCTUnwrap(try release.checkedModels().first)
        let choice = model.choice(for: DeviceProfile(physicalMemory: 64 << 30))
        XCTAssertEqual(choice.chosen?.variant?.rawValue, "small")
        XCTAssertEqual(choice.skipped.first?.reasons, ["requires 'min_vram', which this client does not know"])
        // Written back unchanged (the key is kept for clients that know it).
        XCTAssertEqual(release.models["llm"]?.variants?.first?.requires["min_vram"], .int(1))
    }

    func testNoVariantFitsChoosesNothing() throws {
        let variants = #"[{"name": "small", "requires": {"architectures": ["arm64"]}, "version": "1.0.0", "files": [\#(file("small.bin", sha))]}]"#
        let model = try XCTUnwrap(try Release.decode(manifest(variants: variants), source: "test").checkedModels().first)
        let choice = model.choice(for: DeviceProfile(architecture: "x86_64"))
        XCTAssertNil(choice.chosen)
        XCTAssertEqual(choice.skipped.first?.reasons, ["runs on arm64; the device is x86_64"])
    }

    /// Each hostile value is refused, naming its JSON path.
    func testHostileVariantValuesAreRefusedByPath() throws {
        func variant(_ name: String = "small", requires: String = "{}", extra: String = "", sha256: String? = nil) -> String {
            #"{"name": "\#(name)", "requires": \#(requires), "version": "1.0.0", "files": [\#(file("small.bin", sha256 ?? sha))]\#(extra)}"#
        }
        let table: [(variants: String, variant: String?, download: String?, field: String)] = [
            ("[]", "small", nil, "models.llm.variants"),
            ("[" + variant("../x") + "]", "small", nil, "models.llm.variants[0].name"),
            ("[" + variant("a/b") + "]", "small", nil, "models.llm.variants[0].name"),
            ("[" + variant("sm\u{202E}all") + "]", "small", nil, "models.llm.variants[0].name"),
            ("[" + variant() + "," + variant() + "]", "small", nil, "models.llm.variants[1].name"),
            ("[" + variant() + "]", nil, nil, "models.llm.variant"),
            ("[" + variant() + "]", "large", nil, "models.llm.variant"),
            ("[" + variant(sha256: other) + "]", "small", nil, "models.llm"),
            ("[" + variant() + "]", "small", "sometimes", "models.llm.download"),
            ("[" + variant(requires: #"{"min_memory": -1}"#) + "]", "small", nil, "models.llm.variants[0].requires.min_memory"),
            ("[" + variant(requires: #"{"min_memory": "6GiB"}"#) + "]", "small", nil, "models.llm.variants[0].requires.min_memory"),
            ("[" + variant(requires: #"{"min_memory": 9007199254740993}"#) + "]", "small", nil, "models.llm.variants[0].requires.min_memory"),
            ("[" + variant(requires: #"{"platforms": {"palmos": "1"}}"#) + "]", "small", nil, "models.llm.variants[0].requires.platforms.palmos"),
            ("[" + variant(requires: #"{"platforms": {"ios": "x"}}"#) + "]", "small", nil, "models.llm.variants[0].requires.platforms.ios"),
            ("[" + variant(requires: #"{"platforms": {}}"#) + "]", "small", nil, "models.llm.variants[0].requires.platforms"),
            ("[" + variant(requires: #"{"accelerators": ["tpu"]}"#) + "]", "small", nil, "models.llm.variants[0].requires.accelerators"),
            ("[" + variant(requires: #"{"capabilities": ["a\nb"]}"#) + "]", "small", nil, "models.llm.variants[0].requires.capabilities"),
            ("[" + variant(requires: #"{"capabilities": "fp16"}"#) + "]", "small", nil, "models.llm.variants[0].requires.capabilities"),
            ("[" + variant(requires: #"{"bad\u0007key": 1}"#) + "]", "small", nil, "models.llm.variants[0].requires.bad\u{7}key"),
            ("[" + variant(extra: #", "variants": []"#) + "]", "small", nil, "models.llm.variants[0]"),
            ("[" + variant(extra: #", "download": "essential""#) + "]", "small", nil, "models.llm.variants[0]"),
        ]
        for (index, row) in table.enumerated() {
            let data = manifest(variants: row.variants, variant: row.variant, download: row.download)
            XCTAssertThrowsError(try Release.decode(data, source: "test"), "row \(index)") { error in
                XCTAssertTrue(String(describing: error).contains(row.field), "row \(index): \(row.field) in \(error)")
            }
        }
        // 33 variants: too many.
        let many = "[" + (0..<33).map { variant("v\($0)") }.joined(separator: ",") + "]"
        XCTAssertThrowsError(try Release.decode(manifest(variants: many, variant: "v0"), source: "test"))
    }

    func testRequirementsRoundTripThroughTheirJSON() throws {
        let requirements = VariantRequirements(minMemory: 3 << 30, platforms: [.ios: try AppVersion("17.0"), .macos: try AppVersion("0")],
                                               accelerators: [.neuralEngine, .gpu], architectures: ["arm64"], capabilities: ["fp16", "int4"])
        XCTAssertEqual(try VariantRequirements(json: requirements.jsonObject()), requirements)
    }
}
