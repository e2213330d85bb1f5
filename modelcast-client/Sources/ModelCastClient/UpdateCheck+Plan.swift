import Foundation
import ModelCastFormat

/// Which models a call covers.
enum UpdateScope: Sendable {
    /// `update(_:)`: the models whose policy is up to this one (for `.prefetch`, the
    /// on-demand models installed too).
    case policy(DownloadPolicy)
    /// `request(_:)`: this model alone.
    case model(ModelName)
}

/// A call's plan and what it acts on.
struct Planned: Sendable {
    let plan: UpdatePlan
    /// The models to switch to, each as the variant this device takes (downloaded first
    /// unless a version with its files is kept).
    let installs: [CheckedModel]
    /// Every covered model this device takes a version of (`installs` included).
    let covered: [CheckedModel]
    /// The models whose older versions the tidy-up prunes: the covered and the refused ones.
    let pruned: [ModelName]
    /// The files of models the call leaves for later: their partial downloads are kept.
    let later: Set<SHA256Hex>
    /// Models whose requests must stay off metered networks (`UnmeteredOnly`).
    let unmeteredOnly: Set<ModelName>
    /// The models evicted once the switch holds (`UpdatePlan.evictions`).
    let evictions: [ModelName]
    /// Why the update cannot fit the storage budget, thrown before anything is downloaded.
    let overBudget: ClientError?
}

extension UpdateCheck {
    /// What a call of `scope` does with `release` on this device; reads the disk, changes nothing.
    /// Per model the rollout's choice names: its policy; whether the call covers it; the
    /// variant the device takes (none: the model is left as it is); a refused version (left
    /// as it is); and whether the version in use already is that one.
    func plan(_ release: Release, state: ClientState, scope: UpdateScope, context: PlanContext = PlanContext()) throws -> Planned {
        let (takesCandidate, models) = try chosenModels(release)
        var policies: [String: DownloadPolicy] = [:], variants: [String: VariantChoice] = [:]
        var versions: [String: String] = [:], refused: [String: RefusedVersion] = [:]
        var installs: [CheckedModel] = [], covered: [CheckedModel] = [], pruned: [ModelName] = []
        var later = Set<SHA256Hex>()
        var waiting: [String: WaitReason] = [:], unmeteredOnly = Set<ModelName>()
        for model in models {
            let name = model.name.rawValue
            let policy = configuration.downloadPolicies[name] ?? model.downloadPolicy ?? .prefetch
            policies[name] = policy
            let choice = model.choice(for: configuration.device)
            guard covers(scope, model: model.name, policy: policy) else {
                later.formUnion(choice.chosen?.files.map(\.sha256) ?? [])
                continue
            }
            if !model.variants.isEmpty { variants[name] = choice }
            guard let chosen = choice.chosen else { continue }
            let id = ModelsDirectory.versionID(chosen)
            pruned.append(model.name)
            if let refusal = state.refused[name], refusal.id == id {
                refused[name] = refusal.refusedVersion(model: name)
                continue
            }
            covered.append(chosen)
            if modelsDirectory.current(model.name)?.lastPathComponent != id {
                let (reason, restricted) = waitReason(chosen, bytes: bytesToDownload(of: chosen), context: context)
                if let reason {
                    waiting[name] = reason
                    later.formUnion(chosen.files.map(\.sha256))
                    continue
                }
                if restricted { unmeteredOnly.insert(model.name) }
                installs.append(chosen)
            }
            versions[name] = chosen.version.rawValue
        }
        let verdict = budget(installs, models: models, policies: policies, state: state, context: context, evicting: evicts(scope))
        let plan = UpdatePlan(
            sequence: release.sequence, takesCandidate: takesCandidate, versions: versions, bytesToDownload: try bytesToDownload(installs),
            installs: Dictionary(uniqueKeysWithValues: installs.map { ($0.name.rawValue, $0.version.rawValue) }),
            variants: variants, policies: policies, refused: refused, waiting: waiting, evictions: verdict.evictions.map(\.rawValue))
        return Planned(plan: plan, installs: installs, covered: covered, pruned: pruned, later: later, unmeteredOnly: unmeteredOnly,
                       evictions: verdict.evictions, overBudget: verdict.problem)
    }

    /// The rollout's choice for this device: the candidate (`models`) or the fallback
    /// (`rollback.models`), by the cohort rule `Rollout` implements; filtered by `models`.
    private func chosenModels(_ release: Release) throws -> (Bool, [CheckedModel]) {
        let candidate = release.rollout.map { $0.selects(deviceID: configuration.deviceID, at: configuration.now()) } ?? true
        var models: [CheckedModel]
        do {
            models = candidate || release.rollback == nil ? try release.checkedModels() : try release.checkedRollbackModels()
        } catch {
            throw ClientError.invalidManifest(url: configuration.manifestURL.absoluteString, reason: String(describing: error))
        }
        if let wanted = configuration.models { models = models.filter { wanted.contains($0.name.rawValue) } }
        return (candidate, models)
    }

    /// Whether a call of `scope` may evict on-demand models to stay within the storage
    /// budget. `update(.onDemand)` asks for every model, so none of them is in excess: were
    /// it to evict one, its next call would install that one again and evict another.
    private func evicts(_ scope: UpdateScope) -> Bool {
        if case .policy(.onDemand) = scope { return false }
        return true
    }

    /// Whether a call of `scope` covers the model `name`, whose policy is `policy`.
    private func covers(_ scope: UpdateScope, model name: ModelName, policy: DownloadPolicy) -> Bool {
        switch scope {
        case .model(let requested): return requested == name
        case .policy(let upTo):
            // An on-demand model, once requested, is kept up to date like a prefetch one.
            return policy <= upTo || (policy == .onDemand && upTo == .prefetch && modelsDirectory.current(name) != nil)
        }
    }

    /// Bytes still to download for `models` (each file once; kept versions and what is on
    /// the disk already excluded).
    private func bytesToDownload(_ models: [CheckedModel]) throws -> Int64 {
        var files: [SHA256Hex: CheckedFile] = [:]
        for model in models where modelsDirectory.kept(model) == nil {
            for file in model.files { files[file.sha256] = file }
        }
        var bytes: Int64 = 0
        for file in files.values { bytes = try addSizes(bytes, file.size - downloader.bytesOnDisk(file), of: configuration.manifestURL) }
        return bytes
    }
}
