import Foundation

/// What every reader of a manifest accepts: a device (`ClientConfiguration.maxManifestBytes`
/// by default, `checkJSONDepth` while decoding), `modelcast verify`, and modelcast itself
/// reading a history record back. Publish refuses to make live a manifest or record past
/// either limit, since each reader would refuse it; these are the only copies of the numbers.
public enum ManifestLimits {
    /// The largest manifest a device or verify reads, in bytes (4 MiB): a bigger one is
    /// refused without being parsed.
    public static let maxBytes = 4 << 20
    /// The deepest nesting of arrays and objects in a manifest or history record: a deeper
    /// one is refused before it is decoded (a recursive decoder would run out of stack).
    public static let maxDepth = 64
}
