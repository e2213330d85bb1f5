import Foundation

extension KeySet {
    /// The document's fields, in the order the canonical writer puts them (sorted).
    static let fieldNames = ["expires_at", "format", "format_version", "manifest", "root", "sequence_floors", "version"]
    static let roleFieldNames = ["keys", "threshold"]

    /// Parses a `keys/N.json` document as served. Refuses, naming the JSON path and the
    /// value (control characters escaped): more than `maxBytes`, anything `StrictJSON`
    /// refuses (a repeated key, a number written as a fraction…), a missing or unknown
    /// field (a new field is a new `format_version`, never read past silently), a value of
    /// the wrong type, and every rule of `KeySet` and `KeySetRole`. Keys must be spelled
    /// exactly as `minisign -G` writes them (one base64 line, no spaces), `expires_at`
    /// exactly as `formatTimestamp` writes it (`2027-11-29T00:00:00Z`).
    public init(parsing data: Data) throws {
        guard data.count <= Self.maxBytes else {
            throw ManifestValueError(field: "(document)", value: "\(data.count) bytes", rule: "is larger than a key set may be (\(Self.maxBytes) bytes)")
        }
        let document = try StrictJSON.parse(data)
        let fields = try Self.members(document, field: "(document)", known: Self.fieldNames, what: "a key set")

        let format = try Self.string(fields["format"], field: "format")
        guard format == Self.formatName else {
            throw ManifestValueError(field: "format", value: quotedValue(format), rule: "is not \"\(Self.formatName)\" (this is not a modelcast key set)")
        }
        let formatVersion = try Self.integer(fields["format_version"], field: "format_version")
        guard formatVersion == Self.formatVersion else {
            throw ManifestValueError(field: "format_version", value: String(formatVersion),
                                     rule: "is a key set format this reader does not know (it reads format_version \(Self.formatVersion))")
        }
        let version = try Self.integer(fields["version"], field: "version")
        let expiresText = try Self.string(fields["expires_at"], field: "expires_at")
        guard let expiresAt = parseTimestamp(expiresText), formatTimestamp(expiresAt) == expiresText else {
            throw ManifestValueError(field: "expires_at", value: quotedValue(expiresText),
                                     rule: "is not a UTC time in whole seconds as RFC 3339 writes it (e.g. 2027-11-29T00:00:00Z)")
        }
        let root = try Self.role(fields["root"], field: "root")
        let manifest = try Self.role(fields["manifest"], field: "manifest")
        let floors = try fields["sequence_floors"].map { try Self.floors($0) } ?? [:]
        try self.init(version: version, expiresAt: expiresAt, root: root, manifest: manifest, sequenceFloors: floors)
    }

    /// `sequence_floors`: an object of channel name to floor, each name a channel name.
    private static func floors(_ value: JSONValue) throws -> [ChannelName: Int64] {
        guard case .object(let members) = value else {
            throw ManifestValueError(field: "sequence_floors", value: describe(value), rule: "is not an object of channel names to sequences")
        }
        guard members.count <= maxChannelFloors else {
            throw ManifestValueError(field: "sequence_floors", value: "\(members.count) channels", rule: "names more than \(maxChannelFloors) channels")
        }
        var floors: [ChannelName: Int64] = [:]
        for member in members {
            let channel: ChannelName
            do { channel = try ChannelName(member.key) } catch {
                throw ManifestValueError(field: "sequence_floors", value: quotedValue(member.key), rule: "is not a channel name (lowercase letters, digits and '-', starting with a letter or digit, at most 64 characters)")
            }
            floors[channel] = try integer(member.value, field: "sequence_floors.\(member.key)")
        }
        return floors
    }

    private static func members(_ value: JSONValue, field: String, known: [String], what: String) throws -> [String: JSONValue] {
        guard case .object(let members) = value else {
            throw ManifestValueError(field: field, value: describe(value), rule: "is not \(what) (a JSON object)")
        }
        var result: [String: JSONValue] = [:]
        for member in members {
            let path = field == "(document)" ? member.key : field + "." + member.key
            guard known.contains(member.key) else {
                throw ManifestValueError(field: path, value: quotedValue(member.key),
                                         rule: "is not a field of \(what) in format_version \(formatVersion) (it has \(known.joined(separator: ", ")))")
            }
            result[member.key] = member.value
        }
        return result
    }

    private static func role(_ value: JSONValue?, field: String) throws -> KeySetRole {
        let fields = try members(try present(value, field: field), field: field, known: roleFieldNames, what: "a role")
        guard case .array(let items) = try present(fields["keys"], field: field + ".keys") else {
            throw ManifestValueError(field: field + ".keys", value: describe(fields["keys"]!), rule: "is not a list of minisign public keys")
        }
        guard items.count <= KeySetRole.maxKeys else {
            throw ManifestValueError(field: field + ".keys", value: "\(items.count) keys", rule: "is not 1 to \(KeySetRole.maxKeys) keys")
        }
        var keys: [MinisignPublicKey] = []
        for (index, item) in items.enumerated() {
            let path = "\(field).keys[\(index)]"
            let text = try string(item, field: path)
            do {
                let key = try MinisignPublicKey(base64: text, source: path)
                // One spelling per key: no surrounding spaces, no non-zero padding bits.
                guard key.base64 == text else {
                    throw ManifestValueError(field: path, value: quotedValue(text), rule: "is not written as minisign writes a public key (one base64 line, nothing around it)")
                }
                keys.append(key)
            } catch let error as FormatError {
                guard case .signingKey(_, let reason) = error else { throw error }
                throw ManifestValueError(field: path, value: quotedValue(text), rule: "is not a minisign public key to trust: \(reason)")
            }
        }
        let threshold = try integer(fields["threshold"], field: field + ".threshold")
        return try KeySetRole(keys: keys, threshold: Int(clamping: threshold), field: field)
    }

    private static func present(_ value: JSONValue?, field: String) throws -> JSONValue {
        guard let value else { throw ManifestValueError(field: field, value: "(missing)", rule: "is required") }
        return value
    }

    private static func string(_ value: JSONValue?, field: String) throws -> String {
        let value = try present(value, field: field)
        guard case .string(let text) = value else { throw ManifestValueError(field: field, value: describe(value), rule: "is not a string") }
        return text
    }

    private static func integer(_ value: JSONValue?, field: String) throws -> Int64 {
        let value = try present(value, field: field)
        guard case .int(let number) = value else {
            throw ManifestValueError(field: field, value: describe(value), rule: "is not a whole number written without a fraction or exponent")
        }
        return number
    }

    /// A value as an error shows it: strings quoted and escaped, the rest as JSON (cut).
    private static func describe(_ value: JSONValue) -> String {
        if case .string(let text) = value { return quotedValue(text) }
        let text = value.serialized(nestedAt: 0).replacingOccurrences(of: "\n", with: " ")
        return text.count > 80 ? String(text.prefix(80)) + "…" : text
    }
}
