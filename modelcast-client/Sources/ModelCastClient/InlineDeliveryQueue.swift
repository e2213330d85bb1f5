#if canImport(FoundationNetworking)
import Foundation
import ModelCastFormat

/// The delegate queue of `HTTPStream`'s session on Linux: it runs each callback at once,
/// on the thread that adds it, which in swift-corelibs-foundation is the network queue
/// (every session's work queue targets one serial queue), inside libcurl's callback:
/// every `delegateQueue.addOperation` there is made from it. So the body's next chunk is
/// read only after the previous one was handled: no backlog of chunks in memory however
/// fast the server sends (an ordinary queue took a process to 3.45 GiB in 6 s of an
/// endless body), and a handler that holds the queue stops libcurl reading
/// (`HTTPStream`: what stops a transfer on Linux).
///
/// A callback must therefore be short and never wait for the session
/// (`URLSessionTask.cancel()` and `suspend()` wait on that queue): `HTTPStream` cancels
/// from another queue.
// @unchecked: OperationQueue is thread-safe but not marked Sendable in swift-corelibs-foundation;
// this subclass adds no state.
final class InlineDeliveryQueue: OperationQueue, @unchecked Sendable {
    override func addOperation(_ block: @Sendable @escaping () -> Void) {
        block()
    }
}
#endif
