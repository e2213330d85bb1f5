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

    /// The file's text, read only up to the size limit.
    static func read(path: String) throws -> String {
        String(decoding: try readCapped(path, limit: maxBytes, what: "a config file", shown: "config \(path)"), as: UTF8.self)
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
        var places: [(parent: Int, name: String)] = []
        var pending: [(node: Node, depth: Int, parent: Int, name: String)] = [(root, 0, -1, "")]
        var size = 0
        func location(_ parent: Int, _ name: String) -> String {
            var names = [name]
            var at = parent
            while at >= 0 { names.append(places[at].name); at = places[at].parent }
            return shown(names.reversed().filter { !$0.isEmpty })
        }
        while let (node, depth, parent, name) = pending.popLast() {
            size += 1
            switch node {
            case .scalar(let scalar):
                size += scalar.string.utf8.count
            case .mapping(let mapping):
                guard depth < maxDepth else { throw tooDeep(location(parent, name), path: path) }
                places.append((parent, name))
                for (key, value) in mapping.reversed() {
                    let keyName = key.scalar?.string ?? "(key)"
                    pending.append((value, depth + 1, places.count - 1, keyName))
                    pending.append((key, depth + 1, places.count - 1, keyName))
                }
            case .sequence(let sequence):
                guard depth < maxDepth else { throw tooDeep(location(parent, name), path: path) }
                places.append((parent, name))
                for (index, item) in sequence.enumerated().reversed() {
                    pending.append((item, depth + 1, places.count - 1, "[\(index)]"))
                }
            }
            guard size <= maxExpandedSize else {
                throw ModelCastError.usage("config \(path): its aliases expand it past \(maxExpandedSize) bytes (1 MiB) of values, at \(location(parent, name)); an alias may repeat a value, but the file it stands for may hold no more than a config file")
            }
        }
    }

    private static func tooDeep(_ location: String, path: String) -> ModelCastError {
        .usage("config \(path): lists and mappings nested more than \(maxDepth) levels deep, at \(location) (aliases expanded); a config file may nest at most \(maxDepth)")
    }

    /// A dotted key path, its first components only (a deep one would fill the screen),
    /// each cut short and with its control characters escaped.
    private static func shown(_ names: [String]) -> String {
        guard !names.isEmpty else { return "the top" }
        let cut = names.prefix(6).map { name in
            escapingControlCharacters(name.count > 40 ? String(name.prefix(40)) + "…" : name)
        }
        let dotted = cut.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        return "'" + dotted + (names.count > 6 ? "…" : "") + "'"
    }
}
