import Foundation

extension KeySet {
    /// The document's canonical bytes, what `modelcast keys` writes and root keys sign: keys
    /// sorted, two-space indentation, `"key": value`, a line feed at the end, ASCII only
    /// (every value of a key set is ASCII by its type). Readers do not re-derive these bytes:
    /// they verify signatures over the bytes as served.
    public var canonicalBytes: Data {
        func role(_ role: KeySetRole) -> JSONValue {
            .object([.init("keys", .array(role.keys.map { .string($0.base64) })), .init("threshold", .int(Int64(role.threshold)))])
        }
        var members: [JSONValue.Member] = [
            .init("expires_at", .string(expiresAtText)),
            .init("format", .string(Self.formatName)),
            .init("format_version", .int(Self.formatVersion)),
            .init("manifest", role(manifest)),
            .init("root", role(root)),
        ]
        if !sequenceFloors.isEmpty {
            let floors = sequenceFloors.sorted { $0.key.rawValue < $1.key.rawValue }.map { JSONValue.Member($0.key.rawValue, .int($0.value)) }
            members.append(.init("sequence_floors", .object(floors)))
        }
        members.append(.init("version", .int(version)))
        return Data(JSONValue.object(members).serialized().utf8)
    }
}
