import Foundation

/// A staged rollout in a `modelcast` manifest: the manifest's `models` are the candidate,
/// its `rollback` section the fallback, and each device decides which it runs with the
/// cohort rule below, so static hosting is enough.
///
/// The rule (docs/releases.md's "The client rule" spells it out for any language):
///
///     bucket  = first 8 bytes of SHA-256(UTF-8(salt) ‖ ":" ‖ UTF-8(device_id)), big-endian, mod 10 000
///     percent = schedule's percent at now (the last step whose `at` ≤ now; 0 before the first)
///               when there is a schedule, else `percent`
///     the device runs the candidate ⇔ bucket < percent × 100
///
/// Raising the percentage keeps the salt, so every device already in the cohort stays in it.
public struct Rollout: Equatable, Sendable {
    /// One step of a schedule: from `at` on, `basisPoints` of the devices run the candidate.
    public struct Step: Equatable, Sendable {
        public var at: String
        public var basisPoints: Int

        public init(at: String, basisPoints: Int) {
            self.at = at
            self.basisPoints = basisPoints
        }
    }

    /// Share of devices on the candidate, in hundredths of a percent (0…10 000); with a
    /// schedule, its share when the manifest was published.
    public var basisPoints: Int
    /// Fixed for the rollout's life: it decides the cohort.
    public var salt: String
    /// When the rollout began (RFC 3339).
    public var startedAt: String
    /// Steps with absolute times, increasing in time and share; nil for a fixed share.
    public var schedule: [Step]?

    public init(basisPoints: Int, salt: String, startedAt: String, schedule: [Step]? = nil) {
        self.basisPoints = basisPoints
        self.salt = salt
        self.startedAt = startedAt
        self.schedule = schedule
    }

    /// A salt is 16 to 64 lowercase hexadecimal digits (modelcast writes 32): printable
    /// anywhere, and the same bytes in every language's cohort rule.
    public static func isValidSalt(_ salt: String) -> Bool {
        (16...64).contains(salt.utf8.count) && salt.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Buckets the rule divides devices into (hundredths of a percent).
    public static let buckets: UInt64 = 10_000

    /// The device's bucket, 0…9 999: SHA-256 of `salt:deviceID`, first 8 bytes big-endian, mod 10 000.
    public static func bucket(salt: String, deviceID: String) -> Int {
        let digest = SHA256Small.hash(Array((salt + ":" + deviceID).utf8))
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(value % buckets)
    }

    /// The share of devices on the candidate at `now`, in hundredths of a percent.
    public func basisPoints(at now: Date) -> Int {
        guard let schedule else { return basisPoints }
        var current = 0
        for step in schedule {
            guard let at = parseTimestamp(step.at), at <= now else { break }
            current = step.basisPoints
        }
        return current
    }

    /// True when the device with `deviceID` runs the candidate at `now`.
    public func selects(deviceID: String, at now: Date) -> Bool {
        Self.bucket(salt: salt, deviceID: deviceID) < basisPoints(at: now)
    }

    /// Halted: no device runs the candidate, now or later.
    public var isHalted: Bool { basisPoints == 0 && schedule == nil }

    /// True while some but not all devices run the candidate at `now` (or a schedule
    /// has yet to reach 100 %).
    public func isInProgress(at now: Date) -> Bool {
        let share = basisPoints(at: now)
        if share >= 10_000 { return false }
        return share > 0 || (schedule?.contains { $0.basisPoints > 0 } ?? false)
    }

    /// What is wrong with the block, one line each (empty when nothing): the share within
    /// 0–100 %, a salt, a start time, a schedule increasing in time and share.
    public var problems: [String] {
        var problems: [String] = []
        if !(0...10_000).contains(basisPoints) { problems.append("percent \(Self.percentText(basisPoints)) is outside 0–100") }
        if !Self.isValidSalt(salt) { problems.append("salt \(quotedValue(salt)) is not 16 to 64 lowercase hexadecimal digits") }
        if parseTimestamp(startedAt) == nil { problems.append("started_at '\(startedAt)' is not an RFC 3339 time") }
        if let schedule {
            if schedule.isEmpty { problems.append("schedule has no steps") }
            var previous: (Date, Int)?
            for (index, step) in schedule.enumerated() {
                guard let at = parseTimestamp(step.at) else {
                    problems.append("schedule[\(index)].at '\(step.at)' is not an RFC 3339 time")
                    continue
                }
                if !(0...10_000).contains(step.basisPoints) { problems.append("schedule[\(index)].percent \(Self.percentText(step.basisPoints)) is outside 0–100") }
                if let (time, share) = previous, !(at > time && step.basisPoints > share) {
                    problems.append("schedule[\(index)] (\(Self.percentText(step.basisPoints))% at \(step.at)) does not come after the step before it in both time and percent")
                }
                previous = (at, step.basisPoints)
            }
        }
        return problems
    }

    /// `10`, `0.5`, `12.25`: hundredths of a percent as a percentage.
    public static func percentText(_ basisPoints: Int) -> String {
        basisPoints % 100 == 0 ? String(basisPoints / 100) : String(format: "%.2f", Double(basisPoints) / 100).replacingOccurrences(of: #"0$"#, with: "", options: .regularExpression)
    }

    /// Parses `10%`, `10`, `0.5%` into hundredths of a percent (0…10 000, at most two decimals).
    public static func parsePercent(_ text: String) throws -> Int {
        let number = text.hasSuffix("%") ? String(text.dropLast()) : text
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = Int(parts[0]), whole >= 0, parts[0].allSatisfy(\.isASCII),
              parts.count == 1 || (1...2).contains(parts[1].count) && parts[1].allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw FormatError.invalidValue("percentage '\(text)' is not a number from 0 to 100 with at most two decimals (e.g. 10%, 0.5%)")
        }
        let fraction = parts.count == 2 ? Int(parts[1].padding(toLength: 2, withPad: "0", startingAt: 0))! : 0
        let value = whole * 100 + fraction
        guard value <= 10_000 else { throw FormatError.invalidValue("percentage '\(text)' is above 100%") }
        return value
    }

    /// Parses a schedule, `1%,10%@24h,50%@72h,100%@7d`: each step a percentage and, after
    /// `@`, how long after `start` it begins (the first may omit it: it begins at `start`).
    /// Steps must increase in time and percentage.
    public static func parseSchedule(_ text: String, start: Date) throws -> [Step] {
        var steps: [Step] = []
        var previous: (TimeInterval, Int)?
        for (index, item) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            let pieces = item.split(separator: "@", omittingEmptySubsequences: false)
            guard (1...2).contains(pieces.count), !pieces[0].isEmpty else {
                throw FormatError.invalidValue("--rollout-schedule step '\(item)' is not PERCENT[@DELAY] (e.g. 10%@24h)")
            }
            let share = try parsePercent(String(pieces[0]))
            let offset: TimeInterval
            if pieces.count == 2 {
                offset = pieces[1] == "0" || pieces[1] == "0s" ? 0 : try parseDuration(String(pieces[1]))
            } else if index == 0 {
                offset = 0
            } else {
                throw FormatError.invalidValue("--rollout-schedule step '\(item)' needs @DELAY (only the first step starts at once)")
            }
            if let (time, last) = previous, !(offset > time && share > last) {
                throw FormatError.invalidValue("--rollout-schedule step '\(item)' must come later and be higher than the step before it")
            }
            guard share > 0 else { throw FormatError.invalidValue("--rollout-schedule step '\(item)' is 0%: a schedule ramps up from above 0") }
            previous = (offset, share)
            steps.append(Step(at: formatTimestamp(start.addingTimeInterval(offset)), basisPoints: share))
        }
        return steps
    }

    /// The salt of a rollout starting with `release`: derived from its channel, sequence
    /// and files (the artifacts of its models and prototypes, in key order: their URLs, so
    /// the target too, and SHA-256), so each rollout's cohort is its own, and the same
    /// inputs give the same manifest on any machine.
    public static func salt(for release: Release) -> String {
        var text = "modelcast-rollout\n\(release.channel)\n\(release.sequence)\n"
        for file in release.objects(in: [.release]).filter({ $0.kind == .artifact }).sorted(by: { $0.key < $1.key }) {
            text += file.url + " " + file.sha256 + "\n"
        }
        return SHA256Small.hash(Array(text.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}

extension Rollout {
    public func jsonValue() -> JSONValue {
        func percent(_ basisPoints: Int) -> JSONValue {
            basisPoints % 100 == 0 ? .int(Int64(basisPoints / 100)) : .double(Double(basisPoints) / 100)
        }
        var members: [JSONValue.Member] = [
            .init("percent", percent(basisPoints)),
            .init("salt", .string(salt)),
            .init("started_at", .string(startedAt)),
        ]
        if let schedule {
            members.append(.init("schedule", .array(schedule.map { .object([.init("at", .string($0.at)), .init("percent", percent($0.basisPoints))]) })))
        }
        return .object(members)
    }
}

extension Rollout: Decodable {
    public enum CodingKeys: String, CodingKey { case percent, salt, startedAt = "started_at", schedule }
    public struct StepCoding: Decodable {
        public let at: String
        public let percent: Double
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func hundredths(_ percent: Double, at key: CodingKeys) throws -> Int {
            let scaled = percent * 100
            guard scaled.isFinite, abs(scaled - scaled.rounded()) < 1e-6, abs(scaled) < 1e9 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "percent \(percent) has more than two decimals")
            }
            return Int(scaled.rounded())
        }
        basisPoints = try hundredths(c.decode(Double.self, forKey: .percent), at: .percent)
        salt = try c.decode(String.self, forKey: .salt)
        startedAt = try c.decode(String.self, forKey: .startedAt)
        schedule = try c.decodeIfPresent([StepCoding].self, forKey: .schedule)?.map { Step(at: $0.at, basisPoints: try hundredths($0.percent, at: .schedule)) }
    }
}

/// What `modelcast rollout simulate` reports: the documented rule evaluated over
/// synthetic device ids (`device-0`, `device-1`, …) at one time.
public struct RolloutSimulation: Codable, Sendable {
    /// One side of the rollout: the release and how many devices run it.
    public struct Side: Codable, Sendable {
        public let sequence: Int64?
        /// Model name → version.
        public let versions: [String: String]
        public let devices: Int
        /// Share of the devices, in percent (0–100), as the rollout's own `percent` is.
        public let percent: Double
    }

    public let sequence: Int64
    /// The time the rule was evaluated at (RFC 3339).
    public let at: String
    /// The share the rule gives the candidate at that time, in percent.
    public let percent: Double
    /// Which schedule step applies (1-based), when there is a schedule.
    public let scheduleStep: Int?
    public let devices: Int
    public let candidate: Side
    public let fallback: Side

    public enum CodingKeys: String, CodingKey {
        case sequence, at, percent, devices, candidate, fallback
        case scheduleStep = "schedule_step"
    }

    /// Evaluates `release`'s rollout for `devices` synthetic ids at `now`; a release with no
    /// rollout sends every device to its models.
    public init(release: Release, devices: Int, at now: Date) {
        let rollout = release.rollout
        var onCandidate = devices
        if let rollout {
            let share = rollout.basisPoints(at: now)
            onCandidate = (0..<devices).reduce(0) { $0 + (Rollout.bucket(salt: rollout.salt, deviceID: "device-\($1)") < share ? 1 : 0) }
        }
        func percent(_ count: Int) -> Double { devices == 0 ? 0 : (Double(count) / Double(devices) * 10_000).rounded() / 100 }
        sequence = release.sequence
        at = formatTimestamp(now)
        self.percent = Double(rollout?.basisPoints(at: now) ?? 10_000) / 100
        scheduleStep = rollout?.schedule.map { steps in steps.filter { parseTimestamp($0.at).map { $0 <= now } ?? false }.count }
        self.devices = devices
        candidate = Side(sequence: release.sequence, versions: release.models.mapValues(\.version), devices: onCandidate, percent: percent(onCandidate))
        fallback = Side(sequence: rollout == nil ? nil : release.rollback?.sequence, versions: rollout == nil ? [:] : release.rollback?.models.mapValues(\.version) ?? [:],
                        devices: devices - onCandidate, percent: percent(devices - onCandidate))
    }

    /// A few lines for a terminal.
    public var text: String {
        func versions(_ side: Side) -> String { side.versions.keys.sorted().map { "\($0) \(side.versions[$0]!)" }.joined(separator: ", ") }
        func row(_ label: String, _ side: Side) -> String {
            let release = side.sequence.map { "sequence \($0)" } ?? "-"
            return "  \(label.padding(toLength: 10, withPad: " ", startingAt: 0))\(release.padding(toLength: 16, withPad: " ", startingAt: 0))\(String(side.devices).leftPadded(to: 9)) devices  \(String(format: "%6.2f", side.percent))%  \(versions(side))"
        }
        let step = scheduleStep.map { $0 == 0 ? " (before the schedule's first step)" : " (schedule step \($0))" } ?? ""
        return """
            rollout of sequence \(sequence) at \(at): \(Rollout.percentText(Int((percent * 100).rounded())))% of devices on the candidate\(step)
            \(row("candidate", candidate))
            \(row("fallback", fallback))
            """ + "\n"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
