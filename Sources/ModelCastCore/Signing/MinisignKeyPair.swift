import Foundation

/// A new minisign key pair, for `keygen`.
package struct MinisignKeyPair: Sendable {
    /// The secret half; sign with it, store it with `MinisignSecretKey.write`.
    package let secretKey: MinisignSecretKey
    /// The public half, to publish.
    package var publicKey: MinisignPublicKey { secretKey.publicKey }

    /// Wraps an existing secret key.
    package init(secretKey: MinisignSecretKey) {
        self.secretKey = secretKey
    }

    /// A new key pair: a random 8-byte key id and a random Ed25519 seed, both from
    /// libcrypto's CSPRNG.
    package static func generate() throws -> MinisignKeyPair {
        MinisignKeyPair(secretKey: try MinisignSecretKey.generate())
    }

    /// Writes both files like `minisign -G`: the secret key (mode 0600, encrypted
    /// when `passphrase` is given) and the public key (0644). Without `force`,
    /// refuses before writing anything if either file exists.
    package func write(publicKeyPath: String, secretKeyPath: String, passphrase: String?, force: Bool = false) throws {
        if !force {
            for path in [secretKeyPath, publicKeyPath] {
                var info = stat()
                if lstat(path, &info) == 0 {
                    throw keyFileExistsError(path)
                }
            }
        }
        try secretKey.write(to: secretKeyPath, passphrase: passphrase, force: force)
        try publicKey.write(to: publicKeyPath, force: force)
    }
}
