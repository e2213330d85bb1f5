import Foundation

/// JSON as modelcast prints and writes it: sorted keys, two-space indentation, no
/// escaped slashes, a trailing newline. Stable bytes for golden files and diffs.
package enum JSONOutput {
    /// Encodes `value` as stable, human-readable JSON text.
    package static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
