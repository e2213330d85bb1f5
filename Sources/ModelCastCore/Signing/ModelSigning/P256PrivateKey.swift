import Foundation
internal import CLibCrypto

/// An ECDSA P-256 private key held by libcrypto, for signing models the way OpenSSF
/// model_signing does (`model_signing sign key`). Owns one `EVP_PKEY` and frees it in
/// `deinit` (libcrypto clears the private scalar). Never modified after creation, so it
/// can be shared between threads: each signature gets its own `EVP_MD_CTX`. Its
/// descriptions show only the public key's hint, never the secret.
// @unchecked: the EVP_PKEY is never modified after creation (see above).
package final class P256PrivateKey: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let pointer: OpaquePointer
    /// The public half.
    package let publicKey: P256PublicKey

    private init(owning key: OpaquePointer, source: String) throws {
        do {
            try requireP256(key, source: source)
            let out = try MemoryBIO()
            guard PEM_write_bio_PUBKEY(out.pointer, key) == 1 else {
                throw ModelCastError.crypto(operation: "PEM_write_bio_PUBKEY", message: lastOpenSSLError())
            }
            publicKey = try P256PublicKey(pem: try out.text(), source: source)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        pointer = key
    }

    deinit { EVP_PKEY_free(pointer) }

    /// A new key from libcrypto's CSPRNG.
    package static func generate() throws -> P256PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw ModelCastError.crypto(operation: "EVP_PKEY_CTX_new_from_name(EC)", message: lastOpenSSLError())
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &key) == 1, let key else {
            throw ModelCastError.crypto(operation: "EVP_PKEY_generate(EC P-256)", message: lastOpenSSLError())
        }
        return try P256PrivateKey(owning: key, source: "new key")
    }

    /// Reads a PEM private key: PKCS#8 (`PRIVATE KEY`, or `ENCRYPTED PRIVATE KEY` with
    /// `passphrase`) or SEC 1 (`EC PRIVATE KEY`), the forms model_signing accepts. `source`
    /// names the file for errors; errors never contain key material or the passphrase.
    package convenience init(pem text: String, passphrase: String?, source: String) throws {
        let label = try Self.privateKeyLabel(text, source: source)
        if label.isEncrypted, passphrase == nil { throw ModelCastError.passphraseRequired(source: source) }
        let bio = try MemoryBIO(copying: Array(text.utf8))
        // The passphrase goes to libcrypto only through this callback, and only for an
        // encrypted key; with no passphrase the callback refuses, so libcrypto never
        // falls back to prompting on the terminal itself.
        var secret = Array((label.isEncrypted ? passphrase ?? "" : "").utf8) + [0]
        defer { wipeSecret(&secret) }
        let key = secret.withUnsafeMutableBytes { raw in
            PEM_read_bio_PrivateKey_ex(bio.pointer, nil, copyPassphrase, label.isEncrypted ? raw.baseAddress : nil, nil, nil)
        }
        guard let key else {
            let detail = lastOpenSSLError()
            throw ModelCastError.modelSigningKey(
                source: source,
                reason: label.isEncrypted ? "cannot decrypt the key: wrong passphrase or damaged file (\(detail))" : "not a readable PEM private key (\(detail))")
        }
        try self.init(owning: key, source: source)
    }

    /// Whether the PEM text is a passphrase-protected private key (so a caller asks for the
    /// passphrase only when one is needed).
    package static func isEncrypted(pem text: String, source: String) throws -> Bool {
        try privateKeyLabel(text, source: source).isEncrypted
    }

    private static func privateKeyLabel(_ text: String, source: String) throws -> PEMLabel {
        guard let label = PEMLabel(text: text) else {
            throw ModelCastError.modelSigningKey(source: source, reason: "not a PEM file (no -----BEGIN PRIVATE KEY----- line)")
        }
        if label == .publicKey {
            throw ModelCastError.modelSigningKey(source: source, reason: "this is a public key (PUBLIC KEY); signing needs the private key")
        }
        guard label.isPrivateKey else {
            throw ModelCastError.modelSigningKey(
                source: source,
                reason: "holds a PEM \(escapingControlCharacters(label.text)); expected PRIVATE KEY, ENCRYPTED PRIVATE KEY or EC PRIVATE KEY (ECDSA P-256)")
        }
        return label
    }

    /// "P-256 private key (public hint …)": nothing secret.
    package var description: String { "P-256 private key (public hint \(publicKey.hint))" }
    /// The same as `description`.
    package var debugDescription: String { description }
}

/// libcrypto's passphrase callback: copies the NUL-terminated passphrase `context` points
/// to (none: refuse) into libcrypto's buffer.
private let copyPassphrase: @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = { buffer, size, _, context in
    guard let buffer, let context else { return -1 }
    let length = strlen(context.assumingMemoryBound(to: CChar.self))
    guard length <= Int(size) else { return -1 }
    memcpy(buffer, context, length)
    return Int32(length)
}
