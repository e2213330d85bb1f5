import Foundation
import ModelCastFormat

/// The licences the user accepted on this device, per model (`licences.json` in the
/// client's directory): a model whose licence asks for acceptance downloads only when the
/// pair (SPDX, URL) recorded for it is exactly the manifest's. A release that changes
/// either asks again. Written whole to a temporary file and renamed, so a crash leaves
/// the old acceptances or the new ones.
struct LicenceAcceptances: Sendable {
    let path: URL

    /// Model name → the accepted terms. A missing file is no acceptance; an unreadable one
    /// too (fail safe: the user is asked again, nothing is downloaded without it).
    func load() -> [String: LicenceTerms] {
        guard let data = FileManager.default.contents(atPath: path.path),
              let accepted = try? JSONDecoder().decode([String: LicenceTerms].self, from: data) else { return [:] }
        return accepted.filter { (try? ModelName($0.key)) != nil }
    }

    /// Records `terms` for `model`, replacing what was recorded for it.
    /// Another process's acceptance recorded at the same moment is kept (`RecordFileLock`).
    func accept(_ terms: LicenceTerms, model: ModelName) throws {
        try RecordFileLock.updating(path) {
            var accepted = load()
            accepted[model.rawValue] = terms
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            do { try encoder.encode(accepted).write(to: path, options: .atomic) } catch { throw ClientError.io(path, error) }
        }
    }
}

extension ModelUpdater {
    /// Records that the user accepted `licence` for `model` (persisted in the client's
    /// directory, `licences.json`). Call it after showing the licence the plan names
    /// (`UpdatePlan.waiting`: `.licence(spdx:url:)`), with exactly those values: the gate
    /// opens only for the same pair, so a release with another licence waits again.
    /// - Throws: `ClientError.configuration` for a name that is no model name;
    ///   `ClientError.io` when the file cannot be written.
    public func acceptLicence(model: String, licence: LicenceTerms) throws {
        guard let name = try? ModelName(model) else {
            throw ClientError.configuration(reason: "acceptLicence: \(quotedValue(model)) is not a model name")
        }
        try licences.accept(licence, model: name)
    }

    /// The licences accepted on this device, by model name.
    public nonisolated func acceptedLicences() -> [String: LicenceTerms] {
        licences.load()
    }
}
