import Foundation
import ModelCastFormat

/// The time a request may take besides the session's idle timeout (`requestTimeout`, which
/// a trickle resets with every byte): `ClientConfiguration.minimumTransferRate` over each
/// `transferRateWindow` from the request's start, and `metadataDeadline` for metadata.
struct TransferBounds: Sendable {
    /// Bytes per second a body must average over each window; 0 turns the check off.
    var minimumRate: Int
    /// Seconds each average is taken over.
    var window: TimeInterval
    /// Seconds a metadata request may take from its start to its last byte.
    var metadataDeadline: TimeInterval

    init(minimumRate: Int, window: TimeInterval, metadataDeadline: TimeInterval) {
        self.minimumRate = minimumRate
        self.window = window
        self.metadataDeadline = metadataDeadline
    }

    init(_ configuration: ClientConfiguration) {
        self.init(minimumRate: configuration.minimumTransferRate, window: configuration.transferRateWindow,
                  metadataDeadline: configuration.metadataDeadline)
    }
}

/// Holds one request to its `TransferBounds` with timers (the body's chunks only add to a
/// count under the request's lock: no clock read, no system call per chunk). At the end of
/// each window it compares the bytes taken in that window with `minimumRate × window`, and
/// a metadata request is ended at its deadline; either way the request fails with
/// `ClientError.tooSlow` or `.deadlineExceeded`, which stops its transfer.
// @unchecked: DispatchSourceTimer is not Sendable; the timers are made in init, their
// handlers run on the watch queue, and `stop` only calls the thread-safe cancel().
final class TransferWatch: @unchecked Sendable {
    private let timers: [DispatchSourceTimer]

    /// Starts watching `request` now; `metadata` adds the deadline.
    init(_ request: PendingRequest, bounds: TransferBounds, metadata: Bool, queue: DispatchQueue) {
        var timers: [DispatchSourceTimer] = []
        if bounds.minimumRate > 0 {
            let window = bounds.window
            let needed = Double(bounds.minimumRate) * window
            var counted: Int64 = 0
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + window, repeating: window, leeway: .milliseconds(10))
            timer.setEventHandler { [weak request] in
                guard let request else { return }
                let taken = request.bytesTaken
                let inWindow = taken - counted
                counted = taken
                if Double(inWindow) < needed {
                    request.fail(ClientError.tooSlow(url: request.url, received: inWindow, seconds: window, minimumRate: bounds.minimumRate))
                }
            }
            timers.append(timer)
        }
        if metadata {
            let deadline = bounds.metadataDeadline
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + deadline, leeway: .milliseconds(10))
            timer.setEventHandler { [weak request] in
                guard let request else { return }
                request.fail(ClientError.deadlineExceeded(url: request.url, received: request.bytesTaken, deadline: deadline))
            }
            timers.append(timer)
        }
        self.timers = timers
        for timer in timers { timer.resume() }
    }

    /// Stops the timers (the request ended).
    func stop() {
        for timer in timers { timer.cancel() }
    }
}
