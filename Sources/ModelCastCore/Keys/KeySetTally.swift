import Foundation
import ModelCastFormat

/// How far a key set's root signatures go towards each threshold it must meet: the
/// previous version's root threshold (after version 1) and its own. What `keys rotate
/// --out`, `keys sign` and `keys push` report; the proof itself is `KeySetIssue.prove`.
package struct KeySetTally: Sendable, Equatable {
    /// One threshold: key set `keySetVersion`'s root keys, how many must sign, which did.
    package struct Count: Sendable, Equatable {
        package let keySetVersion: Int64
        package let threshold: Int
        /// The distinct root keys of that set whose signatures verify and bind the document.
        package let signers: [MinisignKeyID]
        /// Whether enough signed.
        package var met: Bool { signers.count >= threshold }
    }

    /// The version signed.
    package let version: Int64
    /// The previous version's threshold first (none for version 1), then its own.
    package let counts: [Count]

    /// Counts `signed`'s signatures against `previous`'s root threshold (nil for version 1)
    /// and its own, as `KeySetChainReader.signers` counts them.
    package init(_ signed: SignedKeySet, previous: KeySet?) {
        func count(_ set: KeySet) -> Count {
            Count(keySetVersion: set.version, threshold: set.root.threshold,
                  signers: KeySetChainReader.signers(signed.signatures, bytes: signed.bytes, of: signed.keySet, roots: set.root.keys))
        }
        version = signed.keySet.version
        counts = (previous.map { [count($0)] } ?? []) + [count(signed.keySet)]
    }

    /// True when every threshold is met: the version can go on a target.
    package var complete: Bool { counts.allSatisfy(\.met) }

    /// "signed by 1 of the 2 root keys key set 1 requires and 1 of 2 its own root keys
    /// require" (version 1: "signed by 1 of the 2 root keys it requires").
    package var summary: String {
        let own = counts[counts.count - 1]
        guard counts.count == 2 else { return "signed by \(own.signers.count) of the \(own.threshold) root keys it requires" }
        let previous = counts[0]
        return "signed by \(previous.signers.count) of the \(previous.threshold) root keys key set \(previous.keySetVersion) requires "
            + "and \(own.signers.count) of \(own.threshold) its own root keys require"
    }
}
