import Foundation

extension MinisignSignature {
    /// Reads and parses a `.minisig` file; errors name `path`.
    package static func load(path: String) throws -> MinisignSignature {
        try MinisignSignature(fileContents: try readKeyFile(path), source: path)
    }

    /// Verifies with libcrypto's Ed25519 and BLAKE2b-512 (`verify(message:…:ed25519:)`).
    package func verify(
        message: [UInt8], publicKeys: [MinisignPublicKey], source: String = "signature", allowLegacy: Bool = true
    ) throws -> VerifiedSignature {
        try verify(message: message, publicKeys: publicKeys, source: source, allowLegacy: allowLegacy,
                   prehash: { try BLAKE2b512Hasher.digest($0) },
                   ed25519: { signature, message, key in try Ed25519PublicKey(bytes: key).isValidSignature(signature, for: message) })
    }

    /// Parses `signatureFile` (the `.minisig` text) and verifies it over `message`;
    /// see `verify(message:publicKeys:source:allowLegacy:)`.
    package static func verify(
        message: [UInt8], signatureFile: String, publicKeys: [MinisignPublicKey],
        source: String = "signature", allowLegacy: Bool = true
    ) throws -> VerifiedSignature {
        try MinisignSignature(fileContents: signatureFile, source: source)
            .verify(message: message, publicKeys: publicKeys, source: source, allowLegacy: allowLegacy)
    }
}

extension MinisignPublicKey {
    /// Reads and parses a public key file (or a file holding the bare base64 line).
    package static func load(path: String) throws -> MinisignPublicKey {
        try MinisignPublicKey(text: try readKeyFile(path), source: path)
    }
    /// Writes the public key file (mode 0644). Refuses to replace an existing file
    /// unless `force` is true.
    package func write(to path: String, force: Bool = false) throws {
        try writeKeyFile(path, contents: fileContents, mode: 0o644, force: force)
    }

}

extension MinisignKeyID {
    /// A new random key id from libcrypto's CSPRNG.
    package static func random() throws -> MinisignKeyID {
        MinisignKeyID(bytes: try randomBytes(8))!
    }

}
