import Foundation
internal import CLibCrypto

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

    /// MD5 (hex) of `length` bytes of the file at `path` from `offset`: a part's bytes, to
    /// recognise the part stored by its ETag.
    static func hex(ofFile path: String, offset: Int64, length: Int64) throws -> String {
        let file = try FileDescriptor.openForReading(path)
        let hasher = try MD5Hasher()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var position = offset
        let end = offset + length
        while position < end {
            let want = Int(min(Int64(buffer.count), end - position))
            let n = try file.read(at: position, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]))
            guard n > 0 else { throw ModelCastError.changedWhilePacking(path: path, expected: end, actual: position) }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            position += Int64(n)
        }
        return hasher.finalizeHex()
    }
}
