import Foundation
import XCTest
import ModelCastTestSupport

/// Issue 25, item 6: every command follows the README's exit-status table, names the
/// offending value, and under `--json` prints the error object on standard output.
/// Table-driven: each command × {no arguments, a missing required option, an unknown
/// option, a bad value}, then each command that reads a store × the ways a store fails.
final class ExitStatusTableCLITests: XCTestCase {
    /// One command line and what the README's table says it ends with.
    struct Case {
        let label: String
        let arguments: [String]
        let status: Int32
        /// Text the human error line must contain (the offending value, or what to do).
        let names: [String]
        var environment: [String: String]? = nil
        /// The command has --json (keygen and serve do not).
        var json = true
        /// A parse error prints the command's own usage line, never the top level's.
        var usageLine: String? = nil
        /// Values that must appear in no output (the secret keys of the environment).
        var secrets: [String] = []
    }

    /// Runs every case (concurrently: the endpoint-down ones spend seconds in backoff)
    /// with and without --json, and checks status, message and JSON error object.
    private func run(_ cases: [Case], jsonOnly: Bool = false, file: StaticString = #filePath, line: UInt = #line) {
        let failures = Failures()
        let group = DispatchGroup()
        let slots = DispatchSemaphore(value: 8)
        for testCase in cases {
            for withJSON in (jsonOnly && testCase.json ? [true] : testCase.json ? [false, true] : [false]) {
                slots.wait()
                group.enter()
                DispatchQueue.global().async {
                    defer { slots.signal(); group.leave() }
                    let arguments = testCase.arguments + (withJSON ? ["--json"] : [])
                    let problems = Self.problems(testCase, withJSON: withJSON, result: Result { try modelcast(arguments, environment: testCase.environment) })
                    if !problems.isEmpty {
                        failures.add("\(testCase.label)\(withJSON ? " --json" : ""): " + problems.joined(separator: "; "))
                    }
                }
            }
        }
        group.wait()
        let found = failures.all
        XCTAssertTrue(found.isEmpty, "\(found.count) of the cases broke the table:\n" + found.sorted().joined(separator: "\n"), file: file, line: line)
    }

    private final class Failures: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ text: String) { lock.lock(); list.append(text); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return list }
    }

    private static func problems(_ testCase: Case, withJSON: Bool, result: Result<ProcessOutput, Error>) -> [String] {
        guard case .success(let output) = result else { return ["did not run: \(result)"] }
        var problems: [String] = []
        if output.status != testCase.status { problems.append("status \(output.status), expected \(testCase.status)") }
        // verify prints its report (its failures as checks) on stdout, and no error line.
        let isVerifyReport = output.stdout.contains("\"checks\"")
        for name in testCase.names where !isVerifyReport && !output.stderr.contains(name) {
            problems.append("stderr does not name \(name)")
        }
        if output.stderr.contains("Usage: modelcast <subcommand>") { problems.append("the top level's usage line, not the command's") }
        if let usage = testCase.usageLine, !withJSON, !output.stderr.contains(usage) { problems.append("no usage line \(usage)") }
        if testCase.status == 1 || testCase.status == 3, output.stderr.contains("Usage:") { problems.append("a usage line for a refusal") }
        for secret in testCase.secrets where output.stderr.contains(secret) || output.stdout.contains(secret) {
            problems.append("the secret was printed")
        }
        if withJSON {
            let object = try? JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any]
            if let error = object?["error"] as? [String: Any] {
                let kinds: [Int32: String] = [1: "refused", 2: "usage", 3: "io"]
                if (error["code"] as? Int).map(Int32.init) != testCase.status { problems.append("JSON code \(error["code"] ?? "none")") }
                if error["kind"] as? String != kinds[testCase.status] { problems.append("JSON kind \(error["kind"] ?? "none")") }
                let message = error["message"] as? String ?? ""
                for name in testCase.names where !message.contains(name) { problems.append("JSON message does not name \(name)") }
            } else if let checks = object?["checks"] as? [[String: Any]] {
                // verify prints its report, the failure as a check.
                let details = checks.compactMap { $0["detail"] as? String }.joined(separator: "\n")
                for name in testCase.names where !details.contains(name) { problems.append("verify report does not name \(name)") }
            } else {
                problems.append("stdout is not a JSON error object: \(output.stdout.prefix(200))")
            }
        }
        return problems
    }

    func testEveryCommandLineFailureEndsWithTheDocumentedStatus() throws {
        let work = try Scratch()
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let site = work.at("site")
        let base = "http://127.0.0.1:1/m"
        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", base, "--to", site]).status, 0)
        // No MODELCAST_TARGET, no passphrase, no terminal.
        var plain = ProcessInfo.processInfo.environment
        for name in ["MODELCAST_TARGET", "MODELCAST_SIGNING_PASSPHRASE", "MODELCAST_SIGNING_KEY"] { plain.removeValue(forKey: name) }
        func usage(_ label: String, _ arguments: [String], _ names: [String], json: Bool = true, command: String) -> Case {
            Case(label: label, arguments: arguments, status: 2, names: names, environment: plain, json: json, usageLine: "Usage: modelcast \(command)")
        }
        let cases: [Case] = [
            usage("inspect: nothing", ["inspect"], ["<model>"], command: "inspect"),
            usage("inspect: unknown option", ["inspect", gguf, "--bogus"], ["'--bogus'"], command: "inspect"),
            usage("inspect: bad value", ["inspect", gguf, "--progress", "sideways"], ["'sideways'"], command: "inspect"),
            usage("pack: nothing", ["pack"], ["<model>"], command: "pack"),
            usage("pack: unknown option", ["pack", gguf, "--bogus"], ["'--bogus'"], command: "pack"),
            usage("pack: bad value", ["pack", gguf, "--compression", "fastest"], ["'fastest'"], command: "pack"),
            usage("publish: nothing", ["publish"], ["MODEL"], command: "publish"),
            usage("publish: no --base-url", ["publish", gguf, "--version", "1.0.1", "--to", site], ["--base-url"], command: "publish"),
            usage("publish: no --to", ["publish", gguf, "--version", "1.0.1", "--base-url", base], ["--to"], command: "publish"),
            usage("publish: no --version", ["publish", gguf, "--base-url", base, "--to", site], ["--version"], command: "publish"),
            usage("publish: unknown option", ["publish", gguf, "--bogus"], ["'--bogus'"], command: "publish"),
            usage("publish: bad value", ["publish", gguf, "--version", "1.0.1", "--base-url", base, "--to", site, "--profile", "nonsense"], ["'nonsense'"], command: "publish"),
            usage("verify: nothing", ["verify"], ["<SOURCE>"], command: "verify"),
            usage("verify: unknown option", ["verify", site, "--bogus"], ["'--bogus'"], command: "verify"),
            usage("verify: bad value", ["verify", site, "--timeout", "soon"], ["'soon'"], command: "verify"),
            usage("rollback: nothing", ["rollback"], ["--version"], command: "rollback"),
            usage("rollback: no --version", ["rollback", site], ["--version"], command: "rollback"),
            usage("rollback: no target", ["rollback", "--version", "1.0.0"], ["TARGET"], command: "rollback"),
            usage("rollback: unknown option", ["rollback", site, "--version", "1.0.0", "--bogus"], ["'--bogus'"], command: "rollback"),
            usage("promote: nothing", ["promote"], ["--from"], command: "promote"),
            usage("promote: no --from", ["promote", site], ["--from"], command: "promote"),
            usage("promote: no target", ["promote", "--from", "beta"], ["TARGET"], command: "promote"),
            usage("promote: unknown option", ["promote", site, "--from", "beta", "--bogus"], ["'--bogus'"], command: "promote"),
            usage("rollout: nothing", ["rollout"], ["--percent"], command: "rollout"),
            usage("rollout: no change", ["rollout", site], ["--percent"], command: "rollout"),
            usage("rollout: unknown option", ["rollout", site, "--percent", "5", "--bogus"], ["'--bogus'"], command: "rollout"),
            usage("rollout: bad value", ["rollout", site, "--percent", "lots"], ["'lots'"], command: "rollout"),
            usage("rollout simulate: nothing", ["rollout", "simulate"], ["<SOURCE>"], command: "rollout simulate"),
            usage("rollout simulate: unknown option", ["rollout", "simulate", site, "--bogus"], ["'--bogus'"], command: "rollout simulate"),
            usage("rollout simulate: bad value", ["rollout", "simulate", site, "--devices", "many"], ["'many'"], command: "rollout simulate"),
            usage("prune: nothing", ["prune"], ["--keep"], command: "prune"),
            usage("prune: no --keep", ["prune", site], ["--keep"], command: "prune"),
            usage("prune: no target", ["prune", "--keep", "2"], ["TARGET"], command: "prune"),
            usage("prune: unknown option", ["prune", site, "--keep", "2", "--bogus"], ["'--bogus'"], command: "prune"),
            usage("prune: bad value", ["prune", site, "--keep", "some"], ["'some'"], command: "prune"),
            usage("history: nothing", ["history"], ["TARGET"], command: "history"),
            usage("history: unknown option", ["history", site, "--bogus"], ["'--bogus'"], command: "history"),
            usage("resign: nothing", ["resign"], ["TARGET"], command: "resign"),
            usage("resign: unknown option", ["resign", site, "--bogus"], ["'--bogus'"], command: "resign"),
            usage("keygen: unknown option", ["keygen", "--bogus"], ["'--bogus'"], json: false, command: "keygen"),
            usage("serve: nothing", ["serve"], ["<directory>"], json: false, command: "serve"),
            usage("serve: unknown option", ["serve", site, "--bogus"], ["'--bogus'"], json: false, command: "serve"),
            usage("serve: bad value", ["serve", site, "--port", "99999"], ["99999"], json: false, command: "serve"),
            // Well-formed values a rule refuses: 1, no usage line.
            Case(label: "rollout: percent above 100", arguments: ["rollout", site, "--percent", "150"], status: 1, names: ["'150'"], environment: plain),
            Case(label: "rollback: channel name", arguments: ["rollback", site, "--version", "1.0.0", "--channel", "Bad Name"], status: 1, names: ["'Bad Name'"], environment: plain),
            Case(label: "history: channel name", arguments: ["history", site, "--channel", "Bad Name"], status: 1, names: ["'Bad Name'"], environment: plain),
            Case(label: "resign: duration", arguments: ["resign", site, "--expires-in", "forever"], status: 1, names: ["'forever'"], environment: plain),
            Case(label: "prune: keep none", arguments: ["prune", site, "--keep", "0"], status: 1, names: ["--keep 0"], environment: plain),
            // No terminal to ask a passphrase on: refused (running again changes nothing), not a parse error.
            Case(label: "keygen: no terminal", arguments: ["keygen", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")], status: 1,
                 names: ["MODELCAST_SIGNING_PASSPHRASE"], environment: plain, json: false),
        ]
        run(cases)
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.at("k.key")), "keygen wrote a key it could not protect")
    }

    func testEveryStoreFailureEndsWithTheDocumentedStatus() throws {
        let moto = try MotoS3(bucket: "models")
        let work = try Scratch()
        let gguf = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let base = "https://cdn.example.com/m"
        XCTAssertEqual(try modelcast(["publish", gguf, "--version", "1.0.0", "--base-url", base, "--to", "s3://models/p"], environment: moto.environment).status, 0)
        // A user the store knows, with no permission on anything.
        try moto.awsCLI(["iam", "create-user", "--user-name", "nobody"])
        let key = try JSONSerialization.jsonObject(with: Data(try moto.awsCLI(["iam", "create-access-key", "--user-name", "nobody"]).utf8)) as? [String: Any]
        let accessKey = key?["AccessKey"] as? [String: Any]
        var denied = moto.environment
        denied["AWS_ACCESS_KEY_ID"] = accessKey?["AccessKeyId"] as? String
        denied["AWS_SECRET_ACCESS_KEY"] = accessKey?["SecretAccessKey"] as? String
        XCTAssertNotNil(denied["AWS_ACCESS_KEY_ID"])
        let deniedSecret = denied["AWS_SECRET_ACCESS_KEY"] ?? ""
        var wrongSecret = moto.environment
        wrongSecret["AWS_SECRET_ACCESS_KEY"] = "wrong-secret-value"
        var noCredentials = moto.environment
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"] { noCredentials.removeValue(forKey: name) }
        noCredentials["HOME"] = work.path
        var down = moto.environment
        let downPort = try freeLoopbackPort()
        down["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(downPort)"

        let commands: [(String, (String) -> [String])] = [
            ("publish", { ["publish", gguf, "--version", "2.0.0", "--base-url", base, "--to", $0] }),
            ("verify", { ["verify", $0] }),
            ("rollback", { ["rollback", $0, "--version", "1.0.0"] }),
            ("promote", { ["promote", $0, "--from", "stable", "--to", "beta"] }),
            ("rollout", { ["rollout", $0, "--percent", "5"] }),
            ("rollout simulate", { ["rollout", "simulate", $0] }),
            ("prune", { ["prune", $0, "--keep", "1"] }),
            ("history", { ["history", $0] }),
            ("resign", { ["resign", $0] }),
        ]
        var cases: [Case] = []
        for (name, arguments) in commands {
            cases.append(Case(label: "\(name): no such bucket", arguments: arguments("s3://no-such-bucket/p"), status: 1,
                              names: ["'no-such-bucket'", moto.endpoint], environment: moto.environment))
            cases.append(Case(label: "\(name): bad credentials", arguments: arguments("s3://models/p"), status: 3,
                              names: ["refused the credentials", "AWS_SECRET_ACCESS_KEY"], environment: wrongSecret, secrets: ["wrong-secret-value"]))
            cases.append(Case(label: "\(name): no credentials", arguments: arguments("s3://models/p"), status: 3,
                              names: ["no AWS credentials"], environment: noCredentials))
            cases.append(Case(label: "\(name): access denied", arguments: arguments("s3://models/p"), status: 3,
                              names: ["access denied", "'models'"], environment: denied, secrets: [deniedSecret]))
            cases.append(Case(label: "\(name): endpoint down", arguments: arguments("s3://models/p"), status: 3,
                              names: ["127.0.0.1:\(downPort)"], environment: down))
        }
        run(cases, jsonOnly: true)
        // Nothing any of them did changed the bucket: one release, as published.
        let keys = try moto.listing().keys.sorted()
        XCTAssertFalse(keys.contains { $0.contains("channels/beta") || $0.contains("00000002") }, "\(keys)")
    }
}
