import Foundation
internal import CLibCrypto

/// One libcrypto memory `BIO`, freed in `deinit`: the channel PEM text goes in and out
/// of libcrypto through. Freeing a memory BIO clears its buffer (`BUF_MEM_free` uses
/// `OPENSSL_clear_free`), which matters for private keys.
final class MemoryBIO {
    let pointer: OpaquePointer

    /// An empty BIO to write into.
    init() throws {
        guard let method = BIO_s_mem(), let bio = BIO_new(method) else {
            throw ModelCastError.crypto(operation: "BIO_new(BIO_s_mem)", message: lastOpenSSLError())
        }
        pointer = bio
    }

    /// A BIO holding a copy of `bytes`, to read from.
    convenience init(copying bytes: [UInt8]) throws {
        try self.init()
        let written = bytes.withUnsafeBytes { raw in
            raw.isEmpty ? 0 : BIO_write(pointer, raw.baseAddress, Int32(raw.count))
        }
        guard written == Int32(bytes.count) else {
            throw ModelCastError.crypto(operation: "BIO_write", message: lastOpenSSLError())
        }
    }

    deinit { BIO_free(pointer) }

    /// Everything written into the BIO, as UTF-8 text (PEM is ASCII). The intermediate
    /// byte buffer is wiped.
    func text() throws -> String {
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { wipeSecret(&bytes); wipeSecret(&chunk) }
        while true {
            let n = chunk.withUnsafeMutableBytes { BIO_read(pointer, $0.baseAddress, Int32($0.count)) }
            if n <= 0 { break }
            bytes += chunk[0..<Int(n)]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
