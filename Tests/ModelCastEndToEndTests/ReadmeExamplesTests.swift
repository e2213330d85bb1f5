import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The README is executable: its example commands run as written and print what it shows.
final class ReadmeExamplesTests: XCTestCase {
    /// One `$ modelcast …` command of a ```console block and the lines the README shows after it.
    struct Example {
        let command: String
        let output: [String]
    }

    func readme() throws -> String {
        try String(contentsOfFile: repositoryRoot + "/README.md", encoding: .utf8)
    }

    /// Fenced blocks of one language, in order.
    func blocks(_ language: String, in text: String) -> [[String]] {
        var result: [[String]] = []
        var current: [String]?
        for line in text.components(separatedBy: "\n") {
            if current == nil, line == "```" + language {
                current = []
            } else if current != nil, line == "```" {
                result.append(current!)
                current = nil
            } else {
                current?.append(line)
            }
        }
        return result
    }

    /// Fenced blocks with no language, in order (a fence opens a block, the next closes it).
    func plainBlocks(in text: String) -> [[String]] {
        var result: [[String]] = []
        var current: [String]?
        var plain = false
        for line in text.components(separatedBy: "\n") {
            guard line.hasPrefix("```") else { current?.append(line); continue }
            if let block = current {
                if plain { result.append(block) }
                current = nil
            } else {
                current = []
                plain = line == "```"
            }
        }
        return result
    }

    /// The console examples: each `$ ` line (with `\` continuations) and its output.
    func examples() throws -> [Example] {
        try exampleBlocks().flatMap { $0 }
    }

    /// The console examples, block by block: the commands of one block run in sequence
    /// in one directory (a publish, then a second publish to the same site).
    func exampleBlocks() throws -> [[Example]] {
        var blocksOfExamples: [[Example]] = []
        for block in blocks("console", in: try readme()) {
            var result: [Example] = []
            var index = 0
            while index < block.count {
                guard block[index].hasPrefix("$ ") else { index += 1; continue }
                var command = String(block[index].dropFirst(2))
                while command.hasSuffix("\\") {
                    index += 1
                    command = String(command.dropLast()).trimmingCharacters(in: .whitespaces) + " " + block[index].trimmingCharacters(in: .whitespaces)
                }
                index += 1
                var output: [String] = []
                while index < block.count, !block[index].hasPrefix("$ ") { output.append(block[index]); index += 1 }
                result.append(Example(command: command, output: output))
            }
            blocksOfExamples.append(result)
        }
        return blocksOfExamples
    }

    /// Splits a command line into words (the README uses plain words, no quoting).
    func words(_ command: String) -> [String] {
        command.split(separator: " ").map(String.init)
    }

    /// A README line matches a printed line when the text around each `…` is there in
    /// order and each `…` stands for one run of non-space characters (an elided hash).
    func matches(_ shown: String, _ printed: String) -> Bool {
        let pattern = "^" + shown.components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:)).joined(separator: "\\S*") + "$"
        return printed.range(of: pattern, options: .regularExpression) != nil
    }

    /// A fresh directory where `examples/` is the repository's.
    func exampleDirectory() throws -> Scratch {
        let cwd = try Scratch("modelcast-readme")
        try FileManager.default.createSymbolicLink(atPath: cwd.at("examples"), withDestinationPath: repositoryRoot + "/examples")
        return cwd
    }

    /// Runs `command` (starting with `modelcast`) in `cwd` (default: a fresh directory),
    /// and compares its stdout with the README's lines.
    func run(_ example: Example, in directory: Scratch? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let arguments = words(example.command)
        XCTAssertEqual(arguments.first, "modelcast", file: file, line: line)
        let cwd = try directory ?? exampleDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SOURCE_DATE_EPOCH")
        let result = try modelcast(Array(arguments.dropFirst()), cwd: cwd.path, environment: environment)
        XCTAssertEqual(result.status, 0, "\(example.command): \(result.stderr)", file: file, line: line)
        let printed = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast()
        XCTAssertEqual(printed.count, example.output.count, "\(example.command) printed:\n\(result.stdout)", file: file, line: line)
        for (shown, actual) in zip(example.output, printed) {
            XCTAssertTrue(matches(shown, actual), "\(example.command): README shows\n  \(shown)\nbut it printed\n  \(actual)", file: file, line: line)
        }
    }

    /// Every console example of a command that works on local files runs and prints
    /// what the README shows; the others need a live CDN or bucket and are named here.
    func testConsoleExamplesPrintWhatTheReadmeShows() throws {
        let local: Set<String> = ["inspect", "pack", "publish"]
        var ran: [String] = [], needsNetwork: [String] = []
        for block in try exampleBlocks() {
            // A block that starts with a local command runs whole, in one directory.
            guard let first = block.first, local.contains(words(first.command).dropFirst().first ?? "") else {
                needsNetwork += block.map { words($0.command).dropFirst().first ?? "" }
                continue
            }
            let cwd = try exampleDirectory()
            for example in block {
                try run(example, in: cwd)
                ran.append(words(example.command).dropFirst().first ?? "")
            }
        }
        XCTAssertEqual(ran, ["inspect", "pack", "publish", "publish", "publish", "history", "rollback", "pack", "publish", "rollout", "rollout",
                             "publish", "publish", "promote", "rollout", "rollout", "rollout", "rollout"])
        XCTAssertEqual(needsNetwork, ["verify", "rollback"], "a new console example must run here or be listed as needing the network")
    }

    /// The `_headers` rules the README shows are those its publish example writes.
    func testHeaderRulesShownAreThoseThePublishExampleWrites() throws {
        let shown = try XCTUnwrap(plainBlocks(in: try readme()).first { $0.first == "/models/manifest.json" }, "the README shows no _headers rules")
        let example = try XCTUnwrap(try examples().first { $0.command.hasPrefix("modelcast publish") })
        let cwd = try exampleDirectory()
        try run(example, in: cwd)
        let written = try String(contentsOfFile: cwd.at("site/_headers"), encoding: .utf8)
        XCTAssertEqual(written.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init), shown)
    }

    /// The client walkthrough (`examples/device/walkthrough.sh`) runs and prints the
    /// README's text block: publish, device, publish, device, rollback, device.
    func testClientWalkthroughPrintsWhatTheReadmeShows() throws {
        let text = try readme()
        let shown = try XCTUnwrap(blocks("text", in: text).first { $0.first?.hasPrefix("== first launch") ?? false }, "the README shows no walkthrough output")
        XCTAssertTrue(blocks("sh", in: text).contains { $0.contains { $0.contains("examples/device/walkthrough.sh") } })
        let binaries = (modelcastBinary as NSString).deletingLastPathComponent
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = binaries + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["PORT"] = String(try freeLoopbackPort())
        environment.removeValue(forKey: "SOURCE_DATE_EPOCH")
        let result = try runProcess(repositoryRoot + "/examples/device/walkthrough.sh", [], environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(), ArraySlice(shown))
    }

    /// The set-up section's publish command, as a newcomer runs it, prints what the
    /// README's publish example shows: one model, two files.
    func testSetUpPublishCommandPrintsTheReadmesOutput() throws {
        let setUp = try XCTUnwrap(blocks("sh", in: try readme()).first?.first { $0.contains("modelcast publish") })
        let command = try XCTUnwrap(setUp.range(of: "modelcast publish").map { String(setUp[$0.lowerBound...]) })
        XCTAssertTrue(setUp.hasPrefix("./scripts/setup && swift run -c release modelcast publish"), setUp)
        let example = try XCTUnwrap(try examples().first { $0.command.hasPrefix("modelcast publish") })
        XCTAssertEqual(words(command), words(example.command), "the set-up command is the publish example")
        try run(Example(command: command, output: example.output))
    }

    /// The README's client snippet is `examples/app/main.swift` (built with the package),
    /// and it runs: against `modelcast serve`, a first launch installs, the second finds
    /// nothing new, and the model lands at `ModelCast/models/NAME/current/FILE`.
    func testClientSnippetIsTheBuiltExampleAndRuns() throws {
        let text = try readme()
        let snippet = try XCTUnwrap(blocks("swift", in: text).first { $0.first == "import Foundation" && $0.contains { $0.contains("ModelUpdater(") } },
                                    "the README shows no client snippet")
        let example = try String(contentsOfFile: repositoryRoot + "/examples/app/main.swift", encoding: .utf8)
        XCTAssertEqual(snippet, example.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(), "README and examples/app/main.swift differ")
        let adding = try XCTUnwrap(blocks("swift", in: text).first { $0.contains { $0.contains(".package(path:") } })
        XCTAssertEqual(adding.first, ".package(path: \"../modelcast/modelcast-client\"),")
        XCTAssertTrue(FileManager.default.fileExists(atPath: repositoryRoot + "/modelcast-client/Package.swift"))

        let work = try Scratch("modelcast-app")
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/models"
        XCTAssertEqual(try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")]).status, 0)
        let published = try modelcast(["publish", try work.write("m.bin", patternBytes(10_000, seed: 1)), "--name", "m", "--version", "1.0.0",
                                       "--base-url", base, "--to", work.at("site"), "--sign", work.at("k.key")])
        XCTAssertEqual(published.status, 0, published.stderr)
        let server = try BackgroundProcess(modelcastBinary, ["serve", work.at("site"), "--port", String(port), "--base-path", "/models"])
        XCTAssertTrue(server.firstLine.contains("127.0.0.1:\(port)"), server.firstLine)
        let app = (modelcastBinary as NSString).deletingLastPathComponent + "/modelcast-app-example"
        let first = try runProcess(app, [base, work.at("support"), work.at("k.pub")])
        XCTAssertEqual(first.status, 0, first.stderr)
        let installed = work.at("support/ModelCast/models/m/current/m.bin")
        XCTAssertEqual(first.stdout, "now running [\"m\": \"1.0.0\"]\nm 1.0.0 \(installed)\n")
        let second = try runProcess(app, [base, work.at("support"), work.at("k.pub")])
        XCTAssertEqual(second.stdout, "nothing new\nm 1.0.0 \(installed)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.at("support/ModelCast/models/models")))
        _ = server
    }
}
