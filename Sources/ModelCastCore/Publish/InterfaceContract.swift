import Foundation
import ModelCastFormat

/// publish's interface contract: a new version of a model whose inputs, outputs, classes,
/// vocabulary, tokenizer or chat template differ from the live version's breaks every app
/// that swaps it in, so it is refused, naming each difference — unless `--interface-change`
/// says it is intended, and then the release's `min_app_version` must go up (apps that
/// cannot handle the new interface keep the old model). A `num_classes` field is checked
/// against the classifier's own class count. Checked before anything is packed or written.
struct InterfaceContract {
    /// The interface of each unit (`NAME` or `NAME@VARIANT`) read from its model file (the
    /// first), by label; units of formats without one are absent.
    let interfaces: [String: ModelInterface]
    /// Units whose model claims a format modelcast reads an interface from but whose
    /// interface could not be read (a model description this modelcast does not parse),
    /// with why: published without one, with a warning.
    let unreadable: [String: String]

    init(units: [PublishRequest.Model], descriptions: [String: [ModelDescription]]) throws {
        var interfaces: [String: ModelInterface] = [:]
        var unreadable: [String: String] = [:]
        for unit in units {
            guard let first = descriptions[unit.name]?.first else { continue }
            switch try ModelInterface.readResult(first) {
            case .success(let interface)?: interfaces[unit.name] = interface
            case .failure(let error)?: unreadable[unit.name] = error.message
            case nil: break
            }
        }
        self.interfaces = interfaces
        self.unreadable = unreadable
    }

    /// One warning per unit published without the interface its format has.
    var warnings: [String] {
        unreadable.keys.sorted().map { "\($0): its interface could not be read, so it is published without one and no interface contract is checked for it (\(unreadable[$0]!))" }
    }

    /// Refuses what breaks the contract; returns, for the log, each accepted change.
    func check(_ request: PublishRequest, live: Release?) throws -> [String] {
        var accepted: [String] = []
        var refused: [String] = []
        let liveUnits = live?.unitsByLabel ?? [:]
        for unit in request.models.flatMap(\.units) {
            // A model whose interface could not be read was published with a warning saying
            // no contract is checked for it.
            guard unreadable[unit.name] == nil, let previous = liveUnits[unit.name], previous.version != unit.version,
                  let recorded = previous.interface else { continue }
            let differences: [String]
            do {
                let old = try ModelInterface(json: recorded)
                differences = interfaces[unit.name].map { $0.differences(from: old) } ?? ["format \(old.format) → one without an interface modelcast reads"]
            } catch {
                throw ModelCastError.invalidRecord(source: "the live release's interface of \(unit.name)", reason: String(describing: error))
            }
            guard !differences.isEmpty else { continue }
            let line = "\(unit.name) \(previous.version) → \(unit.version): " + differences.joined(separator: "; ")
            if request.options.interfaceChange { accepted.append(line) } else { refused.append(line) }
        }
        if !refused.isEmpty {
            throw ModelCastError.versionConflict("the interface apps use changes, which breaks every app built for the live version: " + refused.joined(separator: " | ")
                + ". If the change is intended, publish with --interface-change and a --min-app-version above the live release's (\(live?.minAppVersion ?? "none")), so apps that cannot handle it keep the old model")
        }
        if !accepted.isEmpty { try checkMinAppVersionRaised(request, live: live) }
        return accepted
    }

    /// `--interface-change` needs a higher `min_app_version` than the live release's.
    private func checkMinAppVersionRaised(_ request: PublishRequest, live: Release?) throws {
        let old = live?.minAppVersion.flatMap { try? AppVersion($0) }
        guard let text = request.minAppVersion, let new = try? AppVersion(text), old.map({ new > $0 }) ?? true else {
            throw ModelCastError.versionConflict("--interface-change: the interface changes, so --min-app-version must rise above the live release's (\(live?.minAppVersion ?? "none"))\(request.minAppVersion.map { ", not \($0)" } ?? "") — apps older than it keep the model they have")
        }
    }

    /// NomLens's `num_classes` (any profile's) must be the classifier's class count
    /// (checked before the target is touched: it needs only the models).
    func checkClassCounts(_ request: PublishRequest) throws {
        for unit in request.models.flatMap(\.units) {
            guard case .int(let declared)? = unit.meta["num_classes"], case .coreML(let coreML)? = interfaces[unit.name],
                  let count = coreML.classifier?.classCount, Int64(count) != declared else { continue }
            throw ModelCastError.usage("model \(unit.name): num_classes \(declared) does not match the model: its classifier has \(count) classes")
        }
    }

    /// The interface each packed unit records: its own, or for a version the live release
    /// already names, what the live record says (so an unchanged re-publish stays unchanged).
    func record(into units: inout [String: ReleaseModel], live: Release?) {
        let liveUnits = live?.unitsByLabel ?? [:]
        for label in units.keys {
            if let previous = liveUnits[label], previous.version == units[label]!.version {
                units[label]!.interface = previous.interface
            } else {
                units[label]!.interface = interfaces[label]?.jsonValue()
            }
        }
    }
}
