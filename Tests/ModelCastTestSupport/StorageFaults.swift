import Foundation
// S3Error's memberwise initializer: an injected failure is the error S3Storage throws once its retries are spent.
@testable import ModelCastCore

/// The faults one `InMemoryStorage` handle injects: rules matched against each operation
/// (its kind and key), a kill after a number of writes, and hooks that let a second writer
/// act between two operations. Rules apply in the order they were added; the first that
/// matches (and has uses left) decides.
package final class StorageFaults: @unchecked Sendable {
    // @unchecked: `rules`, `writes` and `killed` are read and written under `lock` only.

    /// What a matching rule does.
    package enum Action: Sendable {
        /// The operation is not performed; `error` is thrown.
        case fail(any Error)
        /// The operation is performed, its answer lost; the client's retry is what the
        /// caller gets (S3Storage retries every request): a `putIfAbsent` that created the
        /// key answers `.unchanged`, a conditional `replace` fails its precondition.
        case loseAnswer
        /// Runs `hook` before the operation (a second writer interleaving), then performs it.
        case before(@Sendable () async throws -> Void)
        /// Performs the operation, then runs `hook` before answering.
        case after(@Sendable () async throws -> Void)
    }

    struct Rule {
        let operation: StorageOperation?
        let key: (String) -> Bool
        let skip: Int
        let times: Int
        let action: Action
        var seen = 0
    }

    private let lock = NSLock()
    private var rules: [Rule] = []
    private var writes = 0
    private var killAfter: Int?
    private var killed = false

    package init() {}

    /// Adds a rule: operations of `operation` (nil: any) on a key containing `keyContaining`
    /// ("" matches every key); the first `skip` that match pass untouched, the next `times`
    /// get `action`.
    package func add(_ operation: StorageOperation?, keyContaining part: String = "", skip: Int = 0, times: Int = 1, _ action: Action) {
        lock.withLock { rules.append(Rule(operation: operation, key: { part.isEmpty || $0.contains(part) }, skip: skip, times: times, action: action)) }
    }

    /// Adds a rule for the key `key` exactly.
    package func add(_ operation: StorageOperation?, key exact: String, skip: Int = 0, times: Int = 1, _ action: Action) {
        lock.withLock { rules.append(Rule(operation: operation, key: { $0 == exact }, skip: skip, times: times, action: action)) }
    }

    /// Fails `operation` on keys containing `part` (`times` of them, after `skip`) with
    /// the 503 SlowDown S3Storage reports once its retries are spent (an I/O failure, exit 3).
    package func fail(_ operation: StorageOperation?, keyContaining part: String = "", skip: Int = 0, times: Int = 1, with error: (any Error)? = nil) {
        add(operation, keyContaining: part, skip: skip, times: times, .fail(error ?? Self.unavailable(operation, part)))
    }

    /// The process stops for good once `count` writes (puts, replaces, deletes) were sent,
    /// as `kill -9` stops it: every later operation throws `InMemoryStorage.Killed` and
    /// changes nothing (no undo step of the dying run reaches the store).
    package func kill(afterWrites count: Int) {
        lock.withLock { killAfter = count }
    }

    /// True once the kill has happened.
    package var hasKilled: Bool { lock.withLock { killed } }

    /// Writes sent so far (each put, replace or delete, performed or not).
    package var writesSent: Int { lock.withLock { writes } }

    /// The 503 SlowDown answer S3 gives an overloaded prefix.
    static func unavailable(_ operation: StorageOperation?, _ key: String) -> S3Error {
        S3Error(operation: (operation?.rawValue ?? "request").uppercased(), key: key, status: 503, code: "SlowDown", message: "Please reduce your request rate.")
    }

    /// What to do with one operation: throws when the process was killed, else the action
    /// of the first rule that applies (nil: perform it as usual).
    func action(for operation: StorageOperation, key: String) throws -> Action? {
        try lock.withLock {
            if killed { throw InMemoryStorage.Killed(operation: operation, key: key) }
            if operation.writes {
                if let killAfter, writes >= killAfter {
                    killed = true
                    throw InMemoryStorage.Killed(operation: operation, key: key)
                }
                writes += 1
            }
            for index in rules.indices where (rules[index].operation == nil || rules[index].operation == operation) && rules[index].key(key) {
                guard rules[index].seen < rules[index].skip + rules[index].times else { continue }
                rules[index].seen += 1
                if rules[index].seen > rules[index].skip { return rules[index].action }
                return nil
            }
            return nil
        }
    }
}
