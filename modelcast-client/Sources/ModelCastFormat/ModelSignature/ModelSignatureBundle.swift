import Foundation

/// An OpenSSF model signature made with a key: a Sigstore bundle (v0.3, JSON) holding a
/// DSSE envelope whose payload is the in-toto statement of the model's files, signed with
/// ECDSA P-256 / SHA-256, and the hint of the public key that verifies it. This is the file
/// `model_signing sign key` writes and `model_signing verify key` reads; see
/// docs/model-signing.md for every byte.
public struct ModelSignatureBundle: Sendable, Equatable {
    public static let mediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
    /// The largest bundle read: a statement lists about 150 bytes per file, base64 grows it
    /// by a third, so this allows well over 100,000 files.
    public static let maximumSize = 32 << 20
    /// The largest DER signature accepted (ECDSA P-256 needs at most 72 bytes).
    static let maximumSignatureSize = 256

    /// `verificationMaterial.publicKey.hint`: SHA-256 (hex) of the signer's PEM public
    /// key; nil when the bundle has none (model_signing then only warns).
    public let keyHint: String?
    /// `dsseEnvelope.payload`, decoded: the statement's JSON bytes, exactly as signed.
    public let payload: [UInt8]
    /// `dsseEnvelope.signatures[0].sig`, decoded: the DER ECDSA signature over the DSSE
    /// pre-authentication encoding of `payload`.
    public let signature: [UInt8]

    /// A bundle of a statement's payload and its signature (made by a signer).
    public init(keyHint: String?, payload: [UInt8], signature: [UInt8]) {
        self.keyHint = keyHint
        self.payload = payload
        self.signature = signature
    }

    /// The bundle file's bytes: compact JSON with model_signing's member order and no
    /// trailing newline, byte for byte the shape `model_signing sign key` writes.
    public var json: Data {
        let bundle = JSONValue.object([
            .init("mediaType", .string(Self.mediaType)),
            .init("verificationMaterial", .object([
                .init("publicKey", .object(keyHint.map { [.init("hint", .string($0))] } ?? [])),
                .init("tlogEntries", .array([])),
            ])),
            .init("dsseEnvelope", .object([
                .init("payload", .string(encodeBase64(payload))),
                .init("payloadType", .string(DSSE.inTotoPayloadType)),
                .init("signatures", .array([.object([.init("sig", .string(encodeBase64(signature))), .init("keyid", .string(""))])])),
            ])),
        ])
        return Data(compactJSON(bundle).utf8)
    }

    /// The bytes the signature covers: the DSSE pre-authentication encoding of `payload`.
    public var signedBytes: [UInt8] {
        DSSE.preAuthenticationEncoding(payloadType: DSSE.inTotoPayloadType, payload: payload)
    }

    /// Checks the signature with a public key — its hint (`keyHint`, the SHA-256 of its
    /// PEM) and `isValidSignature(signature, signedBytes)`, which the caller's crypto
    /// library answers — and returns the statement it signs. Refuses a bundle whose key
    /// hint names another key, a signature that does not verify, and a statement that is
    /// malformed or inconsistent. `source` names the bundle for errors.
    public func verifiedStatement(keyHint expected: String, source: String,
                                  isValidSignature: ([UInt8], [UInt8]) throws -> Bool) throws -> ModelSigningStatement {
        if let keyHint, keyHint != expected {
            throw FormatError.invalidModelSignature(
                source: source, reason: "it was made with another key: its key hint is \(quotedValue(keyHint)), the given public key's is \(expected)")
        }
        guard !signature.isEmpty, try isValidSignature(signature, signedBytes) else {
            throw FormatError.invalidModelSignature(
                source: source, reason: "the signature does not verify with the public key (hint \(expected)): the statement was altered or signed by another key")
        }
        do {
            return try ModelSigningStatement(payload: payload)
        } catch let error as ManifestValueError {
            throw FormatError.invalidModelSignature(source: source, reason: error.description)
        }
    }
}

/// `value` as compact JSON (no whitespace), members in the order given.
func compactJSON(_ value: JSONValue) -> String {
    switch value {
    case .array(let items):
        return "[" + items.map(compactJSON).joined(separator: ",") + "]"
    case .object(let members):
        return "{" + members.map { member in
            var key = ""
            JSONValue.appendQuoted(member.key, to: &key)
            return key + ":" + compactJSON(member.value)
        }.joined(separator: ",") + "}"
    default:
        return value.serialized(nestedAt: 0)
    }
}
