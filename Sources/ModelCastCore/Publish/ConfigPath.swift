import Foundation
import ModelCastFormat

/// Where a value sits in a config file, written one way in every error:
/// `models.llm.variants[0].requires.min_memory`: mapping keys joined by dots, list items
/// as `[i]`. A key that is not a plain name (ASCII letters, digits, `_` and `-`) is
/// double-quoted, its `"`, `\` and invisible characters escaped (`models."llama 3.2"`), so
/// a path never carries a raw control character and never reads as another path.
package struct ConfigPath: Sendable, Hashable, CustomStringConvertible {
    /// One step down from the top.
    package enum Step: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    package private(set) var steps: [Step]

    /// The path down `steps` from the top.
    package init(_ steps: [Step] = []) {
        self.steps = steps
    }

    /// The top level of the file.
    package static let top = ConfigPath()

    /// The path of `key` in the mapping at this path.
    package func appending(_ key: String) -> ConfigPath {
        var path = self
        path.steps.append(.key(key))
        return path
    }

    /// The path of item `index` of the list at this path.
    package func appending(index: Int) -> ConfigPath {
        var path = self
        path.steps.append(.index(index))
        return path
    }

    /// The last key of the path (nil at the top or after an index).
    package var lastKey: String? {
        if case .key(let key)? = steps.last { return key }
        return nil
    }

    package var description: String { written() }

    /// The path as written in errors; `steps` keeps only the first steps (the rest shown as
    /// `…`) and `keyLength` cuts each key, so a hostile path cannot fill the screen.
    package func written(steps limit: Int = .max, keyLength: Int = 64) -> String {
        var text = ""
        for step in steps.prefix(limit) {
            switch step {
            case .index(let index):
                text += "[\(index)]"
            case .key(let key):
                if !text.isEmpty { text += "." }
                text += Self.written(key: key, limit: keyLength)
            }
        }
        return steps.count > limit ? text + "…" : text
    }

    /// A key as a path writes it: as is when it is a plain name, else quoted and escaped.
    package static func written(key: String, limit: Int = 64) -> String {
        let plain = !key.isEmpty && key.unicodeScalars.count <= limit && key.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x2D
        }
        guard !plain else { return key }
        var out = "\""
        for (count, scalar) in key.unicodeScalars.enumerated() {
            if count == limit { return out + "\"…" }
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default:
                if ManifestText.isHidden(scalar) {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
