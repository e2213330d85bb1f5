import Foundation
import ModelCastFormat

/// What, besides the manifest and the disk, decides a plan's waits and evictions: what the
/// app reported (conditions, models in use) and what the device recorded (licences
/// accepted, last uses). `ModelUpdater` gathers it for each call.
struct PlanContext: Sendable {
    var conditions = DeviceConditions()
    /// Model name → the licence accepted for it (`licences.json`).
    var licences: [String: LicenceTerms] = [:]
    /// Models the app uses now (`beginUse` without its `endUse`): never evicted.
    var inUse: Set<String> = []
    /// Model name → when the app last began using it (`last-use.json`).
    var lastUse: [String: Date] = [:]
}

extension UpdateCheck {
    /// Why `model` (about to be installed, needing `bytes` still to download) waits, if it
    /// does; else whether its requests must stay off metered networks (`UnmeteredOnly`).
    /// The licence is asked for any install (a kept version too: it is this release's
    /// licence); the conditions only when something is downloaded.
    func waitReason(_ model: CheckedModel, bytes: Int64, context: PlanContext) -> (reason: WaitReason?, unmeteredOnly: Bool) {
        if let licence = model.licence {
            switch licence.acceptance {
            case .none: break
            case .required:
                if context.licences[model.name.rawValue] != licence.terms {
                    return (.licence(spdx: licence.terms.spdx, url: licence.terms.url), false)
                }
            case .unknown(let value): return (.unknownCondition("licence acceptance \(quotedValue(value))"), false)
            }
        }
        guard bytes > 0 else { return (nil, false) }
        let conditions = model.conditions
        if case .unknown(let value) = conditions.network { return (.unknownCondition("network \(quotedValue(value))"), false) }
        if case .unknown(let value) = conditions.charging { return (.unknownCondition("charging \(quotedValue(value))"), false) }
        var unmeteredOnly = false
        // Over its cap, a model needs an unmetered network as much as one that says so.
        let overCap = conditions.cellularMax.map { bytes > $0 } ?? false
        if conditions.network == .unmetered || overCap {
            switch context.conditions.network {
            case .unmetered: break
            case .cellular:
                if conditions.network == .unmetered { return (.network(required: "unmetered"), false) }
                return (.cellularCap(bytes: bytes, cap: conditions.cellularMax ?? 0), false)
            case nil:
                guard UnmeteredOnly.enforcedByTransport else { return (.notReported(condition: "network"), false) }
                unmeteredOnly = true
            }
        }
        if conditions.charging == .required {
            switch context.conditions.charging {
            case true?: break
            case false?: return (.charging, false)
            case nil: return (.notReported(condition: "charging"), false)
            }
        }
        return (nil, unmeteredOnly)
    }

    /// Bytes `model` still needs downloaded: none when a version with its files is kept.
    func bytesToDownload(of model: CheckedModel) -> Int64 {
        guard modelsDirectory.kept(model) == nil else { return 0 }
        return model.files.reduce(Int64(0)) { Installer.add($0, max(0, $1.size - downloader.bytesOnDisk($1))) }
    }
}
