import ArgumentParser
import ModelCastCore

/// `--rollout` and `--rollout-schedule`, shared by publish and promote.
struct RolloutStartOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Publish as a staged rollout to this share of devices (10%, 0.5%); the others stay on the live release. modelcast profile only.", valueName: "PERCENT"))
    var rollout: String?

    @Option(help: ArgumentHelp("A staged rollout that ramps up by itself: steps PERCENT@DELAY after now, e.g. \"1%,10%@24h,50%@72h,100%@7d\" (delays in s, m, h, d, w). Devices evaluate it against their clock; `modelcast rollout --halt` stops it at once.", valueName: "STEPS"))
    var rolloutSchedule: String?

    /// The share (hundredths of a percent) and the schedule text.
    func parsed() throws -> (Int?, String?) {
        if rollout != nil, rolloutSchedule != nil { throw ValidationError("give --rollout or --rollout-schedule, not both") }
        return (try rollout.map(Rollout.parsePercent), rolloutSchedule)
    }
}
