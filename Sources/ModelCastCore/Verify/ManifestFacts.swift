import Foundation

/// An object a manifest tells devices to download, with what the manifest promises about it.
public struct ExpectedObject: Sendable {
    /// Which model and file this is, for reports (`tiny-llm/tiny-llm.gguf`, `tier 1b`).
    public let label: String
    public let url: String
    /// Promised SHA-256 (hex), when the profile carries one.
    public let sha256: String?
    /// Promised exact size in bytes.
    public let size: Int64?
    /// A size known only roughly (nomlens' `size_mb`): bytes and allowed difference.
    public let approximateSize: (bytes: Int64, tolerance: Int64)?
    /// Promised Content-Type, when the profile carries one.
    public let contentType: String?
}

/// What a manifest says, whatever its profile.
public struct ManifestFacts: Sendable {
    public let profile: ManifestProfile
    /// The modelcast format's sequence.
    public let sequence: Int64?
    /// The modelcast format's expiry (RFC 3339).
    public let expiresAt: String?
    /// Every object devices may download: current models first, then rollback targets.
    public let objects: [ExpectedObject]

    /// Reads a manifest of any profile (`profile` nil: detect it from the fields present).
    public static func read(_ data: Data, profile requested: ManifestProfile? = nil, source: String) throws -> ManifestFacts {
        func fail(_ reason: String) -> ModelCastError { .usage("manifest \(source): \(reason)") }
        // JSON is UTF-8: a bad byte would otherwise surface as a confusing type error deep inside.
        if let offset = firstInvalidUTF8Offset(data) {
            throw fail("not valid UTF-8 JSON: the first bad byte, 0x\(String(format: "%02X", data[data.startIndex + offset])), is at byte offset \(offset)")
        }
        let json: JSONValue
        do { json = try JSONValue(parsing: data) } catch {
            throw fail("not valid JSON (\(describe(decodingError: error)))")
        }
        guard case .object = json else { throw fail("not a JSON object") }
        let profile = try requested ?? detect(json, fail: fail)
        func string(_ value: JSONValue?, _ field: String) throws -> String {
            guard let s = value?.stringValue else { throw fail("\(field) is missing or not a string") }
            return s
        }
        func integer(_ value: JSONValue?, _ field: String) throws -> Int64 {
            guard case .int(let i)? = value, i >= 0 else { throw fail("\(field) is missing or not a non-negative integer") }
            return i
        }
        func hex(_ text: String, _ field: String) throws -> String {
            guard SHA256Digest(hex: text) != nil, text == text.lowercased() else { throw fail("\(field) '\(text)' is not a lowercase hex SHA-256") }
            return text
        }

        switch profile {
        case .modelcast:
            let release = try Release.decode(data, source: source)
            var objects: [ExpectedObject] = []
            func add(_ model: ReleaseModel, name: String, rollback: Bool) throws {
                for file in model.files {
                    objects.append(ExpectedObject(
                        label: "\(rollback ? "rollback " : "")\(name) \(model.version)/\(file.name)", url: file.url,
                        sha256: try hex(file.sha256, "\(name).files.sha256"), size: file.size, approximateSize: nil,
                        contentType: file.contentType))
                }
            }
            for name in release.models.keys.sorted() { try add(release.models[name]!, name: name, rollback: false) }
            if let prototypes = release.prototypes { try add(prototypes, name: "prototypes", rollback: false) }
            for name in (release.rollback?.models.keys.sorted() ?? []) { try add(release.rollback!.models[name]!, name: name, rollback: true) }
            return ManifestFacts(profile: .modelcast, sequence: release.sequence, expiresAt: release.expiresAt, objects: objects)

        case .nomlens:
            let version = try string(json["version"], "version")
            let sizeMB: Double
            switch json["size_mb"] {
            case .double(let d)?: sizeMB = d
            case .int(let i)?: sizeMB = Double(i)
            default: throw fail("size_mb is missing or not a number")
            }
            _ = try integer(json["num_classes"], "num_classes")
            let bytes = Int64(sizeMB * 1_000_000)
            // size_mb is rounded to one decimal (three below 1 MB).
            let tolerance: Int64 = sizeMB >= 1 ? 50_000 : 500
            return ManifestFacts(profile: .nomlens, sequence: nil, expiresAt: nil, objects: [
                ExpectedObject(label: "model \(version)", url: try string(json["url"], "url"),
                               sha256: try hex(try string(json["sha256"], "sha256"), "sha256"), size: nil,
                               approximateSize: (bytes, tolerance), contentType: nil),
            ])

        case .tiers:
            let version = try string(json["current_version"], "current_version")
            guard case .object(let tiers)? = json["models"], !tiers.isEmpty else { throw fail("models is missing or empty") }
            var objects: [ExpectedObject] = []
            for tier in tiers {
                objects.append(ExpectedObject(
                    label: "tier \(tier.key) \(version)", url: try string(tier.value["url"], "models.\(tier.key).url"),
                    sha256: try hex(try string(tier.value["sha256"], "models.\(tier.key).sha256"), "models.\(tier.key).sha256"),
                    size: try integer(tier.value["size_bytes"], "models.\(tier.key).size_bytes"), approximateSize: nil,
                    contentType: nil))
            }
            if case .object(let members) = json {
                let rollbackVersion = json["rollback_version"]?.stringValue ?? "?"
                for member in members where member.key.hasPrefix("rollback_url_") {
                    objects.append(ExpectedObject(
                        label: "rollback tier \(member.key.dropFirst("rollback_url_".count)) \(rollbackVersion)",
                        url: try string(member.value, member.key), sha256: nil, size: nil, approximateSize: nil,
                        contentType: nil))
                }
            }
            return ManifestFacts(profile: .tiers, sequence: nil, expiresAt: nil, objects: objects)

        case .catalog:
            guard case .object(let models)? = json["models"], !models.isEmpty else { throw fail("models is missing or empty") }
            var objects: [ExpectedObject] = []
            func checksum(_ value: JSONValue?, _ field: String) throws -> String {
                let text = try string(value, field)
                guard text.hasPrefix("sha256:") else { throw fail("\(field) '\(text)' does not start with sha256:") }
                return try hex(String(text.dropFirst(7)), field)
            }
            for model in models {
                objects.append(ExpectedObject(
                    label: "\(model.key) \(try string(model.value["version"], "models.\(model.key).version"))",
                    url: try string(model.value["url"], "models.\(model.key).url"),
                    sha256: try checksum(model.value["checksum"], "models.\(model.key).checksum"),
                    size: try integer(model.value["size"], "models.\(model.key).size"), approximateSize: nil,
                    contentType: nil))
            }
            if let prototypes = json["prototypes"] {
                objects.append(ExpectedObject(
                    label: "prototypes \(try string(prototypes["version"], "prototypes.version"))",
                    url: try string(prototypes["url"], "prototypes.url"),
                    sha256: try checksum(prototypes["checksum"], "prototypes.checksum"), size: nil, approximateSize: nil,
                    contentType: nil))
            }
            return ManifestFacts(profile: .catalog, sequence: nil, expiresAt: nil, objects: objects)

        case .latest:
            let url = try string(json["url"], "url")
            return ManifestFacts(profile: .latest, sequence: nil, expiresAt: nil, objects: [
                ExpectedObject(label: "latest", url: url, sha256: nil, size: nil, approximateSize: nil, contentType: nil),
            ])
        }
    }

    private static func detect(_ json: JSONValue, fail: (String) -> ModelCastError) throws -> ManifestProfile {
        if json["format"]?.stringValue == Release.formatName { return .modelcast }
        if json["current_version"] != nil { return .tiers }
        if json["models"] != nil { return .catalog }
        if json["sha256"] != nil && json["version"] != nil { return .nomlens }
        if json["url"] != nil { return .latest }
        throw fail("cannot tell its profile from its fields; pass --profile")
    }
}

/// The offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no
/// overlong forms, no surrogates, nothing above U+10FFFF), or nil when all of it is.
/// A broken or cut-short sequence is reported at its first byte.
func firstInvalidUTF8Offset(_ data: Data) -> Int? {
    data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Int? in
        let bytes = raw.bindMemory(to: UInt8.self)
        var i = 0
        let n = bytes.count
        while i < n {
            let b = bytes[i]
            if b < 0x80 { i += 1; continue }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch b {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return i
            }
            guard i + length <= n else { return i }
            // The second byte has the narrowed range; the others are plain continuation bytes.
            // A broken sequence is reported at its first byte (as Python's decoder does).
            guard (low...high).contains(bytes[i + 1]) else { return i }
            for k in 2..<length where !(0x80...0xBF).contains(bytes[i + k]) { return i }
            i += length
        }
        return nil
    }
}
