import Foundation

/// Receives byte counts as work advances. Called from the digest thread.
public protocol ProgressReporter: AnyObject, Sendable {
    /// Adds `bytes` to the amount done.
    func advance(by bytes: Int)
    /// The work is over (successfully or not); clears any drawn bar.
    func finish()
}

/// A one-line progress bar on standard error. It draws only when standard error
/// is a terminal and the work has lasted more than a second, so pipelines and
/// logs never see control characters.
public final class TerminalProgressBar: ProgressReporter, @unchecked Sendable {
    private let label: String
    private let total: Int64
    private let lock = NSLock()
    private var done: Int64 = 0
    private let start = Date()
    private var lastDraw = Date.distantPast
    private var drawn = false
    private let enabled: Bool

    /// A bar for `total` bytes; `enabled` defaults to "standard error is a terminal".
    public init(label: String, total: Int64, enabled: Bool = isatty(STDERR_FILENO) == 1) {
        self.label = label
        self.total = max(total, 1)
        self.enabled = enabled
    }

    public func advance(by bytes: Int) {
        guard enabled else { return }
        lock.lock()
        defer { lock.unlock() }
        done += Int64(bytes)
        let now = Date()
        guard now.timeIntervalSince(start) > 1, now.timeIntervalSince(lastDraw) > 0.1 else { return }
        lastDraw = now
        let fraction = min(1, Double(done) / Double(total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let rate = Double(done) / max(now.timeIntervalSince(start), 0.001)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let line = "\r\(label) [\(bar)] \(Int(fraction * 100))% \(formatBytes(done))/\(formatBytes(total)) \(formatBytes(Int64(rate)))/s"
        FileHandle.standardError.write(Data(line.utf8))
        drawn = true
    }

    public func finish() {
        lock.lock()
        defer { lock.unlock() }
        if drawn {
            FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
            drawn = false
        }
    }
}

/// "1.5 GiB"-style text for a byte count.
public func formatBytes(_ bytes: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
}
