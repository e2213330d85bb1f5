import Foundation

/// Turns metadata given as text (`--meta key=value`) or as YAML/JSON values into
/// the typed values a profile field needs, with errors naming the field and value.
package enum MetaInput {
    /// A parsed `--meta` argument: `key=value` for every model, `MODEL:key=value` for one.
    package struct Assignment: Sendable, Equatable {
        package let model: String?
        package let path: String
        package let value: String
    }

    /// Parses `[MODEL:]key=value`.
    package static func parseAssignment(_ text: String) throws -> Assignment {
        guard let equals = text.firstIndex(of: "=") else {
            throw ModelCastError.usage("--meta \(text): expected key=value (or MODEL:key=value)")
        }
        var key = String(text[..<equals])
        let value = String(text[text.index(after: equals)...])
        var model: String?
        if let colon = key.firstIndex(of: ":") {
            model = String(key[..<colon])
            key = String(key[key.index(after: colon)...])
        }
        guard !key.isEmpty, !key.hasPrefix("."), !key.hasSuffix("."), !key.contains("..") else {
            throw ModelCastError.usage("--meta \(text): the key is empty or malformed")
        }
        return Assignment(model: model, path: key, value: value)
    }

    /// Converts command-line text to the type `field` needs (text stays a string when no field applies).
    package static func value(fromText text: String, for field: ProfileField?, context: String) throws -> JSONValue {
        guard let field else { return .string(text) }
        func bad() -> ModelCastError {
            .usage("\(context): \(field.path) must be a \(field.type.rawValue), got '\(text)'")
        }
        switch field.type {
        case .string: return .string(text)
        case .integer:
            guard let i = Int64(text.trimmingCharacters(in: .whitespaces)) else { throw bad() }
            return .int(i)
        case .number:
            guard let d = Double(text.trimmingCharacters(in: .whitespaces)), d.isFinite else { throw bad() }
            return .double(d)
        case .boolean:
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw bad()
            }
        case .stringList:
            let items = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return .array(items.map { .string($0) })
        case .date:
            guard isDate(text) else { throw bad() }
            return .string(text)
        }
    }

    /// Checks (and where lossless, converts) a structured value for `field`.
    package static func value(_ value: JSONValue, for field: ProfileField?, context: String) throws -> JSONValue {
        guard let field else { return value }
        func bad() -> ModelCastError {
            .usage("\(context): \(field.path) must be a \(field.type.rawValue), got \(value.serialized().trimmingCharacters(in: .newlines))")
        }
        switch (field.type, value) {
        case (.string, .string), (.integer, .int), (.boolean, .bool), (.number, .double), (.number, .int):
            return value
        case (.string, .int(let i)): return .string(String(i))
        case (.string, .double(let d)): return .string("\(d)")
        case (.integer, .string(let s)), (.number, .string(let s)), (.boolean, .string(let s)), (.stringList, .string(let s)), (.date, .string(let s)):
            return try Self.value(fromText: s, for: field, context: context)
        case (.stringList, .array(let items)):
            guard items.allSatisfy({ $0.stringValue != nil }) else { throw bad() }
            return value
        default:
            throw bad()
        }
    }

    static func isDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              year >= 1970, (1...12).contains(month), (1...31).contains(day) else { return false }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: DateComponents(year: year, month: month, day: day)).map {
            calendar.component(.day, from: $0) == day
        } ?? false
    }
}
