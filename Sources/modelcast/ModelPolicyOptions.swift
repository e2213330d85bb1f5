import ArgumentParser
import ModelCastCore

extension LicenceAcceptanceChoice: ExpressibleByArgument {}
extension NetworkChoice: ExpressibleByArgument {}
extension ChargingChoice: ExpressibleByArgument {}

/// A model's licence, download conditions and storage for the models given on the command
/// line (modelcast profile; a config file says the same per model: docs/config.md).
struct ModelPolicyOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The models' licence: an SPDX identifier or expression.", valueName: "SPDX"))
    var licence: String?

    @Option(help: ArgumentHelp("Where the licence's text is (http or https, no user name or password).", valueName: "URL"))
    var licenceURL: String?

    // required: devices download nothing of the model before the app records the user's acceptance.
    @Option(help: ArgumentHelp("Whether devices must record the user's acceptance first (default: none).", valueName: "required|none"))
    var licenceAcceptance: LicenceAcceptanceChoice?

    @Option(help: ArgumentHelp("The network devices may download the models on (default: any).", valueName: "any|unmetered"))
    var network: NetworkChoice?

    // Unconditional: `-1` is a value to refuse by name, not an unknown option.
    @Option(parsing: .unconditional, help: ArgumentHelp("On a metered network, the most bytes a model may still need (e.g. 500MB).", valueName: "BYTES"))
    var cellularMax: String?

    @Option(help: ArgumentHelp("Download only while the device charges (default: any).", valueName: "required|any"))
    var charging: ChargingChoice?

    @Option(parsing: .unconditional, help: ArgumentHelp("Bytes the models take installed, when more than publish computes from their files.", valueName: "BYTES"))
    var installSize: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("0 to 100 (default 50): under a storage budget, lower is evicted first.", valueName: "N"))
    var storagePriority: String?

    func apply(to commandLine: inout PublishCommandLine) {
        commandLine.policyFlags.licence = licence
        commandLine.policyFlags.licenceURL = licenceURL
        commandLine.policyFlags.acceptance = licenceAcceptance
        commandLine.policyFlags.network = network
        commandLine.policyFlags.cellularMax = cellularMax
        commandLine.policyFlags.charging = charging
        commandLine.policyFlags.installSize = installSize
        commandLine.policyFlags.storagePriority = storagePriority
    }
}
