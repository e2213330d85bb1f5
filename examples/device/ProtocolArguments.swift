import Foundation
import ModelCastClient
import ModelCastFormat

/// A command-line mistake: exit 2, this message.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The words after a protocol subcommand, split strictly: every `--option` must be one the
/// call takes and have a non-empty value; an option that is not repeatable may appear once;
/// every other word is positional. Nothing is guessed (no `--option=value`, no abbreviation).
struct ProtocolArguments {
    private var values: [String: [String]] = [:]
    private(set) var positional: [String] = []

    /// `single`: options given at most once; `repeatable`: options that may repeat.
    init(_ words: some Collection<String>, single: Set<String>, repeatable: Set<String> = []) throws {
        var rest = words[...]
        while let word = rest.popFirst() {
            guard word.hasPrefix("-"), word != "-" else {
                positional.append(word)
                continue
            }
            guard single.contains(word) || repeatable.contains(word) else { throw UsageError("unknown option \(quotedValue(word))") }
            // `--dir --policy …`: the value was forgotten, not a directory named `--policy`.
            guard let value = rest.popFirst(), !value.isEmpty, !single.contains(value), !repeatable.contains(value) else {
                throw UsageError("\(word) needs a value")
            }
            guard repeatable.contains(word) || values[word] == nil else { throw UsageError("\(word) is given twice") }
            values[word, default: []].append(value)
        }
    }

    /// The value of a single option, if given.
    func value(_ option: String) -> String? { values[option]?.first }

    /// Every value of an option, in the order given.
    func values(_ option: String) -> [String] { values[option] ?? [] }

    /// The value of an option the call cannot do without.
    func required(_ option: String, _ placeholder: String) throws -> String {
        guard let value = value(option) else { throw UsageError("\(option) \(placeholder) is required") }
        return value
    }

    /// Refuses positional words beyond the `count` expected.
    func expectPositional(_ count: Int, _ what: String) throws {
        guard positional.count == count else {
            if positional.count > count { throw UsageError("unexpected argument \(quotedValue(positional[count]))") }
            throw UsageError("\(what) is required")
        }
    }
}
