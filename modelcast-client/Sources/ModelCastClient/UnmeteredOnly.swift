import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// On Apple platforms, a model that needs an unmetered network while the app has not
/// reported the network is not held back: its requests go out with
/// `allowsExpensiveNetworkAccess` and `allowsConstrainedNetworkAccess` false, so the system
/// itself keeps them off cellular, hotspots and Low Data Mode (such a request fails, and the
/// next update resumes it). Elsewhere no transport can tell, and the model waits instead
/// (`WaitReason.notReported`).
enum UnmeteredOnly {
    /// Whether the transport can keep a request off metered networks by itself.
    #if canImport(Darwin)
    static let enforcedByTransport = true
    #else
    static let enforcedByTransport = false
    #endif

    /// Set around the requests of a model that may only use an unmetered network.
    @TaskLocal static var active = false

    /// `request` as it must go out for the model being downloaded.
    static func applied(to request: URLRequest) -> URLRequest {
        #if canImport(Darwin)
        guard active else { return request }
        var request = request
        request.allowsExpensiveNetworkAccess = false
        request.allowsConstrainedNetworkAccess = false
        return request
        #else
        return request
        #endif
    }
}
