import Foundation

/// Counts the distinct keys of one role whose signatures over a message verify and whose
/// trusted comments pass `bind`: the one rule behind a key set link and a threshold
/// manifest. A signature by a key the role does not list, one that does not verify, one
/// whose comment does not bind, and a second one by a key already counted do not count;
/// they are returned as problems (for the message), and never fail the count by
/// themselves: a threshold met by valid signatures is met.
struct KeySetThreshold {
    let role: KeySetRole

    struct Count {
        var signers: [VerifiedSignature] = []
        var problems: [KeySetSignatureProblem] = []
    }

    /// `counted`: what signatures over other bytes already counted (a manifest's inline
    /// signature is over its bytes without it), so a key counts once across both.
    func count(
        _ signatures: [MinisignSignature], message: [UInt8], source: String, allowLegacy: Bool,
        ed25519: (_ signature: [UInt8], _ message: [UInt8], _ publicKey: [UInt8]) throws -> Bool,
        bind: (VerifiedSignature) -> String?, counted: Count = Count()
    ) -> Count {
        var result = counted
        // BLAKE2b-512 of the message once, not once per signature.
        var prehashed: [UInt8]?
        let prehash: ([UInt8]) -> [UInt8] = { message in
            if let prehashed { return prehashed }
            let digest = BLAKE2b.hash(message, outputLength: 64)
            prehashed = digest
            return digest
        }
        for signature in signatures {
            guard role.key(signature.keyID) != nil else {
                result.problems.append(.init(keyID: signature.keyID, reason: .notARoleKey))
                continue
            }
            let verified: VerifiedSignature
            do {
                verified = try signature.verify(message: message, publicKeys: role.keys, source: source, allowLegacy: allowLegacy,
                                                prehash: prehash, ed25519: ed25519)
            } catch let error as FormatError {
                result.problems.append(.init(keyID: signature.keyID, reason: .invalid(error)))
                continue
            } catch {
                result.problems.append(.init(keyID: signature.keyID, reason: .invalid(.signatureMismatch(source: source, keyID: signature.keyID.hex))))
                continue
            }
            if let mismatch = bind(verified) {
                result.problems.append(.init(keyID: signature.keyID, reason: .commentMismatch(mismatch)))
                continue
            }
            // Keys are unique by id and by bytes within a role, so the key decides.
            guard !result.signers.contains(where: { $0.publicKey == verified.publicKey }) else {
                result.problems.append(.init(keyID: signature.keyID, reason: .repeatedKey))
                continue
            }
            result.signers.append(verified)
        }
        return result
    }
}
