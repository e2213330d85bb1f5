import Foundation
import ModelCastFormat
import Yams

/// Checks every mapping of a config file against the keys its place may hold, before any
/// value is read, and reports every problem with keys at once: each unknown key with the
/// closest known key at its place (or the place it belongs to), each duplicate key and
/// each key that is not text. A file is fixed in one round, not one level per run.
enum ConfigKeyCheck {
    /// The most problems one error lists; the rest are counted (a generated file could
    /// hold thousands, and one screen is enough to see the pattern).
    static let listed = 50

    /// Throws one `ConfigProblem` naming every key problem of the file under `root`.
    static func check(_ root: ConfigNode) throws {
        var walk = Walk()
        walk.visit(root, TopLevel.section)
        if let message = walk.message { throw ConfigProblem(message: message) }
    }

    /// The walk over the document: unknown keys in document order (a mapping's own, in
    /// name order, before those of the mappings it holds; models in name order, list
    /// items in order), and the places whose known keys the error lists.
    private struct Walk {
        /// The first `listed` unknown keys, each with its hint; `unknownCount` counts them all.
        var unknown: [String] = []
        var unknownCount = 0
        var places: [(place: String, known: [String])] = []
        var other: [String] = []

        /// `node`, a mapping with the keys of `section` (anything else is the decoder's
        /// to refuse, with the shape it wants).
        mutating func visit(_ node: ConfigNode, _ section: ConfigSection) {
            guard let values = ownKeysChecked(node) else { return }
            for key in values.keys.sorted() where section.field(named: key) == nil { noteUnknown(key, at: node.path, section: section) }
            for field in section.fields {
                if let value = values[field.name] { descend(into: value, field.kind) }
            }
        }

        mutating func descend(into value: ConfigNode, _ kind: ConfigKind) {
            switch kind {
            case .section(let inner):
                visit(value, inner)
            case .named(let inner):
                guard let entries = ownKeysChecked(value) else { return }
                for name in entries.keys.sorted() { visit(entries[name]!, inner) }
            case .list(let inner):
                for item in value.items ?? [] { visit(item, inner) }
            case .versions(let keys):
                guard let values = ownKeysChecked(value) else { return }
                let place = "in \(value.path.lastKey ?? "") (\(value.path))"
                for key in values.keys.sorted() where !keys.contains(key.lowercased()) {
                    let hint = unknownCount < listed ? Spelling.suggestion(for: key, among: keys).map { " (did you mean '\($0)'?)" } ?? "" : ""
                    note(unknown: "'\(value.path.appending(key))'\(hint)", place: place, known: keys)
                }
            case .choiceOrSection(_, let inner):
                // A word is the decoder's to check; a mapping has the section's keys.
                if case .mapping = value.node { visit(value, inner) }
            case .anyMapping, .anyValue:
                checkFree(value)
            case .text, .path, .paths, .choice, .memory, .bytes, .names:
                break
            }
        }

        /// Free values (meta) may hold any key, but each once and as text.
        mutating func checkFree(_ value: ConfigNode) {
            if let values = ownKeysChecked(value) {
                for name in values.keys.sorted() { checkFree(values[name]!) }
            } else if let items = value.items {
                for item in items { checkFree(item) }
            }
        }

        /// The values of a mapping by key (merges applied, the last of a repeated key)
        /// once its own keys are checked; nil when it is not a mapping.
        mutating func ownKeysChecked(_ node: ConfigNode) -> [String: ConfigNode]? {
            guard case .mapping(let mapping) = node.node, let pairs = node.pairs else { return nil }
            checkOwnKeys(mapping, at: node.path)
            return Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
        }

        /// Keys that are not text, duplicates and merges of something other than mappings,
        /// in `mapping` and the mappings it merges.
        mutating func checkOwnKeys(_ mapping: Node.Mapping, at path: ConfigPath) {
            let place = path.steps.isEmpty ? "the top level" : "\(path)"
            var lines: [String: Int] = [:]
            for (key, value) in mapping {
                let line = key.mark?.line ?? 0
                guard let scalar = key.scalar else {
                    other.append("a key that is not text at \(place) (line \(line))")
                    continue
                }
                if ConfigNode.isMerge(key) {
                    let merged: [Node] = value.sequence.map(Array.init) ?? [value]
                    for item in merged {
                        if case .mapping(let inner) = item { checkOwnKeys(inner, at: path) } else {
                            other.append("'<<' at \(place) (line \(line)) merges something other than a mapping")
                        }
                    }
                    continue
                }
                if let first = lines[scalar.string] {
                    let lines = first == line ? "twice on line \(line)" : "lines \(first) and \(line)"
                    other.append("duplicate key '\(path.appending(scalar.string))' (\(lines))")
                } else {
                    lines[scalar.string] = line
                }
            }
        }

        /// An unknown `key` at `path`: where it belongs when another place knows it, else
        /// the closest key of `section` when one is close.
        mutating func noteUnknown(_ key: String, at path: ConfigPath, section: ConfigSection) {
            // Past the keys listed, only the count and the place matter (40,000 suggestions cost seconds).
            guard unknownCount < listed else { return note(unknown: nil, place: section.knownWhere, known: section.names) }
            let elsewhere = ConfigSchema.sections.filter { $0.id != section.id && $0.field(named: key) != nil }.map(\.place)
            let hint: String
            if !elsewhere.isEmpty {
                hint = " (a key of \(Self.list(elsewhere)), not of \(section.place))"
            } else {
                hint = Spelling.suggestion(for: key, among: section.names).map { " (did you mean '\($0)'?)" } ?? ""
            }
            note(unknown: "'\(path.appending(key))'\(hint)", place: section.knownWhere, known: section.names)
        }

        /// One more unknown key (`text` is how it is listed, nil once `listed` are).
        mutating func note(unknown text: String?, place: String, known: [String]) {
            unknownCount += 1
            if let text, unknown.count < listed { unknown.append(text) }
            if !places.contains(where: { $0.place == place }) { places.append((place, known)) }
        }

        /// `a`, `a or b`, `a, b or c`.
        static func list(_ items: [String]) -> String {
            items.count < 2 ? items.joined() : items.dropLast().joined(separator: ", ") + " or " + items.last!
        }

        /// Every problem in one message, nil when there is none.
        var message: String? {
            var parts: [String] = []
            if unknownCount > 0 {
                let known = places.map { "known \($0.place): \($0.known.joined(separator: ", "))" }.joined(separator: "; ")
                parts.append("unknown key\(unknownCount == 1 ? "" : "s") \(Self.capped(unknown, count: unknownCount)) (\(known))")
            }
            if !other.isEmpty { parts.append(Self.capped(other, count: other.count)) }
            return parts.isEmpty ? nil : parts.joined(separator: "; ")
        }

        /// The first `listed` of `items`, and how many more there are of `count`.
        static func capped(_ items: [String], count: Int) -> String {
            items.prefix(listed).joined(separator: ", ") + (count > listed ? " and \(count - listed) more" : "")
        }
    }
}

extension ConfigSection {
    /// Where its keys are known, as the unknown-key error says it (`in a variant (models.NAME.variants[i])`).
    var knownWhere: String {
        if id == TopLevel.section.id { return "at the top level" }
        return title.lowercased() == place ? "in \(place)" : "in \(title.lowercased()) (\(place))"
    }
}
