import Foundation
internal import CLibCrypto

/// An Ed25519 private key held by libcrypto. Owns one `EVP_PKEY` and frees it in
/// `deinit` (libcrypto clears the private key bytes when it frees them). The key
/// is never modified after creation, which makes sharing it between threads safe:
/// each signature gets its own `EVP_MD_CTX`.
// @unchecked: the EVP_PKEY is never modified after creation (see above).
final class Ed25519PrivateKey: @unchecked Sendable {
    private let pointer: OpaquePointer

    /// The key whose 32-byte seed is `seed` (RFC 8032's private key).
    init(seed: [UInt8]) throws {
        precondition(seed.count == 32, "an Ed25519 seed is 32 bytes")
        guard let key = seed.withUnsafeBufferPointer({
            EVP_PKEY_new_raw_private_key_ex(nil, "ED25519", nil, $0.baseAddress, $0.count)
        }) else {
            throw ModelCastError.crypto(operation: "EVP_PKEY_new_raw_private_key(ED25519)", message: lastOpenSSLError())
        }
        pointer = key
    }

    /// A key from 32 bytes of libcrypto's CSPRNG.
    static func generate() throws -> Ed25519PrivateKey {
        var seed = try randomBytes(32)
        defer { wipeSecret(&seed) }
        return try Ed25519PrivateKey(seed: seed)
    }

    deinit { EVP_PKEY_free(pointer) }

    /// The 32-byte seed, for writing a key file. The caller wipes it after use.
    func seed() throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length = out.count
        let got = out.withUnsafeMutableBufferPointer { EVP_PKEY_get_raw_private_key(pointer, $0.baseAddress, &length) }
        guard got == 1, length == 32 else {
            throw ModelCastError.crypto(operation: "EVP_PKEY_get_raw_private_key(ED25519)", message: lastOpenSSLError())
        }
        return out
    }

    /// The 32-byte public key.
    func publicKey() throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length = out.count
        let got = out.withUnsafeMutableBufferPointer { EVP_PKEY_get_raw_public_key(pointer, $0.baseAddress, &length) }
        guard got == 1, length == 32 else {
            throw ModelCastError.crypto(operation: "EVP_PKEY_get_raw_public_key(ED25519)", message: lastOpenSSLError())
        }
        return out
    }

    /// The 64-byte Ed25519 signature (pure Ed25519, RFC 8032) of `message`.
    func sign(_ message: [UInt8]) throws -> [UInt8] {
        let context = try DigestContext()
        guard EVP_DigestSignInit_ex(context.pointer, nil, nil, nil, nil, pointer, nil) == 1 else {
            throw ModelCastError.crypto(operation: "EVP_DigestSignInit(ED25519)", message: lastOpenSSLError())
        }
        var signature = [UInt8](repeating: 0, count: 64)
        var length = signature.count
        // Ed25519 is one-shot in libcrypto: the whole message goes into one call.
        // An empty message still gets a valid pointer.
        let signed = signature.withUnsafeMutableBufferPointer { out in
            (message.isEmpty ? [0] : message).withUnsafeBufferPointer { input in
                EVP_DigestSign(context.pointer, out.baseAddress, &length, input.baseAddress, message.count)
            }
        }
        guard signed == 1, length == 64 else {
            throw ModelCastError.crypto(operation: "EVP_DigestSign(ED25519)", message: lastOpenSSLError())
        }
        return signature
    }
}

/// An Ed25519 public key held by libcrypto, for verifying. Owns one `EVP_PKEY`.
final class Ed25519PublicKey {
    private let pointer: OpaquePointer

    /// The key from its 32 raw bytes.
    init(bytes: [UInt8]) throws {
        precondition(bytes.count == 32, "an Ed25519 public key is 32 bytes")
        guard let key = bytes.withUnsafeBufferPointer({
            EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, $0.baseAddress, $0.count)
        }) else {
            throw ModelCastError.crypto(operation: "EVP_PKEY_new_raw_public_key(ED25519)", message: lastOpenSSLError())
        }
        pointer = key
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Whether `signature` is a valid Ed25519 signature of `message` under this key.
    /// Throws only when libcrypto itself fails, never for a bad signature.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8]) throws -> Bool {
        guard signature.count == 64 else { return false }
        // libcrypto rejects a non-canonical S as malformed: invalid too.
        return try DigestContext.verify(signature, of: message, key: pointer, digest: nil, algorithm: "ED25519")
    }
}

/// `count` bytes from libcrypto's CSPRNG.
func randomBytes(_ count: Int) throws -> [UInt8] {
    var out = [UInt8](repeating: 0, count: count)
    let filled = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
    guard filled == 1 else {
        throw ModelCastError.crypto(operation: "RAND_bytes", message: lastOpenSSLError())
    }
    return out
}

/// Overwrites secret bytes with zeros before the array is released. Best effort:
/// copies Swift made earlier (copy-on-write) are out of reach.
func wipeSecret(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { raw in
        guard let base = raw.baseAddress else { return }
        // OPENSSL_cleanse is a memset the optimiser may not remove.
        OPENSSL_cleanse(base, raw.count)
    }
}

/// Constant-time equality for secret-dependent comparisons (checksums, keys).
func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 } }
}
