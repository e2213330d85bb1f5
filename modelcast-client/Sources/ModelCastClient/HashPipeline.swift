import Crypto
import Dispatch
import Foundation

/// SHA-256 of a stream of byte batches, computed on a queue of its own while the caller goes
/// on: a download hashes one batch while it receives and writes the next, so a file arrives
/// as fast as the slower of the two rather than their sum (the hash is half a download's CPU
/// time). At most `depth` batches wait for the hash, so memory stays bounded and a caller
/// faster than the hash waits for it.
// @unchecked: `hasher` is touched only on `queue` (updates run there in order, and
// `finalize` reads it there once they are done).
final class HashPipeline: @unchecked Sendable {
    /// Batches handed over and not yet hashed, at most.
    static let depth = 2

    private let queue = DispatchQueue(label: "modelcast.hash")
    private let slots = DispatchSemaphore(value: HashPipeline.depth)
    private var hasher = SHA256()

    /// Hashes `bytes` after the batches before it; waits while `depth` batches are waiting.
    func update(_ bytes: Data) {
        slots.wait()
        queue.async {
            self.hasher.update(data: bytes)
            self.slots.signal()
        }
    }

    /// The digest of every batch handed over, once they are hashed.
    func finalize() -> SHA256.Digest {
        queue.sync { hasher.finalize() }
    }
}
