import Foundation

/// How deeply a YAML (or JSON) text nests its lists and mappings, bounded from the bytes
/// alone, before any parser builds it. Yams builds a document by recursion, so 10 KB of
/// nested `[` overflow the stack (a crash, not an error) before any check on the result
/// could run; this scan runs first and keeps the recursion shallow.
///
/// It follows the tokenizer of libyaml 0.2.5 (the one Yams compiles in) step by step, for
/// the parts that decide nesting: where a token starts, plain, quoted and block scalars,
/// comments, flow collections, and the indentation stack with its simple keys. Its
/// `estimate` counts every collection libyaml has open, once or twice: a flow sequence
/// twice (an entry `a: b` opens a one-pair mapping inside it), a block mapping twice once
/// a sequence sits at its own indentation (`key:` then `- item`), and one more while a
/// pending simple key (`key` before its `:`) would open a block mapping. So the estimate
/// is never below the true depth and at most twice it plus one. Where libyaml stops with
/// an error the scan goes on: what follows can only raise the estimate, and libyaml never
/// built it. `MutationFuzzTests+ConfigFile` checks both bounds against what Yams builds.
struct YAMLNestingScan {
    /// A position that may turn out to be a simple key (`key:` on one line), as libyaml keeps it.
    private struct SimpleKey {
        var possible = false
        var line = 0
        var character = 0
        var column = 0
    }

    /// A block collection opened at an indentation column.
    private struct Level {
        let column: Int
        let isMapping: Bool
        /// A sequence sits at this mapping's own column (`key:` then `- item`), one level more.
        var indentless = false
    }

    private let bytes: [UInt8]
    private var at = 0
    private var line = 1
    private var column = 0
    private var character = 0
    private var flowCost = 0
    private var flowKinds: [Bool] = []  // true: a sequence
    private var levels: [Level] = []
    private var blockCost = 0
    private var simpleKeyAllowed = true
    /// The simple key of the block context (flow level 0): the only one that can open a
    /// collection (a block mapping); keys inside flow collections never change the depth
    /// beyond what flow sequences are already charged for.
    private var blockKey = SimpleKey()
    private let limit: Int

    private init(_ bytes: [UInt8], limit: Int) {
        self.bytes = bytes
        self.limit = limit
    }

    /// The 1-based line at which the estimate first goes past `limit`, or nil if it never does.
    /// A text whose true depth is at most (limit - 1) / 2 always passes.
    static func firstLine(deeperThan limit: Int, in text: String) -> Int? {
        var scan = YAMLNestingScan(Array(text.utf8), limit: limit)
        return scan.run()
    }

    // MARK: - Characters (UTF-8 bytes; columns and indexes count characters, as libyaml does)

    private func byte(_ offset: Int = 0) -> UInt8 {
        at + offset < bytes.count ? bytes[at + offset] : 0
    }

    /// libyaml's line breaks: LF, CR, NEL (U+0085), LS (U+2028), PS (U+2029).
    private func isBreak(_ offset: Int = 0) -> Bool {
        switch byte(offset) {
        case 0x0A, 0x0D: return true
        case 0xC2: return byte(offset + 1) == 0x85
        case 0xE2: return byte(offset + 1) == 0x80 && (byte(offset + 2) == 0xA8 || byte(offset + 2) == 0xA9)
        default: return false
        }
    }

    private func isBlank(_ offset: Int = 0) -> Bool { byte(offset) == 0x20 || byte(offset) == 0x09 }
    private func isEnd(_ offset: Int = 0) -> Bool { at + offset >= bytes.count || bytes[at + offset] == 0 }
    private func isBlankOrEnd(_ offset: Int = 0) -> Bool { isBlank(offset) || isBreak(offset) || isEnd(offset) }

    /// libyaml's `IS_ALPHA`: the characters of anchor names and tag handles.
    private func isWord(_ offset: Int = 0) -> Bool {
        switch byte(offset) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "_"), UInt8(ascii: "-"): return true
        default: return false
        }
    }

    private func isIndicator(_ offset: Int, _ set: StaticString) -> Bool {
        let candidate = byte(offset)
        return set.withUTF8Buffer { $0.contains(candidate) }
    }

    /// Steps over one character that is not a line break.
    private mutating func skip() {
        guard !isEnd() else { return }
        let lead = bytes[at]
        let width = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
        at = min(bytes.count, at + width)
        column += 1
        character += 1
    }

    /// Steps over one line break (CR LF counts as one).
    private mutating func skipLine() {
        if byte() == 0x0D, byte(1) == 0x0A {
            at += 2
            character += 2
        } else {
            skip()
        }
        line += 1
        column = 0
    }

    private var indent: Int { levels.last?.column ?? -1 }

    // MARK: - Depth

    private var estimate: Int {
        blockCost + flowCost + (blockKey.possible && blockKey.column > indent ? 1 : 0)
    }

    /// Opens a block collection at `column` if it is past the current indentation (libyaml's roll_indent).
    private mutating func rollIndent(_ column: Int, mapping: Bool) {
        guard flowKinds.isEmpty, indent < column else { return }
        levels.append(Level(column: column, isMapping: mapping))
        blockCost += 1
    }

    /// Closes the block collections indented past `column` (libyaml's unroll_indent).
    private mutating func unrollIndent(_ column: Int) {
        guard flowKinds.isEmpty else { return }
        while let last = levels.last, last.column > column {
            blockCost -= last.indentless ? 2 : 1
            levels.removeLast()
        }
    }

    /// A block entry or a key at the current indentation: an entry opens a sequence inside
    /// the mapping there, a key closes it.
    private mutating func markIndentless(_ present: Bool, column: Int) {
        guard flowKinds.isEmpty, let last = levels.last, last.column == column, last.isMapping, last.indentless != present else { return }
        levels[levels.count - 1].indentless = present
        blockCost += present ? 1 : -1
    }

    private mutating func saveSimpleKey() {
        guard flowKinds.isEmpty, simpleKeyAllowed else { return }
        blockKey = SimpleKey(possible: true, line: line, character: character, column: column)
    }

    private mutating func removeSimpleKey() {
        if flowKinds.isEmpty { blockKey.possible = false }
    }

    // MARK: - Tokens

    private mutating func run() -> Int? {
        while true {
            skipToToken()
            if blockKey.possible, blockKey.line < line || blockKey.character + 1024 < character {
                blockKey.possible = false
            }
            unrollIndent(column)
            if isEnd() { return nil }
            fetchToken()
            if estimate > limit { return line }
        }
    }

    /// Whitespace, comments and line breaks up to the next token.
    private mutating func skipToToken() {
        while true {
            if column == 0, byte() == 0xEF, byte(1) == 0xBB, byte(2) == 0xBF { skip() }
            while byte() == 0x20 || (byte() == 0x09 && (!flowKinds.isEmpty || !simpleKeyAllowed)) { skip() }
            if byte() == UInt8(ascii: "#") {
                while !isBreak(), !isEnd() { skip() }
            }
            guard isBreak() else { return }
            skipLine()
            if flowKinds.isEmpty { simpleKeyAllowed = true }
        }
    }

    /// `---` or `...` at the start of a line, then a blank or a break.
    private var atDocumentIndicator: Bool {
        guard column == 0 else { return false }
        let first = byte()
        return (first == UInt8(ascii: "-") || first == UInt8(ascii: ".")) && byte(1) == first && byte(2) == first && isBlankOrEnd(3)
    }

    private mutating func fetchToken() {
        let c = byte()
        let inFlow = !flowKinds.isEmpty
        if column == 0, c == UInt8(ascii: "%") || atDocumentIndicator {
            // A directive or a document marker ends every block collection.
            unrollIndent(-1)
            removeSimpleKey()
            simpleKeyAllowed = false
            if c == UInt8(ascii: "%") {
                while !isBreak(), !isEnd() { skip() }
            } else {
                skip(); skip(); skip()
            }
            return
        }
        switch c {
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            saveSimpleKey()
            flowKinds.append(c == UInt8(ascii: "["))
            flowCost += c == UInt8(ascii: "[") ? 2 : 1
            simpleKeyAllowed = true
            skip()
        case UInt8(ascii: "]"), UInt8(ascii: "}"):
            removeSimpleKey()
            if let sequence = flowKinds.popLast() { flowCost -= sequence ? 2 : 1 }
            simpleKeyAllowed = false
            skip()
        case UInt8(ascii: ","):
            removeSimpleKey()
            simpleKeyAllowed = true
            skip()
        case UInt8(ascii: "-") where isBlankOrEnd(1):
            rollIndent(column, mapping: false)
            markIndentless(true, column: column)
            removeSimpleKey()
            simpleKeyAllowed = true
            skip()
        case UInt8(ascii: "?") where inFlow || isBlankOrEnd(1):
            rollIndent(column, mapping: true)
            markIndentless(false, column: column)
            removeSimpleKey()
            simpleKeyAllowed = !inFlow
            skip()
        case UInt8(ascii: ":") where inFlow || isBlankOrEnd(1):
            if !inFlow, blockKey.possible {
                rollIndent(blockKey.column, mapping: true)
                markIndentless(false, column: blockKey.column)
                blockKey.possible = false
                simpleKeyAllowed = false
            } else if !inFlow {
                rollIndent(column, mapping: true)
                simpleKeyAllowed = true
            } else {
                simpleKeyAllowed = false
            }
            skip()
        case UInt8(ascii: "*"), UInt8(ascii: "&"):
            saveSimpleKey()
            simpleKeyAllowed = false
            skip()
            while isWord() { skip() }
        case UInt8(ascii: "!"):
            saveSimpleKey()
            simpleKeyAllowed = false
            scanTag()
        case _ where !inFlow && (c == UInt8(ascii: "|") || c == UInt8(ascii: ">")):
            removeSimpleKey()
            simpleKeyAllowed = true
            scanBlockScalar()
        case UInt8(ascii: "'"), UInt8(ascii: "\""):
            saveSimpleKey()
            simpleKeyAllowed = false
            scanQuotedScalar(single: c == UInt8(ascii: "'"))
        default:
            let startsPlain = !(isBlankOrEnd() || isIndicator(0, "-?:,[]{}#&*!|>'\"%@`"))
                || (c == UInt8(ascii: "-") && !isBlank(1))
                || (!inFlow && (c == UInt8(ascii: "?") || c == UInt8(ascii: ":")) && !isBlankOrEnd(1))
            guard startsPlain else {
                // No token starts here: libyaml stops; stepping on can only see more.
                skip()
                return
            }
            saveSimpleKey()
            simpleKeyAllowed = false
            if scanPlainScalar() { simpleKeyAllowed = true }
        }
    }

    /// `!<uri>` (which may hold `,[]`) or `!handle!suffix` / `!suffix`.
    private mutating func scanTag() {
        let verbatim = byte(1) == UInt8(ascii: "<")
        skip()
        if verbatim { skip() }
        while isWord() || isIndicator(0, ";/?:@&=+$.%!~*'()") || (verbatim && isIndicator(0, ",[]")) { skip() }
        if verbatim, byte() == UInt8(ascii: ">") { skip() }
    }

    /// A plain scalar, which may run over several lines; true if it ended after a line break.
    private mutating func scanPlainScalar() -> Bool {
        let inFlow = !flowKinds.isEmpty
        let minimum = indent + 1
        var leadingBlanks = false
        while true {
            if atDocumentIndicator || byte() == UInt8(ascii: "#") { break }
            while !isBlankOrEnd() {
                if inFlow, byte() == UInt8(ascii: ":"), isIndicator(1, ",?[]{}") { return leadingBlanks }
                if (byte() == UInt8(ascii: ":") && isBlankOrEnd(1)) || (inFlow && isIndicator(0, ",[]{}")) { return leadingBlanks }
                skip()
            }
            guard isBlank() || isBreak() else { break }
            while isBlank() || isBreak() {
                if isBlank() {
                    if leadingBlanks, column < minimum, byte() == 0x09 { return leadingBlanks }
                    skip()
                } else {
                    skipLine()
                    leadingBlanks = true
                }
            }
            if !inFlow, column < minimum { break }
        }
        return leadingBlanks
    }

    /// A single- or double-quoted scalar, over as many lines as it takes.
    private mutating func scanQuotedScalar(single: Bool) {
        let quote = single ? UInt8(ascii: "'") : UInt8(ascii: "\"")
        skip()
        while true {
            // libyaml stops at a document marker or the end inside quotes.
            if atDocumentIndicator || isEnd() { return }
            while !isBlankOrEnd() {
                if single, byte() == quote, byte(1) == quote {
                    skip(); skip()
                } else if byte() == quote {
                    skip()
                    return
                } else if !single, byte() == UInt8(ascii: "\\"), isBreak(1) {
                    skip()
                    skipLine()
                    break
                } else if !single, byte() == UInt8(ascii: "\\") {
                    skip(); skip()
                } else {
                    skip()
                }
            }
            while isBlank() || isBreak() {
                if isBlank() { skip() } else { skipLine() }
            }
        }
    }

    /// `|` or `>`, its indicators, then every line indented at least as far as its content.
    private mutating func scanBlockScalar() {
        skip()
        var increment = 0
        if isIndicator(0, "+-") {
            skip()
            if isIndicator(0, "123456789") { increment = Int(byte() - UInt8(ascii: "0")); skip() }
        } else if isIndicator(0, "123456789") {
            increment = Int(byte() - UInt8(ascii: "0"))
            skip()
            if isIndicator(0, "+-") { skip() }
        }
        while isBlank() { skip() }
        if byte() == UInt8(ascii: "#") {
            while !isBreak(), !isEnd() { skip() }
        }
        // Anything else on the header line is an error libyaml stops at.
        guard isBreak() || isEnd() else { return }
        if isBreak() { skipLine() }
        var contentIndent = increment == 0 ? 0 : (indent >= 0 ? indent + increment : increment)
        guard skipBlockScalarBreaks(&contentIndent) else { return }
        while column == contentIndent, !isEnd() {
            while !isBreak(), !isEnd() { skip() }
            if isBreak() { skipLine() }
            guard skipBlockScalarBreaks(&contentIndent) else { return }
        }
    }

    /// The indentation and empty lines before a block scalar's next content line; sets the
    /// content's indentation when the header did not. False where libyaml stops (a tab).
    private mutating func skipBlockScalarBreaks(_ contentIndent: inout Int) -> Bool {
        var widest = 0
        while true {
            while contentIndent == 0 || column < contentIndent, byte() == 0x20 { skip() }
            widest = max(widest, column)
            if contentIndent == 0 || column < contentIndent, byte() == 0x09 { return false }
            guard isBreak() else { break }
            skipLine()
        }
        if contentIndent == 0 { contentIndent = max(widest, indent + 1, 1) }
        return true
    }
}
