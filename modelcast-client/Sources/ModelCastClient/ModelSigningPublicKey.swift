import Crypto
import Foundation
import ModelCastFormat

/// The public key an app pins to check OpenSSF model signatures
/// (`ClientConfiguration.modelSigningPublicKey`): ECDSA P-256, the key
/// `modelcast keygen --model-signing` and `model_signing` use.
///
///     let key = try ModelSigningPublicKey(pem: String(contentsOf: keyURL, encoding: .utf8))
///     configuration.modelSigningPublicKey = key
public struct ModelSigningPublicKey: Sendable, Equatable, CustomStringConvertible {
    let key: P256.Signing.PublicKey
    /// The key as OpenSSL and python-cryptography write it: a PEM `PUBLIC KEY`
    /// (SubjectPublicKeyInfo, uncompressed point), base64 in 64-column lines, with a
    /// trailing newline. A key given with a compressed point is written uncompressed.
    public let canonicalPEM: String
    /// The key's hint, as a model signature bundle names its signer
    /// (`verificationMaterial.publicKey.hint`): the SHA-256 of `canonicalPEM`, lowercase
    /// hex. The same as `modelcast keygen --model-signing` prints for the key.
    public let hint: String

    /// Reads a PEM `PUBLIC KEY` holding an ECDSA P-256 key (uncompressed or compressed
    /// point). Throws `ClientError.invalidModelSigningKey` naming why anything else is
    /// refused: no PEM, a private key, another PEM block, another algorithm or curve, a
    /// point not on the curve.
    public init(pem text: String) throws {
        let der = try Self.publicKeyBlock(text)
        guard let info = SubjectPublicKeyInfo(der: der) else {
            throw ClientError.invalidModelSigningKey(reason: "the PEM PUBLIC KEY does not hold a DER SubjectPublicKeyInfo")
        }
        guard info.algorithm == SubjectPublicKeyInfo.ecPublicKey else {
            let name = SubjectPublicKeyInfo.algorithmNames[info.algorithm] ?? "algorithm \(info.algorithm)"
            throw ClientError.invalidModelSigningKey(reason: "the key's algorithm is \(name); model signatures use ECDSA P-256 (prime256v1) keys")
        }
        guard info.curve == SubjectPublicKeyInfo.prime256v1 else {
            let curve = info.curve.map { SubjectPublicKeyInfo.curveNames[$0] ?? $0 } ?? "(not a named curve)"
            throw ClientError.invalidModelSigningKey(reason: "the key is an EC key on curve \(curve); only P-256 (prime256v1) is supported")
        }
        key = try Self.point(info.key)
        canonicalPEM = Self.pem(SubjectPublicKeyInfo.p256UncompressedPrefix + Array(key.x963Representation))
        hint = hex(Array(SHA256.hash(data: Data(canonicalPEM.utf8))))
    }

    /// "P-256 public key (hint …)".
    public var description: String { "P-256 public key (hint \(hint))" }

    public static func == (lhs: ModelSigningPublicKey, rhs: ModelSigningPublicKey) -> Bool {
        lhs.canonicalPEM == rhs.canonicalPEM
    }

    /// Whether `signature` (DER) is a valid ECDSA P-256 / SHA-256 signature of `message`.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        let parsed: P256.Signing.ECDSASignature
        do { parsed = try P256.Signing.ECDSASignature(derRepresentation: signature) } catch {
            return false  // malformed DER is an invalid signature, as libcrypto answers
        }
        return key.isValidSignature(parsed, for: Data(message))
    }

    /// The DER of the first PEM block, which must be a `PUBLIC KEY`.
    private static func publicKeyBlock(_ text: String) throws -> [UInt8] {
        // `isNewline`: "\r\n" is one Character, so a file with Windows line ends splits too.
        let lines = text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") && $0.count > 16 }) else {
            throw ClientError.invalidModelSigningKey(reason: "not a PEM file (no -----BEGIN PUBLIC KEY----- line)")
        }
        let label = String(lines[begin].dropFirst("-----BEGIN ".count).dropLast(5))
        if label.hasSuffix("PRIVATE KEY") {
            throw ClientError.invalidModelSigningKey(reason: "this is a private key (\(quotedValue(label))); a device needs only the public key (PEM PUBLIC KEY)")
        }
        guard label == "PUBLIC KEY" else {
            throw ClientError.invalidModelSigningKey(reason: "holds a PEM \(quotedValue(label)), not a PUBLIC KEY")
        }
        guard let end = lines[begin...].firstIndex(of: "-----END PUBLIC KEY-----") else {
            throw ClientError.invalidModelSigningKey(reason: "the PEM PUBLIC KEY has no -----END PUBLIC KEY----- line")
        }
        guard let der = Data(base64Encoded: lines[(begin + 1)..<end].joined()), !der.isEmpty else {
            throw ClientError.invalidModelSigningKey(reason: "the PEM PUBLIC KEY's body is not base64")
        }
        return [UInt8](der)
    }

    /// The P-256 key of an EC point: uncompressed (`04 X Y`) or compressed (`02|03 X`).
    private static func point(_ bytes: [UInt8]) throws -> P256.Signing.PublicKey {
        let notOnCurve = ClientError.invalidModelSigningKey(reason: "its point is not on the P-256 curve")
        switch (bytes.first, bytes.count) {
        case (0x04, 65):
            do { return try P256.Signing.PublicKey(x963Representation: bytes) } catch { throw notOnCurve }
        case (0x02, 33), (0x03, 33):
            // CryptoKit reads compressed points from iOS 16 / macOS 13 on; swift-crypto always.
            guard #available(iOS 16, macOS 13, tvOS 16, watchOS 9, *) else {
                throw ClientError.invalidModelSigningKey(reason: "a compressed point needs iOS 16 or macOS 13; give the key with an uncompressed point")
            }
            do { return try P256.Signing.PublicKey(compressedRepresentation: bytes) } catch { throw notOnCurve }
        default:
            throw ClientError.invalidModelSigningKey(reason: "its point is neither an uncompressed (65 bytes) nor a compressed (33 bytes) P-256 point")
        }
    }

    /// A SubjectPublicKeyInfo as PEM: 64-column base64 lines, trailing newline.
    private static func pem(_ der: [UInt8]) -> String {
        let base64 = Array(Data(der).base64EncodedString())
        let lines = stride(from: 0, to: base64.count, by: 64).map { String(base64[$0..<min($0 + 64, base64.count)]) }
        return "-----BEGIN PUBLIC KEY-----\n" + lines.joined(separator: "\n") + "\n-----END PUBLIC KEY-----\n"
    }
}
