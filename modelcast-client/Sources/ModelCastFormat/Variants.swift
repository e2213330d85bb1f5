import Foundation

/// One variant of a model (`models.NAME.variants[i]`): its name, what a device needs to run
/// it, and its own version and files. A device takes the first variant, in the manifest's
/// order, whose requirements it meets.
public struct ReleaseVariant: Codable, Equatable, Sendable {
    /// The variant's name (`3b-q4`, `ane`): letters, digits, `.`, `_`, `-`. It is part of
    /// its files' keys (`models/NAME/variants/VARIANT/VERSION/FILE`).
    public var name: String
    /// The requirements, as written (`VariantRequirements` parses them): unknown keys are
    /// kept, and a device that does not know one does not take the variant.
    public var requires: [String: JSONValue]
    /// The variant's version, files, tree directory, metadata and interface.
    public var model: ReleaseModel

    public init(name: String, requires: [String: JSONValue] = [:], model: ReleaseModel) {
        self.name = name
        self.requires = requires
        self.model = model
    }

    enum CodingKeys: String, CodingKey { case name, requires }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        requires = try c.decodeIfPresent([String: JSONValue].self, forKey: .requires) ?? [:]
        model = try ReleaseModel(from: decoder)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(requires, forKey: .requires)
        try model.encode(to: encoder)
    }

    public func jsonValue() -> JSONValue {
        var members: [JSONValue.Member] = [.init("name", .string(name)), .init("requires", Release.sortedObject(requires))]
        if case .object(let rest) = model.jsonValue() { members += rest }
        return .object(members)
    }
}

/// When a device downloads a model (like Apple's asset packs): `essential` before the app
/// uses it at first launch, `prefetch` in the background after launch, `on-demand` only
/// once the app asks for it.
public enum DownloadPolicy: String, Codable, Sendable, CaseIterable, Comparable {
    case essential
    case prefetch
    case onDemand = "on-demand"

    public init(parsing text: String) throws {
        guard let policy = DownloadPolicy(rawValue: text) else {
            throw ManifestText.refuse(text, "is not a download policy (essential, prefetch or on-demand)")
        }
        self = policy
    }

    private var rank: Int { Self.allCases.firstIndex(of: self)! }
    public static func < (a: DownloadPolicy, b: DownloadPolicy) -> Bool { a.rank < b.rank }
}

/// A hardware accelerator a variant can require.
public enum Accelerator: String, Codable, Sendable, CaseIterable, Comparable {
    case neuralEngine = "neural-engine"
    case gpu

    public static func < (a: Accelerator, b: Accelerator) -> Bool { a.rawValue < b.rawValue }
}

/// The operating systems a variant can name.
public enum DevicePlatform: String, Codable, Sendable, CaseIterable {
    case ios, macos, tvos, visionos, watchos, linux, android
}

/// What a variant needs of a device, parsed. Every requirement is optional; a variant
/// with none runs anywhere.
public struct VariantRequirements: Sendable, Equatable {
    /// Physical memory, in bytes (`min_memory`).
    public var minMemory: Int64?
    /// The platforms it runs on, each with its lowest OS version (`platforms`:
    /// `{"ios": "17.0", "macos": "14.0"}`; `"0"` for any version). nil: any platform.
    public var platforms: [DevicePlatform: AppVersion]?
    /// Accelerators the device must have (`accelerators`: `["neural-engine"]`).
    public var accelerators: Set<Accelerator>
    /// CPU architectures it runs on (`architectures`: `["arm64"]`). Empty: any.
    public var architectures: Set<String>
    /// Capabilities the app must declare (`capabilities`: free-form names it matches).
    public var capabilities: Set<String>
    /// Requirement keys this version of the format does not know: a device never takes
    /// a variant it cannot judge.
    public var unknown: [String]

    public static let knownKeys = ["min_memory", "platforms", "accelerators", "architectures", "capabilities"]

    public init(minMemory: Int64? = nil, platforms: [DevicePlatform: AppVersion]? = nil, accelerators: Set<Accelerator> = [],
                architectures: Set<String> = [], capabilities: Set<String> = [], unknown: [String] = []) {
        self.minMemory = minMemory
        self.platforms = platforms
        self.accelerators = accelerators
        self.architectures = architectures
        self.capabilities = capabilities
        self.unknown = unknown
    }

    /// Parses a `requires` object; a bad value throws naming its key.
    public init(json: [String: JSONValue]) throws {
        self.init()
        func at<T>(_ key: String, _ make: () throws -> T) throws -> T {
            do { return try make() } catch let error as ManifestValueError {
                throw error.at(error.field.isEmpty || error.field == "value" ? key : key + "." + error.field)
            }
        }
        for key in json.keys.sorted() where !Self.knownKeys.contains(key) {
            try at(key) { try checkPrintable(key, limit: 64, what: "a requirement name") }
            unknown.append(key)
        }
        if let value = json["min_memory"] {
            minMemory = try at("min_memory") {
                guard case .int(let bytes) = value else { throw ManifestValueError(field: "", value: value.compactText, rule: "is not a byte count") }
                return try ByteCount(bytes).value
            }
        }
        if let value = json["platforms"] {
            platforms = try at("platforms") {
                guard case .object(let members) = value, !members.isEmpty, members.count <= DevicePlatform.allCases.count else {
                    throw ManifestValueError(field: "", value: value.compactText, rule: "is not an object of platform to lowest OS version (e.g. {\"ios\": \"17.0\"})")
                }
                var platforms: [DevicePlatform: AppVersion] = [:]
                for member in members {
                    guard let platform = DevicePlatform(rawValue: member.key) else {
                        throw ManifestValueError(field: member.key, value: quotedValue(member.key), rule: "is not a platform (\(DevicePlatform.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    // The parse error is replaced by one naming the field and what it needs.
                    guard let text = member.value.stringValue, let version = try? AppVersion(text) else {
                        throw ManifestValueError(field: member.key, value: member.value.compactText, rule: "is not an OS version (e.g. 17.0; \"0\" for any)")
                    }
                    platforms[platform] = version
                }
                return platforms
            }
        }
        accelerators = Set(try at("accelerators") {
            try Self.names(json["accelerators"]).map { name in
                guard let accelerator = Accelerator(rawValue: name) else {
                    throw ManifestText.refuse(name, "is not an accelerator (\(Accelerator.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                return accelerator
            }
        })
        architectures = Set(try at("architectures") { try Self.names(json["architectures"]) })
        capabilities = Set(try at("capabilities") { try Self.names(json["capabilities"]) })
    }

    /// A list of at most 64 names, each printable ASCII of at most 64 characters.
    private static func names(_ value: JSONValue?) throws -> [String] {
        guard let value else { return [] }
        guard case .array(let items) = value, items.count <= 64 else {
            throw ManifestValueError(field: "", value: value.compactText, rule: "is not a list of at most 64 names")
        }
        return try items.map { item in
            guard let text = item.stringValue else { throw ManifestValueError(field: "", value: item.compactText, rule: "is not a name") }
            try checkPrintable(text, limit: 64, what: "a name")
            return text
        }
    }

    /// The requirements as a manifest writes them (sorted keys; unknown keys are not written).
    public func jsonObject() -> [String: JSONValue] {
        var json: [String: JSONValue] = [:]
        if let minMemory { json["min_memory"] = .int(minMemory) }
        if let platforms {
            json["platforms"] = .object(platforms.keys.map(\.rawValue).sorted().map { .init($0, .string(platforms[DevicePlatform(rawValue: $0)!]!.rawValue)) })
        }
        if !accelerators.isEmpty { json["accelerators"] = .array(accelerators.sorted().map { .string($0.rawValue) }) }
        if !architectures.isEmpty { json["architectures"] = .array(architectures.sorted().map { .string($0) }) }
        if !capabilities.isEmpty { json["capabilities"] = .array(capabilities.sorted().map { .string($0) }) }
        return json
    }

    /// Why `device` cannot take a variant with these requirements, one reason per unmet
    /// requirement; empty when it can. A value the device does not know counts as unmet.
    public func unmet(by device: DeviceProfile) -> [String] {
        unmetRequirements(by: device).map(\.message)
    }

    /// The unmet requirements, each with the `requires` key it is about (what a client in
    /// another language reports too: conformance/vectors/variants), in this order: unknown
    /// keys (sorted), `min_memory`, `platforms`, `accelerators` (one per missing accelerator,
    /// sorted), `architectures`, `capabilities`.
    public func unmetRequirements(by device: DeviceProfile) -> [UnmetRequirement] {
        var reasons: [UnmetRequirement] = []
        func add(_ key: String, _ message: String) { reasons.append(UnmetRequirement(requirement: key, message: message)) }
        for key in unknown { add(key, "requires \(quotedValue(key)), which this client does not know") }
        if let minMemory {
            if let memory = device.physicalMemory {
                if memory < minMemory { add("min_memory", "needs \(Self.gib(minMemory)) of memory; the device has \(Self.gib(memory))") }
            } else {
                add("min_memory", "needs \(Self.gib(minMemory)) of memory; the device's memory is unknown")
            }
        }
        if let platforms {
            if let platform = device.platform, let lowest = platforms[platform] {
                // An OS version the device reports in another shape counts as unknown (below).
                if let os = device.osVersion.flatMap({ try? AppVersion($0) }) {
                    if os < lowest { add("platforms", "needs \(platform.rawValue) \(lowest) or later; the device runs \(os)") }
                } else if lowest != (try! AppVersion("0")) {
                    add("platforms", "needs \(platform.rawValue) \(lowest) or later; the device's OS version is unknown")
                }
            } else {
                add("platforms", "runs on \(platforms.keys.map(\.rawValue).sorted().joined(separator: ", ")); the device is \(device.platform?.rawValue ?? "an unknown platform")")
            }
        }
        for accelerator in accelerators.sorted() where !device.accelerators.contains(accelerator) {
            add("accelerators", "needs the \(accelerator == .neuralEngine ? "Neural Engine" : "GPU"); the device has none known")
        }
        if !architectures.isEmpty, !(device.architecture.map(architectures.contains) ?? false) {
            add("architectures", "runs on \(architectures.sorted().joined(separator: ", ")); the device is \(device.architecture ?? "an unknown architecture")")
        }
        let missing = capabilities.subtracting(device.capabilities).sorted()
        if !missing.isEmpty { add("capabilities", "needs capabilit\(missing.count == 1 ? "y" : "ies") \(missing.joined(separator: ", "))") }
        return reasons
    }

    static func gib(_ bytes: Int64) -> String {
        let value = Double(bytes) / Double(1 << 30)
        return value == value.rounded() ? "\(Int64(value)) GiB" : String(format: "%.1f GiB", value)
    }
}

/// A requirement of a variant that a device does not meet.
public struct UnmetRequirement: Sendable, Equatable {
    /// The `requires` key it is about: `min_memory`, `platforms`, `accelerators`,
    /// `architectures`, `capabilities`, or an unknown key as the manifest writes it. Stable:
    /// a reason to match on, where `message` is for people and may be reworded.
    public let requirement: String
    /// Why, in a sentence (`needs 8 GiB of memory; the device has 6 GiB`).
    public let message: String

    public init(requirement: String, message: String) {
        self.requirement = requirement
        self.message = message
    }
}

/// What a device is, as variants judge it. The client fills it on Apple platforms
/// (`DeviceProfile.current`); an app can override any field (tests, Linux, a user's choice).
public struct DeviceProfile: Sendable, Equatable {
    /// Physical memory in bytes.
    public var physicalMemory: Int64?
    public var platform: DevicePlatform?
    /// The OS version (`17.4.1`).
    public var osVersion: String?
    /// The CPU architecture (`arm64`, `x86_64`).
    public var architecture: String?
    /// The accelerators known to be present.
    public var accelerators: Set<Accelerator>
    /// Capabilities the app declares (matched against a variant's `capabilities`).
    public var capabilities: Set<String>

    public init(physicalMemory: Int64? = nil, platform: DevicePlatform? = nil, osVersion: String? = nil, architecture: String? = nil,
                accelerators: Set<Accelerator> = [], capabilities: Set<String> = []) {
        self.physicalMemory = physicalMemory
        self.platform = platform
        self.osVersion = osVersion
        self.architecture = architecture
        self.accelerators = accelerators
        self.capabilities = capabilities
    }
}

/// Which variant of a model a device takes, and why it skipped the ones before it.
public struct VariantChoice: Sendable, Equatable {
    /// The model's name.
    public let model: String
    /// The variant taken (its version and files), or nil when the device meets none.
    public let chosen: CheckedModel?
    /// Variants passed over, in the manifest's order, each with its unmet requirements.
    public let skipped: [Skipped]

    public struct Skipped: Sendable, Equatable {
        public let variant: String
        /// Each unmet requirement, with the `requires` key it is about.
        public let unmet: [UnmetRequirement]
        /// Why it was passed over, one sentence per unmet requirement.
        public var reasons: [String] { unmet.map(\.message) }
    }
}

extension CheckedModel {
    /// The variant `device` takes: the first whose requirements it meets. A model without
    /// variants is its own choice.
    public func choice(for device: DeviceProfile) -> VariantChoice {
        guard !variants.isEmpty else { return VariantChoice(model: name.rawValue, chosen: self, skipped: []) }
        var skipped: [VariantChoice.Skipped] = []
        for variant in variants {
            let unmet = variant.requirements.unmetRequirements(by: device)
            if unmet.isEmpty { return VariantChoice(model: name.rawValue, chosen: variant.model, skipped: skipped) }
            skipped.append(.init(variant: variant.name.rawValue, unmet: unmet))
        }
        return VariantChoice(model: name.rawValue, chosen: nil, skipped: skipped)
    }
}

extension JSONValue {
    /// The value as compact JSON, quoted for a message.
    var compactText: String {
        quotedValue(serialized(nestedAt: 0).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " "))
    }
}
