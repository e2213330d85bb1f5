import Foundation
import ModelCastFormat

/// One verified key set of a chain, with the root keys whose signatures counted for it.
package struct KeySetLink: Sendable {
    /// The key set.
    package let keySet: KeySet
    /// The document as served (what the signatures cover).
    package let bytes: Data
    /// The key ids of the root keys (of this set or the one before) whose signatures
    /// verify over the document and bind it, in signature order.
    package let signers: [MinisignKeyID]
}

/// Reads a target's key sets (`keys/N.json` and `keys/N.json.sigs`) through a fetch
/// function and verifies them with `KeySetChain`'s rules, so `verify` and `keys rotate`
/// walk a chain exactly as a client does.
package struct KeySetChainReader: Sendable {
    /// Fetches the object at a target-relative key, refusing one larger than the limit;
    /// nil when there is none.
    package typealias Fetch = @Sendable (_ key: String, _ limit: Int) async throws -> Data?

    package let fetch: Fetch

    package init(fetch: @escaping Fetch) { self.fetch = fetch }

    /// Libcrypto's Ed25519 check, as `KeySetChain` takes it.
    package static func ed25519(_ signature: [UInt8], _ message: [UInt8], _ key: [UInt8]) throws -> Bool {
        try Ed25519PublicKey(bytes: key).isValidSignature(signature, for: message)
    }

    /// Key set `version`'s bytes and signatures (its `.sigs`), or nil when the target has
    /// no `keys/N.json`. A document without its signature list is refused.
    package func read(version: Int64) async throws -> (bytes: Data, signatures: [MinisignSignature])? {
        let path = KeySet.path(version: version)
        guard let bytes = try await fetch(path, KeySet.maxBytes) else { return nil }
        guard let list = try await fetch(path + ".sigs", MinisignSignatureList.maxBytes) else {
            throw ModelCastError.targetState("\(path) has no signature list \(path).sigs: a key set is trusted only with its root signatures")
        }
        return (bytes, try MinisignSignatureList(data: list, source: path + ".sigs").signatures)
    }

    /// The target's first key set, `keys/1.json`, checked against its own root keys (at
    /// least their threshold signed it); nil when the target has none. What a team pins in
    /// its apps is this file: the check here is that it is whole and signed as it says,
    /// not where trust comes from.
    package func first() async throws -> KeySetLink? {
        guard let (bytes, signatures) = try await read(version: 1) else { return nil }
        let keySet: KeySet
        do { keySet = try KeySet(parsing: bytes) } catch let error as ManifestValueError {
            throw KeySetError.invalidDocument(path: KeySet.path(version: 1), error: error)
        }
        guard keySet.version == 1 else { throw KeySetError.versionGap(path: KeySet.path(version: 1), trusted: 0, found: keySet.version) }
        let signers = Self.signers(signatures, bytes: bytes, of: keySet, roots: keySet.root.keys)
        guard signers.count >= keySet.root.threshold else {
            throw KeySetError.thresholdNotMet(path: keySet.path, role: .root, keySetVersion: 1, threshold: keySet.root.threshold,
                                              signers: signers, problems: [])
        }
        return KeySetLink(keySet: keySet, bytes: bytes, signers: signers)
    }

    /// The key sets after `trusted`, each verified by `KeySetChain.step` from the one before,
    /// until the target has no next version or `maxVersions` were read (then the walk stops
    /// there and `truncated` is true, as a client keeps the verified prefix). A link that
    /// fails refuses the walk.
    package func walk(from trusted: KeySet, maxVersions: Int) async throws -> (links: [KeySetLink], truncated: Bool) {
        var links: [KeySetLink] = []
        var current = trusted
        while current.version < KeySet.maxNumber {
            guard links.count < maxVersions else { return (links, true) }
            guard let (bytes, signatures) = try await read(version: current.version + 1) else { break }
            let next = try KeySetChain.step(trusted: current, nextBytes: bytes, nextSignatures: signatures, ed25519: Self.ed25519)
            let signers = Self.signers(signatures, bytes: bytes, of: next, roots: current.root.keys + next.root.keys)
            links.append(KeySetLink(keySet: next, bytes: bytes, signers: signers))
            current = next
        }
        return (links, false)
    }

    /// The distinct keys among `roots` whose prehashed signatures verify over `bytes` and
    /// whose trusted comments bind `keySet`, in signature order.
    package static func signers(_ signatures: [MinisignSignature], bytes: Data, of keySet: KeySet, roots: [MinisignPublicKey]) -> [MinisignKeyID] {
        var found: [MinisignKeyID] = []
        for signature in signatures where !found.contains(signature.keyID) {
            guard let verified = try? signature.verify(message: [UInt8](bytes), publicKeys: roots, source: keySet.path, allowLegacy: false),
                  KeySetComment.mismatch(verified.trustedComment, keySet: keySet) == nil else { continue }
            found.append(verified.keyID)
        }
        return found
    }
}
