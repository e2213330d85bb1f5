import Foundation
import ModelCastFormat

/// publish's interface contract: a new version of a model whose interface differs from the
/// live version's in a breaking way (inputs, outputs, classes, vocabulary, tokenizer…) breaks
/// every app that swaps it in, so it is refused, naming each difference — unless
/// `--interface-change` says it is intended, and then the release's `min_app_version` must go
/// up (apps that cannot handle the new interface keep the old model). A compatible difference
/// (a chat template, an added output, a larger context length: `InterfaceFacet.defaultKind`)
/// is published without flags, with a note in the report. A model whose interface cannot be
/// read is refused when an earlier version's could (unless `--allow-unreadable-interface`),
/// and a version after one published without an interface is compared with the last one
/// recorded. A `num_classes` field is checked against the classifier's own class count.
/// Checked before anything is packed or written.
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

    /// One warning per unit whose format has an interface that could not be read. Said
    /// before the target is read: whether the unit may go live without one is `check`'s call.
    var warnings: [String] {
        unreadable.keys.sorted().map { "\($0): its interface could not be read (\(unreadable[$0]!)), so none is recorded for it and no interface contract can be checked for it" }
    }

    /// What a check lets through: the warnings to log (each compatible change, each accepted
    /// breaking change, each model accepted with `--allow-unreadable-interface`) and every
    /// interface change the release carries, for the report's `interface_changes`.
    struct Outcome {
        var warnings: [String] = []
        var changes: [PublishReport.InterfaceChange] = []
    }

    /// Refuses what breaks the contract; returns what went through (`Outcome`). Each
    /// difference's kind is its facet's default unless the unit's `interface:` in the
    /// config file says otherwise.
    ///
    /// A version is compared with the live version's interface or, when the live version
    /// recorded none (its model could not be read, or was of a format without one), with the
    /// last interface recorded for the model among the releases that went live: a version
    /// published without an interface must not become a gap through which the next one
    /// changes the interface unnoticed.
    func check(_ request: PublishRequest, state: TargetState) throws -> Outcome {
        let live = state.live
        var changes: [PublishReport.InterfaceChange] = []
        var compatible: [String] = []
        var accepted: [String] = []
        var refused: [String] = []
        var unchecked: [String] = []
        var uncheckedRefused: [String] = []
        let liveUnits = live?.unitsByLabel ?? [:]
        for unit in request.models.flatMap(\.units) {
            // A model of a format without an interface is compared with the live version's
            // only: after an accepted change to such a format, its next versions are no change.
            guard let previous = liveUnits[unit.name], previous.version != unit.version,
                  let baseline = interfaces[unit.name] == nil && unreadable[unit.name] == nil
                    ? previous.interface.map({ (previous.version, $0) })
                    : Self.baseline(of: unit.name, live: previous, wentLive: state.wentLive) else { continue }
            if let reason = unreadable[unit.name] {
                if request.options.allowUnreadableInterface {
                    unchecked.append("model \(unit.name) \(unit.version) is published without an interface (--allow-unreadable-interface): nothing tells whether it still fits apps built for \(baseline.version)'s; the next version is compared with \(baseline.version)'s")
                } else {
                    uncheckedRefused.append("model \(unit.name) \(unit.version): its interface could not be read (\(reason)), so it cannot be compared with \(baseline.version)'s, which apps were built for")
                }
                continue
            }
            let differences: [InterfaceDifference]
            do {
                let old = try ModelInterface(json: baseline.interface)
                differences = (interfaces[unit.name].map { $0.changes(from: old) }
                    ?? [InterfaceDifference(.format, "format \(old.format) → one without an interface modelcast reads")]).map(unit.interfaceKinds.classify)
            } catch {
                throw FormatError.invalidRecord(source: "the interface of \(unit.name) \(baseline.version) in the target's history", reason: String(describing: error))
            }
            guard !differences.isEmpty else { continue }
            let compared = baseline.version == previous.version ? ""
                : " (compared with \(baseline.version)'s interface, the last one recorded: \(previous.version) was published without one)"
            let heading = "\(unit.name) \(previous.version) → \(unit.version)\(compared): "
            // Breaking differences name the compatible ones too only when --interface-change
            // accepts them: a refusal names what must change, nothing else.
            let breaking = differences.filter { $0.kind == .breaking }
            if breaking.isEmpty {
                compatible.append(heading + differences.map(\.line).joined(separator: "; "))
            } else if request.options.interfaceChange {
                accepted.append(heading + differences.map(\.line).joined(separator: "; "))
            } else {
                refused.append(heading + breaking.map(\.line).joined(separator: "; "))
            }
            changes += differences.map {
                PublishReport.InterfaceChange(model: unit.name, from: previous.version, to: unit.version, comparedWith: baseline.version == previous.version ? nil : baseline.version,
                                              facet: $0.facet.rawValue, kind: $0.kind.rawValue, description: $0.description)
            }
        }
        if !uncheckedRefused.isEmpty {
            throw ModelCastError.versionConflict(uncheckedRefused.joined(separator: " | ")
                + ". A corrupt or truncated file, or a model this modelcast does not parse: check it with `modelcast inspect`. If it is the model you mean to ship, publish with --allow-unreadable-interface (no contract is checked for it; the next version is compared with the last interface recorded)")
        }
        if !refused.isEmpty {
            throw ModelCastError.versionConflict("the interface apps use changes, which breaks every app built for the live version: " + refused.joined(separator: " | ")
                + ". If the change is intended, publish with --interface-change and a --min-app-version above the live release's (\(live?.minAppVersion ?? "none")), so apps that cannot handle it keep the old model")
        }
        if !accepted.isEmpty { try checkMinAppVersionRaised(request, live: live) }
        return Outcome(warnings: compatible.map { "compatible interface change: \($0)" }
            + accepted.map { "interface change (--interface-change): \($0)" } + unchecked, changes: changes)
    }

    /// The interface `label`'s next version is compared with: the live version's, else the
    /// last one recorded among the releases that went live (newest first); nil when no
    /// version of it ever recorded one.
    static func baseline(of label: String, live: ReleaseModel, wentLive: [Release]) -> (version: String, interface: JSONValue)? {
        if let interface = live.interface { return (live.version, interface) }
        for record in wentLive.reversed() {
            if let earlier = record.unitsByLabel[label], let interface = earlier.interface { return (earlier.version, interface) }
        }
        return nil
    }

    /// `--interface-change` needs a higher `min_app_version` than the live release's.
    private func checkMinAppVersionRaised(_ request: PublishRequest, live: Release?) throws {
        // try?: a live value that does not parse compares as none; a new one that does not parse is refused below, naming it.
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
