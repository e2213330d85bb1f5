import Foundation

/// Removing objects from a target that other runs write at the same time (an object
/// store, which has no lock: `StorageCapabilities.writersTakeTurns` is false).
///
/// Identical bytes have identical ETags, so a conditional delete cannot tell "the object
/// this run stored" from "the same bytes another run found there and adopted". A run
/// therefore removes an object only when no history record names it (a live release and
/// a pending one alike: every run writes its record before its manifest), and announces
/// the removal first so that a run adopting objects can see it:
///
/// - The remover writes an announcement (`_modelcast/removing/…`) naming the keys, reads
///   every history record, removes the keys no record names, and takes the announcement
///   down. It removes nothing after the announcement's deadline (what is left stays).
/// - A run about to make a manifest live, once its own record is written, waits for any
///   announcement naming an object it did not store itself, then proves every such
///   object is still there; if one is gone it refuses, and nothing goes live.
///
/// Whatever order the requests of the two runs reach the store in, one sees the other:
/// the remover's read of the records comes after its announcement, and the publisher's
/// look at the announcements after its record; so the remover finds the record (and
/// keeps the key), or the publisher finds the announcement (and checks the key once the
/// removal is over), or the removal was over before the publisher looked (and the check
/// finds the key gone).
///
/// A target whose writers take turns (a directory, under its lock) needs none of this:
/// there the keys are removed directly.
enum Removals {
    /// Where announcements live: beside the history index, never under `manifests/` (whose
    /// objects are immutable) nor `models/`.
    static let prefix = "_modelcast/removing/"
    /// How long after announcing a remover may go on removing.
    static let window: TimeInterval = 300
    /// What a waiting run adds to a deadline: a DELETE sent just before it, and clocks
    /// that differ between machines.
    static let margin: TimeInterval = 60
    /// Largest announcement read back.
    static let limit = TargetLayout.recordLimit

    /// What an announcement holds.
    struct Announcement: Codable {
        var keys: [String]
        /// Seconds since 1970 after which the remover removes nothing more.
        var deadline: Int64
    }

    /// When the announcement under `key` was made (from its name), or nil for a name
    /// this tool does not make.
    static func made(_ key: String) -> Date? {
        guard key.hasPrefix(prefix), let stamp = Int64(key.dropFirst(prefix.count).prefix(13)) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(stamp) / 1000)
    }

    /// True when no remover can still act on the announcement under `key`: its window and
    /// the margin passed an hour ago (a killed remover's, which prune takes away).
    static func isStale(_ key: String, now: Date = Date()) -> Bool {
        guard let made = made(key) else { return false }
        return now.timeIntervalSince(made) > window + margin + 3600
    }

    /// A fresh announcement key: the time it was made, then random hex (two removers never share one).
    static func newKey(now: Date = Date()) -> String {
        let stamp = Int64(now.timeIntervalSince1970 * 1000)
        return prefix + String(format: "%013lld-", stamp) + (0..<8).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined() + ".json"
    }
}

/// What `removeUnnamed` did.
struct RemovalOutcome {
    var removed: [String] = []
    /// Keys left in place, each with the reason (a record names it, the deadline passed).
    var kept: [(key: String, reason: String)] = []
}

/// Removes objects following `Removals` (directly where writers take turns), and makes a
/// run about to go live wait for, and check after, any removal of what it names.
struct ObjectRemover: TargetWriting {
    let writer: TargetWriter

    /// Removes those of `keys` that no history record names, following `Removals` on a
    /// target other runs write at the same time (directly where writers take turns).
    /// `ignoringRecords`: record keys that do not count (prune's dropped records, which
    /// go once their objects are gone). `known`: what records already read name, by
    /// record key (records are immutable, so they need not be read again).
    /// `removed` is told of each key as it goes.
    func removeUnnamed(
        _ keys: [String], ignoringRecords: Set<String> = [], known: [String: Set<String>] = [:], removed: (String) -> Void = { _ in }
    ) async throws -> RemovalOutcome {
        var outcome = RemovalOutcome()
        guard !storage.capabilities.writersTakeTurns else {
            for key in keys {
                try await storage.delete(key)
                outcome.removed.append(key)
                removed(key)
            }
            return outcome
        }
        var remaining = keys
        var known = known
        while !remaining.isEmpty {
            let announcementKey = Removals.newKey()
            let deadline = Date().addingTimeInterval(Removals.window)
            let announcement = try JSONEncoder().encode(Removals.Announcement(keys: remaining, deadline: Int64(deadline.timeIntervalSince1970)))
            try await storage.replace(announcementKey, data: announcement, metadata: try ObjectMetadata(
                of: announcement, cacheControl: CachePolicy.manifestDefault, contentType: "application/json"), ifMatch: "")
            do {
                let named = try await keysNamedByRecords(ignoring: ignoringRecords, known: &known)
                var left: [String] = []
                for key in remaining {
                    if let record = named[key] {
                        outcome.kept.append((key, "\(record) names it (another run's release)"))
                    } else if Date() < deadline.addingTimeInterval(-5) {
                        try await storage.delete(key)
                        outcome.removed.append(key)
                        removed(key)
                    } else {
                        left.append(key)
                    }
                }
                remaining = left
            } catch {
                // The run fails with `error` either way; an announcement left behind goes stale (`Removals.isStale`) and is then ignored.
                try? await storage.delete(announcementKey)
                throw error
            }
            try await storage.delete(announcementKey)
        }
        return outcome
    }

    /// The keys the target's history records name (every channel's, every manifest key's),
    /// each with the first record naming it.
    private func keysNamedByRecords(ignoring: Set<String>, known: inout [String: Set<String>]) async throws -> [String: String] {
        let recordKeys = try await storage.list(prefix: "manifests/").filter { $0.hasSuffix(".json") && !ignoring.contains($0) }
        let storage = self.storage
        let unread = recordKeys.filter { known[$0] == nil }
        let read = try await boundedMap(unread, concurrency: 8) { key -> (String, Set<String>) in
            // A record that cannot be read or parsed may name anything: remove nothing.
            guard let data = try await storage.get(key, limit: TargetLayout.recordLimit) else { return (key, []) }
            do {
                return (key, try HistoryIndex.entry(decoding: data, source: "\(storage.location)/\(key)").record.referencedKeys)
            } catch {
                throw ModelCastError.targetState("\(storage.location)/\(key) could not be read as a history record (\(error)), so what it names is unknown: nothing was removed")
            }
        }
        for (key, names) in read { known[key] = names }
        var named: [String: String] = [:]
        for key in recordKeys.reversed() {
            for name in known[key] ?? [] { named[name] = key }
        }
        return named
    }

    /// Before a manifest naming `keys` (objects this run did not store) goes live, on a
    /// target other runs write at the same time: waits for every announced removal of
    /// one of them to end, then proves each is still there. Throws, naming the key, when
    /// one is gone (another run removed it): nothing goes live, and running again stores it.
    func confirmNotRemoved(_ keys: Set<String>) async throws {
        guard !storage.capabilities.writersTakeTurns, !keys.isEmpty else { return }
        for announcementKey in try await storage.list(prefix: Removals.prefix) where !Removals.isStale(announcementKey) {
            var waited = false
            while let data = try await storage.get(announcementKey, limit: Removals.limit),
                  // try?: an announcement that does not parse names nothing to wait for; every key is still proven present after the wait.
                  let announcement = try? JSONDecoder().decode(Removals.Announcement.self, from: data) {
                let named = keys.intersection(announcement.keys)
                let over = Date(timeIntervalSince1970: TimeInterval(announcement.deadline)).addingTimeInterval(Removals.margin)
                guard !named.isEmpty, Date() < over else { break }
                if !waited {
                    log("waiting for another run that is removing \(named.sorted().joined(separator: ", ")) (\(storage.location)/\(announcementKey)) to finish, at most until \(ISO8601DateFormatter().string(from: over))")
                    waited = true
                }
                try await Task.sleep(nanoseconds: 250_000_000)
            }
        }
        let storage = self.storage
        let missing = try await boundedMap(keys.sorted(), concurrency: 8) { key in
            try await storage.head(key) == nil ? key : nil
        }.compactMap { $0 }
        guard missing.isEmpty else {
            throw ModelCastError.liveReleaseConflict("\(missing.map { "\(storage.location)/\($0)" }.joined(separator: ", ")) \(missing.count == 1 ? "was" : "were") removed by another run while this one was publishing (it had found \(missing.count == 1 ? "it" : "them") stored); nothing went live: run again to store \(missing.count == 1 ? "it" : "them") anew")
        }
    }
}
