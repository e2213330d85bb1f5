import ArgumentParser
import ModelCastCore

/// `--rollout` and `--rollout-schedule`, shared by publish and promote.
struct RolloutStartOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Stage the rollout: this share of devices (10%, 0.5%).", valueName: "PERCENT"))
    var rollout: String?

    // Devices evaluate the schedule against their clock; `modelcast rollout --halt` stops it at once.
    @Option(help: ArgumentHelp("A self-ramping rollout, e.g. 1%,10%@24h,100%@7d.", valueName: "STEPS"))
    var rolloutSchedule: String?

    /// The share (hundredths of a percent) and the schedule text.
    func parsed() throws -> (Int?, String?) {
        if rollout != nil, rolloutSchedule != nil { throw ValidationError("give --rollout or --rollout-schedule, not both") }
        return (try rollout.map(Rollout.parsePercent), rolloutSchedule)
    }
}
