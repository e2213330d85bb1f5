import Foundation

/// One difference between two interfaces of a model: which facet changed, how it reads to
/// a person (`vocabulary 32000 → 32064 tokens`), and whether an app built for the old
/// interface can still use the new one.
package struct InterfaceDifference: Sendable, Equatable {
    /// Whether apps built for the old interface still work with the new one.
    package enum Kind: String, Sendable, Equatable {
        /// An app built for the old interface cannot use the new one: publish refuses it
        /// unless `--interface-change` and a higher `--min-app-version`.
        case breaking
        /// An app built for the old interface still works: published with a note.
        case compatible
    }

    package let facet: InterfaceFacet
    package let description: String
    package let kind: Kind
    /// Whether `kind` is the model's own (the config file's `interface`), not the default.
    package let overridden: Bool

    /// A difference of `facet`'s default kind, unless `kind` says otherwise (a facet whose
    /// kind depends on the direction of the change, such as a context length, or one the
    /// config file classifies: `overridden`).
    package init(_ facet: InterfaceFacet, _ description: String, kind: Kind? = nil, overridden: Bool = false) {
        self.facet = facet
        self.description = description
        self.kind = kind ?? facet.defaultKind
        self.overridden = overridden
    }

    /// The description as a report line says it, noting a kind the config file gave.
    package var line: String {
        overridden ? "\(description) (\(kind.rawValue) by the config file)" : description
    }
}

/// The parts of an interface that can differ between two versions of a model: the one place
/// they are enumerated, with the name the config file and the docs give each and whether a
/// change to it breaks apps by default (docs/interface-contract.md, "Breaking and compatible
/// changes").
package enum InterfaceFacet: String, Sendable, CaseIterable {
    /// The model's format (or a format without an interface modelcast reads).
    case format
    /// An input added, removed, or its type changed (Core ML, ONNX).
    case inputs
    /// An output removed, or its type changed (Core ML, ONNX).
    case outputs
    /// An output added: apps that do not read it do not notice it (Core ML, ONNX).
    case outputAdded = "output_added"
    /// A state added, removed, or its type changed (Core ML).
    case states
    /// The same inputs, outputs or states in another order (Core ML, ONNX): compatible where
    /// apps reach them by name, breaking for ONNX outputs, which runtimes hand back by position.
    case order
    /// A classifier added or removed, or its predicted-class or probabilities output renamed (Core ML).
    case classifier
    /// The classifier's class count (Core ML).
    case classCount = "class_count"
    /// The classifier's labels, same count (Core ML).
    case classLabels = "class_labels"
    /// `general.architecture` (GGUF).
    case architecture
    /// The context length (GGUF): a larger one is compatible, a smaller or missing one breaking.
    case contextLength = "context_length"
    /// The embedding length (GGUF).
    case embeddingLength = "embedding_length"
    /// The vocabulary size (GGUF).
    case vocabulary
    /// The tokenizer's other keys (GGUF): token ids, merges, special tokens an app may rely on.
    case tokenizer
    /// The chat templates (GGUF): how a prompt is formatted, which the runtime applies.
    case chatTemplate = "chat_template"

    /// Whether a change to this facet breaks apps unless the config file says otherwise.
    package var defaultKind: InterfaceDifference.Kind {
        switch self {
        case .outputAdded, .chatTemplate, .contextLength, .order: return .compatible
        default: return .breaking
        }
    }
}
