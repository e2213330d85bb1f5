import Foundation

/// A minisign Ed25519 secret key, loaded and ready to sign.
///
/// The file form is an `untrusted comment:` line and one base64 line of 158 bytes:
///
///     sig_alg "Ed" (2) ‖ kdf_alg (2) ‖ chk_alg "B2" (2) ‖ kdf_salt (32)
///     ‖ kdf_opslimit (8, LE) ‖ kdf_memlimit (8, LE)
///     ‖ key id (8) ‖ secret key (64 = seed ‖ public key) ‖ checksum (32)
///
/// kdf_alg "Sc" means the last 104 bytes are XORed with scrypt(passphrase, salt)
/// using the scrypt parameters libsodium derives from the two limits (see
/// `ScryptParameters`); kdf_alg 0x0000 means they are stored in the clear, as
/// `minisign -G -W` writes them. The checksum is BLAKE2b with a 32-byte output
/// over sig_alg ‖ key id ‖ secret key.
///
/// The secret itself lives in libcrypto's memory and is never part of a
/// description, a debug dump or an error message.
package struct MinisignSecretKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key id that signatures made with this key carry.
    package let keyID: MinisignKeyID
    /// The matching public key.
    package let publicKey: MinisignPublicKey
    let privateKey: Ed25519PrivateKey

    /// The environment variable CI jobs put a secret key in (its file contents).
    package static let environmentVariable = "MODELCAST_SIGNING_KEY"

    static let structureLength = 158
    static let kdfScrypt: [UInt8] = Array("Sc".utf8)
    static let kdfNone: [UInt8] = [0, 0]
    static let checksumAlgorithm: [UInt8] = Array("B2".utf8)
    /// minisign reads the comment line into a 1024-byte buffer with its prefix,
    /// line feed and NUL.
    static let maximumUntrustedCommentBytes = 1024 - untrustedCommentPrefix.utf8.count - 2

    init(keyID: MinisignKeyID, privateKey: Ed25519PrivateKey) throws {
        self.keyID = keyID
        self.privateKey = privateKey
        publicKey = try MinisignPublicKey(keyID: keyID, key: try privateKey.publicKey())
    }

    /// A new random key (random key id and seed).
    package static func generate() throws -> MinisignSecretKey {
        try MinisignSecretKey(keyID: try MinisignKeyID.random(), privateKey: try Ed25519PrivateKey.generate())
    }

    // MARK: Loading

    /// Parses and, if it is encrypted, decrypts a secret key from text: a secret
    /// key file's contents, or just its base64 line (handy for a CI secret such as
    /// `MODELCAST_SIGNING_KEY`). `passphrase` is needed only for an encrypted key
    /// and ignored for an unencrypted one. `source` names where the text came from
    /// (a path, "environment variable MODELCAST_SIGNING_KEY") in error messages.
    ///
    /// Throws `passphraseRequired` for an encrypted key without a passphrase,
    /// `wrongPassphrase` when the decrypted key fails its checksum, and
    /// `signingKey` for anything malformed.
    package init(text: String, passphrase: String?, source: String) throws {
        var envelope = try SecretKeyEnvelope(text: text, source: source)
        defer { envelope.wipe() }
        if envelope.isEncrypted {
            guard let passphrase else { throw ModelCastError.passphraseRequired(source: source) }
            try envelope.decrypt(passphrase: passphrase, source: source)
        } else {
            try envelope.checkUnencrypted(source: source)
        }
        let keyID = MinisignKeyID(bytes: envelope.keyID)!
        var seed = envelope.seed
        defer { wipeSecret(&seed) }
        let privateKey = try Ed25519PrivateKey(seed: seed)
        try self.init(keyID: keyID, privateKey: privateKey)
        // The stored public key half must be the one the seed gives; a mismatch is
        // a damaged file (the checksum does not catch a file built wrongly).
        guard constantTimeEqual(publicKey.key, envelope.storedPublicKey) else {
            throw FormatError.signingKey(source: source, reason: "corrupt key: the stored public key does not match the secret key (key id \(keyID.hex))")
        }
    }

    /// Reads a secret key file; see `init(text:passphrase:source:)`.
    package static func load(path: String, passphrase: String?) throws -> MinisignSecretKey {
        try MinisignSecretKey(text: try readKeyFile(path), passphrase: passphrase, source: path)
    }

    /// The secret key held in environment variable `name` (file contents or the
    /// base64 line), or nil when the variable is unset or empty.
    package static func fromEnvironment(
        _ name: String = environmentVariable, passphrase: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> MinisignSecretKey? {
        guard let value = environment[name], !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return nil }
        return try MinisignSecretKey(text: value, passphrase: passphrase, source: "environment variable \(name)")
    }

    /// Whether the secret key in `text` is encrypted, i.e. whether a passphrase must
    /// be asked for before loading it. Checks the format too.
    package static func isEncrypted(text: String, source: String) throws -> Bool {
        var envelope = try SecretKeyEnvelope(text: text, source: source)
        defer { envelope.wipe() }
        return envelope.isEncrypted
    }

    /// Whether the secret key file at `path` is encrypted.
    package static func isEncrypted(path: String) throws -> Bool {
        try isEncrypted(text: try readKeyFile(path), source: path)
    }

    // MARK: Storing

    /// The secret key file's text. With a passphrase the key is encrypted with
    /// minisign's default scrypt limits (opslimit 2^25, memlimit 1 GiB: N = 2^20,
    /// r = 8, p = 1, about 1 GiB and a few seconds); with nil it is stored
    /// unencrypted, as `minisign -G -W` does, and the default comment says so.
    package func fileContents(passphrase: String?, untrustedComment: String? = nil) throws -> String {
        if let passphrase, passphrase.isEmpty {
            throw ModelCastError.usage("an empty passphrase does not protect a secret key; pass none to write an unencrypted key")
        }
        let comment = untrustedComment ?? (passphrase == nil
            ? "minisign secret key \(keyID.hex) (UNENCRYPTED: store it only in a CI secret)"
            : "minisign encrypted secret key \(keyID.hex)")
        try checkComment(comment, kind: "untrusted comment", maximumBytes: Self.maximumUntrustedCommentBytes)

        var seed = try privateKey.seed()
        defer { wipeSecret(&seed) }
        var secret = keyID.bytes + seed + publicKey.key
        defer { wipeSecret(&secret) }
        let checksum = BLAKE2b.hash(MinisignPublicKey.algorithm + secret, outputLength: 32)
        var protected = secret + checksum
        defer { wipeSecret(&protected) }

        var header = MinisignPublicKey.algorithm
        if let passphrase {
            let salt = try randomBytes(32)
            let parameters = ScryptParameters(opsLimit: ScryptParameters.minisignOpsLimit, memLimit: ScryptParameters.minisignMemLimit)
            var password = Array(passphrase.utf8)
            defer { wipeSecret(&password) }
            var stream = try parameters.derive(password: password, salt: salt, length: protected.count)
            defer { wipeSecret(&stream) }
            for index in protected.indices { protected[index] ^= stream[index] }
            header += Self.kdfScrypt + Self.checksumAlgorithm + salt
            header += littleEndianBytes(ScryptParameters.minisignOpsLimit) + littleEndianBytes(ScryptParameters.minisignMemLimit)
        } else {
            // minisign -W leaves the salt and both limits zero.
            header += Self.kdfNone + Self.checksumAlgorithm + [UInt8](repeating: 0, count: 32 + 16)
        }
        var structure = header + protected
        defer { wipeSecret(&structure) }
        return "\(untrustedCommentPrefix)\(comment)\n\(encodeBase64(structure))\n"
    }

    /// Writes the secret key file with mode 0600, encrypted when `passphrase` is
    /// given (see `fileContents`). Refuses to replace an existing file unless
    /// `force` is true; the file appears complete or not at all.
    package func write(to path: String, passphrase: String?, force: Bool = false, untrustedComment: String? = nil) throws {
        try writeKeyFile(path, contents: try fileContents(passphrase: passphrase, untrustedComment: untrustedComment), mode: 0o600, force: force)
    }

    // MARK: Signing

    /// Signs `message` the way minisign 0.11 does by default (algorithm "ED":
    /// Ed25519 over the BLAKE2b-512 of the message) and signs the trusted comment
    /// with it. The trusted comment is covered by the signature; the untrusted one
    /// is not (nil gives minisign's "signature from minisign secret key"). Both
    /// must be single lines.
    package func signature(for message: [UInt8], trustedComment: String, untrustedComment: String? = nil) throws -> MinisignSignature {
        let untrusted = untrustedComment ?? "signature from minisign secret key"
        try checkComment(untrusted, kind: "untrusted comment", maximumBytes: MinisignSignature.maximumUntrustedCommentBytes)
        try checkComment(trustedComment, kind: "trusted comment", maximumBytes: MinisignSignature.maximumTrustedCommentBytes)
        let digest = try BLAKE2b512Hasher.digest(message)
        let signature = try privateKey.sign(digest)
        let globalSignature = try privateKey.sign(signature + Array(trustedComment.utf8))
        let result = MinisignSignature(
            algorithm: .prehashed, keyID: keyID, signature: signature,
            untrustedComment: untrusted, trustedComment: trustedComment, globalSignature: globalSignature)
        // Like minisign, check the result before handing it out: a fault here must
        // not publish a signature that no one can verify.
        _ = try result.verify(message: message, publicKeys: [publicKey], source: "new signature")
        return result
    }

    /// The `.minisig` file text for `message`; see `signature(for:trustedComment:untrustedComment:)`.
    package func sign(message: [UInt8], trustedComment: String, untrustedComment: String? = nil) throws -> String {
        try signature(for: message, trustedComment: trustedComment, untrustedComment: untrustedComment).fileContents
    }

    // MARK: Descriptions (never the secret)

    /// "minisign secret key <KEYID>".
    package var description: String { "minisign secret key \(keyID.hex)" }
    /// The same as `description`: nothing secret.
    package var debugDescription: String { description }
    /// Shows only the key id to `dump` and debuggers.
    package var customMirror: Mirror { Mirror(self, children: ["keyID": keyID.hex], displayStyle: .struct) }
}

/// A secret key file's 158 bytes, parsed but possibly still encrypted. Holds
/// secret material: callers wipe it when done.
struct SecretKeyEnvelope {
    private var bytes: [UInt8]

    init(text: String, source: String) throws {
        let lines = minisignLines(text.trimmingCharacters(in: .whitespacesAndNewlines))
        let line: Substring
        let location: String
        switch lines.count {
        case 1:
            line = lines[0]
            location = ""
        case 2:
            guard textAfterPrefix(untrustedCommentPrefix, in: lines[0]) != nil else {
                throw FormatError.signingKey(source: source, reason: "line 1 must start with \"\(untrustedCommentPrefix)\"")
            }
            line = lines[1]
            location = "line 2: "
        default:
            throw FormatError.signingKey(
                source: source,
                reason: "a secret key file has 2 lines (an untrusted comment and the base64 key), this one has \(lines.count)")
        }
        // Assigned directly, without a second binding, so the wipe below reaches
        // the only copy.
        bytes = decodeBase64(line) ?? []
        guard !bytes.isEmpty else {
            throw FormatError.signingKey(source: source, reason: "\(location)not valid base64")
        }
        guard bytes.count == MinisignSecretKey.structureLength else {
            let count = bytes.count
            wipe()
            throw FormatError.signingKey(
                source: source,
                reason: "\(location)a minisign secret key decodes to \(MinisignSecretKey.structureLength) bytes, this decodes to \(count)"
                    + (count == 42 ? " (it looks like a public key)" : ""))
        }
        let algorithm = bytes[0..<2], kdf = bytes[2..<4], checksum = bytes[4..<6]
        var problem: String?
        if Array(algorithm) != MinisignPublicKey.algorithm {
            problem = "unsupported signature algorithm \(describeAlgorithm(algorithm)) (expected 'Ed')"
        } else if Array(checksum) != MinisignSecretKey.checksumAlgorithm {
            problem = "unsupported checksum algorithm \(describeAlgorithm(checksum)) (expected 'B2')"
        } else if Array(kdf) != MinisignSecretKey.kdfScrypt && Array(kdf) != MinisignSecretKey.kdfNone {
            problem = "unsupported key derivation \(describeAlgorithm(kdf)) (expected 'Sc' or none)"
        }
        if let problem {
            wipe()
            throw FormatError.signingKey(source: source, reason: location + problem)
        }
    }

    var isEncrypted: Bool { Array(bytes[2..<4]) == MinisignSecretKey.kdfScrypt }
    private var salt: [UInt8] { Array(bytes[6..<38]) }
    private var opsLimit: UInt64 { littleEndianValue(bytes[38..<46]) }
    private var memLimit: UInt64 { littleEndianValue(bytes[46..<54]) }
    /// The protected part: key id ‖ secret key ‖ checksum.
    private static let protectedRange = 54..<158
    var keyID: [UInt8] { Array(bytes[54..<62]) }
    var seed: [UInt8] { Array(bytes[62..<94]) }
    var storedPublicKey: [UInt8] { Array(bytes[94..<126]) }
    private var storedChecksum: [UInt8] { Array(bytes[126..<158]) }

    /// Decrypts the protected part in place and checks its checksum.
    mutating func decrypt(passphrase: String, source: String) throws {
        let parameters = ScryptParameters(opsLimit: opsLimit, memLimit: memLimit)
        if let refusal = parameters.refusal {
            throw FormatError.signingKey(source: source, reason: "refusing to decrypt: \(refusal)")
        }
        var password = Array(passphrase.utf8)
        defer { wipeSecret(&password) }
        var stream = try parameters.derive(password: password, salt: salt, length: Self.protectedRange.count)
        defer { wipeSecret(&stream) }
        for (offset, index) in Self.protectedRange.enumerated() { bytes[index] ^= stream[offset] }
        guard checksumMatches() else { throw ModelCastError.wrongPassphrase(source: source) }
    }

    /// Checks an unencrypted key's checksum. `minisign -G -W` (0.11) writes an
    /// all-zero checksum for unencrypted keys and never checks it, so zeros are
    /// accepted; any other value must be right.
    func checkUnencrypted(source: String) throws {
        if storedChecksum.allSatisfy({ $0 == 0 }) { return }
        guard checksumMatches() else {
            throw FormatError.signingKey(source: source, reason: "corrupt key: checksum mismatch")
        }
    }

    private func checksumMatches() -> Bool {
        // Fed as two slices so no extra copy of the secret is made.
        var hasher = BLAKE2b(outputLength: 32)
        hasher.update(bytes[0..<2])
        hasher.update(bytes[54..<126])
        var computed = hasher.finalize()
        defer { wipeSecret(&computed) }
        return constantTimeEqual(computed, storedChecksum)
    }

    mutating func wipe() { wipeSecret(&bytes) }
}

func littleEndianBytes(_ value: UInt64) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian, Array.init)
}

func littleEndianValue(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
}
