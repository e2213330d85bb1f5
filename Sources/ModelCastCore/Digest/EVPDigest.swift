import Foundation
internal import CLibCrypto

/// One streaming libcrypto EVP digest (SHA-256, BLAKE2b-512, …). Owns one
/// `EVP_MD_CTX` and frees it in `deinit`; the public hashers wrap it.
final class EVPDigest {
    private let context: OpaquePointer
    private let name: String
    private let size: Int
    private var finished = false

    /// Starts a digest with `algorithm` (an `EVP_MD`), `size` bytes long.
    init(_ algorithm: OpaquePointer?, name: String, size: Int) throws {
        guard let context = EVP_MD_CTX_new() else {
            throw ModelCastError.crypto(operation: "EVP_MD_CTX_new", message: lastOpenSSLError())
        }
        guard EVP_DigestInit_ex(context, algorithm, nil) == 1 else {
            EVP_MD_CTX_free(context)
            throw ModelCastError.crypto(operation: "EVP_DigestInit_ex(\(name))", message: lastOpenSSLError())
        }
        self.context = context
        self.name = name
        self.size = size
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0, let base = bytes.baseAddress else { return }
        precondition(!finished, "\(name) digest used after finalize()")
        // EVP_DigestUpdate only fails for a context that was never initialised.
        _ = EVP_DigestUpdate(context, base, bytes.count)
    }

    func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }

    func finalize() -> [UInt8] {
        precondition(!finished, "\(name) digest finalized twice")
        finished = true
        var out = [UInt8](repeating: 0, count: size)
        var length: UInt32 = 0
        _ = out.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        return out
    }
}
