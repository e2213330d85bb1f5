import Foundation
import ModelCastFormat

/// How reports write a model entry's licence, download conditions and storage (history,
/// the release page, `rollout simulate`, publish's notes), so each says it the same way.
/// Values come from manifests a target holds: control characters are escaped.
package enum ModelPolicyText {
    /// `SPDX (URL)`, `SPDX` or `URL`: which licence it is.
    package static func licenceName(_ licence: ReleaseLicence) -> String {
        let text: String
        switch (licence.spdx, licence.url) {
        case let (spdx?, url?): text = "\(spdx) (\(url))"
        case let (spdx?, nil): text = spdx
        case let (nil, url?): text = url
        case (nil, nil): text = "(none)"
        }
        return escapingControlCharacters(text)
    }

    /// `licence MIT (URL), acceptance required`.
    package static func licence(_ licence: ReleaseLicence) -> String {
        "licence \(licenceName(licence))" + (licence.acceptance.map { ", acceptance \(escapingControlCharacters($0))" } ?? "")
    }

    /// `network unmetered, cellular at most 500000000 bytes, charging required`; nil when it says nothing.
    package static func conditions(_ conditions: ReleaseDownloadConditions) -> String? {
        var parts: [String] = []
        if let network = conditions.network { parts.append("network \(escapingControlCharacters(network))") }
        if let cap = conditions.cellularMax { parts.append("cellular at most \(cap) bytes") }
        if let charging = conditions.charging { parts.append("charging \(escapingControlCharacters(charging))") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// `installs 6442450944 bytes (6.0 GiB), priority 10`.
    package static func storage(_ storage: ReleaseStorage) -> String {
        "installs \(storage.installSize) bytes (\(formatBytes(storage.installSize)))" + (storage.priority.map { ", priority \($0)" } ?? "")
    }

    /// Every one the entry has, `; `-separated; nil when it has none.
    package static func summary(_ model: ReleaseModel) -> String? {
        let parts = [model.licence.map(licence), model.downloadConditions.flatMap(conditions), model.storage.map(storage)].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
