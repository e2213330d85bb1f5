import Foundation

/// What the metadata pass collects for a GGUF model's interface.
struct GGUFInterfaceFields {
    /// Integer values of the keys ending in `.context_length` or `.embedding_length` (the
    /// architecture, which names the ones wanted, may come later in the file).
    var sizes: [String: Int64] = [:]
    /// Why such a key's value is not a size (not an integer, or negative): an error only when
    /// the architecture turns out to be the key's.
    var refusedSizes: [String: String] = [:]
    var vocabularySize: Int64?
    /// Each tokenizer key's value digest (`GGUFKeyDigest`).
    var tokenizer: [String: SHA256Digest] = [:]
    var chatTemplates: [String: SHA256Digest] = [:]

    static let sizeSuffixes = [".context_length", ".embedding_length"]

    /// `tokenizer.chat_template` and the named `tokenizer.chat_template.NAME`.
    static func isChatTemplate(_ key: String) -> Bool {
        key == "tokenizer.chat_template" || key.hasPrefix("tokenizer.chat_template.")
    }

    func interface(architecture given: String?, path: String) throws -> GGUFInterface {
        // The JSON form keeps names of at most 4096 bytes; an empty name is no name.
        let architecture = given?.isEmpty == false ? given : nil
        if let architecture, architecture.utf8.count > InterfaceJSONObject.maxText {
            throw ModelCastError.invalidModel(path: path, format: "GGUF", reason: "general.architecture is longer than \(InterfaceJSONObject.maxText) bytes")
        }
        for suffix in Self.sizeSuffixes {
            if let architecture, let reason = refusedSizes[architecture + suffix] {
                throw ModelCastError.invalidModel(path: path, format: "GGUF", reason: reason)
            }
        }
        return GGUFInterface(
            architecture: architecture,
            contextLength: architecture.flatMap { sizes[$0 + ".context_length"] },
            embeddingLength: architecture.flatMap { sizes[$0 + ".embedding_length"] },
            vocabularySize: vocabularySize,
            tokenizerSHA256: try GGUFKeyDigest.combine(tokenizer),
            chatTemplateSHA256: try GGUFKeyDigest.combine(chatTemplates))
    }
}

/// The digests of a GGUF model's tokenizer and chat templates, in a canonical form that does
/// not depend on the order of keys in the file:
///
/// - a key's *value digest* is the SHA-256 of its GGUF type (4 bytes, little-endian) followed
///   by its value exactly as GGUF (version 2 or 3) encodes it: little-endian scalars, strings
///   as an 8-byte length and UTF-8 bytes, arrays as element type (4 bytes), count (8 bytes)
///   and elements;
/// - a set of keys' digest is the SHA-256 of, for each key in byte order of its UTF-8 name,
///   the name's length (8 bytes, little-endian), the name, and the key's 32-byte value digest.
enum GGUFKeyDigest {
    /// The set digest, nil for no keys.
    static func combine(_ keys: [String: SHA256Digest]) throws -> SHA256Digest? {
        guard !keys.isEmpty else { return nil }
        let hasher = try SHA256Hasher()
        for key in keys.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let name = Array(key.utf8)
            withUnsafeBytes(of: UInt64(name.count).littleEndian) { hasher.update($0) }
            hasher.update(name)
            hasher.update(keys[key]!.bytes)
        }
        return hasher.finalize()
    }
}

extension GGUFReader {
    /// The interface of the GGUF file at `path`: its architecture, context and embedding
    /// lengths, vocabulary size and the digests of its tokenizer and chat templates. Reads the
    /// preamble and the metadata (validated as `read` does); not the tensor records.
    package static func readInterface(path: String) throws -> GGUFInterface {
        let file = try FileDescriptor.openForReading(path)
        let size = UInt64(try file.status().st_size)
        var parse = HeaderParse(path: path, fileSize: size, reader: BufferedReader(file: file, fileSize: size), interface: GGUFInterfaceFields())
        let (_, _, metadataCount) = try parse.readPreamble()
        let metadata = try parse.readMetadata(count: metadataCount)
        return try parse.interface!.interface(architecture: metadata.architecture, path: path)
    }
}

extension GGUFReader.HeaderParse {
    /// Reads `key`'s value (its type already read) when the interface needs it; false, and
    /// nothing read, when it does not.
    mutating func readInterfaceValue(key: String, type: UInt32) throws -> Bool {
        // The list of named templates: implied by their keys, and written by gguf-py in no
        // fixed order (a set), so it would change the digest of the same templates.
        if key == "tokenizer.chat_templates" { return false }
        if key.hasPrefix("tokenizer.") {
            let digest = try valueDigest(key: key, type: type)
            let isTemplate = GGUFInterfaceFields.isChatTemplate(key)
            let seen = isTemplate ? interface!.chatTemplates.updateValue(digest, forKey: key) : interface!.tokenizer.updateValue(digest, forKey: key)
            guard seen == nil else { throw fail("metadata key \(key) appears twice") }
            return true
        }
        guard GGUFInterfaceFields.sizeSuffixes.contains(where: key.hasSuffix) else { return false }
        guard interface!.sizes[key] == nil, interface!.refusedSizes[key] == nil else { throw fail("metadata key \(key) appears twice") }
        guard let value = try integer(key: key, type: type) else {
            interface!.refusedSizes[key] = "\(key) has type \(type), expected an integer"
            return false
        }
        guard value >= 0 else {
            interface!.refusedSizes[key] = "\(key) is \(value == Int64.min ? "2^63 or more" : String(value)), not 0 to 2^63 - 1"
            return true
        }
        interface!.sizes[key] = value
        return true
    }

    /// Reads a value through a digest (`GGUFKeyDigest`); counts `tokenizer.ggml.tokens`.
    private mutating func valueDigest(key: String, type: UInt32) throws -> SHA256Digest {
        let hasher = try SHA256Hasher()
        withUnsafeBytes(of: type.littleEndian) { hasher.update($0) }
        reader.tap = hasher
        defer { reader.tap = nil }
        if key == "tokenizer.ggml.tokens" {
            guard type == 9 else { throw fail("\(key) has type \(type), expected an array of strings") }
            let elementType = try reader.u32("element type of \(key)", path: path)
            let count = try reader.u64("element count of \(key)", path: path)
            guard elementType == 8 else { throw fail("\(key) is an array of type \(elementType), expected strings") }
            try GGUFReader.skipElements(type: elementType, count: count, key: key, depth: 0, reader: &reader, path: path)
            // Each token took at least 8 bytes of the file, so the count is far below 2^63.
            interface!.vocabularySize = Int64(count)
        } else {
            try GGUFReader.skipValue(type: type, key: key, depth: 0, reader: &reader, path: path)
        }
        return hasher.finalize()
    }

    /// An integer value of any GGUF integer type (nil, and nothing read, for another type);
    /// negative when it does not fit 0 to 2^63 - 1 (`Int64.min` for an unsigned 2^63 or more).
    private mutating func integer(key: String, type: UInt32) throws -> Int64? {
        let widths: [UInt32: (bytes: Int, signed: Bool)] = [0: (1, false), 1: (1, true), 2: (2, false), 3: (2, true),
                                                             4: (4, false), 5: (4, true), 10: (8, false), 11: (8, true)]
        guard let width = widths[type] else { return nil }
        let bytes = try reader.bytes(width.bytes, what: key, path: path)
        let raw = bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let shift = UInt64(64 - 8 * width.bytes)
        // A signed value is sign-extended from its width.
        return width.signed ? Int64(bitPattern: raw << shift) >> shift : (raw > UInt64(Int64.max) ? Int64.min : Int64(raw))
    }
}
