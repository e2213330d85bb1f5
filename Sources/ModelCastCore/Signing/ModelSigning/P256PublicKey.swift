import Foundation
internal import CLibCrypto

/// An ECDSA P-256 public key held by libcrypto, for verifying model signatures. Owns one
/// `EVP_PKEY` and frees it in `deinit`; never modified after creation.
// @unchecked: the EVP_PKEY is never modified after creation (see above).
package final class P256PublicKey: @unchecked Sendable, CustomStringConvertible {
    let pointer: OpaquePointer
    /// The key as a PEM SubjectPublicKeyInfo (`-----BEGIN PUBLIC KEY-----`, 64-column
    /// base64, uncompressed point): the bytes model_signing hashes for its key hint.
    package let pem: String

    /// Reads a PEM `PUBLIC KEY` (SubjectPublicKeyInfo) holding a P-256 key. `source` names
    /// the file for errors.
    package init(pem text: String, source: String) throws {
        switch PEMLabel(text: text) {
        case .publicKey?: break
        case nil: throw ModelCastError.modelSigningKey(source: source, reason: "not a PEM file (no -----BEGIN PUBLIC KEY----- line)")
        case let label? where label.isPrivateKey:
            throw ModelCastError.modelSigningKey(source: source, reason: "this is a private key (\(label.text)); give the public key (PEM PUBLIC KEY)")
        case let label?:
            throw ModelCastError.modelSigningKey(source: source, reason: "holds a PEM \(escapingControlCharacters(label.text)), not a PUBLIC KEY")
        }
        let bio = try MemoryBIO(copying: Array(text.utf8))
        guard let key = PEM_read_bio_PUBKEY_ex(bio.pointer, nil, nil, nil, nil, nil) else {
            throw ModelCastError.modelSigningKey(source: source, reason: "not a readable PEM public key (\(lastOpenSSLError()))")
        }
        do {
            try requireP256(key, source: source)
            pem = try Self.canonicalPEM(key)
            hint = try SHA256Hasher.digest(Array(pem.utf8)).hex
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        pointer = key
    }

    /// The SubjectPublicKeyInfo PEM with an uncompressed point, as model_signing writes it
    /// (a key read in compressed form is re-encoded).
    private static func canonicalPEM(_ key: OpaquePointer) throws -> String {
        guard EVP_PKEY_set_utf8_string_param(key, "point-format", "uncompressed") == 1 else {
            throw ModelCastError.crypto(operation: "EVP_PKEY_set_utf8_string_param(point-format)", message: lastOpenSSLError())
        }
        let out = try MemoryBIO()
        guard PEM_write_bio_PUBKEY(out.pointer, key) == 1 else {
            throw ModelCastError.crypto(operation: "PEM_write_bio_PUBKEY", message: lastOpenSSLError())
        }
        return try out.text()
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Reads the public key file at `path`.
    package static func load(path: String) throws -> P256PublicKey {
        try P256PublicKey(pem: try readKeyFile(path, kind: "a PEM key file"), source: path)
    }

    /// `verificationMaterial.publicKey.hint` of a model-signing bundle: the SHA-256 of
    /// `pem`, in lowercase hex.
    package let hint: String

    /// "P-256 public key (hint …)".
    package var description: String { "P-256 public key (hint \(hint))" }

    /// Whether `signature` (DER-encoded ECDSA) is a valid ECDSA P-256 / SHA-256 signature
    /// of `message` under this key. Throws only when libcrypto itself fails.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8]) throws -> Bool {
        guard !signature.isEmpty else { return false }
        // A negative answer is a malformed signature (bad DER): invalid too.
        return try DigestContext.verify(signature, of: message, key: pointer, digest: "SHA256", algorithm: "ECDSA P-256")
    }
}

/// Refuses any key but ECDSA on P-256 (prime256v1), naming what it is instead.
func requireP256(_ key: OpaquePointer, source: String) throws {
    guard EVP_PKEY_is_a(key, "EC") == 1 else {
        let type = EVP_PKEY_get0_type_name(key).map { String(cString: $0) } ?? "non-EC"
        throw ModelCastError.modelSigningKey(source: source, reason: "a \(type) key; model signing here uses ECDSA P-256 (prime256v1) keys")
    }
    var name = [CChar](repeating: 0, count: 80)
    var length = 0
    guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
        throw ModelCastError.modelSigningKey(source: source, reason: "an EC key whose curve cannot be read (\(lastOpenSSLError()))")
    }
    let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard curve == "prime256v1" else {
        throw ModelCastError.modelSigningKey(source: source, reason: "an EC key on curve \(curve); only P-256 (prime256v1) is supported")
    }
}
