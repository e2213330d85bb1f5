import Foundation

/// What a model takes on a device, as the manifest writes it (`models.NAME.storage`):
/// publish computes the install size from the files, so a client can check the volume's
/// free space and its storage budget before it downloads anything. `StorageHint` is the
/// parsed form.
public struct ReleaseStorage: Codable, Equatable, Sendable {
    /// Bytes of the model's files once installed: its zips unpacked (the sizes their
    /// entries declare), its plain and tree files at their sizes. A publisher may state
    /// more (room an app needs beside them, e.g. a compiled Core ML model), never less.
    public var installSize: Int64
    /// 0…100 (default 50): under a storage budget, on-demand models of a lower priority
    /// are evicted first.
    public var priority: Int64?

    public enum CodingKeys: String, CodingKey {
        case priority
        case installSize = "install_size"
    }

    public init(installSize: Int64, priority: Int64? = nil) {
        self.installSize = installSize
        self.priority = priority
    }

    public func jsonValue() -> JSONValue {
        var members: [JSONValue.Member] = [.init("install_size", .int(installSize))]
        if let priority { members.append(.init("priority", .int(priority))) }
        return .object(members)
    }

    public func checked() throws -> StorageHint {
        let size: Int64
        do { size = try ByteCount(installSize).value } catch let error as ManifestValueError { throw error.at("install_size") }
        let priority = try priority.map { value -> Int in
            guard (0...100).contains(value) else {
                throw ManifestValueError(field: "priority", value: String(value), rule: "is not a priority from 0 to 100")
            }
            return Int(value)
        } ?? StorageHint.defaultPriority
        return StorageHint(installSize: size, priority: priority)
    }
}

/// A model's storage, parsed.
public struct StorageHint: Hashable, Sendable {
    public static let defaultPriority = 50
    /// 0…2^53 bytes.
    public let installSize: Int64
    /// 0…100.
    public let priority: Int

    public init(installSize: Int64, priority: Int) {
        self.installSize = installSize
        self.priority = priority
    }
}
