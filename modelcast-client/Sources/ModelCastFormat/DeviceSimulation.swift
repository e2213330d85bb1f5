import Foundation

/// What `modelcast rollout simulate --device` reports: for one described device, which
/// variant and version of each model it takes from a release — the choice a client makes
/// (`CheckedModel.choice(for:)`) — on the candidate and, during a rollout, the fallback.
public struct DeviceSimulation: Encodable, Sendable {
    /// One model as the device takes it.
    public struct Pick: Encodable, Sendable {
        public let model: String
        /// The variant taken; nil for a model without variants, or when it meets none.
        public let variant: String?
        /// The version installed; nil when the device meets no variant (it keeps what it has).
        public let version: String?
        /// Variants passed over, each with why.
        public let skipped: [Skipped]
    }

    public struct Skipped: Encodable, Sendable {
        public let variant: String
        public let reasons: [String]
    }

    /// One side of the release: the candidate or the fallback.
    public struct Side: Encodable, Sendable {
        public let sequence: Int64?
        public let models: [Pick]
    }

    public let sequence: Int64
    /// `candidate`, `fallback`, or nil when no device id was given during a rollout (both apply).
    public let takes: String?
    public let candidate: Side
    public let fallback: Side?

    /// Evaluates `release` for `device`; with `deviceID` during a rollout, also which side it takes at `now`.
    public init(release: Release, device: DeviceProfile, deviceID: String?, at now: Date) throws {
        sequence = release.sequence
        func side(_ models: [CheckedModel], sequence: Int64?) -> Side {
            Side(sequence: sequence, models: models.map { model in
                let choice = model.choice(for: device)
                return Pick(model: model.name.rawValue, variant: choice.chosen?.variant?.rawValue, version: choice.chosen?.version.rawValue,
                            skipped: choice.skipped.map { Skipped(variant: $0.variant, reasons: $0.reasons) })
            })
        }
        candidate = side(try release.checkedModels(), sequence: release.sequence)
        if let rollout = release.rollout, let rollback = release.rollback {
            fallback = side(try release.checkedRollbackModels(), sequence: rollback.sequence)
            takes = deviceID.map { rollout.selects(deviceID: $0, at: now) ? "candidate" : "fallback" }
        } else {
            fallback = nil
            takes = "candidate"
        }
    }

    /// A few lines for a terminal.
    public var text: String {
        func lines(_ label: String, _ side: Side) -> [String] {
            var out = ["\(label) (sequence \(side.sequence.map(String.init) ?? "-")):"]
            for pick in side.models {
                let what = pick.version.map { version in (pick.variant.map { "variant \($0) " } ?? "") + version } ?? "no variant fits: keeps what it has"
                out.append("  \(pick.model)  \(what)")
                for skipped in pick.skipped { out.append("    skipped \(skipped.variant): \(skipped.reasons.joined(separator: "; "))") }
            }
            return out
        }
        var out: [String] = []
        switch takes {
        case "candidate" where fallback == nil: out += lines("every device takes", candidate)
        case "candidate": out += ["this device is in the rollout's cohort"] + lines("it takes the candidate", candidate)
        case "fallback": out += ["this device is outside the rollout's cohort"] + lines("it takes the fallback", fallback!)
        default: out += ["during the rollout (give --device-id to see which side this device is on):"] + lines("on the candidate", candidate) + lines("on the fallback", fallback!)
        }
        return out.joined(separator: "\n") + "\n"
    }
}
