import Foundation

/// BLAKE2b (RFC 7693), unkeyed, with any digest length from 1 to 64 bytes.
///
/// minisign's secret-key checksum is libsodium's `crypto_generichash` with a
/// 32-byte output. That is not BLAKE2b-512 cut short: the output length is mixed
/// into the parameter block, so every length gives unrelated digests. OpenSSL 3.0
/// only offers the fixed 64-byte BLAKE2B-512 as a digest, hence this small
/// implementation. It is also the prehash of manifest signatures where no libcrypto
/// is at hand (`ModelCastClient`): manifests are at most a few MiB. It is written for
/// clarity, not speed; the server prehashes with libcrypto's `BLAKE2b512Hasher`.
public struct BLAKE2b {
    /// The eight 64-bit words of SHA-512's initial hash value (RFC 7693 §2.6).
    private static let iv: [UInt64] = [
        0x6a09_e667_f3bc_c908, 0xbb67_ae85_84ca_a73b, 0x3c6e_f372_fe94_f82b, 0xa54f_f53a_5f1d_36f1,
        0x510e_527f_ade6_82d1, 0x9b05_688c_2b3e_6c1f, 0x1f83_d9ab_fb41_bd6b, 0x5be0_cd19_137e_2179,
    ]

    /// The message word schedule for the twelve rounds (RFC 7693 §2.7); rounds 10
    /// and 11 reuse the first two rows.
    private static let sigma: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
        [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
        [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
        [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
        [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
        [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
        [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
        [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
        [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    ]

    private static let blockSize = 128

    /// The digest length in bytes, 1...64.
    public let outputLength: Int
    private var state: [UInt64]
    /// Bytes compressed so far (the 128-bit counter `t`; 64 bits are plenty here).
    private var counter: UInt64 = 0
    /// Input not yet compressed. Always kept until more input arrives, because the
    /// last block must be compressed with the final-block flag set.
    private var buffer: [UInt8] = []
    private var finished = false

    /// Starts an unkeyed BLAKE2b with an `outputLength`-byte digest (1...64).
    public init(outputLength: Int) {
        precondition((1...64).contains(outputLength), "BLAKE2b output length must be 1...64 bytes")
        self.outputLength = outputLength
        state = Self.iv
        // Parameter block word 0: digest length, key length 0, fanout 1, depth 1.
        state[0] ^= 0x0101_0000 ^ UInt64(outputLength)
        buffer.reserveCapacity(Self.blockSize)
    }

    /// Feeds bytes into the hash.
    public mutating func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        precondition(!finished, "BLAKE2b used after finalize()")
        for byte in bytes {
            if buffer.count == Self.blockSize {
                counter &+= UInt64(Self.blockSize)
                compress(buffer, isLast: false)
                buffer.removeAll(keepingCapacity: true)
            }
            buffer.append(byte)
        }
    }

    /// Finishes the hash and returns `outputLength` bytes.
    public mutating func finalize() -> [UInt8] {
        precondition(!finished, "BLAKE2b finalized twice")
        finished = true
        counter &+= UInt64(buffer.count)
        let last = buffer + [UInt8](repeating: 0, count: Self.blockSize - buffer.count)
        compress(last, isLast: true)
        // The buffer may hold secret material (a key being checksummed).
        for index in buffer.indices { buffer[index] = 0 }
        var out = [UInt8]()
        out.reserveCapacity(64)
        for word in state {
            withUnsafeBytes(of: word.littleEndian) { out.append(contentsOf: $0) }
        }
        return Array(out.prefix(outputLength))
    }

    /// The digest of `bytes` in one call.
    public static func hash<Bytes: Collection>(_ bytes: Bytes, outputLength: Int) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = BLAKE2b(outputLength: outputLength)
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// The compression function F (RFC 7693 §3.2) over one 128-byte block.
    private mutating func compress(_ block: [UInt8], isLast: Bool) {
        var m = [UInt64](repeating: 0, count: 16)
        for index in 0..<16 {
            var word: UInt64 = 0
            for byte in 0..<8 { word |= UInt64(block[index * 8 + byte]) << (8 * UInt64(byte)) }
            m[index] = word
        }
        var v = state + Self.iv
        v[12] ^= counter
        // v[13] would take the counter's high 64 bits, which stay zero.
        if isLast { v[14] = ~v[14] }

        func mix(_ a: Int, _ b: Int, _ c: Int, _ d: Int, _ x: UInt64, _ y: UInt64) {
            v[a] = v[a] &+ v[b] &+ x
            v[d] = rotateRight(v[d] ^ v[a], 32)
            v[c] = v[c] &+ v[d]
            v[b] = rotateRight(v[b] ^ v[c], 24)
            v[a] = v[a] &+ v[b] &+ y
            v[d] = rotateRight(v[d] ^ v[a], 16)
            v[c] = v[c] &+ v[d]
            v[b] = rotateRight(v[b] ^ v[c], 63)
        }

        for round in 0..<12 {
            let s = Self.sigma[round % 10]
            mix(0, 4, 8, 12, m[s[0]], m[s[1]])
            mix(1, 5, 9, 13, m[s[2]], m[s[3]])
            mix(2, 6, 10, 14, m[s[4]], m[s[5]])
            mix(3, 7, 11, 15, m[s[6]], m[s[7]])
            mix(0, 5, 10, 15, m[s[8]], m[s[9]])
            mix(1, 6, 11, 12, m[s[10]], m[s[11]])
            mix(2, 7, 8, 13, m[s[12]], m[s[13]])
            mix(3, 4, 9, 14, m[s[14]], m[s[15]])
        }
        for index in 0..<8 { state[index] ^= v[index] ^ v[index + 8] }
        for index in m.indices { m[index] = 0 }
    }
}

@inline(__always)
private func rotateRight(_ value: UInt64, _ count: UInt64) -> UInt64 {
    (value >> count) | (value << (64 - count))
}
