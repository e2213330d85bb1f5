import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The README and the pages under docs/ are executable: their console examples run as
/// written, page by page, and print what the pages show.
final class ReadmeExamplesTests: XCTestCase {
    /// One `$ modelcast …` command of a ```console block and the lines the README shows after it.
    struct Example {
        let command: String
        let output: [String]
    }

    func readme() throws -> String {
        try page("README.md")
    }

    /// A page of the documentation, by its path in the repository.
    func page(_ path: String) throws -> String {
        try String(contentsOfFile: repositoryRoot + "/" + path, encoding: .utf8)
    }

    /// README.md, then every page under docs/, by name.
    func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/docs").filter { $0.hasSuffix(".md") }.sorted()
        return ["README.md"] + docs.map { "docs/" + $0 }
    }

    /// Every page's text, joined: for a block that may sit on any page.
    func allPages() throws -> String {
        try pages().map(page).joined(separator: "\n")
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

    /// The console examples of every page: each `$ ` line (with `\` continuations) and its output.
    func examples() throws -> [Example] {
        try pages().flatMap { try exampleBlocks(in: try page($0)).flatMap { $0 } }
    }

    /// A page's console examples, block by block.
    func exampleBlocks(in text: String) throws -> [[Example]] {
        var blocksOfExamples: [[Example]] = []
        for block in blocks("console", in: text) {
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
        compare(example, result, file: file, line: line)
    }

    /// The command succeeded and printed the lines the page shows.
    func compare(_ example: Example, _ result: ProcessOutput, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.status, 0, "\(example.command): \(result.stderr)", file: file, line: line)
        let printed = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast()
        XCTAssertEqual(printed.count, example.output.count, "\(example.command) printed:\n\(result.stdout)", file: file, line: line)
        for (shown, actual) in zip(example.output, printed) {
            XCTAssertTrue(matches(shown, actual), "\(example.command): the page shows\n  \(shown)\nbut it printed\n  \(actual)", file: file, line: line)
        }
    }

    /// Runs a page's console examples in order, in one fresh directory, as a shell would
    /// (what a command prints on stderr is shown too, where a terminal shows it):
    /// `modelcast` is the one just built, other commands (`printf`, `cat`) are the
    /// system's, and a command ending in ` &` (a `modelcast serve`) runs in the background
    /// until the page is done, its first line compared with what the page shows. Port
    /// 8080 in the page stands for a free loopback port. Returns each command's first word
    /// and subcommand.
    @discardableResult
    func runPage(_ path: String) throws -> [String] {
        let cwd = try exampleDirectory()
        // A free port of four digits, as 8080: manifests and reports keep the page's sizes.
        let port = String(try freeLoopbackPort(in: 8000..<10000))
        let binaries = (modelcastBinary as NSString).deletingLastPathComponent
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = binaries + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment.removeValue(forKey: "SOURCE_DATE_EPOCH")
        var background: [BackgroundProcess] = []
        defer { for process in background { process.process.terminate() } }
        // A page that publishes to a bucket gets a local S3 server (moto) holding the bucket
        // `models`, its keys in the environment and its address for R2's placeholder endpoint.
        var bucketEndpoint: String?
        var moto: MotoS3?
        if try exampleBlocks(in: try page(path)).joined().contains(where: { $0.command.contains("s3://") }) {
            let server = try MotoS3(bucket: "models")
            for (name, value) in server.environment where name.hasPrefix("AWS_") && name != "AWS_ENDPOINT_URL" { environment[name] = value }
            environment.removeValue(forKey: "AWS_PROFILE")
            bucketEndpoint = server.endpoint
            moto = server
        }
        defer { withExtendedLifetime(moto) {} }
        var ran: [String] = []
        for block in try exampleBlocks(in: try page(path)) {
            for shown in block {
                var line = shown.command.replacingOccurrences(of: "8080", with: port)
                if let bucketEndpoint { line = line.replacingOccurrences(of: Self.r2Endpoint, with: bucketEndpoint) }
                let example = Example(command: line, output: shown.output.map { $0.replacingOccurrences(of: "8080", with: port) })
                let command = words(example.command)
                ran.append(command.prefix(2).joined(separator: " "))
                if example.command.hasSuffix(" &") {
                    XCTAssertEqual(command.first, "modelcast", "\(path): only modelcast runs in the background")
                    XCTAssertLessThanOrEqual(example.output.count, 1, "\(path): \(example.command): a background command shows its first line only")
                    let server = try BackgroundProcess(modelcastBinary, Array(command.dropFirst().dropLast()), cwd: cwd.path)
                    background.append(server)
                    if let first = example.output.first { XCTAssertTrue(matches(first, server.firstLine), "\(path): \(example.command) printed \(server.firstLine)") }
                    continue
                }
                // Both streams, in the order a terminal shows them (issue 47: the quick start
                // left out the warnings a user sees on stderr).
                let result = try runProcess("/bin/sh", ["-c", "{ \(example.command)\n} 2>&1"], cwd: cwd.path, environment: environment)
                compare(example, result)
                if result.status != 0 { XCTFail("\(path): stopped at \(example.command)"); return ran }
            }
        }
        return ran
    }

    /// The endpoint the pages show for Cloudflare R2; the tests put a local S3 server there.
    static let r2Endpoint = "https://ACCOUNT_ID.r2.cloudflarestorage.com"

    /// Every console example of every page runs, in order, one directory per page, and
    /// prints what the page shows.
    func testConsoleExamplesPrintWhatThePagesShow() throws {
        var ran: [String: [String]] = [:]
        for path in try pages() where !blocks("console", in: try page(path)).isEmpty {
            ran[path] = try runPage(path)
        }
        XCTAssertEqual(ran["README.md"], ["printf 'weights,", "modelcast publish", "modelcast serve", "modelcast verify", "printf 'weights,",
                                          "modelcast publish", "modelcast rollback", "modelcast history", "modelcast report"],
                       "the README's quick start, then the release page of what it published")
        // The quick start: the commands between its heading and the next.
        let readme = try readme()
        let quickStart = try XCTUnwrap(readme.components(separatedBy: "\n## Quick start\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        XCTAssertLessThanOrEqual(quickStart.split(separator: "\n").filter { $0.hasPrefix("$ ") }.count, 8, "the quick start is at most eight commands")
        XCTAssertEqual(Set(ran.keys), ["README.md", "docs/publishing.md", "docs/releases.md", "docs/verifying.md", "docs/manifest.md", "docs/report.md", "docs/howto.md"],
                       "a page with console examples this test does not expect (or one lost its examples)")
    }

    /// The README stays short: what it is, install, a quick start, the commands, links.
    func testTheReadmeFitsInThreeHundredLines() throws {
        let count = try readme().split(separator: "\n", omittingEmptySubsequences: false).count
        XCTAssertLessThanOrEqual(count, 300, "README.md has \(count) lines: move details to docs/")
    }

    /// Every relative link of the README and docs/ leads to a file of the repository.
    func testRelativeLinksLeadToFiles() throws {
        let link = try NSRegularExpression(pattern: "\\]\\(([^)#:]+)(#[^)]*)?\\)")
        for path in try pages() {
            let text = try page(path)
            let directory = (path as NSString).deletingLastPathComponent
            for match in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = Range(match.range(at: 1), in: text) else { continue }
                let target = String(text[range])
                let resolved = directory.isEmpty ? target : directory + "/" + target
                XCTAssertTrue(FileManager.default.fileExists(atPath: repositoryRoot + "/" + resolved), "\(path) links to \(target), which does not exist")
            }
        }
    }

    /// The `_headers` rules the README shows are those its publish example writes.
    func testHeaderRulesShownAreThoseThePublishExampleWrites() throws {
        let shown = try XCTUnwrap(plainBlocks(in: try allPages()).first { $0.first == "/models/manifest.json" }, "no page shows the _headers rules")
        let example = try XCTUnwrap(try examples().first { $0.command.hasPrefix(Self.examplePublish) })
        let cwd = try exampleDirectory()
        try run(example, in: cwd)
        let written = try String(contentsOfFile: cwd.at("site/_headers"), encoding: .utf8)
        XCTAssertEqual(written.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init), shown)
    }

    /// The client walkthrough (`examples/device/walkthrough.sh`) runs and prints the
    /// README's text block: publish, device, publish, device, rollback, device.
    func testClientWalkthroughPrintsWhatTheReadmeShows() throws {
        let text = try page("docs/client.md")
        let shown = try XCTUnwrap(blocks("text", in: text).first { $0.first?.hasPrefix("== first launch") ?? false }, "docs/client.md shows no walkthrough output")
        XCTAssertTrue(blocks("sh", in: text).contains { $0.contains { $0.contains("examples/device/walkthrough.sh") } })
        let binaries = (modelcastBinary as NSString).deletingLastPathComponent
        // The walkthrough runs the example device from beside modelcast (without it, it
        // would wait for a device that never comes).
        let device = binaries + "/modelcast-device"
        guard FileManager.default.isExecutableFile(atPath: device) else {
            return XCTFail("no \(device): the walkthrough needs the example device built beside modelcast (swift build builds both)")
        }
        try runWalkthrough(path: binaries, shows: shown)
    }

    /// The same walkthrough with the Kotlin client's example device
    /// (`modelcast-client-android/device`, which takes the Swift device's one-shot command
    /// line) prints the same lines: a script written for one runs the other.
    func testClientWalkthroughRunsWithTheKotlinDevice() throws {
        let text = try page("docs/client.md")
        let shown = try XCTUnwrap(blocks("text", in: text).first { $0.first?.hasPrefix("== first launch") ?? false })
        let launcher = repositoryRoot + "/modelcast-client-android/device"
        guard FileManager.default.fileExists(atPath: repositoryRoot + "/modelcast-client-android/out/modelcast-device.jar") else {
            return XCTFail("the Kotlin device is not built: run modelcast-client-android/build first (.ci/run does)")
        }
        let bin = try Scratch("modelcast-kotlin-walkthrough")
        try FileManager.default.createSymbolicLink(atPath: bin.at("modelcast-device"), withDestinationPath: launcher)
        try FileManager.default.createSymbolicLink(atPath: bin.at("modelcast"), withDestinationPath: modelcastBinary)
        try runWalkthrough(path: bin.path, shows: shown)
    }

    /// Runs examples/device/walkthrough.sh with `path` first on PATH and checks it prints `shown`.
    private func runWalkthrough(path: String, shows shown: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["PORT"] = String(try freeLoopbackPort())
        environment.removeValue(forKey: "SOURCE_DATE_EPOCH")
        let result = try runProcess(repositoryRoot + "/examples/device/walkthrough.sh", [], environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        XCTAssertEqual(result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(), ArraySlice(shown),
                       file: file, line: line)
    }

    /// The first publish of docs/publishing.md (the set-up command publishes the same).
    static let examplePublish = "modelcast publish examples/models/tiny-llm.gguf examples/models/tiny-llm-mmproj.gguf --version"

    /// The set-up section's publish command, as a newcomer runs it, prints what
    /// docs/publishing.md's publish example shows: one model, two files.
    func testSetUpPublishCommandPrintsTheReadmesOutput() throws {
        let setUp = try XCTUnwrap(blocks("sh", in: try readme()).first?.first { $0.contains("modelcast publish") })
        let command = try XCTUnwrap(setUp.range(of: "modelcast publish").map { String(setUp[$0.lowerBound...]) })
        XCTAssertTrue(setUp.hasPrefix("./scripts/setup && swift run -c release modelcast publish"), setUp)
        let example = try XCTUnwrap(try examples().first { $0.command.hasPrefix(Self.examplePublish) })
        XCTAssertEqual(words(command), words(example.command), "the set-up command is docs/publishing.md's publish example")
        try run(Example(command: command, output: example.output))
    }

    /// docs/client.md's client snippet is `examples/app/main.swift` (built with the package),
    /// and it runs: against `modelcast serve`, a first launch installs, the second finds
    /// nothing new, and the model lands at `ModelCast/models/NAME/current/FILE`.
    func testClientSnippetIsTheBuiltExampleAndRuns() throws {
        let text = try page("docs/client.md")
        let snippet = try XCTUnwrap(blocks("swift", in: text).first { $0.first == "import Foundation" && $0.contains { $0.contains("ModelUpdater(") } },
                                    "docs/client.md shows no client snippet")
        let example = try String(contentsOfFile: repositoryRoot + "/examples/app/main.swift", encoding: .utf8)
        XCTAssertEqual(snippet, example.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(), "docs/client.md and examples/app/main.swift differ")
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
