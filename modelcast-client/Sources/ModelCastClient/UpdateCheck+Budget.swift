import Foundation
import ModelCastFormat

/// A storage budget's verdict on an update: the models it evicts to fit, or why it cannot.
struct BudgetVerdict: Sendable {
    var evictions: [ModelName] = []
    /// `ClientError.overStorageBudget`, thrown before anything is downloaded or evicted.
    var problem: ClientError?
}

extension UpdateCheck {
    /// Whether installing `installs` keeps every installed version (current and kept, every
    /// model) within `ClientConfiguration.storageBudget`: the bytes on disk now, plus each
    /// install's size (the manifest's `storage.install_size`, else its files' sizes), less
    /// the versions the switch prunes. Over it, on-demand models go (never essential or
    /// prefetch ones, one in use, or one this update installs): the lowest storage priority
    /// first, then the least recently used. `models`: every model the manifest names for
    /// this device (their policies and priorities). Without `evicting` (a call that wants
    /// every model), nothing is evicted and an update over the budget is refused.
    func budget(_ installs: [CheckedModel], models: [CheckedModel], policies: [String: DownloadPolicy], state: ClientState,
                context: PlanContext, evicting: Bool = true) -> BudgetVerdict {
        guard let budget = configuration.storageBudget, !installs.isEmpty else { return BudgetVerdict() }
        var total: Int64 = 0
        var sizes: [ModelName: Int64] = [:]
        let installed = modelsDirectory.installedVersions().map(\.name)
        for name in installed {
            let bytes = Self.bytes(under: modelsDirectory.versionsDirectory(name))
            sizes[name] = bytes
            total = Installer.add(total, bytes)
        }
        var firstOver: ModelName?
        for model in installs.sorted(by: { $0.name.rawValue < $1.name.rawValue }) where modelsDirectory.kept(model) == nil {
            let size = model.storage?.installSize ?? model.files.reduce(Int64(0)) { Installer.add($0, $1.size) }
            total = Installer.add(total, size) - prunedBytes(model, state: state)
            if firstOver == nil, total > budget { firstOver = model.name }
        }
        guard let model = firstOver ?? (total > budget ? installs.first?.name : nil) else { return BudgetVerdict() }
        let installing = Set(installs.map(\.name))
        let priority = Dictionary(models.map { ($0.name, $0.storage?.priority ?? StorageHint.defaultPriority) }, uniquingKeysWith: { a, _ in a })
        // Lowest priority first, then used longest ago (never used: by its install time).
        let order = installed.filter { !installing.contains($0) }.sorted { a, b in
            let (pa, pb) = (priority[a] ?? StorageHint.defaultPriority, priority[b] ?? StorageHint.defaultPriority)
            if pa != pb { return pa < pb }
            let (ua, ub) = (lastUsed(a, context: context), lastUsed(b, context: context))
            return ua != ub ? ua < ub : a.rawValue < b.rawValue
        }
        let evictable = !evicting ? [] : order.filter { name in
            policies[name.rawValue] == .onDemand && !context.inUse.contains(name.rawValue)
        }
        var remaining = total
        var evictions: [ModelName] = []
        for name in evictable where remaining > budget {
            evictions.append(name)
            remaining -= sizes[name] ?? 0
        }
        if remaining <= budget { return BudgetVerdict(evictions: evictions) }
        // Named for the app: what else would have to go (the models it may not evict).
        for name in order where remaining > budget && !evictions.contains(name) {
            evictions.append(name)
            remaining -= sizes[name] ?? 0
        }
        return BudgetVerdict(problem: .overStorageBudget(model: model.rawValue, needed: total, budget: budget, wouldEvict: evictions.map(\.rawValue)))
    }

    /// Bytes of `model`'s versions the switch to it prunes: those neither in use after it
    /// nor among the `keepPreviousVersions` kept.
    private func prunedBytes(_ model: CheckedModel, state: ClientState) -> Int64 {
        let current = modelsDirectory.current(model.name)?.lastPathComponent
        var keep = Set<String>()
        var history = current.map { [$0] } ?? []
        history += state.installed[model.name.rawValue]?.previous ?? []
        for id in history where keep.count < configuration.keepPreviousVersions { keep.insert(id) }
        let versions = modelsDirectory.versionsDirectory(model.name)
        // No directory (a first install) frees nothing.
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: versions.path)) ?? []
        return entries.filter { !keep.contains($0) }.reduce(Int64(0)) { Installer.add($0, Self.bytes(under: versions.appendingPathComponent($1))) }
    }

    private func lastUsed(_ name: ModelName, context: PlanContext) -> Date {
        if let date = context.lastUse[name.rawValue] { return date }
        // Never used and its install time unreadable: it counts as used longest ago.
        guard let current = modelsDirectory.current(name),
              let date = try? FileManager.default.attributesOfItem(atPath: current.path)[.modificationDate] as? Date else { return .distantPast }
        return date
    }

    /// The bytes of the regular files under `directory` (links not followed).
    static func bytes(under directory: URL) -> Int64 {
        guard let walk = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey]) else { return 0 }
        var total: Int64 = 0
        for case let url as URL in walk {
            guard let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey]), values.isRegularFile == true else { continue }
            total = Installer.add(total, Int64(values.fileSize ?? 0))
        }
        return total
    }
}
