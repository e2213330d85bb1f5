import Foundation

/// Receives byte counts as work advances: from the digest thread, or from several
/// threads at once for concurrent work (verify's downloads, a tree's files).
package protocol ProgressReporter: AnyObject, Sendable {
    /// Adds `bytes` to the amount done.
    func advance(by bytes: Int)
    /// Adds `bytes` done before this run (the stored parts of a resumed upload): they
    /// count toward the amount done, never toward the rate shown.
    func alreadyDone(_ bytes: Int)
    /// The work is over (successfully or not); clears any drawn bar.
    func finish()
}

/// Makes the reporter for one piece of work (`label`, `totalBytes`), or nil to report
/// nothing. The caller decides how progress looks (a terminal bar, CI log lines, JSON
/// events); the core only reports.
package typealias ProgressFactory = @Sendable (_ label: String, _ totalBytes: Int64) -> (any ProgressReporter)?

/// "1.5 GiB"-style text for a byte count.
package func formatBytes(_ bytes: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
}
