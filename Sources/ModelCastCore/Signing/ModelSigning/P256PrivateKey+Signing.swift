import Foundation
internal import CLibCrypto

extension P256PrivateKey {
    /// The ECDSA P-256 / SHA-256 signature of `message`, DER-encoded (an ASN.1 SEQUENCE
    /// of r and s, at most 72 bytes), as model_signing and Sigstore bundles carry it. The
    /// signature is checked with the public key before it is returned, so a fault here
    /// never produces a signature no one can verify.
    func sign(_ message: [UInt8]) throws -> [UInt8] {
        let context = try DigestContext()
        guard EVP_DigestSignInit_ex(context.pointer, nil, "SHA256", nil, nil, pointer, nil) == 1 else {
            throw ModelCastError.crypto(operation: "EVP_DigestSignInit(ECDSA P-256)", message: lastOpenSSLError())
        }
        let input = message.isEmpty ? [0] : message
        var length = 0
        guard input.withUnsafeBufferPointer({ EVP_DigestSign(context.pointer, nil, &length, $0.baseAddress, message.count) }) == 1 else {
            throw ModelCastError.crypto(operation: "EVP_DigestSign(ECDSA P-256, size)", message: lastOpenSSLError())
        }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = signature.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { EVP_DigestSign(context.pointer, out.baseAddress, &length, $0.baseAddress, message.count) }
        }
        guard signed == 1 else {
            throw ModelCastError.crypto(operation: "EVP_DigestSign(ECDSA P-256)", message: lastOpenSSLError())
        }
        signature.removeLast(signature.count - length)
        guard try publicKey.isValidSignature(signature, for: message) else {
            throw ModelCastError.crypto(operation: "EVP_DigestSign(ECDSA P-256)", message: "the new signature does not verify with the key's own public key")
        }
        return signature
    }
}
