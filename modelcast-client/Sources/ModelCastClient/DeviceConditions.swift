import Foundation

/// What the app tells the client about the device now, for models whose manifest entry
/// sets `download_conditions`. Each value is nil until the app says it: a model that
/// needs an unmetered network or charging then waits (fail safe), and the wait's reason
/// says the app has not reported it. The client measures neither itself: the app knows
/// (`NWPathMonitor`, `UIDevice.batteryState`, a test's fixed values) and the client
/// stays free of platform monitors.
public struct DeviceConditions: Sendable, Equatable {
    /// The network the device is on; nil: not reported.
    public var network: NetworkClass?
    /// Whether the device is charging; nil: not reported.
    public var charging: Bool?

    public init(network: NetworkClass? = nil, charging: Bool? = nil) {
        self.network = network
        self.charging = charging
    }
}

/// The kind of network a device is on, as download conditions see it.
public enum NetworkClass: String, Sendable, Equatable, CaseIterable {
    /// Wi-Fi or Ethernet that costs the user nothing per byte.
    case unmetered
    /// Cellular, a personal hotspot, Low Data Mode: every byte counts (`cellular_max`).
    case cellular
}
