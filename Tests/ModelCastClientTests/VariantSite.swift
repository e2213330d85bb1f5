import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// A site whose manifest has variants and download policies before the CLI writes them:
/// each variant's file is published with the real CLI as a model of its own
/// (`NAME_VARIANT`), then the served `manifest.json` is reshaped (unsigned: these devices
/// pin no key) so that model NAME has the variants, in order, its own fields being its
/// default variant's. The files' keys, URLs, SHA-256 and sizes stay the CLI's. Before the
/// CLI runs again, its own manifest goes back in place (it reads the live one).
final class VariantSite {
    /// A model as the reshaped manifest names it.
    struct Model {
        var name: String
        /// In the order devices prefer them; empty for a model without variants.
        var variants: [Variant] = []
        /// The variant whose files are the model's own (old clients install it); default the last.
        var defaultVariant: String?
        /// The model's `download` field.
        var download: String?
        /// For a model without variants: its file.
        var file: String?
        /// More keys for a model without variants, before the CLI writes them (`licence`,
        /// `download_conditions`, `storage`), as JSON values.
        var fields: [String: Any] = [:]
    }

    struct Variant {
        var name: String
        /// The `requires` object, as JSON values.
        var requires: [String: Any] = [:]
        var file: String
    }

    let site: ClientTests.Site
    private var cliManifest: Data?
    private var lastModels: [Model] = []

    init() throws { site = try ClientTests.Site() }

    var work: Scratch { site.work }
    var manifestPath: String { site.root + "/manifest.json" }

    /// Publishes `models` at `version` with the CLI (`extra`: more flags, e.g. `--rollout 30%`),
    /// then reshapes the manifest.
    @discardableResult
    func publish(_ models: [Model], version: String, _ extra: [String] = []) throws -> ProcessOutput {
        try restoreCLIManifest()
        var files: [String] = []
        for model in models {
            if model.variants.isEmpty { files.append("\(model.name)=\(model.file!)") }
            for variant in model.variants { files.append("\(model.name)_\(variant.name)=\(variant.file)") }
        }
        // Models of the live release this one leaves out are removed on purpose.
        let named = Set(files.map { String($0.prefix { $0 != "=" }) })
        let live = cliManifest.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }?["models"] as? [String: Any] ?? [:]
        let removed = live.keys.sorted().filter { !named.contains($0) }.flatMap { ["--remove-model", $0] }
        let published = try PublishRun(files, name: nil, version: version, baseURL: site.base, to: site.root,
                                       ["--sign", site.work.at("k.key")] + removed + extra).succeeds()
        lastModels = models
        try reshape()
        return published
    }

    /// Runs another CLI command (`rollout`, `rollback`) on the CLI's manifest, then reshapes.
    func run(_ arguments: [String]) throws {
        try restoreCLIManifest()
        try site.run(arguments)
        try reshape()
    }

    private func restoreCLIManifest() throws {
        try cliManifest?.write(to: URL(fileURLWithPath: manifestPath))
    }

    private func reshape() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: manifestPath))
        cliManifest = data
        var manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        manifest["models"] = try reshape(XCTUnwrap(manifest["models"] as? [String: Any]))
        if var rollback = manifest["rollback"] as? [String: Any] {
            rollback["models"] = try reshape(XCTUnwrap(rollback["models"] as? [String: Any]))
            manifest["rollback"] = rollback
        }
        let reshaped = try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys, .prettyPrinted])
        try reshaped.write(to: URL(fileURLWithPath: manifestPath))
    }

    /// The CLI's models (`NAME_VARIANT` and plain ones) as the models `lastModels` describes.
    private func reshape(_ published: [String: Any]) throws -> [String: Any] {
        var models = published
        for model in lastModels {
            guard !model.variants.isEmpty else {
                if var plain = models[model.name] as? [String: Any], model.download != nil || !model.fields.isEmpty {
                    if let download = model.download { plain["download"] = download }
                    plain.merge(model.fields) { _, new in new }
                    models[model.name] = plain
                }
                continue
            }
            var variants: [[String: Any]] = []
            for variant in model.variants {
                guard var entry = models.removeValue(forKey: "\(model.name)_\(variant.name)") as? [String: Any] else { return published }
                entry["name"] = variant.name
                entry["requires"] = variant.requires
                variants.append(entry)
            }
            let own = model.defaultVariant ?? model.variants.last!.name
            var entry = try XCTUnwrap(variants.first { $0["name"] as? String == own })
            entry.removeValue(forKey: "name")
            entry.removeValue(forKey: "requires")
            entry["variant"] = own
            entry["variants"] = variants
            if let download = model.download { entry["download"] = download }
            models[model.name] = entry
        }
        return models
    }

    /// A device of this site: unsigned manifests (no key), the given profile.
    func configuration(directory: String, device: DeviceProfile, deviceID: String = "device-1") -> ClientConfiguration {
        var configuration = site.configuration(device: deviceID, directory: directory, keys: [])
        configuration.device = device
        return configuration
    }

    /// The GET requests for `file`'s published name (`…/NAME_VARIANT/VERSION/file`).
    func downloads(of model: String) -> [String] {
        site.requests.filter { $0.contains("/models/models/\(model)/") }
    }
}

/// A `shouldDownload` hook's memory: the plans it was given, and what it answers.
actor HookRecorder {
    private(set) var plans: [UpdatePlan] = []
    private var goAhead: Bool

    init(answer: Bool) { goAhead = answer }

    func record(_ plan: UpdatePlan) -> Bool {
        plans.append(plan)
        return goAhead
    }

    func answer(_ value: Bool) { goAhead = value }
}
