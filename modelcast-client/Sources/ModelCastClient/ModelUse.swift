import Foundation
import ModelCastFormat

/// When each model was last put to use (`ModelUpdater.beginUse`), persisted in
/// `last-use.json`: under a storage budget, the on-demand model used longest ago goes
/// first. A model never marked goes by its install time.
struct LastUse: Sendable {
    let path: URL

    func load() -> [String: Date] {
        guard let data = FileManager.default.contents(atPath: path.path),
              let seconds = try? JSONDecoder().decode([String: Double].self, from: data) else { return [:] }
        return seconds.mapValues { Date(timeIntervalSince1970: $0) }
    }

    /// Best effort: a use that cannot be recorded costs an eviction order, never the app's work.
    func record(_ model: ModelName, at date: Date) {
        RecordFileLock.updating(path) {
            var seconds = load().mapValues(\.timeIntervalSince1970)
            seconds[model.rawValue] = date.timeIntervalSince1970
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try? encoder.encode(seconds).write(to: path, options: .atomic)  // best effort (above)
        }
    }
}

extension ModelUpdater {
    /// The app starts using `model` (loads it): until `endUse`, no storage budget evicts
    /// it. Also records the time, persisted, for the least-recently-used order of evictions.
    public func beginUse(_ model: String) {
        inUse[model, default: 0] += 1
        if let name = try? ModelName(model) { lastUse.record(name, at: configuration.now()) }
    }

    /// The app stopped using `model` (one `endUse` per `beginUse`).
    public func endUse(_ model: String) {
        guard let count = inUse[model] else { return }
        inUse[model] = count > 1 ? count - 1 : nil
    }

    /// What the app reports about the device now (network, charging), for the next calls;
    /// replaces `ClientConfiguration.conditions`.
    public func setConditions(_ conditions: DeviceConditions) {
        self.conditions = conditions
    }
}
