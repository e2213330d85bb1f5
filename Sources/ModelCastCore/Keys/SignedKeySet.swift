import Foundation
import ModelCastFormat

/// A key set ready to publish: the document's canonical bytes and the root signatures over
/// them, with the three objects they become on a target (`keys/N.json`, `keys/N.json.minisig`
/// holding the first signer's signature, so `minisign -V` works with one root key, and
/// `keys/N.json.sigs` holding every signature in key-id order).
package struct SignedKeySet: Sendable {
    /// The document.
    package let keySet: KeySet
    /// `keys/N.json` as written and signed.
    package let bytes: Data
    /// Every root signature, in the order the keys were given (the first goes in `.minisig`).
    package let signatures: [MinisignSignature]

    /// Signs `keySet`'s canonical bytes with each of `roots` (each key once), with the
    /// trusted comment `KeySetComment` binds. Refuses a key that is not one of the key
    /// set's root keys, and one given twice, naming it.
    package init(keySet: KeySet, roots: [MinisignSecretKey]) throws {
        guard !roots.isEmpty else { throw ModelCastError.usage("no root key to sign \(keySet.path) with: give --sign-root KEYFILE") }
        let bytes = keySet.canonicalBytes
        let comment = KeySetComment.text(for: keySet)
        var signatures: [MinisignSignature] = []
        for root in roots {
            guard !signatures.contains(where: { $0.keyID == root.keyID }) else {
                throw ModelCastError.usage("--sign-root names root key \(root.keyID.hex) twice: each key counts once")
            }
            signatures.append(try root.signature(for: [UInt8](bytes), trustedComment: comment,
                                                 untrustedComment: "signature from modelcast root key \(root.keyID.hex)"))
        }
        self.keySet = keySet
        self.bytes = bytes
        self.signatures = signatures
    }

    /// `keys/N.json`.
    package var documentKey: String { keySet.path }
    /// `keys/N.json.minisig`.
    package var minisigKey: String { keySet.path + ".minisig" }
    /// `keys/N.json.sigs`.
    package var sigsKey: String { keySet.path + ".sigs" }

    /// `keys/N.json.minisig`'s text: the first signer's signature.
    package var minisigText: String { signatures[0].fileContents }

    /// `keys/N.json.sigs`'s text: every signature, in key-id order.
    package var sigsText: String { signatures.sorted { $0.keyID.value < $1.keyID.value }.map(\.fileContents).joined() }

    /// The three objects, signatures first: a reader that finds the document finds its
    /// signatures too.
    package var objects: [(key: String, data: Data, contentType: String)] {
        [(minisigKey, Data(minisigText.utf8), "text/plain; charset=utf-8"),
         (sigsKey, Data(sigsText.utf8), "text/plain; charset=utf-8"),
         (documentKey, bytes, "application/json")]
    }
}
