import Foundation
import ModelCastFormat

/// A model's licence, download conditions and storage in a config file (modelcast profile
/// only): `licence`, `download` as a mapping, `storage`. Model-level keys: a variant
/// holding them is refused as an unknown key of its place.
extension ModelPlace {
    static let licence = ConfigField<Self>("licence", .section(LicencePlace.section), default: .otherwise("none"),
                                           example: "{spdx: Llama-3.2-Community, url: \"https://example.com/LICENSE.txt\", acceptance: required}",
                                           "The model's licence (below); with `acceptance: required` devices download nothing of it before the app records the user's acceptance (`--licence`, `--licence-url`, `--licence-acceptance`).")
    static let storage = ConfigField<Self>("storage", .section(StoragePlace.section), default: .otherwise("the size publish computes, priority 50"),
                                           example: "{install_size: 7GB, priority: 10}", "What the model takes installed, and how readily devices evict it (below).")
}

/// The keys of a model's licence (`models.NAME.licence`).
enum LicencePlace: ConfigPlace {
    static let spdx = ConfigField<Self>("spdx", .text, default: .otherwise("none"), example: "Apache-2.0",
                                        "An SPDX licence identifier or expression (`MIT OR Apache-2.0`, `LicenseRef-…`; 1 to 128 letters, digits, `.-+:()`, single spaces) (`--licence`).")
    static let url = ConfigField<Self>("url", .text, default: .otherwise("none"), example: "\"https://example.com/LICENSE.txt\"",
                                       "Where the licence's text is: an http(s) URL without a user name or password (`--licence-url`).")
    static let acceptance = ConfigField<Self>("acceptance", .choice(of: LicenceAcceptanceChoice.self), default: .value(LicenceAcceptanceChoice.none.rawValue),
                                              example: "required", "`required`: devices ask the user to accept exactly this licence (this SPDX and URL) before downloading (`--licence-acceptance`).")

    static let section = ConfigSection(
        id: "licence", title: "Licence", place: "models.NAME.licence",
        summary: "A model's licence (modelcast profile): `spdx`, `url` or both. Devices record an acceptance for the pair; a release that changes either asks again.",
        fields: [spdx, url, acceptance].map(\.definition))
}

/// The keys of `download` given as a mapping (`models.NAME.download`).
enum DownloadPlace: ConfigPlace {
    static let policy = ConfigField<Self>("policy", .choice(of: DownloadPolicy.self), default: .otherwise("the app decides"), example: "on-demand",
                                          "When devices download the model, as `download: POLICY` says it (`--download`).")
    static let network = ConfigField<Self>("network", .choice(of: NetworkChoice.self), default: .value(NetworkChoice.any.rawValue), example: "unmetered",
                                           "`unmetered`: only on Wi-Fi or Ethernet, never cellular or a hotspot (`--network`).")
    static let cellularMax = ConfigField<Self>("cellular_max", .bytes, default: .otherwise("no cap"), example: "500MB",
                                               "On a metered network, the most bytes the model may still need; more waits for an unmetered one. Not with `network: unmetered` (`--cellular-max`).")
    static let charging = ConfigField<Self>("charging", .choice(of: ChargingChoice.self), default: .value(ChargingChoice.any.rawValue), example: "required",
                                            "`required`: only while the device is charging (`--charging`).")

    static let section = ConfigSection(
        id: "download", title: "Download", place: "models.NAME.download",
        summary: "`download: on-demand` names only the policy; a mapping adds when devices may download the model (modelcast profile; written as the manifest's `download` and `download_conditions`).",
        fields: [policy, network, cellularMax, charging].map(\.definition))
}

/// The keys of a model's storage (`models.NAME.storage`).
enum StoragePlace: ConfigPlace {
    static let installSize = ConfigField<Self>("install_size", .bytes, default: .otherwise("computed: the model's files unpacked"), example: "7GB",
                                               "Bytes the model takes installed, when more than its files (room an app needs beside them); less than publish computes is refused. With variants, each variant's (`--install-size`).")
    static let priority = ConfigField<Self>("priority", .text, default: .value("50"), example: "10",
                                            "0 to 100: under a storage budget, devices evict on-demand models of a lower priority first (`--storage-priority`).")

    static let section = ConfigSection(
        id: "storage", title: "Storage", place: "models.NAME.storage",
        summary: "What a model takes installed (modelcast profile). Publish computes every model's and variant's install size from its files; these raise it or set the eviction priority.",
        fields: [installSize, priority].map(\.definition))
}

extension ConfigFileKeys {
    /// A model's `licence`, `download` (its policy and, as a mapping, conditions) and `storage`.
    static func policies(in entry: ConfigEntry<ModelPlace>) throws -> (download: DownloadPolicy?, policies: ModelPolicies) {
        var policies = ModelPolicies()
        if let licence = try entry.entry(ModelPlace.licence, as: LicencePlace.self, shape: "a mapping with spdx, url and acceptance") {
            if let spdx = try licence.text(LicencePlace.spdx) { try policies.setSPDX(spdx, context: "\(licence.path(LicencePlace.spdx))") }
            if let url = try licence.text(LicencePlace.url) { try policies.setLicenceURL(url, context: "\(licence.path(LicencePlace.url))") }
            policies.acceptance = try licence.choice(LicencePlace.acceptance, as: LicenceAcceptanceChoice.self)
        }
        var download: DownloadPolicy?
        switch try entry.choiceOrEntry(ModelPlace.download, as: DownloadPolicy.self, entry: DownloadPlace.self) {
        case .none: break
        case .choice(let policy): download = policy
        case .entry(let conditions):
            download = try conditions.choice(DownloadPlace.policy, as: DownloadPolicy.self)
            policies.network = try conditions.choice(DownloadPlace.network, as: NetworkChoice.self)
            if let cap = try conditions.text(DownloadPlace.cellularMax) { try policies.setCellularMax(cap, context: "\(conditions.path(DownloadPlace.cellularMax))") }
            policies.charging = try conditions.choice(DownloadPlace.charging, as: ChargingChoice.self)
        }
        if let storage = try entry.entry(ModelPlace.storage, as: StoragePlace.self, shape: "a mapping with install_size and priority") {
            if let size = try storage.text(StoragePlace.installSize) { try policies.setInstallSize(size, context: "\(storage.path(StoragePlace.installSize))") }
            if let priority = try storage.text(StoragePlace.priority) { try policies.setPriority(priority, context: "\(storage.path(StoragePlace.priority))") }
        }
        return (download, policies)
    }
}
