import Foundation

/// Reads a GGUF interface's JSON form back (see `ModelInterface(json:)`).
enum GGUFInterfaceJSONReader {
    /// The members of a GGUF interface's object besides `format`.
    static let members: Set<String> = ["architecture", "context_length", "embedding_length", "vocabulary_size", "tokenizer_sha256", "chat_template_sha256"]

    static func read(_ object: InterfaceJSONObject) throws -> GGUFInterface {
        GGUFInterface(
            architecture: try object.optionalString("architecture"),
            contextLength: try object.optionalCount("context_length"),
            embeddingLength: try object.optionalCount("embedding_length"),
            vocabularySize: try object.optionalCount("vocabulary_size"),
            tokenizerSHA256: try object.digest("tokenizer_sha256"),
            chatTemplateSHA256: try object.digest("chat_template_sha256"))
    }
}
