import Foundation
import NIOConcurrencyHelpers

/// An upload's progress for a `ProgressReporter`: each part's bytes counted once, however
/// often the part is sent (a retried part starts again from its first byte).
final class UploadProgress: Sendable {
    private let reporter: (any ProgressReporter)?
    /// Bytes of each part counted so far.
    private let counted: NIOLockedValueBox<[Int64]>

    init(_ reporter: (any ProgressReporter)?, parts: Int) {
        self.reporter = reporter
        counted = NIOLockedValueBox(Array(repeating: 0, count: reporter == nil ? 0 : parts))
    }

    /// The first `bytes` bytes of part `index` have been sent.
    func partSent(_ index: Int, upTo bytes: Int64) {
        let added = count(index, upTo: bytes)
        if added > 0 { reporter?.advance(by: Int(added)) }
    }

    /// Part `index` (`bytes` long) was stored by an earlier run: done, but not sent now.
    func partStoredBefore(_ index: Int, bytes: Int64) {
        let added = count(index, upTo: bytes)
        if added > 0 { reporter?.alreadyDone(Int(added)) }
    }

    private func count(_ index: Int, upTo bytes: Int64) -> Int64 {
        guard reporter != nil else { return 0 }
        return counted.withLockedValue { counted -> Int64 in
            let added = max(0, bytes - counted[index])
            counted[index] += added
            return added
        }
    }
}
