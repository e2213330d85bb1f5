// What an app sees when it imports ModelCastClient, besides the client's own types: the
// format's types that the client's API takes or returns, named one by one. The rest of
// ModelCastFormat (the manifest's parsed values, minisign, zip rules, free helpers) is the
// client's and the CLI's shared machinery: an app that needs it imports ModelCastFormat
// itself (a product of this package), and nothing leaks into every app by default.
// scripts/test-client-package proves it: an app naming one of those without that import
// does not compile.

/// `ClientConfiguration.device`: what this device is, for variant choice.
@_exported import struct ModelCastFormat.DeviceProfile
/// `DeviceProfile.platform`.
@_exported import enum ModelCastFormat.DevicePlatform
/// `DeviceProfile.accelerators`.
@_exported import enum ModelCastFormat.Accelerator
/// `ClientConfiguration.downloadPolicies`, `update(_:)`, `UpdatePlan.policies`.
@_exported import enum ModelCastFormat.DownloadPolicy
/// `UpdatePlan.variants`: the variant picked per model, and why the others were not.
@_exported import struct ModelCastFormat.VariantChoice
/// `VariantChoice`'s reasons.
@_exported import struct ModelCastFormat.UnmetRequirement

#if canImport(FoundationNetworking)
// `URLSessionConfiguration` is part of the API (`sessionConfiguration:`); on Linux it lives here.
@_exported import FoundationNetworking
#endif
