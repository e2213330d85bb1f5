import Foundation

/// The publish command's inputs as the user typed them (flags, and the path of a
/// `PublishConfigFile`); `makeRequest` merges them
/// with the config file, types the metadata for the profile, and checks them.
package struct PublishCommandLine: Sendable {
    /// `PATH` (files of one model) or `NAME=PATH` (a file of model NAME).
    package var models: [String] = []
    package var name: String?
    package var version: String?
    package var profile: ManifestProfile?
    package var baseURL: String?
    package var target: String?
    package var configPath: String?
    /// `[MODEL:]key=value`.
    package var meta: [String] = []
    package var minAppVersion: String?
    package var channel: String?
    package var manifestKey: String?
    package var manifestCacheControl: String?
    package var compression: ZipCompression = .store
    /// `--no-zip`: directory models given on the command line are published as trees.
    package var noZip = false
    /// The catalog's prototypes file (JSON), published beside the models.
    package var prototypesPath: String?
    /// The prototypes' version; default: the file's own top-level "version".
    package var prototypesVersion: String?
    /// The prototypes' class count; default: the length of the file's "classes" array.
    package var prototypesClasses: Int?
    /// `--variant VARIANT=PATH`: variants of the model named by `name`, most preferred first.
    package var variants: [String] = []
    /// `--requires VARIANT:KEY=VALUE`.
    package var requires: [String] = []
    package var defaultVariant: String?
    /// `--download`: the policy of the models given on the command line.
    package var download: DownloadPolicy?
    /// The licence, download-condition and storage flags, for the models given on the command line.
    package var policyFlags = ModelPolicyFlags()
    /// How the release goes live (templates, dry run, time, signing).
    package var goLive = GoLive()
    /// Where the models' signing key comes from when the config file may name it too.
    package var modelSigning = ModelSigningKeySource()
    /// What only a publish decides (removed models, a moved base URL, hosts, rollout).
    package var options = PublishRequest.Options()
    /// Reports packing and hashing progress; nil reports nothing.
    package var progress: ProgressFactory?

    package init() {}

    /// The target directory and the checked request.
    package func makeRequest() throws -> (target: String, request: PublishRequest) {
        guard !models.isEmpty || !variants.isEmpty || configPath != nil else {
            throw MissingSetting("nothing to publish: give MODEL files (with --version, --base-url and --to) or --config FILE")
        }
        let config = try configPath.map(PublishConfigFile.load(path:))
        let profile = profile ?? config?.profile ?? .modelcast
        guard let baseURL = baseURL ?? config?.baseURL else {
            throw MissingSetting("--base-url is required (the https:// address the target directory is served from)")
        }
        guard let target = target ?? config?.target else {
            throw MissingSetting("--to is required (a directory, or s3://bucket/prefix)")
        }
        let models = try typedModels(config?.models ?? [], profile: profile)
        let prototypes = try self.prototypes(config?.prototypes, profile: profile)
        var options = self.options
        options.modelSigning = try modelSigning.settings(configPath: config?.modelSigningKey)
        options.unsignedModels = modelSigning.unsigned
        if options.modelSigning != nil, !profile.carriesModelSignatures {
            throw ModelCastError.usage("--model-signing-key: model signatures are named in the manifest's model_signature, which only the modelcast profile has (this is --profile \(profile.rawValue)); sign the files with modelcast sign-model instead")
        }
        let request = try PublishRequest(
            models: models, prototypes: prototypes, profile: profile, baseURL: baseURL,
            manifestKey: manifestKey ?? config?.manifestKey ?? PublishRequest.defaultManifestKey,
            manifestCacheControl: manifestCacheControl ?? config?.manifestCacheControl ?? CachePolicy.manifestDefault,
            channel: channel ?? config?.channel ?? PublishRequest.defaultChannel,
            minAppVersion: minAppVersion ?? config?.minAppVersion, meta: config?.meta ?? [:],
            compression: compression, progress: progress, goLive: goLive, options: options)
        return (target, request)
    }

    /// The models to publish, their metadata typed for `profile`: the config file's with
    /// the command line's merged in and `--meta` applied.
    private func typedModels(_ configured: [PublishRequest.Model], profile: ManifestProfile) throws -> [PublishRequest.Model] {
        var models = try mergedModels(configured)
        guard !models.isEmpty else {
            throw MissingSetting("nothing to publish: give MODEL files or --config with a models section")
        }
        try applyMeta(to: &models, profile: profile)
        // Values from the config file are typed for the profile too.
        for index in models.indices {
            for field in profile.modelFields {
                if let value = models[index].meta.value(at: field.path) {
                    models[index].meta.set(try MetaInput.value(value, for: field, context: "model \(models[index].name)"), at: field.path)
                }
            }
        }
        return models
    }

    /// The prototypes: `--prototypes FILE`, else the config file's with `--prototypes-version`
    /// and `--prototypes-classes` applied; their metadata typed for `profile`.
    private func prototypes(_ configured: PublishRequest.Model?, profile: ManifestProfile) throws -> PublishRequest.Model? {
        if let prototypesClasses, prototypesClasses < 0 {
            throw ModelCastError.usage("--prototypes-classes \(prototypesClasses) must be a count of classes, 0 or more")
        }
        if let prototypesVersion, SemanticVersion(prototypesVersion) == nil {
            throw ModelCastError.usage("--prototypes-version '\(prototypesVersion)' is not a semantic version (MAJOR.MINOR.PATCH, e.g. 2.1.0)")
        }
        guard var prototypes = try prototypesPath.map(prototypesModel) ?? configured else { return nil }
        if prototypesPath == nil {
            if let prototypesVersion { prototypes.version = prototypesVersion }
            if let prototypesClasses { prototypes.meta["classes"] = .int(Int64(prototypesClasses)) }
        }
        for field in profile.prototypeFields {
            if let value = prototypes.meta.value(at: field.path) {
                prototypes.meta.set(try MetaInput.value(value, for: field, context: "prototypes"), at: field.path)
            }
        }
        return prototypes
    }

    /// The config file's models with the command line's MODEL arguments merged in: plain
    /// paths are the files of one model (a GGUF and its mmproj), named by --name or else
    /// after the first of them; `NAME=PATH` adds a file to model NAME. `--version` applies
    /// to the models given here only: a config file names each model's version, and one
    /// `--version` over all of them would move unchanged models to a new version (every
    /// device downloading the same bytes again), so that combination is refused.
    private func mergedModels(_ configured: [PublishRequest.Model]) throws -> [PublishRequest.Model] {
        var (models, given) = try mergedPaths(configured)
        if !variants.isEmpty {
            try addVariants(to: &models)
            given.append(name!)
        }
        if let download {
            guard !self.models.isEmpty || !variants.isEmpty else {
                throw ModelCastError.usage("--download \(download.rawValue) applies to the models given on the command line, and there are none: set download per model in the config file")
            }
            for index in models.indices where given.contains(models[index].name) { models[index].download = download }
        }
        let flags = policyFlags.given
        if !flags.isEmpty {
            guard !self.models.isEmpty || !variants.isEmpty else {
                throw ModelCastError.usage("\(flags.joined(separator: ", ")) appl\(flags.count == 1 ? "ies" : "y") to the models given on the command line, and there are none: set licence, download and storage per model in the config file")
            }
            let policies = try policyFlags.parsed()
            for index in models.indices where given.contains(models[index].name) { models[index].policies = models[index].policies.merging(policies) }
        }
        if variants.isEmpty, defaultVariant != nil || !requires.isEmpty {
            throw ModelCastError.usage("\(defaultVariant != nil ? "--default-variant" : "--requires") needs --variant VARIANT=PATH")
        }
        return models
    }

    /// `--variant VARIANT=PATH` (in preference order) with `--requires VARIANT:KEY=VALUE`:
    /// the variants of the model `--name` names, each at `--version`.
    private func addVariants(to models: inout [PublishRequest.Model]) throws {
        guard let name else { throw MissingSetting("--variant needs --name: the model the variants are of") }
        try PublishRequest.validateName(name)
        guard let version else { throw MissingSetting("--version is required with --variant") }
        for argument in self.models where try Self.split(argument).name ?? name == name {
            throw ModelCastError.usage("\(escapingControlCharacters(argument)) and --variant both give files of model \(name): give its files as --variant VARIANT=PATH only")
        }
        var variants: [PublishRequest.Variant] = []
        for text in self.variants {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                throw ModelCastError.usage("--variant \(quotedValue(text)) is not VARIANT=PATH")
            }
            let variant = String(text[..<equals])
            if let index = variants.firstIndex(where: { $0.name == variant }) {
                variants[index].files.append(String(text[text.index(after: equals)...]))
            } else {
                variants.append(PublishRequest.Variant(name: variant, version: version, files: [String(text[text.index(after: equals)...])],
                                                       layout: noZip ? .tree : .zip))
            }
        }
        for text in requires {
            guard let colon = text.firstIndex(of: ":"), let equals = text[colon...].firstIndex(of: "=") else {
                throw ModelCastError.usage("--requires \(quotedValue(text)) is not VARIANT:KEY=VALUE (e.g. 3b:min_memory=6GiB)")
            }
            let variant = String(text[..<colon])
            guard let index = variants.firstIndex(where: { $0.name == variant }) else {
                throw ModelCastError.usage("--requires \(quotedValue(text)): no --variant named \(quotedValue(variant)) (variants: \(variants.map(\.name).joined(separator: ", ")))")
            }
            do {
                try VariantInput.apply(key: String(text[text.index(after: colon)..<equals]), value: String(text[text.index(after: equals)...]),
                                       to: &variants[index].requires, context: "--requires \(text)")
            } catch let problem as ConfigProblem {
                throw ModelCastError.usage(problem.message)
            }
        }
        var model = PublishRequest.Model(name: name, version: version, files: [])
        model.variants = variants
        model.defaultVariant = defaultVariant
        models.removeAll { $0.name == name }
        models.append(model)
    }

    /// The models with the MODEL arguments merged in, and the names those arguments gave.
    private func mergedPaths(_ configured: [PublishRequest.Model]) throws -> (models: [PublishRequest.Model], given: [String]) {
        guard !self.models.isEmpty else {
            if let version, !configured.isEmpty {
                let named = configured.map { "\($0.name) \($0.version)" }.joined(separator: ", ")
                throw ModelCastError.usage("--version \(version) with --config \(configPath ?? "") would set every model it names to \(version) (\(named)), so devices would download unchanged models again: set each model's version in the config, or publish one model with NAME=PATH --version \(version)")
            }
            return (configured, [])
        }
        var models = configured
        guard let version = version else {
            throw MissingSetting("--version is required when models are given on the command line")
        }
        var order: [String] = []
        var files: [String: [String]] = [:]
        var plainName = name
        for argument in self.models {
            let (explicitName, path) = try Self.split(argument)
            if explicitName == nil, plainName == nil { plainName = try Self.modelName(namedAfter: path) }
            let modelName = explicitName ?? plainName!
            if files[modelName] == nil { order.append(modelName) }
            files[modelName, default: []].append(path)
        }
        for modelName in order {
            if let index = models.firstIndex(where: { $0.name == modelName }) {
                models[index].files = files[modelName]!
                models[index].version = version
            } else {
                models.append(PublishRequest.Model(name: modelName, version: version, files: files[modelName]!))
            }
            if noZip, let index = models.firstIndex(where: { $0.name == modelName }) {
                models[index].layout = .tree
            }
        }
        return (models, order)
    }

    /// Applies each `--meta [MODEL:]KEY=VALUE`, typed for `profile`. A fixed-shape profile
    /// takes only its own fields (anything else would be dropped silently): an unknown key
    /// is refused with the closest field it has.
    private func applyMeta(to models: inout [PublishRequest.Model], profile: ManifestProfile) throws {
        for text in meta {
            let assignment = try MetaInput.parseAssignment(text)
            if !profile.writesAnyMeta, !profile.metaKeys.contains(assignment.path) {
                // A fixed-shape profile writes only its own fields: anything else would be dropped silently.
                let suggestion = Spelling.suggestion(for: assignment.path, among: profile.metaKeys + profile.computedFields).map {
                    profile.computedFields.contains($0) ? " (\($0) is computed from the artifact and cannot be set)" : " (did you mean \($0)?)"
                } ?? ""
                let known = profile.metaKeys.isEmpty ? "it takes no --meta keys" : "its keys are \(profile.metaKeys.joined(separator: ", "))"
                throw ModelCastError.usage("--meta \(text): profile \(profile.rawValue) has no field \(assignment.path)\(suggestion); \(known)")
            }
            if let target = assignment.model {
                guard let index = models.firstIndex(where: { $0.name == target }) else {
                    throw ModelCastError.usage("--meta \(text): no model named \(target) (models: \(models.map(\.name).joined(separator: ", ")))")
                }
                let field = profile.modelFields.first { $0.path == assignment.path }
                models[index].meta.set(try MetaInput.value(fromText: assignment.value, for: field, context: "--meta \(text)"), at: assignment.path)
            } else if let field = profile.modelFields.first(where: { $0.path == assignment.path }) {
                for index in models.indices {
                    models[index].meta.set(try MetaInput.value(fromText: assignment.value, for: field, context: "--meta \(text)"), at: assignment.path)
                }
            } else {
                // Free-form metadata (the modelcast profile; the others were checked above): per model.
                for index in models.indices { models[index].meta.set(.string(assignment.value), at: assignment.path) }
            }
        }
    }

    /// The prototypes named by `--prototypes FILE`: version and class count from the
    /// flags, else from what the file itself declares.
    private func prototypesModel(_ path: String) throws -> PublishRequest.Model {
        guard let info = try linkStatus(path) else { throw ModelCastError.notFound(path: path) }
        guard info.st_size <= Self.prototypesLimit else {
            throw ModelCastError.usage("--prototypes \(path) is larger than \(Self.prototypesLimit >> 20) MiB")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ModelCastError.unreadable(path: path, reason: (error as NSError).localizedFailureReason ?? error.localizedDescription)
        }
        // try?: anything but a JSON object is refused just below, naming the file.
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ModelCastError.usage("--prototypes \(path) is not a JSON object")
        }
        guard let version = prototypesVersion ?? object["version"] as? String else {
            throw ModelCastError.usage("--prototypes \(path) declares no top-level \"version\" string: pass --prototypes-version VERSION")
        }
        let declaredClasses = (object["classes"] as? [Any]).map(\.count) ?? (object["classes"] as? Int)
        guard let classes = prototypesClasses ?? declaredClasses else {
            throw ModelCastError.usage("--prototypes \(path) declares no \"classes\" (an array or a count): pass --prototypes-classes N")
        }
        return PublishRequest.Model(name: "prototypes", version: version, files: [path], meta: ["classes": .int(Int64(classes))])
    }

    /// Largest prototypes file read to find its version and classes.
    static let prototypesLimit = 64 << 20

    /// `NAME=PATH` → (NAME, PATH); a plain `PATH` → (nil, PATH).
    static func split(_ argument: String) throws -> (name: String?, path: String) {
        if let equals = argument.firstIndex(of: "="), !FileManager.default.fileExists(atPath: argument) {
            let name = String(argument[..<equals])
            let path = String(argument[argument.index(after: equals)...])
            try PublishRequest.validateName(name)
            return (name, path)
        }
        return (nil, argument)
    }

    /// The model name a plain path gives: its file name without the extension.
    static func modelName(namedAfter path: String) throws -> String {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        var stem = PathText.lastComponent(trimmed)
        if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = String(stem[..<dot]) }
        do {
            try PublishRequest.validateName(stem)
        } catch {
            throw ModelCastError.usage("cannot name a model after \(escapingControlCharacters(path)): '\(escapingControlCharacters(stem))' may use only letters, digits, '.', '_' and '-'; pass --name NAME or NAME=PATH")
        }
        return stem
    }
}
