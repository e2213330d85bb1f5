import Foundation
import NIOConcurrencyHelpers

/// One check's outcome.
package struct VerifyCheck: Codable, Sendable, Equatable {
    /// `skip`: a check that was not made (what it would look at cannot be seen from
    /// where verify reads), said so rather than counted as a pass. It fails nothing,
    /// `--strict` included.
    package enum Status: String, Codable, Sendable { case pass, warn, fail, skip }
    package let status: Status
    /// What was checked (`manifest.cache-control`, `artifact.sha256`, …).
    package let check: String
    /// The URL (or file) it was checked on.
    package let subject: String
    /// Expected and actual values, or what was seen.
    package let detail: String
    /// True for a failure to reach a host at all (refused, DNS, no route, connect
    /// timeout): nothing could be checked. Not part of the JSON report.
    package var hostNotReached = false

    enum CodingKeys: String, CodingKey { case status, check, subject, detail }

    package init(status: Status, check: String, subject: String, detail: String, hostNotReached: Bool = false) {
        self.status = status
        self.check = check
        self.subject = subject
        self.detail = detail
        self.hostNotReached = hostNotReached
    }
}

/// Everything `verify` found.
package struct VerifyReport: Codable, Sendable {
    package let source: String
    package let profile: String?
    package let sequence: Int64?
    package let checks: [VerifyCheck]
    package let strict: Bool

    package var failures: Int { checks.filter { $0.status == .fail }.count }
    package var warnings: Int { checks.filter { $0.status == .warn }.count }
    package var skipped: Int { checks.filter { $0.status == .skip }.count }
    /// True when nothing failed (and, with `strict`, nothing warned).
    package var passed: Bool { failures == 0 && (!strict || warnings == 0) }
    /// True when every failure is a host that could not be reached: a network failure
    /// (exit status 3, running again may help), not a failed check (exit status 1).
    package var failedOnlyToReachHosts: Bool {
        let failed = checks.filter { $0.status == .fail }
        return !failed.isEmpty && failed.allSatisfy(\.hostNotReached)
    }
    /// The exit status this report calls for: 0 passed, 3 only unreachable hosts, else 1.
    package var exitStatus: ExitStatus { passed ? .success : failedOnlyToReachHosts ? .io : .refused }

    /// For a target verified channel by channel (`verify DIR`, `verify s3://…`): each
    /// channel's manifest and outcome, stable's first. Empty for one manifest.
    package var channels: [ChannelOutcome] = []

    /// The URL the manifest is served at, when `source` is something else that was read in
    /// its place (a directory's file, a stand-in server's URL).
    package var servedAs: String?

    /// With `--trusted-keys`: the key set chain walked from the pinned set and the
    /// manifest's signers under the newest.
    package var keySets: KeySetChainReport?

    /// One channel of a target's verify.
    package struct ChannelOutcome: Codable, Sendable, Equatable {
        package let channel: String
        package let manifestKey: String
        package let profile: String?
        package let sequence: Int64?
        package let passed: Bool

        enum CodingKeys: String, CodingKey { case channel, profile, sequence, passed, manifestKey = "manifest_key" }
    }

    /// One report for several channels' reports: every check, in channel order (a check's
    /// subject names its manifest or object), with the first channel's profile and sequence.
    package static func merging(_ reports: [(channel: String, manifestKey: String, report: VerifyReport)], source: String, strict: Bool) -> VerifyReport {
        var merged = VerifyReport(source: source, profile: reports.first?.report.profile, sequence: reports.first?.report.sequence,
                                  checks: reports.flatMap(\.report.checks), strict: strict)
        merged.channels = reports.map {
            ChannelOutcome(channel: $0.channel, manifestKey: $0.manifestKey, profile: $0.report.profile, sequence: $0.report.sequence, passed: $0.report.passed)
        }
        return merged
    }

    enum CodingKeys: String, CodingKey { case source, servedAs = "served_as", profile, sequence, checks, strict, passed, failures, warnings, skipped, channels, keySets = "key_sets" }

    package func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(source, forKey: .source)
        try c.encodeIfPresent(servedAs, forKey: .servedAs)
        try c.encodeIfPresent(profile, forKey: .profile)
        try c.encodeIfPresent(sequence, forKey: .sequence)
        try c.encode(passed, forKey: .passed)
        try c.encode(failures, forKey: .failures)
        try c.encode(warnings, forKey: .warnings)
        try c.encode(skipped, forKey: .skipped)
        try c.encode(strict, forKey: .strict)
        if !channels.isEmpty { try c.encode(channels, forKey: .channels) }
        try c.encodeIfPresent(keySets, forKey: .keySets)
        try c.encode(checks, forKey: .checks)
    }

    package init(source: String, profile: String?, sequence: Int64?, checks: [VerifyCheck], strict: Bool) {
        self.source = source
        self.profile = profile
        self.sequence = sequence
        self.checks = checks
        self.strict = strict
    }

    package init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        source = try c.decode(String.self, forKey: .source)
        profile = try c.decodeIfPresent(String.self, forKey: .profile)
        sequence = try c.decodeIfPresent(Int64.self, forKey: .sequence)
        checks = try c.decode([VerifyCheck].self, forKey: .checks)
        strict = try c.decode(Bool.self, forKey: .strict)
        channels = try c.decodeIfPresent([ChannelOutcome].self, forKey: .channels) ?? []
        servedAs = try c.decodeIfPresent(String.self, forKey: .servedAs)
        keySets = try c.decodeIfPresent(KeySetChainReport.self, forKey: .keySets)
    }

    /// A table: status, check, subject, detail; then a summary line.
    package var text: String {
        let facts = [servedAs.map { "served as \($0)" }, profile.map { "profile \($0)" }, sequence.map { "sequence \($0)" }].compactMap { $0 }
        var lines = ["verify \(source)" + (facts.isEmpty ? "" : " (\(facts.joined(separator: ", ")))")]
        if !channels.isEmpty {
            lines[0] = "verify \(source): \(channels.count) channel\(channels.count == 1 ? "" : "s")"
            for channel in channels {
                lines.append("  \(channel.channel): \(channel.manifestKey)" + (channel.profile.map { " (profile \($0)\(channel.sequence.map { ", sequence \($0)" } ?? ""))" } ?? "") + (channel.passed ? "" : " FAILED"))
            }
        }
        let checkWidth = max(5, checks.map(\.check.count).max() ?? 0)
        for check in checks {
            let status = check.status.rawValue.uppercased().padding(toLength: 4, withPad: " ", startingAt: 0)
            lines.append("\(status)  \(check.check.padding(toLength: checkWidth, withPad: " ", startingAt: 0))  \(check.subject)  \(check.detail)")
        }
        let passes = checks.count - failures - warnings - skipped
        let notChecked = skipped > 0 ? ", \(skipped) not checked" : ""
        lines.append("\(passed ? "OK" : "FAILED"): \(counted(passes, "check")) passed\(notChecked), \(counted(warnings, "warning")), \(counted(failures, "failure"))\(strict && warnings > 0 ? " (--strict: warnings fail)" : "")")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Thread-safe list of checks, in the order they were made.
final class CheckLog: Sendable {
    private let list = NIOLockedValueBox<[VerifyCheck]>([])
    /// Maps a check's subject (a URL) to what was actually read for it.
    private let origin: @Sendable (String) -> String

    init(origin: @escaping @Sendable (String) -> String = { $0 }) {
        self.origin = origin
    }

    /// The checks so far, in order.
    var checks: [VerifyCheck] { list.withLockedValue { $0 } }

    func add(_ status: VerifyCheck.Status, _ check: VerifyCheckID, _ subject: String, _ detail: String, hostNotReached: Bool = false) {
        let entry = VerifyCheck(status: status, check: check.rawValue, subject: origin(subject), detail: detail, hostNotReached: hostNotReached)
        list.withLockedValue { $0.append(entry) }
    }

    func append(_ more: [VerifyCheck]) {
        list.withLockedValue { $0 += more }
    }

    var failures: Int {
        list.withLockedValue { $0.filter { $0.status == .fail }.count }
    }
}
