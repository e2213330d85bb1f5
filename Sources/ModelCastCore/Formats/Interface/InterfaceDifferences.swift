import Foundation

extension ModelInterface {
    /// Every difference from `old` to this interface, e.g. `input 'image' shape 1×3×224×224 →
    /// 1×3×256×256`, `class count 101 → 102`, `output 'logits' removed`, `vocabulary 32000 →
    /// 32064 tokens`, `chat template changed`. Empty when the interfaces are equal. Names from
    /// the models are quoted and escaped (`quotedValue`).
    package func differences(from old: ModelInterface) -> [String] {
        changes(from: old).map(\.description)
    }

    /// Every difference from `old` to this interface, with its facet and whether it breaks
    /// apps built for `old` (before any override from the config file).
    package func changes(from old: ModelInterface) -> [InterfaceDifference] {
        switch (old, self) {
        case (.coreML(let before), .coreML(let after)): return InterfaceDifferences.coreML(before, after)
        case (.gguf(let before), .gguf(let after)): return InterfaceDifferences.gguf(before, after)
        case (.onnx(let before), .onnx(let after)): return InterfaceDifferences.onnx(before, after)
        default: return [InterfaceDifference(.format, "format \(old.format) → \(format)")]
        }
    }
}

/// What changed between two interfaces of one format, in plain words, one line per change:
/// what publish shows when it refuses a new version whose interface differs from the live one's.
enum InterfaceDifferences {
    static func onnx(_ old: ONNXInterface, _ new: ONNXInterface) -> [InterfaceDifference] {
        // onnxruntime hands outputs back as a list in graph order (`session.run(None, …)`,
        // `OrtSession.Result.get(i)`), so an app that indexes them reads another tensor.
        features("input", old.inputs.map { ($0.name, InterfaceFacets($0.type)) }, new.inputs.map { ($0.name, InterfaceFacets($0.type)) })
            + features("output", old.outputs.map { ($0.name, InterfaceFacets($0.type)) }, new.outputs.map { ($0.name, InterfaceFacets($0.type)) },
                       reorder: .breaking)
    }

    static func coreML(_ old: CoreMLInterface, _ new: CoreMLInterface) -> [InterfaceDifference] {
        func facets(_ features: [CoreMLFeature]) -> [(String, InterfaceFacets)] { features.map { ($0.name, InterfaceFacets($0)) } }
        var changes = features("input", facets(old.inputs), facets(new.inputs))
            + features("output", facets(old.outputs), facets(new.outputs))
            + features("state", facets(old.states), facets(new.states))
        switch (old.classifier, new.classifier) {
        case (nil, nil): break
        case (nil, let added?): changes.append(InterfaceDifference(.classifier, "classifier added (\(added.classCount) classes)"))
        case (let removed?, nil): changes.append(InterfaceDifference(.classifier, "classifier removed (it had \(removed.classCount) classes)"))
        case (let before?, let after?):
            if before.classCount != after.classCount {
                changes.append(InterfaceDifference(.classCount, "class count \(before.classCount) → \(after.classCount)"))
            } else if before.labelsSHA256 != after.labelsSHA256 {
                changes.append(InterfaceDifference(.classLabels, "class labels changed (same count, \(after.classCount))"))
            }
            if before.predictedFeature != after.predictedFeature {
                changes.append(InterfaceDifference(.classifier, "predicted feature \(quotedOrNone(before.predictedFeature)) → \(quotedOrNone(after.predictedFeature))"))
            }
            if before.probabilitiesOutput != after.probabilitiesOutput {
                changes.append(InterfaceDifference(.classifier, "probabilities output \(quotedOrNone(before.probabilitiesOutput)) → \(quotedOrNone(after.probabilitiesOutput))"))
            }
        }
        return changes
    }

    static func gguf(_ old: GGUFInterface, _ new: GGUFInterface) -> [InterfaceDifference] {
        var changes: [InterfaceDifference] = []
        if old.architecture != new.architecture {
            changes.append(InterfaceDifference(.architecture, "architecture \(quotedOrNone(old.architecture)) → \(quotedOrNone(new.architecture))"))
        }
        func number(_ value: Int64?, _ unit: String = "") -> String { value.map { "\($0)\(unit)" } ?? "none" }
        if old.contextLength != new.contextLength {
            // An app's prompts fit a larger context; a smaller or unknown one may cut them.
            let grew = old.contextLength.flatMap { before in new.contextLength.map { $0 > before } } ?? false
            changes.append(InterfaceDifference(.contextLength, "context length \(number(old.contextLength)) → \(number(new.contextLength))",
                                               kind: grew ? .compatible : .breaking))
        }
        if old.embeddingLength != new.embeddingLength {
            changes.append(InterfaceDifference(.embeddingLength, "embedding length \(number(old.embeddingLength)) → \(number(new.embeddingLength))"))
        }
        if old.vocabularySize != new.vocabularySize {
            changes.append(InterfaceDifference(.vocabulary, old.vocabularySize != nil && new.vocabularySize != nil
                ? "vocabulary \(old.vocabularySize!) → \(new.vocabularySize!) tokens"
                : "vocabulary \(number(old.vocabularySize, " tokens")) → \(number(new.vocabularySize, " tokens"))"))
        }
        if let change = digestChange("tokenizer", old.tokenizerSHA256, new.tokenizerSHA256) { changes.append(InterfaceDifference(.tokenizer, change)) }
        if let change = digestChange("chat template", old.chatTemplateSHA256, new.chatTemplateSHA256) {
            changes.append(InterfaceDifference(.chatTemplate, change))
        }
        return changes
    }

    static func digestChange(_ what: String, _ old: SHA256Digest?, _ new: SHA256Digest?) -> String? {
        switch (old, new) {
        case (nil, nil): return nil
        case (nil, _): return "\(what) added"
        case (_, nil): return "\(what) removed"
        case (let before?, let after?): return before == after ? nil : "\(what) changed"
        }
    }

    /// The differences between two lists of named features: removed, added, changed (the
    /// type as a whole when its kind changed, else each property), and reordered (of kind
    /// `reorder`: by default compatible, as for Core ML, whose features are fed and read by name).
    static func features(_ kind: String, _ old: [(String, InterfaceFacets)], _ new: [(String, InterfaceFacets)],
                         reorder: InterfaceDifference.Kind? = nil) -> [InterfaceDifference] {
        let facet: InterfaceFacet = kind == "input" ? .inputs : kind == "output" ? .outputs : .states
        // Apps name the outputs they read, so one more is unseen; an added input or state must be fed.
        let added: InterfaceFacet = facet == .outputs ? .outputAdded : facet
        let oldByName = Dictionary(old, uniquingKeysWith: { first, _ in first })
        let newByName = Dictionary(new, uniquingKeysWith: { first, _ in first })
        var changes = old.filter { newByName[$0.0] == nil }.map { InterfaceDifference(facet, "\(kind) \(quotedValue($0.0)) removed") }
        changes += new.filter { oldByName[$0.0] == nil }.map { InterfaceDifference(added, "\(kind) \(quotedValue($0.0)) added (\($0.1.summary))") }
        for (name, after) in new {
            guard let before = oldByName[name], before != after else { continue }
            let label = "\(kind) \(quotedValue(name))"
            guard before.kind == after.kind else {
                changes.append(InterfaceDifference(facet, "\(label) type \(before.summary) → \(after.summary)"))
                continue
            }
            for (was, now) in zip(before.properties, after.properties) where was != now {
                changes.append(InterfaceDifference(facet, "\(label) \(now.name) \(was.value) → \(now.value)"))
            }
        }
        let oldOrder = old.map(\.0).filter { newByName[$0] != nil }
        let newOrder = new.map(\.0).filter { oldByName[$0] != nil }
        if oldOrder != newOrder {
            changes.append(InterfaceDifference(.order, "\(kind) order \(oldOrder.map { quotedValue($0) }.joined(separator: ", ")) → \(newOrder.map { quotedValue($0) }.joined(separator: ", "))",
                                               kind: reorder))
        }
        return changes
    }

    static func quotedOrNone(_ text: String?) -> String { text.map { quotedValue($0) } ?? "none" }
}
