import Dispatch
import Foundation
import ModelCastCore

extension ProgressConsole {
    /// Standard error: a terminal when it is a tty and `TERM` is not `dumb`; its width from
    /// the tty, else `COLUMNS`, else 80; the monotonic clock. It lives in the executable:
    /// the core reports progress only through the console it is handed.
    static func standardError(environment: [String: String]) -> ProgressConsole {
        let tty = isatty(STDERR_FILENO) == 1 && environment["TERM"] != "dumb"
        let fallback = environment["COLUMNS"].flatMap(Int.init) ?? 80
        return ProgressConsole(
            isTerminal: tty,
            columns: { Platform.terminalColumns(STDERR_FILENO) ?? fallback },
            now: { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 },
            write: writeToStandardError)
    }
}

/// Writes `text` to standard error with write(2): progress must never fail a command, so
/// a closed or broken stderr only loses the text.
private func writeToStandardError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { Platform.write(STDERR_FILENO, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return }
        bytes = bytes.dropFirst(n)
    }
}
