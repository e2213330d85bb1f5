import Foundation
import XCTest
import ModelCastTestSupport

/// The house rules of the source tree (issue 12): the core's folders form a one-way
/// stack, and only Storage/ knows which kinds of target exist.
final class ArchitectureTests: XCTestCase {
    /// `scripts/folder-deps` finds no pair of folders that use each other's names.
    func testCoreFoldersFormAOneWayStack() throws {
        let result = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/scripts/folder-deps"])
        XCTAssertEqual(result.status, 0, "folders that depend on each other:\n" + result.stdout.split(separator: "\n").filter { $0.hasPrefix("CYCLE") }.joined(separator: "\n"))
        // The stack docs/architecture.md describes, checked edge by edge: nothing below uses what is above.
        // Every edge must go down a total order, so a cycle of any length fails here; a
        // folder the order does not know fails too (it must be placed in the stack first).
        let order = ["Support", "Digest", "Formats", "Packaging", "Manifest", "Signing", "Storage", "Hosting", "Target", "Keys", "Publish", "Verify", "Report"]
        // docs/architecture.md draws the same stack (`Support ← Digest ← …`).
        let readme = try String(contentsOfFile: repositoryRoot + "/docs/architecture.md", encoding: .utf8)
        let drawn = try XCTUnwrap(readme.split(separator: "\n").first { $0.hasPrefix("Support ← ") }, "docs/architecture.md has no stack line")
        let readmeOrder = drawn.components(separatedBy: " ← ").flatMap { $0.components(separatedBy: ", ") }.filter { $0 != "the executable" }
        XCTAssertEqual(readmeOrder, order, "docs/architecture.md's stack differs from the one checked here")
        let folders = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/Sources/ModelCastCore").filter { !$0.hasPrefix(".") }
        XCTAssertEqual(Set(folders).subtracting(order), [], "a Core folder the stack does not place: add it to docs/architecture.md and here")
        var edges = 0
        for line in result.stdout.split(separator: "\n") where line.contains(" -> ") {
            let parts = line.split(separator: " ")
            let from = order.firstIndex(of: String(parts[0])), to = order.firstIndex(of: String(parts[2].dropLast()))
            XCTAssertNotNil(from, "\(line): a folder the stack does not place")
            XCTAssertNotNil(to, "\(line): a folder the stack does not place")
            if let from, let to { XCTAssertLessThan(to, from, "\(line): a folder uses one above it in the stack") }
            edges += 1
        }
        XCTAssertGreaterThan(edges, 20, "scripts/folder-deps printed no edges: \(result.stdout.prefix(200))")
        // Names declared `package` count: the release page reads TargetState (a package struct).
        // (Missing the modifier once hid two upward edges: Formats → Verify, Manifest → Verify.)
        XCTAssertTrue(result.stdout.split(separator: "\n").contains { $0.hasPrefix("Report -> Target:") && $0.contains("TargetState") }, result.stdout)
    }

    /// No type grows past 25 methods again (`scripts/type-sizes`: funcs directly in a type's
    /// top-level blocks, summed over its extensions); `Publisher` had 72 before issue 48.
    func testNoTypeHasMoreThan25Methods() throws {
        let result = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/scripts/type-sizes",
                                                      repositoryRoot + "/Sources", repositoryRoot + "/modelcast-client/Sources", "--max", "25"])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("DirectoryStorage"), "type-sizes listed nothing: \(result.stdout.prefix(200))")
    }

    /// What folder-deps counts as a folder's names, on a tree made for it: a top-level
    /// `package` type, an extension's method (both once missed), and not a name the using
    /// folder declares itself (a stored property, a parameter) that another folder also has.
    func testFolderDepsSeesPackageNamesAndExtensionMembers() throws {
        let tree = try Scratch()
        try tree.write("Low/Low.swift", text: """
            package struct LowType {}
            extension Int {
                package func lowHelper() -> Int { self }
                package var sharedName: Int { 0 }
            }

            """)
        try tree.write("High/High.swift", text: """
            struct High {
                let sharedName = 1
                func f(partSize: Int) -> Int { LowType().hashValue + 2.lowHelper() + sharedName + partSize }
            }

            """)
        try tree.write("Other/Other.swift", text: """
            extension Int { func partSize() -> Int { 1 } }

            """)
        let result = try runProcess("/usr/bin/env", ["python3", repositoryRoot + "/scripts/folder-deps", tree.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "High -> Low: LowType, lowHelper\n")
    }

    /// Every module a target's sources import is one Package.swift declares for that
    /// target (or the platform's own), so a build never leans on a module that only
    /// happens to be built for another target.
    func testEveryImportedModuleIsDeclared() throws {
        let manifest = try String(contentsOfFile: repositoryRoot + "/Package.swift", encoding: .utf8)
        let platform: Set<String> = ["Foundation", "Glibc", "Darwin", "Dispatch", "XCTest", "FoundationNetworking", "Synchronization"]
        let modulesOf: [String: Set<String>] = ["ModelCastCore": ["ModelCastFormat", "CLibCrypto", "CLibZ"], "modelcast": ["ModelCastCore"]]
        for target in ["ModelCastCore", "modelcast"] {
            // The target's block: from its name to the next target.
            // The target's declaration (not its product's): its name followed by its dependencies.
            let declaration = try NSRegularExpression(pattern: "name: \"\(target)\",\\s*dependencies:")
            guard let match = declaration.firstMatch(in: manifest, range: NSRange(manifest.startIndex..., in: manifest)),
                  let start = Range(match.range, in: manifest) else { XCTFail("no target \(target) in Package.swift"); continue }
            let rest = manifest[start.upperBound...]
            let next = [".target(", ".executableTarget(", ".plugin(", ".testTarget("].compactMap { rest.range(of: $0)?.lowerBound }.min() ?? rest.endIndex
            let block = String(rest[..<next])
            let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: repositoryRoot + "/Sources/" + target))
            var imported = Set<String>()
            while let relative = enumerator.nextObject() as? String {
                guard relative.hasSuffix(".swift") else { continue }
                let text = try String(contentsOfFile: repositoryRoot + "/Sources/\(target)/\(relative)", encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ")
                    guard let index = words.firstIndex(of: "import"), index + 1 < words.count, words[..<index].allSatisfy({ $0.hasPrefix("@") }) else { continue }
                    imported.insert(String(words[index + 1]))
                }
            }
            for module in imported.subtracting(platform).subtracting(modulesOf[target] ?? []).sorted() {
                XCTAssertTrue(block.contains("\"\(module)\""), "\(target) imports \(module), which Package.swift does not declare for it")
            }
        }
    }

    /// No code outside Storage/ names a concrete target, downcasts a Storage, or decides
    /// what a target string means.
    func testOnlyStorageNamesConcreteTargets() throws {
        let sources = repositoryRoot + "/Sources"
        let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: sources))
        var offenders: [String] = []
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".swift"), !relative.hasPrefix("ModelCastCore/Storage/") else { continue }
            let text = try String(contentsOfFile: sources + "/" + relative, encoding: .utf8)
            for name in ["DirectoryStorage", "S3Storage"] where text.contains(name) { offenders.append("\(relative) names \(name)") }
            // What a target string means is decided once, by TargetKind (Storage/).
            if text.contains("hasPrefix(\"s3://\")") { offenders.append("\(relative) tests a target string's s3:// prefix itself (use TargetKind)") }
            // OS calls by name and stat's time fields, which Glibc and Darwin spell differently: Support/Platform.swift only.
            if relative != "ModelCastCore/Support/Platform.swift" {
                // ... and the calls only one of them has (docs/install.md promises macOS source builds).
                for spelling in ["Glibc.", "Darwin.", "st_mtim", "st_ctim", "posix_fadvise", "TIOCGWINSZ", "/proc/", "F_GETPATH", "#if os("]
                where text.contains(spelling) {
                    offenders.append("\(relative) uses \(spelling) (go through Platform)")
                }
            }
            // The core never writes to the terminal: progress goes to the console the
            // executable hands in, warnings to its log. The one exception is the signal
            // handler (Interrupts), which may only call write(2), with the lines the executable set.
            if relative.hasPrefix("ModelCastCore/"), relative != "ModelCastCore/Support/Interrupts.swift" {
                for spelling in ["STDERR_FILENO", "STDOUT_FILENO", "FileHandle.standardError", "FileHandle.standardOutput", "print(", "fputs("]
                where text.contains(spelling) {
                    offenders.append("\(relative) writes to the terminal (\(spelling))")
                }
            }
        }
        XCTAssertEqual(offenders, [])
    }

    /// The Storage protocol holds the object operations every store has (at most eight)
    /// plus its location and its capabilities, with no default implementation of any
    /// requirement: a new backend states everything, so none gets a missing lock silently.
    func testStorageIsNarrowAndHasNoDefaultedRequirement() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/Sources/ModelCastCore/Storage/Storage.swift", encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "package protocol Storage: Sendable {"))
        let end = try XCTUnwrap(text.range(of: "\n}\n", range: start.upperBound..<text.endIndex))
        let body = text[start.upperBound..<end.lowerBound]
        let requirements = body.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("func ") || $0.hasPrefix("var ") }
        let names = requirements.map { String($0.split(whereSeparator: { " (:".contains($0) })[1]) }
        let operations = names.filter { $0 != "location" && $0 != "capabilities" }
        XCTAssertLessThanOrEqual(operations.count, 8, "\(operations)")
        XCTAssertEqual(Set(names).subtracting(operations), ["location", "capabilities"])
        // A requirement given a body in an extension of Storage is a default a backend may
        // forget to override (compared by name and argument labels: `get(_:limit:)`).
        func selector(_ line: String) -> String {
            let declaration = line.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "package ", with: "")
            guard declaration.hasPrefix("func "), let open = declaration.firstIndex(of: "("),
                  let close = declaration[open...].firstIndex(of: ")") else {
                return String(declaration.split(whereSeparator: { " :".contains($0) })[1])
            }
            let name = declaration[declaration.index(declaration.startIndex, offsetBy: 5)..<open]
            let labels = declaration[declaration.index(after: open)..<close].split(separator: ",").map { $0.split(separator: " ").first.map(String.init) ?? "" }
            return "\(name)(\(labels.map { $0.hasSuffix(":") ? $0 : $0 + ":" }.joined()))"
        }
        let required = Set(requirements.map(selector))
        var defaulted: [String] = []
        for block in text.components(separatedBy: "extension Storage {").dropFirst() {
            for line in block.components(separatedBy: "\n}\n")[0].split(separator: "\n") {
                let trimmed = line.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "package ", with: "")
                guard trimmed.hasPrefix("func ") || trimmed.hasPrefix("var ") else { continue }
                if required.contains(selector(trimmed)) { defaulted.append(selector(trimmed)) }
            }
        }
        XCTAssertEqual(defaulted, [], "requirements with a default body")
    }

    /// Every Swift file of the product (Sources and the client package's), as lines, named
    /// as the failures name them (`Sources/…`, `modelcast-client/Sources/…`).
    private func productSources() throws -> [(name: String, lines: [String])] {
        var files: [(name: String, lines: [String])] = []
        for folder in ["Sources", "modelcast-client/Sources"] {
            let root = repositoryRoot + "/" + folder
            let enumerator = try XCTUnwrap(FileManager.default.enumerator(atPath: root))
            while let relative = enumerator.nextObject() as? String {
                guard relative.hasSuffix(".swift") else { continue }
                files.append((folder + "/" + relative, try String(contentsOfFile: root + "/" + relative, encoding: .utf8).components(separatedBy: "\n")))
            }
        }
        return files
    }

    /// `@unchecked Sendable` turns the compiler's check off, so each one says why the type is
    /// safe anyway (a comment naming `@unchecked` within a few lines of the declaration).
    func testEveryUncheckedSendableSaysWhy() throws {
        var unexplained: [String] = []
        for (name, lines) in try productSources() {
            for (index, line) in lines.enumerated() where line.contains("@unchecked Sendable") && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                let around = lines[max(0, index - 4)..<min(lines.count, index + 4)].enumerated()
                    .filter { $0.offset + max(0, index - 4) != index }.map(\.element)
                if !around.contains(where: { $0.contains("//") && $0.contains("@unchecked") }) {
                    unexplained.append("\(name):\(index + 1)")
                }
            }
        }
        XCTAssertEqual(unexplained, [])
    }

    /// `try?` drops an error, so each one is a decision that says why (a comment on its line
    /// or in the six lines before it: "refused just below", "only for the message", "the
    /// next tidy-up deletes it"); issue 48 found 164 of them, most a habit.
    func testEveryTryQuestionMarkSaysWhy() throws {
        var unexplained: [String] = []
        let tryQuestionMark = try NSRegularExpression(pattern: #"\btry\?"#)
        for (name, lines) in try productSources() {
            for (index, line) in lines.enumerated() {
                let code = String(line.components(separatedBy: "//")[0])
                guard tryQuestionMark.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil else { continue }
                if !lines[max(0, index - 6)...index].contains(where: { $0.contains("//") }) {
                    unexplained.append("\(name):\(index + 1)")
                }
            }
        }
        XCTAssertEqual(unexplained, [])
    }
}
