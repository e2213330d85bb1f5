import Foundation
internal import CLibCrypto

/// The SHA-256 of each consecutive `partSize`-byte part of a byte stream (the last
/// part may be shorter): what an S3 multipart upload sends as each part's checksum.
/// Computed in the same read as the stream's whole SHA-256, so the parts are proven
/// to be the pieces of the bytes the manifest names.
package struct PartDigests: Sendable, Equatable {
    /// Bytes in every part but the last.
    package let partSize: Int64
    /// One digest per part, in order.
    package let digests: [SHA256Digest]

    package init(partSize: Int64, digests: [SHA256Digest]) {
        self.partSize = partSize
        self.digests = digests
    }

    /// The byte range of part `index` (0-based) of a stream of `size` bytes.
    package func range(ofPart index: Int, size: Int64) -> (offset: Int64, length: Int64) {
        let offset = Int64(index) * partSize
        return (offset, min(partSize, size - offset))
    }

    /// True when these are the parts of a stream of `size` bytes cut at `partSize`.
    package func fit(size: Int64, partSize: Int64) -> Bool {
        self.partSize == partSize && Int64(digests.count) == (size + partSize - 1) / partSize
    }

    /// S3's composite checksum of a multipart object with these parts: the SHA-256 of
    /// the parts' digests, concatenated.
    package func composite() throws -> SHA256Digest {
        try SHA256Hasher.digest(digests.flatMap(\.bytes))
    }
}

/// Hashes a byte stream part by part (`PartDigests`); bytes arrive in any chunking.
final class PartHasher {
    private let partSize: Int64
    private var current: SHA256Hasher?
    private var inPart: Int64 = 0
    private var digests: [SHA256Digest] = []

    init(partSize: Int64) {
        precondition(partSize > 0)
        self.partSize = partSize
    }

    func update(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        while !rest.isEmpty {
            if current == nil { current = try SHA256Hasher() }
            let n = Int(min(Int64(rest.count), partSize - inPart))
            current!.update(UnsafeRawBufferPointer(rebasing: rest[0..<n]))
            inPart += Int64(n)
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            if inPart == partSize {
                digests.append(current!.finalize())
                current = nil
                inPart = 0
            }
        }
    }

    /// The digests; call once, after the last bytes.
    func finish() -> PartDigests {
        if let last = current, inPart > 0 { digests.append(last.finalize()) }
        current = nil
        return PartDigests(partSize: partSize, digests: digests)
    }
}

/// Streaming MD5 over libcrypto's EVP interface. Only for recognising a part already
/// uploaded by its ETag (the MD5 of its bytes at stores that do so): never as proof of
/// content, which is always a SHA-256.
final class MD5Hasher {
    private let digest: EVPDigest

    init() throws {
        digest = try EVPDigest(EVP_md5(), name: "MD5", size: 16)
    }

    func update(_ bytes: UnsafeRawBufferPointer) { digest.update(bytes) }

    /// Lowercase hex, 32 characters.
    func finalizeHex() -> String {
        digest.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
