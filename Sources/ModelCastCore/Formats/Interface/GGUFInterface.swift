import Foundation

/// A GGUF model's interface: what an app that formats prompts and reads tokens depends on.
/// A value is nil when the file does not have it.
package struct GGUFInterface: Sendable, Equatable {
    /// `general.architecture`, e.g. `llama`.
    package var architecture: String?
    /// `<architecture>.context_length`.
    package var contextLength: Int64?
    /// `<architecture>.embedding_length`.
    package var embeddingLength: Int64?
    /// Number of `tokenizer.ggml.tokens`.
    package var vocabularySize: Int64?
    /// Digest of every `tokenizer.*` key except the chat templates (`GGUFKeyDigest`).
    package var tokenizerSHA256: SHA256Digest?
    /// Digest of `tokenizer.chat_template` and any named `tokenizer.chat_template.NAME`.
    package var chatTemplateSHA256: SHA256Digest?

    package init(architecture: String? = nil, contextLength: Int64? = nil, embeddingLength: Int64? = nil,
                 vocabularySize: Int64? = nil, tokenizerSHA256: SHA256Digest? = nil, chatTemplateSHA256: SHA256Digest? = nil) {
        self.architecture = architecture
        self.contextLength = contextLength
        self.embeddingLength = embeddingLength
        self.vocabularySize = vocabularySize
        self.tokenizerSHA256 = tokenizerSHA256
        self.chatTemplateSHA256 = chatTemplateSHA256
    }
}
