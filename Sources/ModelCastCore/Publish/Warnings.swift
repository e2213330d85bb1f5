import Foundation
import NIOConcurrencyHelpers

/// The warnings of one command that makes a release live (publish, rollback, resign,
/// promote, rollout): each is logged as it is found (`warning: …`, through the
/// publisher's log) and kept, in order, for the report. One collector per command,
/// handed down to the commit, instead of a list and a `warn` closure in each step.
final class Warnings: Sendable {
    private let items = NIOLockedValueBox<[String]>([])
    private let log: @Sendable (String) -> Void

    init(log: @escaping @Sendable (String) -> Void) {
        self.log = log
    }

    @Sendable func add(_ text: String) {
        items.withLockedValue { $0.append(text) }
        log("warning: " + text)
    }

    /// Every warning so far, in the order found.
    var all: [String] { items.withLockedValue { $0 } }
}

extension TargetWriter {
    /// A collector for one command's warnings, logging through this writer.
    func warningCollector() -> Warnings { Warnings(log: log) }
}
