import Foundation

/// Which role of a key set a key belongs to: the offline keys that sign key sets, or the
/// online keys that sign manifests.
public enum KeySetRoleName: String, Sendable, Equatable, CustomStringConvertible {
    /// The offline keys that sign the next key set (`root`).
    case root
    /// The keys that sign manifests (`manifest`), held where publishing runs.
    case manifest

    /// The role's field name in the document.
    public var description: String { rawValue }
}

/// The keys of one role of a key set and how many of them must sign: 1 to 16 minisign
/// public keys, no two with the same key id or the same key bytes, none a key minisign
/// refuses (small order, non-canonical), and a threshold from 1 to the number of keys.
public struct KeySetRole: Sendable, Equatable {
    /// The most keys a role lists.
    public static let maxKeys = 16

    /// The role's keys, in the document's order.
    public let keys: [MinisignPublicKey]
    /// How many distinct keys of the role must sign.
    public let threshold: Int

    /// Checks the rules above; errors name the field under `field` (`root.keys[1]`).
    public init(keys: [MinisignPublicKey], threshold: Int, field: String = "role") throws {
        guard (1...Self.maxKeys).contains(keys.count) else {
            throw ManifestValueError(field: field + ".keys", value: "\(keys.count) keys", rule: "is not 1 to \(Self.maxKeys) keys")
        }
        for (index, key) in keys.enumerated() {
            // A key listed twice under two key ids would let one secret count as two signers
            // (the key id of a signature is not covered by it).
            if let first = keys[..<index].firstIndex(where: { $0.keyID == key.keyID || $0.key == key.key }) {
                throw ManifestValueError(field: "\(field).keys[\(index)]", value: quotedValue(key.base64),
                                         rule: "repeats \(field).keys[\(first)] (same key id or same key): each key counts once")
            }
        }
        guard (1...keys.count).contains(threshold) else {
            throw ManifestValueError(field: field + ".threshold", value: String(threshold), rule: "is not from 1 to the number of keys (\(keys.count))")
        }
        self.keys = keys
        self.threshold = threshold
    }

    /// The role's key with `keyID`, if it lists one.
    public func key(_ keyID: MinisignKeyID) -> MinisignPublicKey? { keys.first { $0.keyID == keyID } }

    /// Whether the role lists `key` (its key id and key bytes).
    public func contains(_ key: MinisignPublicKey) -> Bool { keys.contains(key) }
}
