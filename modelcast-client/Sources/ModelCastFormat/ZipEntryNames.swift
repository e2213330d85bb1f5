import Foundation

/// The device's rules on entry names: what a name may not be (a path that leaves the
/// destination, or means different files on different systems), and which names may not
/// stand together (the same file twice). Verify applies the same rules.
enum ZipEntryNames {
    /// Names that would land outside the destination, or mean different files on different systems.
    static func problems(_ bytes: [UInt8], decoded: String?, flags: UInt16, index: Int) -> [ZipProblem] {
        let name = decoded ?? String(decoding: bytes, as: UTF8.self)
        guard !bytes.isEmpty else { return [.emptyName(entry: name, index: index)] }
        var problems: [ZipProblem] = []
        if decoded == nil {
            problems.append(.invalidUTF8Name(entry: name, index: index, bytes: bytes))
        } else if flags & ZipFormat.flagUTF8 == 0, bytes.contains(where: { $0 >= 0x80 }) {
            problems.append(.nonASCIINameWithoutUTF8Flag(entry: name, index: index))
        }
        // ASCII's only control characters are C0 and DEL; other names need the Unicode tables.
        let isASCII = bytes.allSatisfy { $0 < 0x80 }
        if isASCII, let control = bytes.first(where: { $0 < 0x20 || $0 == 0x7F }) {
            problems.append(.controlCharacter(entry: name, index: index, scalar: Unicode.Scalar(control)))
        } else if !isASCII, let control = name.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            problems.append(.controlCharacter(entry: name, index: index, scalar: control))
        }
        if bytes.first == UInt8(ascii: "/") {
            problems.append(.absolutePath(entry: name, index: index))
        }
        if bytes.count >= 2, bytes[1] == UInt8(ascii: ":"), (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[0] & 0xDF) {
            problems.append(.windowsDrivePrefix(entry: name, index: index, drive: Character(Unicode.Scalar(bytes[0]))))
        }
        if bytes.contains(UInt8(ascii: "\\")) {
            problems.append(.backslashInName(entry: name, index: index))
        }
        if name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).contains("..") {
            problems.append(.pathEscapes(entry: name, index: index))
        }
        // What a device creates a file or folder from (a directory entry's "/" ends it).
        if problems.isEmpty {
            var path = Substring(name)
            if path.hasSuffix("/") { path = path.dropLast() }
            do { _ = try RelativePath(String(path)) } catch let error as ManifestValueError {
                problems.append(.unsafeName(entry: name, index: index, rule: error.rule))
            } catch {
                problems.append(.unsafeName(entry: name, index: index, rule: "\(error)"))
            }
        }
        return problems
    }

    /// Names that would overwrite each other: identical bytes, or equal after NFC
    /// normalisation and lowercasing (APFS normalises; iOS volumes ignore case).
    static func collisions(_ entries: [ZipParsedEntry]) -> [ZipProblem] {
        var problems: [ZipProblem] = []
        // Keyed by bytes: Swift's String equality is canonical equivalence, which
        // would merge NFC and NFD spellings and hide which rule matched.
        var byBytes: [[UInt8]: Int] = [:]
        var byFolded: [String: Int] = [:]
        for parsed in entries {
            let name = parsed.entry.name, index = parsed.index
            if let first = byBytes[parsed.nameBytes] {
                problems.append(.duplicateName(entry: name, index: index, firstIndex: first))
                continue
            }
            byBytes[parsed.nameBytes] = index
            // "a" and "a/" are the same path on disk.
            var path = Substring(name)
            while path.hasSuffix("/") { path = path.dropLast() }
            // ASCII is its own NFC form and lowercases within ASCII: skip Foundation's
            // normalisation, which dominates the time of an archive with many entries.
            let folded = path.utf8.allSatisfy({ $0 < 0x80 })
                ? String(decoding: path.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
                : String(path).precomposedStringWithCanonicalMapping.lowercased().precomposedStringWithCanonicalMapping
            if let first = byFolded[folded] {
                problems.append(.foldedNameCollision(entry: name, index: index, other: entries[first].entry.name))
            } else {
                byFolded[folded] = index
            }
        }
        return problems
    }
}
