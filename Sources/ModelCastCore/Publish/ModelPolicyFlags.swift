import Foundation
import ModelCastFormat

/// `--licence`, `--licence-url`, `--licence-acceptance`, `--network`, `--cellular-max`,
/// `--charging`, `--install-size` and `--storage-priority` as typed: they apply to the
/// models given on the command line, over what a config file says of them.
package struct ModelPolicyFlags: Sendable {
    package var licence: String?
    package var licenceURL: String?
    package var acceptance: LicenceAcceptanceChoice?
    package var network: NetworkChoice?
    package var cellularMax: String?
    package var charging: ChargingChoice?
    package var installSize: String?
    package var storagePriority: String?

    package init() {}

    /// The flags given, by name, for errors that name them.
    var given: [String] {
        [("--licence", licence != nil), ("--licence-url", licenceURL != nil), ("--licence-acceptance", acceptance != nil),
         ("--network", network != nil), ("--cellular-max", cellularMax != nil), ("--charging", charging != nil),
         ("--install-size", installSize != nil), ("--storage-priority", storagePriority != nil)].filter(\.1).map(\.0)
    }

    /// Every value parsed; a bad one is refused naming its flag.
    func parsed() throws -> ModelPolicies {
        var policies = ModelPolicies()
        do {
            if let licence { try policies.setSPDX(licence, context: "--licence") }
            if let licenceURL { try policies.setLicenceURL(licenceURL, context: "--licence-url") }
            if let cellularMax { try policies.setCellularMax(cellularMax, context: "--cellular-max") }
            if let installSize { try policies.setInstallSize(installSize, context: "--install-size") }
            if let storagePriority { try policies.setPriority(storagePriority, context: "--storage-priority") }
        } catch let problem as ConfigProblem {
            throw ModelCastError.usage(problem.message)
        }
        policies.acceptance = acceptance
        policies.network = network
        policies.charging = charging
        return policies
    }
}
