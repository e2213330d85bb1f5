import Foundation
internal import CLibCrypto

/// scrypt cost parameters (N = 2^logN, r, p) as libsodium derives them.
///
/// A minisign secret key stores libsodium's `opslimit` and `memlimit`, not scrypt's
/// parameters: `crypto_pwhash_scryptsalsa208sha256` turns the pair into (N, r, p)
/// with a small rule of its own ("pickparams" in libsodium's
/// pwhash_scryptsalsa208sha256.c), reproduced here so a key written by one side
/// decrypts on the other.
struct ScryptParameters: Equatable {
    let logN: UInt32
    let r: UInt32
    let p: UInt32

    /// minisign's defaults, libsodium's "sensitive" limits: 2^25 operations and
    /// 1 GiB, which give N = 2^20, r = 8, p = 1.
    static let minisignOpsLimit: UInt64 = 33_554_432
    static let minisignMemLimit: UInt64 = 1_073_741_824

    /// The largest scrypt memory this code will allocate for a key file (4 GiB), so
    /// a crafted file cannot ask for more than a build machine has.
    static let maximumMemory: UInt64 = 1 << 32
    /// The largest parallelism accepted, for the same reason (minisign uses p = 1).
    static let maximumParallelism: UInt32 = 64

    /// Explicit parameters (N = 2^logN).
    init(logN: UInt32, r: UInt32, p: UInt32) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// The parameters libsodium picks for `opsLimit` and `memLimit`.
    init(opsLimit: UInt64, memLimit: UInt64) {
        let ops = max(opsLimit, 32_768)
        let r: UInt32 = 8
        let logN: UInt32
        let p: UInt32
        // Scan for the smallest N with N > maxN / 2, capped at 2^63 like libsodium.
        func pickLogN(_ maxN: UInt64) -> UInt32 {
            var n: UInt32 = 1
            while n < 63 {
                if (UInt64(1) << UInt64(n)) > maxN / 2 { break }
                n += 1
            }
            return n
        }
        if ops < memLimit / 32 {
            // CPU-bound: memory allows more than the operations budget uses.
            p = 1
            logN = pickLogN(ops / (UInt64(r) * 4))
        } else {
            // Memory-bound: N from the memory budget, the rest of the work as p.
            logN = pickLogN(memLimit / (UInt64(r) * 128))
            var maxrp = (ops / 4) / (UInt64(1) << UInt64(logN))
            if maxrp > 0x3fff_ffff { maxrp = 0x3fff_ffff }
            p = UInt32(maxrp) / r
        }
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// Bytes scrypt needs for these parameters, as libcrypto counts them
    /// (the V array, 128·r·(N+2), plus the B array, 128·r·p).
    var memoryNeeded: UInt64 {
        let n = UInt64(1) << UInt64(logN)
        return 128 * UInt64(r) * (n + 2) + 128 * UInt64(r) * UInt64(p)
    }

    /// Why these parameters are refused, or nil when they can be used.
    var refusal: String? {
        if logN >= 40 || memoryNeeded > Self.maximumMemory {
            return "its scrypt parameters (N=2^\(logN), r=\(r), p=\(p)) need more than 4 GiB of memory"
        }
        if p == 0 || p > Self.maximumParallelism {
            return "its scrypt parameters (N=2^\(logN), r=\(r), p=\(p)) are outside the supported range (p must be 1...\(Self.maximumParallelism))"
        }
        return nil
    }

    /// scrypt(password, salt) stretched to `length` bytes, computed by libcrypto.
    func derive(password: [UInt8], salt: [UInt8], length: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        // libcrypto refuses to allocate more than maxmem (32 MiB by default); give it
        // exactly what these parameters need plus a page of slack.
        let maxmem = memoryNeeded + 4096
        let derived = out.withUnsafeMutableBufferPointer { key in
            salt.withUnsafeBufferPointer { saltBuffer in
                // An empty password still needs a valid pointer.
                (password.isEmpty ? [0] : password).withUnsafeBufferPointer { pass in
                    pass.baseAddress!.withMemoryRebound(to: CChar.self, capacity: pass.count) { passPointer in
                        EVP_PBE_scrypt(
                            passPointer, password.count, saltBuffer.baseAddress, saltBuffer.count,
                            UInt64(1) << UInt64(logN), UInt64(r), UInt64(p), maxmem,
                            key.baseAddress, key.count)
                    }
                }
            }
        }
        guard derived == 1 else {
            wipeSecret(&out)
            throw ModelCastError.crypto(
                operation: "EVP_PBE_scrypt(N=2^\(logN), r=\(r), p=\(p))", message: lastOpenSSLError())
        }
        return out
    }
}
