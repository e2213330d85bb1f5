import Foundation

/// A minisign signature (`.minisig` file):
///
///     untrusted comment: <text>
///     <base64 of algorithm (2) ‖ key id (8) ‖ Ed25519 signature (64)>
///     trusted comment: <text>
///     <base64 of the global signature (64)>
///
/// With algorithm "ED" (minisign 0.11's default) the signature is Ed25519 over the
/// BLAKE2b-512 of the message; with legacy "Ed" it is Ed25519 over the message
/// itself. The global signature is Ed25519 over signature ‖ trusted comment, which
/// is how the trusted comment is protected.
public struct MinisignSignature: Sendable, Equatable {
    /// How the message was signed.
    public enum Algorithm: String, Sendable {
        /// "ED": Ed25519 over BLAKE2b-512(message); what minisign 0.11 and this code write.
        case prehashed = "ED"
        /// "Ed": Ed25519 over the message itself (minisign before 0.8, or `-l`).
        case legacy = "Ed"
    }

    /// How the message was signed.
    public let algorithm: Algorithm
    /// The id of the key that made the signature.
    public let keyID: MinisignKeyID
    /// The 64-byte Ed25519 signature over the message (or its BLAKE2b-512).
    public let signature: [UInt8]
    /// The first line's comment; anyone can change it without detection.
    public let untrustedComment: String
    /// The third line's comment, protected by `globalSignature`.
    public let trustedComment: String
    /// The 64-byte Ed25519 signature over `signature` ‖ `trustedComment`.
    public let globalSignature: [UInt8]

    /// minisign reads the untrusted comment line into a 1024-byte buffer (prefix,
    /// comment, line feed, NUL).
    public static let maximumUntrustedCommentBytes = 1024 - untrustedCommentPrefix.utf8.count - 2
    /// minisign reads the trusted comment line into an 8192-byte buffer.
    public static let maximumTrustedCommentBytes = 8192 - trustedCommentPrefix.utf8.count - 2

    public init(algorithm: Algorithm, keyID: MinisignKeyID, signature: [UInt8], untrustedComment: String, trustedComment: String, globalSignature: [UInt8]) {
        self.algorithm = algorithm
        self.keyID = keyID
        self.signature = signature
        self.untrustedComment = untrustedComment
        self.trustedComment = trustedComment
        self.globalSignature = globalSignature
    }

    /// Parses a signature file's text. `source` names the file (a path or URL) in
    /// error messages, which also name the offending line.
    public init(fileContents: String, source: String = "signature") throws {
        let names = ["untrusted comment", "signature", "trusted comment", "trusted comment signature"]
        let lines = minisignLines(fileContents)
        func malformed(_ line: Int, _ problem: String) -> FormatError {
            .malformedSignature(source: source, reason: "line \(line) (\(names[line - 1])): \(problem)")
        }
        guard lines.count >= 4 else {
            if lines.isEmpty { throw FormatError.malformedSignature(source: source, reason: "the file is empty") }
            throw FormatError.malformedSignature(
                source: source,
                reason: "the file ends after line \(lines.count); line \(lines.count + 1) (\(names[lines.count])) is missing (a minisign signature has 4 lines)")
        }
        guard lines.count == 4 else {
            throw FormatError.malformedSignature(source: source, reason: "line 5: unexpected text after the trusted comment signature (a minisign signature has 4 lines)")
        }
        for (index, line) in lines.enumerated() where line.unicodeScalars.contains("\r") {
            throw malformed(index + 1, "contains a carriage return")
        }
        guard let untrusted = textAfterPrefix(untrustedCommentPrefix, in: lines[0]) else {
            throw malformed(1, "must start with \"\(untrustedCommentPrefix)\"")
        }
        guard let structure = decodeBase64(lines[1]) else { throw malformed(2, "not valid base64") }
        guard structure.count == 74 else {
            throw malformed(2, "decodes to \(structure.count) bytes; a signature line decodes to 74 (algorithm, key id, signature)")
        }
        guard let trusted = textAfterPrefix(trustedCommentPrefix, in: lines[2]) else {
            throw malformed(3, "must start with \"\(trustedCommentPrefix)\"")
        }
        guard let global = decodeBase64(lines[3]) else { throw malformed(4, "not valid base64") }
        guard global.count == 64 else {
            throw malformed(4, "decodes to \(global.count) bytes; a trusted comment signature decodes to 64")
        }
        guard let algorithm = Algorithm(rawValue: String(decoding: structure[0..<2], as: UTF8.self)),
              structure[0..<2].allSatisfy({ $0 < 0x80 }) else {
            throw FormatError.unsupportedSignatureAlgorithm(
                source: source, algorithm: "\(describeAlgorithm(structure[0..<2])) (minisign defines 'ED' and legacy 'Ed')")
        }
        self.algorithm = algorithm
        keyID = MinisignKeyID(bytes: Array(structure[2..<10]))!
        signature = Array(structure[10..<74])
        untrustedComment = untrusted
        trustedComment = trusted
        globalSignature = global
    }

    /// The signature file's text, exactly as minisign writes it.
    public var fileContents: String {
        let structure = Array(algorithm.rawValue.utf8) + keyID.bytes + signature
        return "\(untrustedCommentPrefix)\(untrustedComment)\n\(encodeBase64(structure))\n"
            + "\(trustedCommentPrefix)\(trustedComment)\n\(encodeBase64(globalSignature))\n"
    }

    /// Verifies this signature over `message` with the trusted key whose key id it
    /// names, then the trusted comment's signature, like `minisign -V`. `ed25519` checks
    /// one Ed25519 signature (signature, message, 32-byte public key): libcrypto's on the
    /// server, swift-crypto's in `ModelCastClient`; the rules around it are these, once.
    ///
    /// Throws `untrustedSigningKey` when no key in `publicKeys` has the signature's
    /// key id, `signatureMismatch` when the message (or the signature) was altered,
    /// `trustedCommentMismatch` when the trusted comment was, and
    /// `unsupportedSignatureAlgorithm` for a legacy signature when `allowLegacy` is
    /// false (as `minisign -V -H` refuses them).
    public func verify(
        message: [UInt8], publicKeys: [MinisignPublicKey], source: String = "signature", allowLegacy: Bool = true,
        prehash: ([UInt8]) throws -> [UInt8] = { BLAKE2b.hash($0, outputLength: 64) },
        ed25519: (_ signature: [UInt8], _ message: [UInt8], _ publicKey: [UInt8]) throws -> Bool
    ) throws -> VerifiedSignature {
        if algorithm == .legacy && !allowLegacy {
            throw FormatError.unsupportedSignatureAlgorithm(source: source, algorithm: "'Ed' (legacy, not prehashed), which is not accepted here")
        }
        let candidates = publicKeys.filter { $0.keyID == keyID }
        guard !candidates.isEmpty else {
            throw FormatError.untrustedSigningKey(source: source, keyID: keyID.hex, trustedKeyIDs: publicKeys.map(\.keyID.hex))
        }
        let signed = algorithm == .prehashed ? try prehash(message) : message
        // Two trusted keys could share a key id (8 random bytes); the signature
        // decides which of them made it.
        guard let publicKey = try candidates.first(where: { try ed25519(signature, signed, $0.key) }) else {
            throw FormatError.signatureMismatch(source: source, keyID: keyID.hex)
        }
        guard try ed25519(globalSignature, signature + Array(trustedComment.utf8), publicKey.key) else {
            throw FormatError.trustedCommentMismatch(source: source, keyID: keyID.hex)
        }
        return VerifiedSignature(
            publicKey: publicKey, algorithm: algorithm, trustedComment: trustedComment, untrustedComment: untrustedComment)
    }
}

/// What a successful verification established.
public struct VerifiedSignature: Sendable, Equatable {
    /// The trusted key that made the signature.
    public let publicKey: MinisignPublicKey
    /// How the message was signed.
    public let algorithm: MinisignSignature.Algorithm
    /// The trusted comment, now known to come from the key's owner.
    public let trustedComment: String
    /// The untrusted comment: not covered by any signature, for display only.
    public let untrustedComment: String

    /// The signing key's id.
    public var keyID: MinisignKeyID { publicKey.keyID }
}
