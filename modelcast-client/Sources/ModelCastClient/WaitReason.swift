import Foundation

/// Why a model the manifest names for this device is not downloaded now
/// (`UpdatePlan.waiting`): its licence is not accepted, or the device does not meet its
/// download conditions. Nothing of it is requested; the version installed stays; the next
/// update with the licence accepted or the conditions met installs it.
public enum WaitReason: Sendable, Equatable, CustomStringConvertible {
    /// The licence (`spdx`, `url`, as the manifest gives them) asks for acceptance and this
    /// device has not recorded it for the model (`ModelUpdater.acceptLicence`), or recorded
    /// another licence.
    case licence(spdx: String?, url: String?)
    /// The model downloads only on this kind of network (`unmetered`) and the app reports
    /// another.
    case network(required: String)
    /// On a metered network the model still needs `bytes`, more than its `cellular_max` (`cap`).
    case cellularCap(bytes: Int64, cap: Int64)
    /// The model downloads only while the device charges, and the app reports it does not.
    case charging
    /// The model needs a condition the app has not reported (`DeviceConditions`: nil): the
    /// client does not guess. `condition` is `network` or `charging`.
    case notReported(condition: String)
    /// A licence acceptance or download condition this client does not know (a newer
    /// publisher's), described with its value: the model is held back, not downloaded on a guess.
    case unknownCondition(String)

    /// One line, for a message: `licence Llama-3.2 (https://…) not accepted`, `needs an unmetered network`…
    public var description: String {
        switch self {
        case .licence(let spdx, let url):
            let terms = [spdx, url.map { spdx == nil ? $0 : "(\($0))" }].compactMap { $0 }.joined(separator: " ")
            return "licence \(terms) not accepted"
        case .network(let required): return "needs an \(required) network"
        case .cellularCap(let bytes, let cap): return "needs \(bytes) bytes, more than the \(cap) it may download on a metered network"
        case .charging: return "needs the device to be charging"
        case .notReported(let condition):
            return condition == "network" ? "needs an unmetered network, and the app has not reported the network"
                                          : "needs the device to be charging, and the app has not reported whether it is"
        case .unknownCondition(let what): return "has a condition this client does not know (\(what)); it waits for a newer client"
        }
    }
}
