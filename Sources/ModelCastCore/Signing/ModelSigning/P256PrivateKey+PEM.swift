import Foundation
internal import CLibCrypto

extension P256PrivateKey {
    /// PBKDF2-HMAC-SHA256 rounds for an encrypted key file (OWASP's 2023 figure; OpenSSL's
    /// own default, 2048, is far too few for a passphrase).
    static let pbkdf2Iterations: Int32 = 600_000

    /// Reads the private key file at `path`; `passphrase` unlocks an encrypted one.
    package static func load(path: String, passphrase: String?) throws -> P256PrivateKey {
        try P256PrivateKey(pem: try readKeyFile(path, kind: "a PEM key file"), passphrase: passphrase, source: path)
    }

    /// Whether the key file at `path` is passphrase-protected.
    package static func isEncrypted(path: String) throws -> Bool {
        try isEncrypted(pem: try readKeyFile(path, kind: "a PEM key file"), source: path)
    }

    /// The key as PEM PKCS#8: `PRIVATE KEY`, or with `passphrase` an `ENCRYPTED PRIVATE KEY`
    /// (PBES2: PBKDF2-HMAC-SHA256 with a 16-byte salt, AES-256-CBC), both of which model_signing reads
    /// (`--private_key`, `--password`). The caller keeps the text secret.
    func pkcs8PEM(passphrase: String?) throws -> String {
        let out = try MemoryBIO()
        guard let passphrase else {
            guard PEM_write_bio_PrivateKey(out.pointer, pointer, nil, nil, 0, nil, nil) == 1 else {
                throw ModelCastError.crypto(operation: "PEM_write_bio_PrivateKey", message: lastOpenSSLError())
            }
            return try out.text()
        }
        guard let info = EVP_PKEY2PKCS8(pointer) else {
            throw ModelCastError.crypto(operation: "EVP_PKEY2PKCS8", message: lastOpenSSLError())
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        guard let algorithm = PKCS5_pbe2_set_iv_ex(EVP_aes_256_cbc(), Self.pbkdf2Iterations, nil, 16, nil, NID_hmacWithSHA256, nil) else {
            throw ModelCastError.crypto(operation: "PKCS5_pbe2_set_iv_ex(AES-256-CBC, PBKDF2-HMAC-SHA256)", message: lastOpenSSLError())
        }
        // NUL-terminated so the pointer is valid even for an empty passphrase.
        var secret = Array(passphrase.utf8) + [0]
        defer { wipeSecret(&secret) }
        let encrypted = secret.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                PKCS8_set0_pbe_ex($0.baseAddress, Int32(buffer.count - 1), info, algorithm, nil, nil)
            }
        }
        guard let encrypted else {
            X509_ALGOR_free(algorithm)
            throw ModelCastError.crypto(operation: "PKCS8_set0_pbe_ex", message: lastOpenSSLError())
        }
        defer { X509_SIG_free(encrypted) }
        guard PEM_write_bio_PKCS8(out.pointer, encrypted) == 1 else {
            throw ModelCastError.crypto(operation: "PEM_write_bio_PKCS8", message: lastOpenSSLError())
        }
        return try out.text()
    }

    /// Writes the key file with mode 0600, encrypted when `passphrase` is given. Refuses to
    /// replace an existing file unless `force`; the file appears complete or not at all.
    package func write(to path: String, passphrase: String?, force: Bool = false) throws {
        try writeKeyFile(path, contents: try pkcs8PEM(passphrase: passphrase), mode: 0o600, force: force)
    }
}

extension P256PublicKey {
    /// Writes the PEM public key with mode 0644; never replaces a file unless `force`.
    package func write(to path: String, force: Bool = false) throws {
        try writeKeyFile(path, contents: pem, mode: 0o644, force: force)
    }
}
