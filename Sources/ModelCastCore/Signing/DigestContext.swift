import Foundation
internal import CLibCrypto

/// One `EVP_MD_CTX`, freed in `deinit` (Ed25519 and ECDSA signatures).
final class DigestContext {
    let pointer: OpaquePointer

    init() throws {
        guard let context = EVP_MD_CTX_new() else {
            throw ModelCastError.crypto(operation: "EVP_MD_CTX_new", message: lastOpenSSLError())
        }
        pointer = context
    }

    deinit { EVP_MD_CTX_free(pointer) }

    /// Whether `signature` is a valid signature of `message` under the public `key`
    /// (`digest`: the hash the algorithm signs with, nil for Ed25519; `algorithm` names it
    /// in errors). A wrong or malformed signature is false, its libcrypto error dropped so it
    /// does not leak into a later report; throws only when libcrypto itself fails.
    static func verify(_ signature: [UInt8], of message: [UInt8], key: OpaquePointer, digest: String?, algorithm: String) throws -> Bool {
        let context = try DigestContext()
        guard EVP_DigestVerifyInit_ex(context.pointer, nil, digest, nil, nil, key, nil) == 1 else {
            throw ModelCastError.crypto(operation: "EVP_DigestVerifyInit(\(algorithm))", message: lastOpenSSLError())
        }
        let result = signature.withUnsafeBufferPointer { sig in
            (message.isEmpty ? [0] : message).withUnsafeBufferPointer { input in
                EVP_DigestVerify(context.pointer, sig.baseAddress, sig.count, input.baseAddress, message.count)
            }
        }
        ERR_clear_error()
        return result == 1
    }
}
