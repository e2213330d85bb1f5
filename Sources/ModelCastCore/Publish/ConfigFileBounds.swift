import Foundation
import ModelCastFormat
import Yams

/// The bounds a publish config file is held to, each checked before the step it protects:
/// its size before it is read in full, its nesting before Yams builds it (by recursion:
/// 10 KB of nested `[` crash the process), and, once built, its aliases before anything
/// expands them (453 bytes of "billion laughs" aliases stand for 34 MB of values).
enum ConfigFileBounds {
    /// The largest config file read (1 MiB): a catalog of hundreds of models takes a few KB.
    static let maxBytes = 1 << 20
    /// The deepest nesting of lists and mappings, aliases expanded: the manifest's own limit,
    /// since a value nested deeper could never be published.
    static let maxDepth = ManifestLimits.maxDepth
    /// The largest the document may grow to once every alias (`*name`) is expanded,
    /// counting each value as its text plus one byte: the size a written file may have,
    /// so aliases can share a value but never make a config bigger than one could be.
    static let maxExpandedSize = maxBytes

    /// The file's text, read only up to the size limit. Bytes that are not UTF-8 are
    /// refused, naming the first: decoding would replace them with U+FFFD, and a path
    /// in the file would then name another file.
    static func read(path: String) throws -> String {
        let data = try readCapped(path, limit: maxBytes, what: "a config file", shown: "config \(path)")
        if let offset = firstInvalidUTF8Offset(data) {
            let bytes = [UInt8](data)
            let lineStart = bytes[..<offset].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
            let line = bytes[..<offset].count { $0 == 0x0A } + 1
            let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).unicodeScalars.count + 1
            throw ModelCastError.usage(escapingControlCharacters(
                "config \(path) is not UTF-8 text: byte 0x\(String(format: "%02X", bytes[offset])) at line \(line), column \(column) (save the file as UTF-8)"))
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Refuses a text nested too deeply for Yams to build it safely, from the bytes alone.
    /// The scan's estimate is at most twice the true depth plus one, so a text it refuses
    /// is truly nested past `maxDepth`; what it lets through is shallow enough to build,
    /// and `checkExpanded` then holds it to `maxDepth` exactly.
    static func checkNesting(_ text: String, path: String) throws {
        if let line = YAMLNestingScan.firstLine(deeperThan: 2 * maxDepth + 1, in: text) {
            throw ModelCastError.usage("config \(path): lists and mappings nested more than \(maxDepth) levels deep (line \(line)); a config file may nest at most \(maxDepth)")
        }
    }

    /// Walks the built document as its aliases expand it (without expanding it), and
    /// refuses it past `maxDepth` or `maxExpandedSize`. The walk stops as soon as either
    /// is passed, so an alias bomb costs at most `maxExpandedSize` steps.
    static func checkExpanded(_ root: Node, path: String) throws {
        // Where each collection visited sits: its parent's entry and its key (or [index]),
        // kept only to name the place in an error.
        var places: [(parent: Int, step: ConfigPath.Step?)] = []
        var pending: [(node: Node, depth: Int, parent: Int, step: ConfigPath.Step?)] = [(root, 0, -1, nil)]
        var size = 0
        func location(_ parent: Int, _ step: ConfigPath.Step?) -> String {
            var steps = [step]
            var at = parent
            while at >= 0 { steps.append(places[at].step); at = places[at].parent }
            return shown(steps.reversed().compactMap { $0 })
        }
        while let (node, depth, parent, step) = pending.popLast() {
            size += 1
            switch node {
            case .scalar(let scalar):
                size += scalar.string.utf8.count
            case .mapping(let mapping):
                guard depth < maxDepth else { throw tooDeep(location(parent, step), path: path) }
                places.append((parent, step))
                for (key, value) in mapping.reversed() {
                    let keyStep = ConfigPath.Step.key(key.scalar?.string ?? "(key)")
                    pending.append((value, depth + 1, places.count - 1, keyStep))
                    pending.append((key, depth + 1, places.count - 1, keyStep))
                }
            case .sequence(let sequence):
                guard depth < maxDepth else { throw tooDeep(location(parent, step), path: path) }
                places.append((parent, step))
                for (index, item) in sequence.enumerated().reversed() {
                    pending.append((item, depth + 1, places.count - 1, .index(index)))
                }
            }
            guard size <= maxExpandedSize else {
                throw ModelCastError.usage("config \(path): its aliases expand it past \(maxExpandedSize) bytes (1 MiB) of values, at \(location(parent, step)); an alias may repeat a value, but the file it stands for may hold no more than a config file")
            }
        }
    }

    private static func tooDeep(_ location: String, path: String) -> ModelCastError {
        .usage("config \(path): lists and mappings nested more than \(maxDepth) levels deep, at \(location) (aliases expanded); a config file may nest at most \(maxDepth)")
    }

    /// A key path, its first steps only (a deep one would fill the screen), each key cut short.
    private static func shown(_ steps: [ConfigPath.Step]) -> String {
        steps.isEmpty ? "the top" : "'" + ConfigPath(steps).written(steps: 6, keyLength: 40) + "'"
    }
}
