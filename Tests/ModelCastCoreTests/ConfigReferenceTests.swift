import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport
import Yams

/// Issue 47, item 4: docs/config.md is generated from the key definitions the decoder
/// reads through (`ConfigSchema`), and cannot drift from them: the page is compared with
/// what the definitions write, every defined key is read by the decoder, and every
/// example the page shows loads in its place.
final class ConfigReferenceTests: XCTestCase {
    static let page = repositoryRoot + "/docs/config.md"

    /// The drift check. `scripts/make-config-reference` runs this test with
    /// MODELCAST_UPDATE_GOLDEN=1, which rewrites the page (and still fails, so the
    /// change is reviewed with `git diff docs/config.md`).
    func testDocsConfigIsWhatTheKeyDefinitionsWrite() throws {
        let written = ConfigReference.markdown()
        let existing = try? String(contentsOfFile: Self.page, encoding: .utf8)
        if ProcessInfo.processInfo.environment["MODELCAST_UPDATE_GOLDEN"] == "1" {
            guard existing != written else { return }
            try written.write(toFile: Self.page, atomically: true, encoding: .utf8)
            XCTFail("rewrote docs/config.md from the key definitions: review `git diff docs/config.md`, then run again without MODELCAST_UPDATE_GOLDEN")
            return
        }
        guard let existing, existing != written else { return XCTAssertNotNil(existing, "docs/config.md is missing: run scripts/make-config-reference") }
        let old = existing.split(separator: "\n", omittingEmptySubsequences: false), new = written.split(separator: "\n", omittingEmptySubsequences: false)
        let first = (0..<min(old.count, new.count)).first { old[$0] != new[$0] } ?? min(old.count, new.count)
        XCTFail("""
            docs/config.md differs from what the key definitions in Sources/ModelCastCore/Publish/ConfigSchema.swift write; \
            run scripts/make-config-reference (after `swift build --build-tests`) and review `git diff docs/config.md`.
            First difference, line \(first + 1):
            - \(first < old.count ? old[first] : "(end of file)")
            + \(first < new.count ? new[first] : "(end of file)")
            """)
    }

    /// Every key defined at every place is looked up by the decoder (a key documented but
    /// ignored would fail here), and the example file loads.
    func testEveryDefinedKeyIsReadByTheDecoder() throws {
        let work = try Scratch()
        let log = ConfigReadLog()
        let config = try PublishConfigFile.load(path: try work.write("modelcast.yml", text: ConfigSchema.example), log: log)
        XCTAssertEqual(config.models.map(\.name), ["classifier", "llm"])
        XCTAssertEqual(config.models.last?.variants.map(\.name), ["3b", "ane", "1b"])
        let defined = Set(ConfigSchema.sections.flatMap { section in section.fields.map { section.id + "." + $0.name } })
        XCTAssertEqual(defined.subtracting(log.read).sorted(), [], "defined but never read")
        XCTAssertEqual(log.read.subtracting(defined).sorted(), [], "read but not defined")
    }

    /// Each key's example, put in the first place of its kind in the example file that
    /// has the key (or the first place of its kind), still loads: no example on the page
    /// is one the decoder refuses.
    func testEveryKeysExampleLoadsInItsPlace() throws {
        let work = try Scratch()
        let root = try XCTUnwrap(try Yams.compose(yaml: ConfigSchema.example))
        for section in ConfigSchema.sections {
            for field in section.fields {
                let at = try XCTUnwrap(Self.place(for: field.name, of: section, in: root), "the example has no \(section.place)")
                let value = try XCTUnwrap(try Yams.compose(yaml: "\(field.name): \(field.example)")?.mapping?[field.name], "\(section.id).\(field.name): the example is not YAML")
                let text = try Yams.serialize(node: Self.replacing(root, at: at.steps[...], key: field.name, with: value))
                XCTAssertNoThrow(try PublishConfigFile.load(path: try work.write("example.yml", text: text)), "\(section.id).\(field.name): \(field.example)")
            }
        }
    }

    /// The requirements a config file takes are the ones the manifest format knows.
    func testRequirementKeysAreTheFormatsKnownKeys() {
        XCTAssertEqual(RequiresPlace.section.names.sorted(), VariantRequirements.knownKeys.sorted())
    }

    /// The page is linked from the README's docs table and from publishing.md.
    func testThePageIsLinked() throws {
        let readme = try String(contentsOfFile: repositoryRoot + "/README.md", encoding: .utf8)
        XCTAssertTrue(readme.contains("| [config](docs/config.md) |"), "README's docs table")
        let publishing = try String(contentsOfFile: repositoryRoot + "/docs/publishing.md", encoding: .utf8)
        XCTAssertTrue(publishing.contains("](config.md)"), "publishing.md")
    }

    // MARK: - Walking the example along the definitions

    /// Every mapping of `root` that has the keys of a section, with its path, in document order.
    static func places(in root: Node) -> [(section: ConfigSection, path: ConfigPath)] {
        var found: [(ConfigSection, ConfigPath)] = []
        func visit(_ node: Node, _ section: ConfigSection, _ path: ConfigPath) {
            guard let mapping = node.mapping else { return }
            found.append((section, path))
            for field in section.fields {
                guard let value = mapping[field.name] else { continue }
                switch field.kind {
                case .section(let inner), .choiceOrSection(_, let inner): visit(value, inner, path.appending(field.name))
                case .named(let inner):
                    for (name, entry) in value.mapping ?? [:] { visit(entry, inner, path.appending(field.name).appending(name.string ?? "")) }
                case .list(let inner):
                    for (index, item) in (value.sequence.map(Array.init) ?? []).enumerated() { visit(item, inner, path.appending(field.name).appending(index: index)) }
                default: break
                }
            }
        }
        visit(root, TopLevel.section, .top)
        return found
    }

    /// The first mapping of `section`'s kind in `root` that has `key`, else the first of its kind.
    static func place(for key: String, of section: ConfigSection, in root: Node) -> ConfigPath? {
        let candidates = places(in: root).filter { $0.section.id == section.id }.map(\.path)
        return candidates.first { node(root, at: $0)?.mapping?[key] != nil } ?? candidates.first
    }

    static func node(_ root: Node, at path: ConfigPath) -> Node? {
        var node: Node? = root
        for step in path.steps {
            switch step {
            case .key(let key): node = node?.mapping?[key]
            case .index(let index): node = node?.sequence.flatMap { index < $0.count ? $0[index] : nil }
            }
        }
        return node
    }

    /// `root` with `key` of the mapping at `steps` set to `value`.
    static func replacing(_ root: Node, at steps: ArraySlice<ConfigPath.Step>, key: String, with value: Node) -> Node {
        guard let step = steps.first else {
            var mapping = root.mapping!
            mapping[key] = value
            return .mapping(mapping)
        }
        switch step {
        case .key(let name):
            var mapping = root.mapping!
            mapping[name] = replacing(mapping[name]!, at: steps.dropFirst(), key: key, with: value)
            return .mapping(mapping)
        case .index(let index):
            var sequence = root.sequence!
            sequence[index] = replacing(sequence[index], at: steps.dropFirst(), key: key, with: value)
            return .sequence(sequence)
        }
    }
}
