import Foundation
internal import CLibCrypto

/// Streaming BLAKE2b-512 over libcrypto's EVP interface: the prehash of
/// minisign's default ("ED") signatures. One instance owns one `EVP_MD_CTX`.
package final class BLAKE2b512Hasher {
    private let digest: EVPDigest

    /// Starts a new digest.
    package init() throws {
        digest = try EVPDigest(EVP_blake2b512(), name: "BLAKE2b-512", size: 64)
    }

    /// Feeds bytes into the digest.
    package func update(_ bytes: UnsafeRawBufferPointer) { digest.update(bytes) }

    /// Feeds the bytes of a collection into the digest.
    package func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 { digest.update(bytes) }

    /// Finishes the digest (64 bytes); the hasher cannot be used afterwards.
    package func finalize() -> [UInt8] { digest.finalize() }

    /// The BLAKE2b-512 digest of a byte string in one call.
    package static func digest<Bytes: Collection>(_ bytes: Bytes) throws -> [UInt8] where Bytes.Element == UInt8 {
        let hasher = try BLAKE2b512Hasher()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
