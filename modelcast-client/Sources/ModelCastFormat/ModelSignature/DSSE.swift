import Foundation

/// Dead Simple Signing Envelope (DSSE v1) pieces a model-signing bundle uses.
public enum DSSE {
    /// The payload type of an in-toto statement.
    public static let inTotoPayloadType = "application/vnd.in-toto+json"

    /// The pre-authentication encoding, the bytes a DSSE signature covers:
    /// `"DSSEv1" SP len(type) SP type SP len(payload) SP payload`, lengths in ASCII decimal
    /// bytes. Binding the type and both lengths means no other envelope signs the same bytes.
    public static func preAuthenticationEncoding(payloadType: String, payload: [UInt8]) -> [UInt8] {
        let type = Array(payloadType.utf8)
        return Array("DSSEv1 \(type.count) ".utf8) + type + Array(" \(payload.count) ".utf8) + payload
    }
}
