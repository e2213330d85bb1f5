import Foundation

extension ModelSignatureBundle {
    /// Signs `statement` with `key` (ECDSA P-256 / SHA-256 over the DSSE encoding).
    package static func sign(_ statement: ModelSigningStatement, with key: P256PrivateKey) throws -> ModelSignatureBundle {
        let payload = statement.payload()
        let signed = DSSE.preAuthenticationEncoding(payloadType: DSSE.inTotoPayloadType, payload: payload)
        return ModelSignatureBundle(keyHint: key.publicKey.hint, payload: payload, signature: try key.sign(signed))
    }

    /// Checks the signature with `publicKey` (libcrypto) and returns the statement it signs.
    package func verifiedStatement(publicKey: P256PublicKey, source: String) throws -> ModelSigningStatement {
        try verifiedStatement(keyHint: publicKey.hint, source: source) { signature, message in
            try publicKey.isValidSignature(signature, for: message)
        }
    }
}
