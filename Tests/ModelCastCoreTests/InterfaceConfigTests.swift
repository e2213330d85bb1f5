import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastFormat
import ModelCastTestSupport

/// Issue 50: a model (and a variant) classifies interface facets in the config file,
/// `interface: {compatible: […], breaking: […]}`, by `InterfaceFacet`'s names; anything
/// else is refused naming the file, the key's path and the value (escaped), before
/// anything is written (status 1, as every config error: docs/output.md).
final class InterfaceConfigTests: XCTestCase {
    func load(_ interface: String, variant: String? = nil) throws -> (path: String, result: Result<PublishConfigFile, Error>) {
        let work = try Scratch()
        let model = variant.map { """
              llm:
                version: 1.0.0
                interface: \(interface)
                variants:
                  - {name: big, files: [big.gguf], interface: \($0)}
                  - {name: small, files: [small.gguf]}
            """ } ?? """
              llm:
                version: 1.0.0
                files: [llm.gguf]
                interface: \(interface)
            """
        let path = try work.write("modelcast.yml", text: "base_url: https://cdn.example.com/m\nmodels:\n" + model + "\n")
        return (path, Result { try PublishConfigFile.load(path: path) })
    }

    func testFacetsAreReadByTheirNames() throws {
        let plain = try load("{compatible: [vocabulary, tokenizer], breaking: chat_template}").result.get()
        XCTAssertEqual(plain.models.map(\.interfaceKinds), [try InterfaceKinds(compatible: [.vocabulary, .tokenizer], breaking: [.chatTemplate])])
        // Names joined by commas, as every list of names in the file may be.
        let joined = try load("{compatible: \"vocabulary, tokenizer\"}").result.get()
        XCTAssertEqual(joined.models.map(\.interfaceKinds), [try InterfaceKinds(compatible: [.vocabulary, .tokenizer], breaking: [])])
        let variants = try load("{breaking: [chat_template, order]}", variant: "{compatible: [chat_template]}").result.get()
        let model = try XCTUnwrap(variants.models.first)
        XCTAssertEqual(model.units.map(\.interfaceKinds), [
            try InterfaceKinds(compatible: [.chatTemplate], breaking: [.order]), try InterfaceKinds(compatible: [], breaking: [.chatTemplate, .order]),
        ])
        XCTAssertEqual(try load("{}").result.get().models.first?.interfaceKinds, InterfaceKinds())
    }

    /// Hostile values: each refused with one error naming the file, the key's path and the
    /// value, with no raw control character, and exit status 1.
    func testHostileValuesAreRefusedNamingTheKeyAndValue() throws {
        let known = InterfaceFacet.allCases.map(\.rawValue).joined(separator: ", ")
        let cases: [(interface: String, variant: String?, expected: [String])] = [
            ("{compatible: [chat-template]}", nil, ["models.llm.interface.compatible[0]: 'chat-template' is not an interface facet (known: \(known))"]),
            ("{compatible: [vocabulary, Vocabulary]}", nil, ["models.llm.interface.compatible[1]: 'Vocabulary' is not an interface facet"]),
            ("{breaking: \"chat\\u001B[2J_template\"}", nil, ["models.llm.interface.breaking: 'chat\\u{1b}[2J_template' is not an interface facet"]),
            ("{breaking: [\"tokenizer\\u202E\"]}", nil, ["models.llm.interface.breaking[0]: 'tokenizer\\u{202e}' is not an interface facet"]),
            ("{compatible: \"vocabulary,,\"}", nil, ["models.llm.interface.compatible: '' is not an interface facet"]),
            ("{compatible: [chat_template], breaking: [vocabulary, chat_template]}", nil, ["models.llm.interface: 'chat_template' is both in compatible and in breaking: give it one kind"]),
            ("{}", "{compatible: [order], breaking: order}", ["models.llm.variants[0].interface: 'order' is both in compatible and in breaking"]),
            ("{}", "{breaking: [tokeniser]}", ["models.llm.variants[0].interface.breaking[0]: 'tokeniser' is not an interface facet"]),
            ("{compatible: {vocabulary: true}}", nil, ["models.llm.interface.compatible must be an interface facet or a list of them (\(known)), not a mapping"]),
            ("{compatible: [[vocabulary]]}", nil, ["models.llm.interface.compatible[0] must be an interface facet or a list of them", "not a list"]),
            ("{compatible: true}", nil, ["models.llm.interface.compatible must be an interface facet or a list of them", "not 'true'"]),
            ("{compatible: [~]}", nil, ["models.llm.interface.compatible[0] must be", "not '~'"]),
            ("{compatible: 5}", nil, ["models.llm.interface.compatible: '5' is not an interface facet"]),
            ("[chat_template]", nil, ["models.llm.interface must be a mapping with compatible and breaking"]),
            ("compatible", nil, ["models.llm.interface must be a mapping with compatible and breaking"]),
            ("{compatibel: [vocabulary]}", nil, ["'models.llm.interface.compatibel' (did you mean 'compatible'?)"]),
            ("{chat_template: compatible}", nil, ["unknown key 'models.llm.interface.chat_template'", "known in interface changes (models.NAME.interface): compatible, breaking"]),
        ]
        for (interface, variant, expected) in cases {
            let (path, result) = try load(interface, variant: variant)
            guard case .failure(let error) = result else {
                XCTFail("\(interface) \(variant ?? ""): accepted")
                continue
            }
            let shown = "\(error)"
            for text in ["config \(path): "] + expected {
                XCTAssertTrue(shown.contains(text), "\(interface) \(variant ?? ""): \(text) in \(shown)")
            }
            XCTAssertFalse(containsControlCharacter(shown), shown.debugDescription)
            XCTAssertEqual(ExitStatus(for: error), .refused, shown)
        }
    }
}
