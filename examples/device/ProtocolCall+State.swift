import Foundation
import ModelCastClient
import ModelCastFormat

extension ProtocolCall {
    /// `state --dir D`: the client's state as one JSON document (`conformance/state.schema.json`)
    /// on stdout, from `ModelUpdater.installedState()`: no request, nothing written.
    static func state(_ words: ArraySlice<String>) async throws {
        let arguments = try ProtocolArguments(words, single: ["--dir"])
        try arguments.expectPositional(0, "")
        let updater = try updater(directory: try arguments.required("--dir", "D"))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(StateDocument(try await updater.installedState(), licences: updater.acceptedLicences()))
        print(String(decoding: data, as: UTF8.self))
    }
}

/// `state`'s document: `protocol`, `sequence` (null before the first manifest trusted),
/// per model its `version`, `variant`, `files`, `previous` and `refused`, nulls written out
/// as the schema requires them, and `licences`: per model, the licence accepted.
struct StateDocument: Encodable {
    let state: InstalledState
    let licences: [String: LicenceTerms]

    init(_ state: InstalledState, licences: [String: LicenceTerms] = [:]) {
        self.state = state
        self.licences = licences
    }

    /// A JSON object key, for the models (named by the manifest, not by this code).
    private struct Key: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ text: String) { stringValue = text }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private struct Model: Encodable {
        let model: InstalledState.Model

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(model.version, forKey: Key("version"))
            try container.encode(model.variant, forKey: Key("variant"))
            try container.encode(model.files.map { ["path": $0.path, "sha256": $0.sha256] }, forKey: Key("files"))
            try container.encode(model.previous, forKey: Key("previous"))
            try container.encode(model.refused, forKey: Key("refused"))
        }
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(1, forKey: Key("protocol"))
        try container.encode(state.sequence, forKey: Key("sequence"))
        var models = container.nestedContainer(keyedBy: Key.self, forKey: Key("models"))
        for model in state.models { try models.encode(Model(model: model), forKey: Key(model.name)) }
        var accepted = container.nestedContainer(keyedBy: Key.self, forKey: Key("licences"))
        for name in licences.keys.sorted() {
            let terms = licences[name]!
            var entry = accepted.nestedContainer(keyedBy: Key.self, forKey: Key(name))
            try entry.encode(terms.spdx, forKey: Key("spdx"))
            try entry.encode(terms.url, forKey: Key("url"))
        }
    }
}
