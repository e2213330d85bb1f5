import Foundation

/// When a device may download a model, as the manifest writes it
/// (`models.NAME.download_conditions`), beside its download policy (`download`). It is a
/// key of its own, not an object under `download`, because clients before 1.2.0 read
/// `download` as a string and would refuse the whole manifest. `DownloadConditions` is the
/// parsed form.
public struct ReleaseDownloadConditions: Codable, Equatable, Sendable {
    /// `any` or `unmetered` (Wi-Fi, Ethernet: not cellular, not a hotspot).
    public var network: String?
    /// On a metered network, the most bytes the model may still need to download; more
    /// waits for an unmetered one.
    public var cellularMax: Int64?
    /// `required`: only while the device is charging. `any` (or absent): whenever.
    public var charging: String?

    public enum CodingKeys: String, CodingKey {
        case network, charging
        case cellularMax = "cellular_max"
    }

    public init(network: String? = nil, cellularMax: Int64? = nil, charging: String? = nil) {
        self.network = network
        self.cellularMax = cellularMax
        self.charging = charging
    }

    public func jsonValue() -> JSONValue {
        var members: [JSONValue.Member] = []
        if let network { members.append(.init("network", .string(network))) }
        if let cellularMax { members.append(.init("cellular_max", .int(cellularMax))) }
        if let charging { members.append(.init("charging", .string(charging))) }
        return .object(members)
    }

    /// Every value parsed. A network or charging value this version does not know (a
    /// newer publisher's) is kept as `.unknown`: the device holds the model back.
    public func checked() throws -> DownloadConditions {
        func at<T>(_ key: String, _ make: () throws -> T) throws -> T {
            do { return try make() } catch let error as ManifestValueError { throw error.at(key) }
        }
        let network = try at("network") { try self.network.map(NetworkRequirement.init(parsing:)) ?? .any }
        let cap = try at("cellular_max") { try self.cellularMax.map { try ByteCount($0).value } }
        let charging = try at("charging") { try self.charging.map(ChargingRequirement.init(parsing:)) ?? .any }
        return DownloadConditions(network: network, cellularMax: cap, charging: charging)
    }
}

/// The network a model may be downloaded on.
public enum NetworkRequirement: OpenWord {
    case any
    case unmetered
    /// A value this version does not know (printable ASCII, at most 32 characters).
    case unknown(String)

    public static let known: KeyValuePairs<String, Self> = ["any": .any, "unmetered": .unmetered]
    public static let what = "a network condition (any or unmetered)"
    public var unknownWord: String? { if case .unknown(let word) = self { return word } else { return nil } }
}

/// Whether a model may be downloaded only while the device charges.
public enum ChargingRequirement: OpenWord {
    case any
    case required
    /// A value this version does not know (printable ASCII, at most 32 characters).
    case unknown(String)

    public static let known: KeyValuePairs<String, Self> = ["any": .any, "required": .required]
    public static let what = "a charging condition (required or any)"
    public var unknownWord: String? { if case .unknown(let word) = self { return word } else { return nil } }
}

/// A model's download conditions, parsed. `.none` (the default) allows any network, no
/// cap, charging or not.
public struct DownloadConditions: Hashable, Sendable {
    public let network: NetworkRequirement
    /// 0…2^53 bytes; nil: no cap.
    public let cellularMax: Int64?
    public let charging: ChargingRequirement

    public static let none = DownloadConditions(network: .any, cellularMax: nil, charging: .any)

    public init(network: NetworkRequirement, cellularMax: Int64?, charging: ChargingRequirement) {
        self.network = network
        self.cellularMax = cellularMax
        self.charging = charging
    }
}
