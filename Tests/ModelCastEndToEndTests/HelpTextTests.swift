import Foundation
import XCTest
import ModelCastTestSupport

/// `--help` for people (issue 31, part 5): every command's and subcommand's help, found
/// from `modelcast --help` as a user finds them, fits on a screen at 80 columns, lists
/// what is required first, keeps each option to one or two lines, says where the hidden
/// options and the details are, and docs/cli.md shows exactly what `--help-hidden` prints.
final class HelpTextTests: XCTestCase {
    static let maxLines = 60
    static let maxOptionLines = 2
    static let reference = repositoryRoot + "/docs/cli.md"

    /// What `modelcast COMMAND FLAG` prints at ArgumentParser's default 80 columns.
    func help(_ command: [String], _ flag: String = "--help") throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "80"
        let result = try modelcast(command + [flag], environment: environment)
        XCTAssertEqual(result.status, 0, "modelcast \(command.joined(separator: " ")) \(flag): \(result.stderr)")
        return result.stdout
    }

    /// Every command path, the top level (`[]`) first: the SUBCOMMANDS of each help, recursively.
    func commands() throws -> [[String]] {
        var found: [[String]] = [], queue: [[String]] = [[]]
        while !queue.isEmpty {
            let command = queue.removeFirst()
            found.append(command)
            queue += HelpText(try help(command)).subcommands.map { command + [$0] }
        }
        return found
    }

    func testDiscoveryFindsEveryCommand() throws {
        let found = Set(try commands().map { $0.joined(separator: " ") })
        // A floor, not the list: a new command is checked by being in `modelcast --help`.
        for command in ["inspect", "pack", "publish", "verify", "rollback", "promote", "rollout", "rollout set", "rollout simulate",
                        "prune", "history", "resign", "keygen", "sign-model", "serve"] {
            XCTAssertTrue(found.contains(command), "\(command) is not among the commands found from modelcast --help: \(found.sorted())")
        }
    }

    func testEveryHelpFitsOnAScreenWithRequiredFirstAndShortOptions() throws {
        for command in try commands() {
            let name = (["modelcast"] + command).joined(separator: " ")
            let text = HelpText(try help(command))
            XCTAssertEqual(text.problems(maxLines: Self.maxLines, maxOptionLines: Self.maxOptionLines), [], "\(name) --help:\n\(text.text)")
            // Hidden options too: --help-hidden is where a user reads them.
            XCTAssertEqual(HelpText(try help(command, "--help-hidden")).optionProblems(maxOptionLines: Self.maxOptionLines), [], "\(name) --help-hidden")
        }
    }

    func testHelpSaysWhereHiddenOptionsAndDetailsAre() throws {
        let headings = markdownAnchors(try String(contentsOfFile: Self.reference, encoding: .utf8))
        for command in try commands() {
            let name = (["modelcast"] + command).joined(separator: " ")
            let text = HelpText(try help(command))
            let hidden = HelpText(try help(command, "--help-hidden"))
            let more = "More options: \(name) --help-hidden"
            if hidden.entries.count > text.entries.count {
                XCTAssertTrue(text.discussion.contains(more), "\(name) --help hides \(hidden.entries.count - text.entries.count) options but does not say '\(more)'")
            } else {
                XCTAssertFalse(text.discussion.contains(more), "\(name) --help points to --help-hidden, which shows nothing more")
            }
            let last = text.discussion.split(separator: "\n").last.map(String.init) ?? ""
            XCTAssertTrue(last.hasPrefix("Details: docs/cli.md"), "\(name) --help does not end its overview with where the details are: \(last)")
            if let anchor = last.split(separator: "#").dropFirst().first {
                XCTAssertTrue(headings.contains(String(anchor)), "\(name) --help points to docs/cli.md#\(anchor), which has no such heading")
            }
        }
    }

    func testCLIReferenceShowsWhatTheBinaryPrints() throws {
        let blocks = referenceBlocks(try String(contentsOfFile: Self.reference, encoding: .utf8))
        let fix = "run scripts/make-cli-reference to regenerate docs/cli.md's help blocks"
        for command in try commands() {
            let name = (["modelcast"] + command).joined(separator: " ")
            guard let block = blocks[name] else {
                XCTFail("docs/cli.md has no help block for \(name) (a section with <!-- help: \(name) --> and a ```text fence)")
                continue
            }
            let printed = try help(command, "--help-hidden").trimmingCharacters(in: .newlines)
            if block != printed {
                let line = zip(block.split(separator: "\n", omittingEmptySubsequences: false), printed.split(separator: "\n", omittingEmptySubsequences: false))
                    .enumerated().first { $0.element.0 != $0.element.1 }
                XCTFail("docs/cli.md's help block for \(name) is stale (\(fix)); first difference: "
                        + (line.map { "block line \($0.offset + 1) '\($0.element.0)', binary prints '\($0.element.1)'" } ?? "a different length"))
            }
        }
        let known = Set(try commands().map { (["modelcast"] + $0).joined(separator: " ") })
        for name in blocks.keys where !known.contains(name) {
            XCTFail("docs/cli.md has a help block for \(name), which is not a command")
        }
    }

    /// The checks catch what they look for: a help text like today's fails each of them.
    func testTheChecksCatchWhatTheyLookFor() {
        let long = """
            OVERVIEW: Does things.

            Details: docs/cli.md#thing

            USAGE: modelcast thing [<options>] [<TARGET>] --keep <N> <FILE>

            ARGUMENTS:
              <TARGET>                Where.
              <FILE>                  What.

            S3 TARGETS:
              --region <region>       Region.
              --checksum <MODE>       One line of text that goes on
                                      and on over
                                      three lines.
              --a-very-long-option-name <VALUE>
                                      Two lines under
                                      a label of its own.

            OPTIONS:
              --keep <N>              How many.
              -h, --help              Show help information.

            """
        let text = HelpText(long)
        XCTAssertEqual(text.required, ["--keep", "<FILE>"])
        XCTAssertEqual(text.entries.map(\.lines), [1, 1, 1, 3, 2, 1, 1])
        XCTAssertEqual(text.problems(maxLines: 60), [
            "<FILE> is required but listed after <TARGET>, which is optional",
            "--keep is required but listed after --region, which is optional",
            "--checksum's help is 3 lines (at most 2)",
        ])
        XCTAssertEqual(text.problems(maxLines: 20).first, "\(long.split(separator: "\n", omittingEmptySubsequences: false).count - 1) lines (at most 20)")
        XCTAssertEqual(Set(referenceBlocks("<!-- help: modelcast thing -->\n```text\nUSAGE: x\n```\n").keys), ["modelcast thing"])
        XCTAssertTrue(markdownAnchors("## rollout simulate\n## sign-model\n").isSuperset(of: ["rollout-simulate", "sign-model"]))
    }

    /// docs/cli.md's help blocks: `<!-- help: modelcast CMD -->` then a ```text fence.
    func referenceBlocks(_ markdown: String) -> [String: String] {
        let lines = markdown.components(separatedBy: "\n")
        var blocks: [String: String] = [:]
        for (index, line) in lines.enumerated() where line.hasPrefix("<!-- help: ") && line.hasSuffix(" -->") {
            let name = String(line.dropFirst("<!-- help: ".count).dropLast(" -->".count))
            guard index + 1 < lines.count, lines[index + 1] == "```text",
                  let end = lines[(index + 2)...].firstIndex(of: "```") else {
                XCTFail("docs/cli.md: the help block of \(name) is not a ```text fence right after its marker")
                continue
            }
            XCTAssertNil(blocks[name], "docs/cli.md has two help blocks for \(name)")
            blocks[name] = lines[(index + 2)..<end].joined(separator: "\n")
        }
        return blocks
    }

    /// The anchors GitHub makes of a Markdown file's headings (`## rollout simulate` → rollout-simulate).
    func markdownAnchors(_ markdown: String) -> Set<String> {
        Set(markdown.components(separatedBy: "\n").filter { $0.hasPrefix("#") }.map { heading in
            let title = heading.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
            return String(title.compactMap { $0 == " " ? "-" : ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : nil })
        })
    }
}

/// An ArgumentParser help text, read as a user reads it: the overview, the usage line, and
/// each section's entries (label and help lines).
struct HelpText {
    struct Entry {
        let section: String
        let label: String
        /// Lines of help text, the label's own line not counted.
        let lines: Int
        var isArgument: Bool { label.hasPrefix("<") }
        /// `--path-style/--no-path-style` → both; `-o, --out <FILE>` → -o, --out; `<MODEL>` → <MODEL>.
        var names: [String] {
            if isArgument { return [String(label.prefix { $0 != " " })] }
            return label.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "/" }).map(String.init).filter { $0.hasPrefix("-") }
        }
    }

    let text: String
    /// What comes before USAGE: the abstract and the discussion.
    let discussion: String
    let entries: [Entry]
    let subcommands: [String]
    /// What the usage line lists outside brackets, in its order: `--keep`, `<SOURCE>`.
    let required: [String]

    init(_ text: String) {
        self.text = text
        let lines = text.components(separatedBy: "\n")
        let usageIndex = lines.firstIndex { $0.hasPrefix("USAGE: ") } ?? lines.count
        discussion = lines[..<usageIndex].joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        var usage = usageIndex < lines.count ? String(lines[usageIndex].dropFirst("USAGE: ".count)) : ""
        var index = usageIndex + 1
        while index < lines.count, lines[index].hasPrefix("       ") {
            usage += " " + lines[index].trimmingCharacters(in: .whitespaces)
            index += 1
        }
        required = Self.required(inUsage: usage)
        var entries: [Entry] = [], subcommands: [String] = [], section = ""
        var label: String?, count = 0
        func finish() {
            if let label { entries.append(Entry(section: section, label: label, lines: count)) }
            label = nil
        }
        for line in lines[min(index, lines.count)...] {
            if line.isEmpty || !line.hasPrefix(" ") {
                finish()
                if line.hasSuffix(":"), line == line.uppercased() { section = String(line.dropLast()) }
                continue
            }
            if section == "SUBCOMMANDS" {
                // `  set (default)`, `  resign, refresh`; not the `  See 'modelcast help …'` line.
                if line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first, name.first?.isLowercase == true {
                    subcommands.append(String(name.prefix { $0 != "," }))
                }
                continue
            }
            if line.hasPrefix("  "), !line.hasPrefix("   ") {
                finish()
                // The help starts at column 26 on the label's line when the label fits before it.
                let characters = Array(line)
                let sharesLine = characters.count > 26 && characters[25] == " " && characters[26] != " "
                label = sharesLine ? String(line.prefix(26)).trimmingCharacters(in: .whitespaces) : line.trimmingCharacters(in: .whitespaces)
                count = sharesLine ? 1 : 0
            } else if label != nil {
                count += 1
            }
        }
        finish()
        self.entries = entries
        self.subcommands = subcommands
    }

    /// The names a usage line lists outside brackets: required options and arguments.
    static func required(inUsage usage: String) -> [String] {
        var depth = 0, token = "", tokens: [String] = []
        for character in usage + " " {
            switch character {
            case "[": depth += 1
            case "]": depth -= 1
            case " " where depth == 0:
                if !token.isEmpty { tokens.append(token) }
                token = ""
            default: if depth == 0 { token.append(character) }
            }
        }
        // tokens[0] and the command names are words; an option's value follows it.
        var names: [String] = [], index = 0
        while index < tokens.count {
            let token = tokens[index]
            if token.hasPrefix("-") {
                names.append(token)
                if index + 1 < tokens.count, tokens[index + 1].hasPrefix("<") { index += 1 }
            } else if token.hasPrefix("<"), token != "<subcommand>" {
                names.append(token)
            }
            index += 1
        }
        return names
    }

    /// What is wrong with this help as a screen: too long, an option too wordy, or
    /// something required listed after something optional (arguments and options apart:
    /// ArgumentParser lists every argument first).
    func problems(maxLines: Int, maxOptionLines: Int = 2) -> [String] {
        let count = text.hasSuffix("\n") ? text.components(separatedBy: "\n").count - 1 : text.components(separatedBy: "\n").count
        var problems = count > maxLines ? ["\(count) lines (at most \(maxLines))"] : []
        for arguments in [true, false] {
            var firstOptional: Entry?
            for entry in entries where entry.isArgument == arguments {
                let isRequired = entry.names.contains { required.contains($0) }
                if isRequired, let firstOptional {
                    problems.append("\(entry.names[0]) is required but listed after \(firstOptional.names[0]), which is optional")
                } else if !isRequired, firstOptional == nil {
                    firstOptional = entry
                }
            }
        }
        return problems + optionProblems(maxOptionLines: maxOptionLines)
    }

    /// The options whose help takes more than `maxOptionLines` lines.
    func optionProblems(maxOptionLines: Int) -> [String] {
        entries.filter { $0.lines > maxOptionLines }.map { "\($0.names.first ?? $0.label)'s help is \($0.lines) lines (at most \(maxOptionLines))" }
    }
}
