import Foundation

/// docs/config.md, written from the key definitions (`ConfigSchema`): every key of every
/// place with its type, default, an example and what it does. ConfigReferenceTests fails
/// when the file differs from this; `scripts/make-config-reference` rewrites it.
enum ConfigReference {
    /// The whole page.
    static func markdown() -> String {
        var lines = [
            "# Config file reference",
            "",
            "<!-- Generated from the key definitions in Sources/ModelCastCore/Publish/ConfigSchema.swift by scripts/make-config-reference: edit those, not this page. -->",
            "",
            "`modelcast publish --config FILE` reads a YAML file with what a publish would otherwise take from flags: the profile, "
                + "the base URL, the target, and for a catalog every model with its own version, files and metadata. "
                + "[publishing.md](publishing.md) describes publishing; [`examples/catalog/modelcast.yml`](../examples/catalog/modelcast.yml) is a catalog's file.",
            "",
            "- Paths in the file are relative to the file's directory.",
            "- A flag given on the command line overrides the file's value.",
            "- Every unknown key of the file is named in one error, at every level, each with the closest known key at its place "
                + "(`'models.llm.variants[0].requirs' (did you mean 'requires'?)`) or the place it belongs to "
                + "(`'models.llm.requires' (a key of models.NAME.variants[i], not of models.NAME)`).",
            "- Errors name the file and the key's path, written one way: mapping keys joined by dots, list items as `[i]` "
                + "(`models.llm.variants[0].requires.min_memory`); a key that is not a plain name (ASCII letters, digits, `_`, `-`) "
                + "is double-quoted, with `\"`, `\\` and control characters escaped (`models.\"llama 3.2\".version`).",
            "- A config error exits with status 1 ([output.md](output.md)) and leaves the target exactly as it was.",
            "- The file must be UTF-8 (the first byte that is not is named, with its line and column); a key may appear once "
                + "in a mapping, and must be text; YAML anchors, aliases and merges (`<<: *defaults`, overridden by the mapping's own keys) "
                + "are read as YAML says. A number in `meta` must be one JSON can carry: a finite number or a 64-bit integer (quote anything else to keep it as text).",
            "- The file is held to size, nesting and alias limits before its values are read "
                + "([publishing.md](publishing.md#config-file-limits)): 1 MiB, 64 levels, 1 MiB with every alias expanded.",
            "",
            "## Every place at once",
            "",
            "```yaml",
        ]
        lines += ConfigSchema.example.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast()
        lines += ["```", "", "## Types", "", "| type | what it takes |", "|---|---|"]
        lines += typeNotes.map { "| \($0.type) | \($0.note) |" }
        for section in ConfigSchema.sections {
            lines += ["", "<a id=\"\(section.id)\"></a>", "", "## \(section.title)" + (section.id == TopLevel.section.id ? "" : ": `\(section.place)`"), "",
                      section.summary, "", "| key | type | default | example | what it does |", "|---|---|---|---|---|"]
            lines += section.fields.map { field in
                "| `\(field.name)` | \(type(field.kind)) | \(defaultText(field.defaultValue)) | \(cell("`\(field.name): \(field.example)`")) | \(cell(field.summary)) |"
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// What each type in the tables means.
    static let typeNotes: [(type: String, note: String)] = [
        ("text", "Any scalar but a bare null (`~`, empty) or a bool (`true`), kept exactly as written: `2.10` stays `2.10`, a date keeps its time. Quote it to be sure."),
        ("path", "A file path, relative to the config file's directory (an absolute path as is)."),
        ("path or list of paths", "`files: a.gguf` or `files: [a.gguf, a-mmproj.gguf]`."),
        ("one of", "One of the words listed, as text."),
        ("amount of memory", "A byte count, or a number with a unit: `6GiB`, `8 GB`, `1.5GiB`, `512MiB` (GB = 10^9, GiB = 2^30)."),
        ("byte count", "A number of bytes, or a number with a unit: `500MB`, `7GiB` (GB = 10^9, GiB = 2^30); 0 to 2^53."),
        ("name or list of names", "`[arm64]`, `arm64`, or `arm64, x86_64`: printable ASCII without spaces or commas, 64 characters at most."),
        ("any value", "Any YAML value, its type kept: `150` is a number, `\"150\"` text, `[a, b]` a list, `{a: 1}` an object (keys sorted)."),
        ("mapping of any values", "A mapping whose keys are yours, each to any value."),
        ("mapping", "A mapping with the keys of the section named."),
    ]

    /// A kind as the tables write it, sections linked.
    static func type(_ kind: ConfigKind) -> String {
        func link(_ section: ConfigSection) -> String { "[\(section.title.lowercased())](#\(section.id))" }
        switch kind {
        case .text: return "text"
        case .path: return "path"
        case .paths: return "path or list of paths"
        case .choice(let words): return "one of " + words.map { "`\($0)`" }.joined(separator: ", ")
        case .memory: return "amount of memory"
        case .bytes: return "byte count"
        case .names(let among): return "name or list of names" + (among.map { ": " + $0.map { "`\($0)`" }.joined(separator: ", ") } ?? "")
        case .versions(let keys): return "mapping of platform (" + keys.map { "`\($0)`" }.joined(separator: ", ") + ") to OS version (text)"
        case .anyValue: return "any value"
        case .anyMapping: return "mapping of any values"
        case .section(let section): return "mapping: \(link(section))"
        case .named(let section): return "mapping of names, each \(link(section))"
        case .list(let section): return "list, each \(link(section))"
        case .choiceOrSection(let words, let section): return "one of " + words.map { "`\($0)`" }.joined(separator: ", ") + ", or mapping: \(link(section))"
        }
    }

    static func defaultText(_ value: ConfigDefault) -> String {
        switch value {
        case .value(let text): return cell("`\(text)`")
        case .otherwise(let text): return cell(text)
        case .required(let unless): return "required" + (unless.map { ", " + cell($0) } ?? "")
        }
    }

    /// Text for a table cell: a `|` would end the cell.
    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|")
    }
}
