import Foundation
import ModelCastClient
import ModelCastFormat

/// What `--device k=v,…` says of the device variants are chosen for. A key not given keeps
/// what `DeviceProfile.current` finds on the machine each call runs on.
struct DeviceOverrides: Equatable {
    var memory: Int64?
    var platform: DevicePlatform?
    var osVersion: String?
    var architecture: String?
    /// nil: not given (the machine's); given, they replace the machine's.
    var accelerators: Set<Accelerator>?
    var capabilities: Set<String>?

    /// The keys `--device` takes.
    static let keys = ["memory", "platform", "os-version", "arch", "accelerator", "capability"]

    init() {}

    /// Parses every `--device` value given (`memory=8589934592,platform=ios`). A key other
    /// than `accelerator` and `capability` may be given once across all of them.
    init(_ lists: [String], label: String = "--device") throws {
        for list in lists {
            for pair in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 2, !parts[1].isEmpty else {
                    throw UsageError("\(label) \(quotedValue(pair)) is not KEY=VALUE (keys: \(Self.keys.joined(separator: ", ")))")
                }
                try set(parts[0], parts[1], label: label)
            }
        }
    }

    private mutating func set(_ key: String, _ value: String, label: String) throws {
        func once<T>(_ current: T?) throws {
            guard current == nil else { throw UsageError("\(label) gives \(key) twice") }
        }
        switch key {
        case "memory":
            try once(memory)
            memory = try StrictValue.count(value, "\(label) memory", positive: true, unit: "bytes")
        case "platform":
            try once(platform)
            guard let parsed = DevicePlatform(rawValue: value) else {
                throw UsageError("\(label) platform \(quotedValue(value)) is not one of \(DevicePlatform.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            platform = parsed
        case "os-version":
            try once(osVersion)
            osVersion = try StrictValue.version(value, "\(label) os-version")
        case "arch":
            try once(architecture)
            architecture = try StrictValue.name(value, "\(label) arch")
        case "accelerator":
            guard let parsed = Accelerator(rawValue: value) else {
                throw UsageError("\(label) accelerator \(quotedValue(value)) is not \(Accelerator.allCases.map(\.rawValue).sorted().joined(separator: " or "))")
            }
            accelerators = (accelerators ?? []).union([parsed])
        case "capability":
            capabilities = (capabilities ?? []).union([try StrictValue.name(value, "\(label) capability")])
        default:
            throw UsageError("\(label) key \(quotedValue(key)) is not one of \(Self.keys.joined(separator: ", "))")
        }
    }

    /// The `--device` value that parses back to these overrides (what `device.json` keeps).
    var text: String? {
        var pairs: [String] = []
        if let memory { pairs.append("memory=\(memory)") }
        if let platform { pairs.append("platform=\(platform.rawValue)") }
        if let osVersion { pairs.append("os-version=\(osVersion)") }
        if let architecture { pairs.append("arch=\(architecture)") }
        pairs += (accelerators ?? []).map(\.rawValue).sorted().map { "accelerator=\($0)" }
        pairs += (capabilities ?? []).sorted().map { "capability=\($0)" }
        return pairs.isEmpty ? nil : pairs.joined(separator: ",")
    }

    /// `profile` with the keys given replaced.
    func applied(to profile: DeviceProfile) -> DeviceProfile {
        var device = profile
        if let memory { device.physicalMemory = memory }
        if let platform { device.platform = platform }
        if let osVersion { device.osVersion = osVersion }
        if let architecture { device.architecture = architecture }
        if let accelerators { device.accelerators = accelerators }
        if let capabilities { device.capabilities = capabilities }
        return device
    }
}
