import Foundation
import XCTest
import Yams
import ModelCastCore
import ModelCastTestSupport

/// Runs the example GitHub Actions workflows' shell steps, as written, against moto:
/// two tagged releases in a row must add to the bucket's history, never restart it.
///
/// The steps are taken from the YAML (parsed with Yams). `${{ vars.X }}`,
/// `${{ secrets.X }}` and `${{ github.X }}` are replaced by test values (any other
/// expression fails the test), each `run` goes to `bash --noprofile --norc -eo
/// pipefail` as on a GitHub runner, `uses:` steps are skipped, and the build step is
/// replaced by the debug modelcast on PATH. The one harness liberty: `modelcast verify`
/// of a URL or directory gets `--allow-http`, since the test's public base URL is moto
/// on loopback rather than an https CDN.
final class CIWorkflowTests: XCTestCase {
    struct Step {
        let name: String
        let run: String
        let environment: [String: String]
    }

    /// A workflow's runnable steps for `job` (build and `uses:` steps left out), with
    /// expressions replaced from `values`.
    func steps(_ workflow: String, job: String, values: [String: String], file: StaticString = #filePath, line: UInt = #line) throws -> [Step] {
        let text = try String(contentsOfFile: repositoryRoot + "/examples/ci/" + workflow, encoding: .utf8)
        let document = try XCTUnwrap(try Yams.load(yaml: text) as? [String: Any])
        let jobEntry = try XCTUnwrap((document["jobs"] as? [String: Any])?[job] as? [String: Any])
        var shared: [String: String] = [:]
        for scope in [document["env"], jobEntry["env"]] {
            for (name, value) in scope as? [String: Any] ?? [:] { shared[name] = try expand("\(value)", values) }
        }
        var result: [Step] = []
        var builds = 0
        for step in try XCTUnwrap(jobEntry["steps"] as? [[String: Any]]) {
            guard let run = step["run"] as? String else {
                XCTAssertNotNil(step["uses"], "a step that neither runs nor uses: \(step)", file: file, line: line)
                continue
            }
            if run.contains("swift build") { builds += 1; continue }
            XCTAssertNil(step["if"], "the harness does not evaluate `if:` (\(step["name"] ?? ""))", file: file, line: line)
            XCTAssertNil(step["working-directory"], file: file, line: line)
            if let shell = step["shell"] as? String { XCTAssertEqual(shell, "bash", file: file, line: line) }
            var environment = shared
            for (name, value) in step["env"] as? [String: Any] ?? [:] { environment[name] = try expand("\(value)", values) }
            result.append(Step(name: step["name"] as? String ?? "", run: try expand(run, values), environment: environment))
        }
        XCTAssertEqual(builds, 1, "one build step, replaced by the debug binary", file: file, line: line)
        return result
    }

    struct UnknownExpression: Error, CustomStringConvertible {
        let expression: String
        var description: String { "the test cannot evaluate ${{ \(expression) }}" }
    }

    /// Replaces every `${{ name }}` with `values[name]`; anything else is an error.
    func expand(_ text: String, _ values: [String: String]) throws -> String {
        var out = ""
        var rest = Substring(text)
        while let open = rest.range(of: "${{") {
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else { throw UnknownExpression(expression: String(rest[open.upperBound...])) }
            let expression = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            guard let value = values[expression] else { throw UnknownExpression(expression: expression) }
            out += value
            rest = rest[close.upperBound...]
        }
        return out + rest
    }

    /// A GitHub runner: each run starts from a fresh checkout (nothing from an earlier
    /// run survives on the machine) holding the model, with the debug modelcast on PATH.
    final class Runner {
        let bin: Scratch

        init() throws {
            bin = try Scratch("modelcast-runner-bin")
            try bin.write("modelcast", text: """
                #!/bin/sh
                if [ "$1" = verify ]; then
                    case "$2" in s3://*) ;; *) exec '\(modelcastBinary)' "$@" --allow-http ;; esac
                fi
                exec '\(modelcastBinary)' "$@"
                """)
            chmod(bin.at("modelcast"), 0o755)
        }

        /// A checkout of the commit that releases `version`: the example package,
        /// renamed as the workflow expects, with a version-specific file so each
        /// version's bytes differ.
        func checkOut(version: String) throws -> Scratch {
            let checkout = try Scratch("modelcast-checkout")
            try checkout.mkdir("models")
            let package = checkout.at("models/classifier.mlpackage")
            try FileManager.default.copyItem(atPath: repositoryRoot + "/examples/models/TinyClassifier.mlpackage", toPath: package)
            try "classes for \(version)\n".write(toFile: package + "/Data/labels-\(version).txt", atomically: true, encoding: .utf8)
            return checkout
        }

        /// Everything the steps wrote to stdout and stderr, the reports they left in the checkout, and the first failure.
        struct Outcome {
            var failure: String?
            var log = ""
            var reports: [String: String] = [:]
        }

        /// Runs `steps` for the tag `tag` on a fresh runner, stopping at the first failing step.
        func run(_ steps: [Step], tag: String, version: String) throws -> Outcome {
            let checkout = try checkOut(version: version)
            var outcome = Outcome()
            let home = try Scratch("modelcast-runner-home")
            for step in steps {
                let script = home.at("step.sh")
                try step.run.write(toFile: script, atomically: true, encoding: .utf8)
                var environment = [
                    "PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                    "HOME": home.path,
                    "CI": "true",
                    "GITHUB_ACTIONS": "true",
                    "GITHUB_REF_NAME": tag,
                    "GITHUB_REF": (tag.hasPrefix("model-v") ? "refs/tags/" : "refs/heads/") + tag,
                    "GITHUB_WORKSPACE": checkout.path,
                    "GITHUB_PATH": home.at("github_path"),
                    "GITHUB_ENV": home.at("github_env"),
                    "GITHUB_OUTPUT": home.at("github_output"),
                    "RUNNER_TEMP": try home.mkdir("tmp"),
                ]
                for (name, value) in step.environment { environment[name] = value }
                let result = try runProcess("/bin/bash", ["--noprofile", "--norc", "-eo", "pipefail", script], cwd: checkout.path, environment: environment)
                outcome.log += result.stdout + result.stderr
                if result.status != 0 {
                    outcome.failure = "\(tag): step '\(step.name)' exited \(result.status)\n\(result.stdout)\n\(result.stderr)"
                    break
                }
            }
            for name in try FileManager.default.contentsOfDirectory(atPath: checkout.path) where name.hasSuffix(".json") {
                outcome.reports[name] = try String(contentsOfFile: checkout.at(name), encoding: .utf8)
            }
            return outcome
        }
    }

    /// The test's values for the workflows' variables and secrets.
    func values(_ moto: MotoS3, key: String, publicKey: String) -> [String: String] {
        [
            "vars.MODEL_BUCKET": "s3://\(moto.bucket)/prod",
            "vars.MODEL_BASE_URL": "\(moto.endpoint)/\(moto.bucket)/prod",
            "vars.S3_ENDPOINT": moto.endpoint,
            "vars.AWS_REGION": "",
            "vars.MODEL_PUBLIC_KEY": publicKey,
            "secrets.AWS_ACCESS_KEY_ID": moto.accessKeyID,
            "secrets.AWS_SECRET_ACCESS_KEY": moto.secretAccessKey,
            "secrets.MODELCAST_SIGNING_KEY": key,
        ]
    }

    /// An unencrypted signing key (as a CI secret holds it) and its public key's base64 line.
    func signingKey() throws -> (secret: String, publicKey: String) {
        let keys = try Scratch("modelcast-ci-keys")
        let result = try modelcast(["keygen", "--unencrypted", "--public-key", keys.at("ci.pub"), "--secret-key", keys.at("ci.key")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let secret = try String(contentsOfFile: keys.at("ci.key"), encoding: .utf8)
        let publicKey = try String(contentsOfFile: keys.at("ci.pub"), encoding: .utf8).split(separator: "\n").last.map(String.init) ?? ""
        return (secret, publicKey)
    }

    /// key → ETag of every object under the prefix.
    func etags(_ moto: MotoS3) throws -> [String: String] {
        try moto.listing().filter { $0.key.hasPrefix("prod/") }
    }

    func history(_ moto: MotoS3) throws -> [[String: Any]] {
        let result = try modelcast(["history", "s3://\(moto.bucket)/prod", "--json"], environment: moto.environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stdout)
        return try XCTUnwrap(object["releases"] as? [[String: Any]], result.stdout)
    }

    func liveManifest(_ moto: MotoS3) throws -> Release {
        try Release.decode(try moto.download("prod/manifest.json"), source: "live manifest")
    }

    /// Checks that everything the first release stored is still there, byte for byte,
    /// except the manifest (and its signature), which a release replaces.
    func assertNothingOverwritten(since before: [String: String], _ moto: MotoS3, firstRecord: Data, file: StaticString = #filePath, line: UInt = #line) throws {
        let after = try etags(moto)
        // The manifest, its signature and the history index change with every release.
        for (key, etag) in before where key != "prod/manifest.json" && key != "prod/manifest.json.minisig" && key != "prod/_modelcast/history-index.json" {
            XCTAssertEqual(after[key], etag, "\(key) was overwritten or removed", file: file, line: line)
        }
        XCTAssertEqual(try moto.download("prod/manifests/00000001.json"), firstRecord, "the first history record changed", file: file, line: line)
    }

    /// The tagged-release workflow, run for model-v1.0.0 and then model-v1.1.0 on one bucket.
    func testPublishWorkflowTwiceKeepsTheHistory() throws {
        let moto = try MotoS3(checkSignatures: false)  // anonymous GETs for the public-URL verify step
        try moto.allowPublicReads()
        let key = try signingKey()
        let steps = try steps("publish-model.yml", job: "publish", values: values(moto, key: key.secret, publicKey: key.publicKey))
        XCTAssertFalse(steps.isEmpty)
        let runner = try Runner()

        let first = try runner.run(steps, tag: "model-v1.0.0", version: "1.0.0")
        if let failure = first.failure { return XCTFail(failure) }
        // The staged release was verified through the public URL before the manifest went live,
        // and the reports the workflow keeps were written.
        XCTAssertTrue(first.log.contains("verified the staged release through \(moto.endpoint)/\(moto.bucket)/prod"), first.log)
        XCTAssertEqual(Set(first.reports.keys), ["publish.json", "verify.json"])
        XCTAssertEqual(try liveManifest(moto).sequence, 1)
        let afterFirst = try etags(moto)
        let firstRecord = try moto.download("prod/manifests/00000001.json")
        XCTAssertTrue(afterFirst.keys.contains("prod/models/classifier/1.0.0/classifier.mlpackage.zip"), "\(afterFirst.keys.sorted())")

        if let failure = try runner.run(steps, tag: "model-v1.1.0", version: "1.1.0").failure { return XCTFail(failure) }
        let live = try liveManifest(moto)
        XCTAssertEqual(live.sequence, 2, "the second release must have the next sequence")
        XCTAssertEqual(live.models["classifier"]?.version, "1.1.0")
        XCTAssertEqual(live.rollback?.models["classifier"]?.version, "1.0.0")
        let records = try history(moto)
        XCTAssertEqual(records.count, 2, "\(records)")
        XCTAssertEqual(records.compactMap { $0["sequence"] as? Int }.sorted(), [1, 2], "\(records)")
        try assertNothingOverwritten(since: afterFirst, moto, firstRecord: firstRecord)
        // The release is signed with the secret key and verifies with the public key.
        XCTAssertNotNil(try etags(moto)["prod/manifest.json.minisig"])
        let verify = try modelcast(["verify", "\(moto.endpoint)/\(moto.bucket)/prod/manifest.json", "--allow-http", "--public-key", key.publicKey])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }

    /// A release, the daily re-sign, then the next release: the two workflows take
    /// turns on one bucket, each with the next sequence.
    func testRefreshWorkflowBetweenReleasesKeepsTheSequenceRising() throws {
        let moto = try MotoS3(checkSignatures: false)
        try moto.allowPublicReads()
        let key = try signingKey()
        let values = values(moto, key: key.secret, publicKey: key.publicKey)
        let publish = try steps("publish-model.yml", job: "publish", values: values)
        let refresh = try steps("refresh-manifest.yml", job: "refresh", values: values)
        let runner = try Runner()

        if let failure = try runner.run(publish, tag: "model-v1.0.0", version: "1.0.0").failure { return XCTFail(failure) }
        let afterFirst = try etags(moto)
        let firstRecord = try moto.download("prod/manifests/00000001.json")
        if let failure = try runner.run(refresh, tag: "main", version: "1.0.0").failure { return XCTFail(failure) }
        let refreshed = try liveManifest(moto)
        XCTAssertEqual(refreshed.sequence, 2)
        XCTAssertEqual(refreshed.models["classifier"]?.version, "1.0.0")
        XCTAssertNotNil(refreshed.expiresAt)

        if let failure = try runner.run(publish, tag: "model-v1.1.0", version: "1.1.0").failure { return XCTFail(failure) }
        let live = try liveManifest(moto)
        XCTAssertEqual(live.sequence, 3)
        XCTAssertEqual(live.models["classifier"]?.version, "1.1.0")
        XCTAssertEqual(try history(moto).count, 3)
        try assertNothingOverwritten(since: afterFirst, moto, firstRecord: firstRecord)
    }
}
