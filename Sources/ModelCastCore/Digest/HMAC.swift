import Foundation
internal import CLibCrypto

/// HMAC-SHA256 (RFC 2104) computed by libcrypto's `EVP_MAC` interface, the
/// OpenSSL 3 replacement for the deprecated `HMAC_*` functions.
package enum HMACSHA256 {
    /// The 32-byte HMAC-SHA256 of `message` under `key`. Keys of any length work,
    /// the empty key included; keys longer than the 64-byte block are hashed first,
    /// as RFC 2104 says.
    package static func authenticate(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
        try HMACSHA256Context().authenticate(key: key, message: message)
    }
}

/// libcrypto's HMAC implementation fetched from the default provider. Owns one
/// `EVP_MAC` (a reference-counted handle) and releases it in `deinit`.
final class MACAlgorithm {
    let pointer: OpaquePointer

    init() throws {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else {
            throw ModelCastError.crypto(operation: "EVP_MAC_fetch(HMAC)", message: lastOpenSSLError())
        }
        pointer = mac
    }

    deinit { EVP_MAC_free(pointer) }
}

/// One HMAC-SHA256 context. Owns one `EVP_MAC_CTX` and frees it in `deinit`;
/// each `authenticate` call re-keys it, so a SigV4 key derivation (five HMACs in
/// a chain) fetches the algorithm and allocates the context once.
final class HMACSHA256Context {
    private let algorithm: MACAlgorithm
    private let context: OpaquePointer

    init() throws {
        let algorithm = try MACAlgorithm()
        guard let context = EVP_MAC_CTX_new(algorithm.pointer) else {
            throw ModelCastError.crypto(operation: "EVP_MAC_CTX_new(HMAC)", message: lastOpenSSLError())
        }
        self.algorithm = algorithm
        self.context = context
    }

    deinit { EVP_MAC_CTX_free(context) }

    /// The 32-byte HMAC-SHA256 of `message` under `key`.
    func authenticate(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
        try rekey(key)
        if !message.isEmpty {
            let updated = message.withUnsafeBufferPointer { EVP_MAC_update(context, $0.baseAddress, $0.count) }
            guard updated == 1 else {
                throw ModelCastError.crypto(operation: "EVP_MAC_update(HMAC-SHA256)", message: lastOpenSSLError())
            }
        }
        var out = [UInt8](repeating: 0, count: 32)
        var length = 0
        let finished = out.withUnsafeMutableBufferPointer { EVP_MAC_final(context, $0.baseAddress, &length, $0.count) }
        guard finished == 1, length == 32 else {
            throw ModelCastError.crypto(operation: "EVP_MAC_final(HMAC-SHA256)", message: lastOpenSSLError())
        }
        return out
    }

    /// Starts a new MAC under `key` with SHA-256 as the digest.
    private func rekey(_ key: [UInt8]) throws {
        // The OSSL_PARAM array only points at its name and value, so both C
        // strings must stay alive until EVP_MAC_init has read them.
        var digestName = Array("SHA256".utf8CString)
        let parameterName = Array("digest".utf8CString)
        // A NULL key means "keep the previous key" to EVP_MAC_init, so the empty
        // key is passed as a valid pointer with length 0.
        let keyBytes = key.isEmpty ? [0] : key
        let initialised = digestName.withUnsafeMutableBufferPointer { digest in
            parameterName.withUnsafeBufferPointer { name in
                keyBytes.withUnsafeBufferPointer { keyBuffer in
                    var parameters = [
                        OSSL_PARAM_construct_utf8_string(name.baseAddress, digest.baseAddress, 0),
                        OSSL_PARAM_construct_end(),
                    ]
                    return parameters.withUnsafeMutableBufferPointer {
                        EVP_MAC_init(context, keyBuffer.baseAddress, key.count, $0.baseAddress)
                    }
                }
            }
        }
        guard initialised == 1 else {
            throw ModelCastError.crypto(operation: "EVP_MAC_init(HMAC-SHA256)", message: lastOpenSSLError())
        }
    }
}
