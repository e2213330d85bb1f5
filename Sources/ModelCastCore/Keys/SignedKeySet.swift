import Foundation
import ModelCastFormat

/// A key set with the root signatures made over it so far: the document's canonical bytes,
/// and the three objects they become (`keys/N.json`, `keys/N.json.minisig` holding the
/// first signer's signature, so `minisign -V` works with one root key, and
/// `keys/N.json.sigs` holding every signature in key-id order). A pending version (`keys
/// rotate --out`) may carry fewer signatures than its thresholds, or none; only a proven
/// one (`KeySetIssue.prove`) goes on a target.
package struct SignedKeySet: Sendable {
    /// The document.
    package let keySet: KeySet
    /// `keys/N.json` as written and signed.
    package let bytes: Data
    /// Every root signature, each key once.
    package let signatures: [MinisignSignature]
    /// The signature `keys/N.json.minisig` holds (one of `signatures`); nil when unsigned.
    package let minisig: MinisignSignature?

    /// Signs `keySet`'s canonical bytes with each of `roots` (each key once; none makes an
    /// unsigned pending version), with the trusted comment `KeySetComment` binds. The
    /// first key's signature is the `.minisig`. Refuses a key given twice, naming it.
    package init(keySet: KeySet, roots: [MinisignSecretKey]) throws {
        let bytes = keySet.canonicalBytes
        var signatures: [MinisignSignature] = []
        for root in roots {
            guard !signatures.contains(where: { $0.keyID == root.keyID }) else {
                throw ModelCastError.usage("--sign-root names root key \(root.keyID.hex) twice: each key counts once")
            }
            signatures.append(try Self.sign(keySet, bytes: bytes, with: root))
        }
        self.init(keySet: keySet, bytes: bytes, signatures: signatures, minisig: signatures.first)
    }

    /// A key set whose signatures were made elsewhere (read from a pending version's files).
    package init(keySet: KeySet, bytes: Data, signatures: [MinisignSignature], minisig: MinisignSignature?) {
        self.keySet = keySet
        self.bytes = bytes
        self.signatures = signatures
        self.minisig = minisig
    }

    /// `root`'s signature over `bytes` (the document `keySet` was read from or written as),
    /// with the trusted comment that binds it to `keySet`'s version and expiry.
    package static func sign(_ keySet: KeySet, bytes: Data, with root: MinisignSecretKey) throws -> MinisignSignature {
        try root.signature(for: [UInt8](bytes), trustedComment: KeySetComment.text(for: keySet),
                           untrustedComment: "signature from modelcast root key \(root.keyID.hex)")
    }

    /// `keys/N.json`.
    package var documentKey: String { keySet.path }
    /// `keys/N.json.minisig`.
    package var minisigKey: String { keySet.path + ".minisig" }
    /// `keys/N.json.sigs`.
    package var sigsKey: String { keySet.path + ".sigs" }

    /// `keys/N.json.sigs`'s text: every signature, in key-id order (the order `keys sign`
    /// keeps, whoever signed first).
    package var sigsText: String { Self.listText(signatures) }

    /// A signature list's text in key-id order.
    package static func listText(_ signatures: [MinisignSignature]) -> String {
        signatures.sorted { $0.keyID.value < $1.keyID.value }.map(\.fileContents).joined()
    }

    /// The objects, signatures first: a reader that finds the document finds its
    /// signatures too. An unsigned pending version is the document alone.
    package var objects: [(key: String, data: Data, contentType: String)] {
        var objects: [(key: String, data: Data, contentType: String)] = []
        if let minisig { objects.append((minisigKey, Data(minisig.fileContents.utf8), "text/plain; charset=utf-8")) }
        if !signatures.isEmpty { objects.append((sigsKey, Data(sigsText.utf8), "text/plain; charset=utf-8")) }
        objects.append((documentKey, bytes, "application/json"))
        return objects
    }
}
