import Foundation
import ModelCastCore
import NIOConcurrencyHelpers

/// How the command line shows progress: a bar on standard error when it is a terminal,
/// nothing otherwise (pipelines and CI logs never see control characters).
let terminalProgress: ProgressFactory = { label, total in
    isatty(STDERR_FILENO) == 1 ? TerminalProgressBar(label: label, total: total) : nil
}

/// A one-line progress bar on standard error, drawn once the work has lasted more
/// than a second and at most ten times a second.
final class TerminalProgressBar: ProgressReporter {
    private struct State {
        var done: Int64 = 0
        var lastDraw = Date.distantPast
        var drawn = false
    }

    private let label: String
    private let total: Int64
    private let start = Date()
    private let state = NIOLockedValueBox(State())

    init(label: String, total: Int64) {
        self.label = label
        self.total = max(total, 1)
    }

    func advance(by bytes: Int) {
        state.withLockedValue { state in
            state.done += Int64(bytes)
            let now = Date()
            guard now.timeIntervalSince(start) > 1, now.timeIntervalSince(state.lastDraw) > 0.1 else { return }
            state.lastDraw = now
            let fraction = min(1, Double(state.done) / Double(total))
            let width = 30
            let filled = Int(fraction * Double(width))
            let rate = Double(state.done) / max(now.timeIntervalSince(start), 0.001)
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let line = "\r\(label) [\(bar)] \(Int(fraction * 100))% \(formatBytes(state.done))/\(formatBytes(total)) \(formatBytes(Int64(rate)))/s"
            FileHandle.standardError.write(Data(line.utf8))
            state.drawn = true
        }
    }

    func finish() {
        state.withLockedValue { state in
            if state.drawn {
                FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
                state.drawn = false
            }
        }
    }
}
