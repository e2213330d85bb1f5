import Foundation
import ModelCastFormat

/// Variant requirements as people write them, in a config file (`requires:` mapping) or
/// with `--requires VARIANT:KEY=VALUE`, made into `VariantRequirements`. Memory takes a
/// unit (`6GiB`, `6 GB`, `512MiB`, or bytes); lists are YAML lists or comma-separated.
enum VariantInput {
    static let keys = VariantRequirements.knownKeys

    /// One `KEY=VALUE` requirement applied to `requirements`; `context` names where it came from.
    static func apply(key: String, value: String, to requirements: inout VariantRequirements, context: String) throws {
        func list() -> [String] { value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
        switch key {
        case "min_memory":
            requirements.minMemory = try memory(value, context: context)
        case "platforms":
            var platforms = requirements.platforms ?? [:]
            for item in list() {
                // `ios:17.0`, `ios>=17.0` or a bare `ios` (any version).
                let parts = item.replacingOccurrences(of: ">=", with: ":").split(separator: ":", maxSplits: 1).map(String.init)
                try addPlatform(parts[0], version: parts.count > 1 ? parts[1] : "0", to: &platforms, context: context)
            }
            requirements.platforms = platforms
        case "accelerators":
            for name in list() { requirements.accelerators.insert(try accelerator(name, context: context)) }
        case "architectures":
            for name in list() { requirements.architectures.insert(try self.name(name, context: context)) }
        case "capabilities":
            for name in list() { requirements.capabilities.insert(try self.name(name, context: context)) }
        default:
            let hint = Spelling.suggestion(for: key, among: keys).map { " (did you mean \($0)?)" } ?? ""
            throw ConfigProblem(message: "\(context): unknown requirement \(quotedValue(key))\(hint); known: \(keys.joined(separator: ", "))")
        }
    }

    static func addPlatform(_ name: String, version: String, to platforms: inout [DevicePlatform: AppVersion], context: String) throws {
        guard let platform = DevicePlatform(rawValue: name.lowercased()) else {
            throw ConfigProblem(message: "\(context): \(quotedValue(name)) is not a platform (\(DevicePlatform.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        // try?: refused just below, naming the value.
        guard let parsed = try? AppVersion(version) else {
            throw ConfigProblem(message: "\(context): \(quotedValue(version)) is not an OS version for \(platform.rawValue) (e.g. 17.0; 0 for any)")
        }
        platforms[platform] = parsed
    }

    static func accelerator(_ name: String, context: String) throws -> Accelerator {
        let spelled = name.lowercased().replacingOccurrences(of: "_", with: "-")
        guard let accelerator = Accelerator(rawValue: spelled == "ane" || spelled == "neuralengine" ? "neural-engine" : spelled) else {
            throw ConfigProblem(message: "\(context): \(quotedValue(name)) is not an accelerator (\(Accelerator.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return accelerator
    }

    static func name(_ text: String, context: String) throws -> String {
        guard !text.isEmpty, text.utf8.count <= 64, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != 0x2C }) else {
            throw ConfigProblem(message: "\(context): \(quotedValue(text)) is not a name (printable ASCII without spaces or commas, at most 64)")
        }
        return text
    }

    /// `6GiB`, `6 GB`, `1.5GiB`, `512MiB`, `8000000000` → bytes (GB = 10^9, GiB = 2^30).
    static func memory(_ text: String, context: String) throws -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let scale: [String: Double] = ["": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
                                       "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776]
        guard let number = Double(digits), let factor = scale[unit], number.isFinite, number * factor < Double(ByteCount.maximum) else {
            throw ConfigProblem(message: "\(context): \(quotedValue(text)) is not an amount of memory (e.g. 6GiB, 8GB, 512MiB or a byte count)")
        }
        return Int64((number * factor).rounded())
    }
}

extension DeviceProfile {
    /// A device described on the command line: `memory=8GiB,platform=ios,os=17.4,arch=arm64,
    /// accelerators=neural-engine+gpu,capabilities=a+b` (every field optional).
    package init(describing text: String) throws {
        self.init()
        let flag = "--device \(quotedValue(text))"
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1).map { String($0).trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[1].isEmpty else { throw ModelCastError.usage("\(flag): \(quotedValue(String(item))) is not KEY=VALUE") }
            let values = parts[1].split(separator: "+").map(String.init)
            do {
                switch parts[0] {
                case "memory": physicalMemory = try VariantInput.memory(parts[1], context: flag)
                case "platform":
                    guard let platform = DevicePlatform(rawValue: parts[1].lowercased()) else {
                        throw ModelCastError.usage("\(flag): platform \(quotedValue(parts[1])) is not one of \(DevicePlatform.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    self.platform = platform
                case "os":
                    // try?: refused on the same line, naming the value.
                    guard (try? AppVersion(parts[1])) != nil else { throw ModelCastError.usage("\(flag): os \(quotedValue(parts[1])) is not a version (e.g. 17.4)") }
                    osVersion = parts[1]
                case "arch": architecture = try VariantInput.name(parts[1], context: flag)
                case "accelerators": accelerators = Set(try values.map { try VariantInput.accelerator($0, context: flag) })
                case "capabilities": capabilities = Set(try values.map { try VariantInput.name($0, context: flag) })
                default:
                    throw ModelCastError.usage("\(flag): unknown field \(quotedValue(parts[0])) (memory, platform, os, arch, accelerators, capabilities)")
                }
            } catch let problem as ConfigProblem {
                throw ModelCastError.usage(problem.message)
            }
        }
    }
}

extension RequiresPlace {
    /// What `requires` must be, as its error says.
    static let shape = "a mapping of requirements (\(VariantInput.keys.joined(separator: ", ")))"
}

extension ConfigEntry where Place == RequiresPlace {
    /// A `requires:` mapping: each key's value as text (a YAML list of names joined by
    /// commas; `min_memory` one amount, never a list; the `platforms` mapping by platform),
    /// applied through `VariantInput`, in key order.
    func requirements() throws -> VariantRequirements {
        var requirements = VariantRequirements()
        for field in [RequiresPlace.accelerators, RequiresPlace.architectures, RequiresPlace.capabilities] {
            guard let value = try texts(field, what: "names (one, or a list)") else { continue }
            try VariantInput.apply(key: field.name, value: value.joined(separator: ","), to: &requirements, context: "\(path(field))")
        }
        if let memory = try text(RequiresPlace.minMemory) {
            requirements.minMemory = try VariantInput.memory(memory, context: "\(path(RequiresPlace.minMemory))")
        }
        if let platforms = try versions(RequiresPlace.platforms, shape: "a mapping of platform to lowest OS version, e.g. {ios: \"17.0\"}") {
            var parsed: [DevicePlatform: AppVersion] = [:]
            for (platform, version) in platforms {
                try VariantInput.addPlatform(platform, version: try version.text(), to: &parsed, context: "\(version.path)")
            }
            requirements.platforms = parsed
        }
        return requirements
    }
}
