import Foundation
import ModelCastFormat

/// `keys push`: uploads a pending key set version (signed offline with `keys rotate --out`
/// and `keys sign`) to a target, only once a client that trusts the target's newest key
/// set would accept it: the next version number, the threshold of the newest set's root
/// keys and of its own, every signature by one of those keys and bound to it, not expired.
/// The upload is create-only, the signatures before the document, and undone on failure
/// (`KeySetWriter`).
package enum KeySetPush {
    /// What was pushed, and the version it follows (nil for key set 1).
    package struct Outcome: Sendable {
        package let signed: SignedKeySet
        package let previous: KeySet?
    }

    /// Proves `pending` against `storage`'s key sets (walked from `keys/1.json` to the
    /// newest, the whole chain: it is the engineer's own target) at `now`, then writes it.
    /// Throws, writing nothing, naming what is missing.
    package static func push(_ pending: PendingKeySet, to storage: any Storage, now: Date) async throws -> Outcome {
        let reader = KeySetChainReader(fetch: { try await storage.get($0, limit: $1) })
        var newest: KeySet?
        if let first = try await reader.first() {
            newest = try await reader.walk(from: first.keySet, maxVersions: Int.max).links.last?.keySet ?? first.keySet
        }
        let version = pending.keySet.version
        let expected = (newest?.version ?? 0) + 1
        guard version == expected else {
            let shown = PendingKeySet.shown(pending.path)
            guard let newest else {
                throw ModelCastError.targetState("\(storage.location) has no key set: the first one goes on it as version 1 (keys/1.json), and \(shown) is version \(version)")
            }
            throw ModelCastError.targetState("\(storage.location)'s newest key set is \(newest.version); \(shown) is version \(version): a key set goes on a target only as the next version, so it must be \(expected)")
        }
        guard !pending.signed.signatures.isEmpty else {
            throw PendingKeySetError.unsigned(path: PendingKeySet.shown(pending.path), sigsPath: PendingKeySet.shown(pending.sigsPath))
        }
        try KeySetIssue.prove(pending.signed, after: newest)
        // Beyond the thresholds: a signature that counts for nothing is not uploaded beside
        // the ones that do (a wrong file, or a document changed after someone signed).
        try pending.checkSignatures(roots: KeySetIssue.roots(of: pending.keySet, previous: newest))
        // An expired newest key set stops every device that reaches it.
        try pending.keySet.checkFresh(at: now)
        try await KeySetWriter.write(pending.signed, to: storage)
        return Outcome(signed: pending.signed, previous: newest)
    }
}
