import Foundation
import ModelCastFormat

/// A key set version on local disk, on its way to a target: `…/N.json` as `keys rotate
/// --out` (or `keys create --out`) wrote it, with `N.json.minisig` and `N.json.sigs` beside
/// it once someone signed. `keys sign` adds root signatures to it; `keys push` uploads it.
///
/// Loading checks what the files alone can tell: the document parses, is canonical and is
/// named after its version; the signature files are what `keys` writes (each key once, the
/// `.minisig` one of the list). `checkSignatures(roots:)` then checks every signature
/// against the root keys that may sign it.
package struct PendingKeySet: Sendable {
    /// The document's path, as given.
    package let path: String
    /// The document and the signatures read beside it.
    package let signed: SignedKeySet

    /// The key set.
    package var keySet: KeySet { signed.keySet }
    /// `N.json.sigs` beside the document.
    package var sigsPath: String { path + ".sigs" }
    /// `N.json.minisig` beside the document.
    package var minisigPath: String { path + ".minisig" }

    /// Reads `path` and the signature files beside it (each optional). Refuses, naming the
    /// file: one that cannot be read (exit 3), a document that is no key set, is not
    /// canonical or is misnamed, and signature files `keys` would not have written.
    package static func load(path: String) throws -> PendingKeySet {
        let shown = Self.shown(path)
        let bytes = try readLocal(path, limit: KeySet.maxBytes, what: "a key set")
        let keySet: KeySet
        do { keySet = try KeySet(parsing: bytes) } catch let error as ManifestValueError {
            throw KeySetError.invalidDocument(path: shown, error: error)
        }
        guard PathText.lastComponent(path) == "\(keySet.version).json" else { throw PendingKeySetError.misnamed(path: shown, version: keySet.version) }
        guard bytes == keySet.canonicalBytes else { throw PendingKeySetError.notCanonical(path: shown) }

        var signatures: [MinisignSignature] = []
        if FileManager.default.fileExists(atPath: path + ".sigs") {
            let list = try readLocal(path + ".sigs", limit: MinisignSignatureList.maxBytes, what: "a signature list")
            signatures = try MinisignSignatureList(data: list, source: Self.shown(path + ".sigs")).signatures
        }
        for (index, signature) in signatures.enumerated() where signatures[..<index].contains(where: { $0.keyID == signature.keyID }) {
            throw PendingKeySetError.inconsistentSignatures(path: Self.shown(path + ".sigs"), detail: "key \(signature.keyID.hex) signed twice: a list holds each key's signature once")
        }
        var minisig: MinisignSignature?
        if FileManager.default.fileExists(atPath: path + ".minisig") {
            let shownMinisig = Self.shown(path + ".minisig")
            let single = try MinisignSignatureList(data: try readLocal(path + ".minisig", limit: MinisignSignatureList.maxBytes, what: "a signature"),
                                                   source: shownMinisig).signatures
            guard single.count == 1 else {
                throw PendingKeySetError.inconsistentSignatures(path: shownMinisig, detail: "holds \(single.count) signatures; a .minisig file holds one")
            }
            // The .minisig is one of the list's (the design's rule): what `minisign -V` checks
            // is a signature clients count too.
            guard signatures.contains(where: { Self.sameSignature($0, single[0]) }) else {
                throw PendingKeySetError.inconsistentSignatures(path: shownMinisig, detail: "is not one of the signatures in \(Self.shown(path + ".sigs"))")
            }
            minisig = single[0]
        } else if !signatures.isEmpty {
            throw PendingKeySetError.inconsistentSignatures(path: Self.shown(path + ".sigs"), detail: "has no \(Self.shown(path + ".minisig")) beside it (the first root key's signature, for minisign -V)")
        }
        return PendingKeySet(path: path, signed: SignedKeySet(keySet: keySet, bytes: bytes, signatures: signatures, minisig: minisig))
    }

    /// Refuses unless every signature read is by one of `roots` (the version's root keys
    /// and those of the one before it), verifies over the document and binds it (its
    /// version and expiry): a signature that counts for nothing means a wrong file, or a
    /// document changed after it was signed.
    package func checkSignatures(roots: [MinisignPublicKey]) throws {
        let message = [UInt8](signed.bytes)
        for signature in signed.signatures {
            guard roots.contains(where: { $0.keyID == signature.keyID }) else {
                throw PendingKeySetError.strangerSignature(path: Self.shown(sigsPath), keyID: signature.keyID, roots: roots.map(\.keyID))
            }
            let verified: VerifiedSignature
            do {
                verified = try signature.verify(message: message, publicKeys: roots, source: Self.shown(sigsPath), allowLegacy: false)
            } catch {
                throw PendingKeySetError.badSignature(path: Self.shown(sigsPath), keyID: signature.keyID, detail: "\(error)")
            }
            if let mismatch = KeySetComment.mismatch(verified.trustedComment, keySet: keySet) {
                throw PendingKeySetError.badSignature(path: Self.shown(sigsPath), keyID: signature.keyID, detail: mismatch)
            }
        }
    }

    /// Writes `signatures` (the list, in key-id order) and, when there is none yet,
    /// `minisig` as the `.minisig`, each file replaced atomically; the document is never
    /// written. The `.minisig` goes first and is removed again if the list cannot be
    /// written, so the files stay as they were or become the new set.
    package func write(signatures: [MinisignSignature], minisig: MinisignSignature) throws {
        let creates = signed.minisig == nil
        if creates { try writeFileAtomically(Data(minisig.fileContents.utf8), to: minisigPath) }
        do {
            try writeFileAtomically(Data(SignedKeySet.listText(signatures).utf8), to: sigsPath)
        } catch {
            // try?: the list's error is the one to report; the .minisig this run made goes.
            if creates { try? FileManager.default.removeItem(atPath: minisigPath) }
            throw error
        }
    }

    /// Two signatures that are the same signature (the untrusted comment aside, which
    /// nothing covers).
    static func sameSignature(_ a: MinisignSignature, _ b: MinisignSignature) -> Bool {
        a.keyID == b.keyID && a.signature == b.signature && a.trustedComment == b.trustedComment && a.globalSignature == b.globalSignature
    }

    /// A path as messages show it: quoted, control characters escaped, not cut short.
    package static func shown(_ path: String) -> String { quotedValue(path, limit: 4096) }

    /// The bytes of a local file, refusing one larger than `limit`; every error names the
    /// file as `shown(path)`.
    package static func readLocal(_ path: String, limit: Int, what: String) throws -> Data {
        do {
            return try readCapped(path, limit: limit, what: what, shown: shown(path))
        } catch ModelCastError.notFound {
            throw ModelCastError.notFound(path: shown(path))
        } catch ModelCastError.unreadable(_, let reason) {
            throw ModelCastError.unreadable(path: shown(path), reason: reason)
        }
    }
}
