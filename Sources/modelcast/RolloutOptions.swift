import ArgumentParser
import ModelCastCore

/// `--rollout` and `--rollout-schedule`, shared by publish and promote.
struct RolloutStartOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A staged rollout to this share of devices (10%, 0.5%); the rest stay on the live release.", valueName: "PERCENT"))
    var rollout: String?

    // Devices evaluate the schedule against their clock; `modelcast rollout --halt` stops it at once.
    @Option(help: ArgumentHelp("A rollout that ramps up by itself: PERCENT@DELAY steps, e.g. 1%,10%@24h,100%@7d.", valueName: "STEPS"))
    var rolloutSchedule: String?

    /// The share (hundredths of a percent) and the schedule text.
    func parsed() throws -> (Int?, String?) {
        if rollout != nil, rolloutSchedule != nil { throw ValidationError("give --rollout or --rollout-schedule, not both") }
        return (try rollout.map(Rollout.parsePercent), rolloutSchedule)
    }
}
