import Foundation
import ModelCastFormat
#if canImport(Metal)
import Metal
#endif
#if canImport(CoreML)
import CoreML
#endif

extension DeviceProfile {
    /// This device as the system describes it, read once per process: physical memory,
    /// platform, OS version, CPU architecture, and the accelerators the system reports (the
    /// GPU when Metal has a device; the Neural Engine when Core ML lists one, iOS 17 /
    /// macOS 14 and later). On Linux: memory, `linux` and the architecture, no OS version
    /// (the kernel's is not one a variant names) and no accelerator. `capabilities` is
    /// empty: the app declares its own. `ClientConfiguration.device` starts from this; an
    /// app overrides any field.
    public static let current = DeviceProfile(
        physicalMemory: Int64(clamping: ProcessInfo.processInfo.physicalMemory), platform: currentPlatform,
        osVersion: currentOSVersion, architecture: currentArchitecture, accelerators: currentAccelerators())

    private static var currentOSVersion: String? {
        #if canImport(Darwin)
        let os = ProcessInfo.processInfo.operatingSystemVersion
        return "\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)"
        #else
        return nil
        #endif
    }

    private static var currentPlatform: DevicePlatform? {
        // A Mac Catalyst app, or an iOS app on a Mac, is built for iOS: it says `ios`.
        #if os(iOS)
        return .ios
        #elseif os(macOS)
        return .macos
        #elseif os(tvOS)
        return .tvos
        #elseif os(watchOS)
        return .watchos
        #elseif os(visionOS)
        return .visionos
        #elseif os(Android)
        return .android
        #elseif os(Linux)
        return .linux
        #else
        return nil
        #endif
    }

    private static var currentArchitecture: String? {
        #if arch(arm64)
        return "arm64"
        #elseif arch(x86_64)
        return "x86_64"
        #else
        return nil
        #endif
    }

    private static func currentAccelerators() -> Set<Accelerator> {
        var accelerators: Set<Accelerator> = []
        #if canImport(Metal)
        if MTLCreateSystemDefaultDevice() != nil { accelerators.insert(.gpu) }
        #endif
        #if canImport(CoreML)
        if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1, *) {
            let hasNeuralEngine = MLComputeDevice.allComputeDevices.contains { device in
                if case .neuralEngine = device { return true }
                return false
            }
            if hasNeuralEngine { accelerators.insert(.neuralEngine) }
        }
        #endif
        return accelerators
    }
}
