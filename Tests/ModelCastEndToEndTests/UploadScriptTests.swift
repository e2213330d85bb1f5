import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// The generated upload scripts (`_modelcast/upload-*.sh`) never overwrite an
/// immutable key (artifacts, history records): they upload one only where the key is
/// absent, leave one with the same content alone, refuse one with other content by
/// name, and replace the signature and manifest last.
final class UploadScriptTests: XCTestCase {
    let base = "https://cdn.example.com/p"

    /// A directory with two releases of tiny-llm (four artifacts, two history records, the manifest).
    func publishedSite() throws -> Scratch {
        let site = try Scratch("modelcast-upload-site")
        for (version, epoch) in [("1.0.0", 1_790_000_000), ("1.1.0", 1_790_003_600)] {
            let environment = pinnedEnvironment(epoch: epoch)
            let result = try modelcast(["publish", "examples/models/tiny-llm.gguf", "examples/models/tiny-llm-mmproj.gguf", "--name", "tiny-llm",
                                        "--version", version, "--base-url", base, "--to", site.path], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        return site
    }

    /// The objects `_modelcast/objects.json` lists, in upload order.
    func objects(_ site: Scratch) throws -> [(key: String, role: String)] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site.at("_modelcast/objects.json")))) as? [String: Any]
        return (json?["objects"] as? [[String: Any]] ?? []).map { ($0["key"] as? String ?? "", $0["role"] as? String ?? "") }
    }

    /// moto behind the logging proxy: the aws cli talks to `endpoint`, and every
    /// request it makes is appended to `log` as "METHOD PATH -> outcome".
    final class LoggedMoto {
        let moto: MotoS3
        let proxy: BackgroundProcess
        let endpoint: String
        let log: String
        private let work: Scratch

        init() throws {
            moto = try MotoS3()
            work = try Scratch("modelcast-proxy")
            let rules = work.at("rules.json")
            try "[]".write(toFile: rules, atomically: true, encoding: .utf8)
            let port = try freeLoopbackPort()
            proxy = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/fault_proxy.py", String(port), String(moto.port), rules])
            endpoint = "http://127.0.0.1:\(port)"
            log = rules + ".log"
        }

        /// The requests logged so far, and forgets them.
        func takeRequests() -> [String] {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: log)
            return text.split(separator: "\n").map(String.init)
        }

        /// key → "ETag/Size/LastModified" of every object.
        func state() throws -> [String: String] {
            try moto.listing(lastModified: true)
        }
    }

    func runScript(_ script: String, _ arguments: [String], environment: [String: String], pathPrefix: String? = nil) throws -> ProcessOutput {
        var environment = environment
        if let pathPrefix { environment["PATH"] = pathPrefix + ":" + (environment["PATH"] ?? "/usr/bin:/bin") }
        return try runProcess("/bin/sh", [script] + arguments, environment: environment)
    }

    /// PUT request lines, as "PUT /bucket/key".
    func puts(_ requests: [String]) -> [String] {
        requests.filter { $0.hasPrefix("PUT ") }.map { String($0.split(separator: " ").prefix(2).joined(separator: " ")) }
            .map { $0.components(separatedBy: "?").first! }
    }

    // MARK: - aws cli, against moto

    func testAWSScriptUploadsOnlyAbsentImmutableKeysAndTheManifestLast() throws {
        let s3 = try LoggedMoto()
        let site = try publishedSite()
        let script = site.at("_modelcast/upload-aws.sh")
        let dest = "s3://\(s3.moto.bucket)/p"
        let listed = try objects(site)
        XCTAssertEqual(listed.last?.key, "manifest.json")

        // First upload: every object, the manifest last, all checks before any upload.
        let first = try runScript(script, [dest, "--endpoint-url", s3.endpoint], environment: s3.moto.environment)
        XCTAssertEqual(first.status, 0, first.stderr)
        var requests = s3.takeRequests()
        XCTAssertEqual(Set(puts(requests)), Set(listed.map { "PUT /\(s3.moto.bucket)/p/\($0.key)" }), requests.joined(separator: "\n"))
        XCTAssertEqual(puts(requests).last, "PUT /\(s3.moto.bucket)/p/manifest.json", "the manifest goes last")
        let firstPut = try XCTUnwrap(requests.firstIndex { $0.hasPrefix("PUT ") })
        XCTAssertFalse(requests[firstPut...].contains { $0.hasPrefix("HEAD ") && !$0.contains("/manifest.json") },
                       "every immutable key is checked before anything is uploaded: \(requests)")
        let afterFirst = try s3.state()
        XCTAssertEqual(Set(afterFirst.keys), Set(listed.map { "p/" + $0.key }))
        // The objects carry their headers and SHA-256, so modelcast itself accepts the bucket.
        let head = try s3.moto.awsCLI(["s3api", "head-object", "--bucket", s3.moto.bucket, "--key", "p/models/tiny-llm/1.1.0/tiny-llm.gguf"])
        XCTAssertTrue(head.contains("\"CacheControl\": \"public, max-age=31536000, immutable\""), head)
        XCTAssertTrue(head.contains("\"sha256\": \"b67f7c0f2554d969e9bd3d1e3efbb2faa71537a42d6e3c4ec85de5f65b82bb71\""), head)
        let verify = try modelcast(["verify", dest, "--json"], environment: s3.moto.environment)
        let report = try JSONDecoder().decode(VerifyReport.self, from: Data(verify.stdout.utf8))
        XCTAssertEqual(report.failures, 0, "\(report.checks.filter { $0.status != .pass })")

        // An unchanged re-run uploads no immutable object again, and replaces the manifest.
        sleep(1)  // so a replaced object would show a new LastModified
        let again = try runScript(script, [dest, "--endpoint-url", s3.endpoint], environment: s3.moto.environment)
        XCTAssertEqual(again.status, 0, again.stderr)
        requests = s3.takeRequests()
        XCTAssertEqual(puts(requests), ["PUT /\(s3.moto.bucket)/p/manifest.json"], requests.joined(separator: "\n"))
        let afterAgain = try s3.state()
        for (key, value) in afterFirst where key != "p/manifest.json" {
            XCTAssertEqual(afterAgain[key], value, "\(key) was rewritten")
        }
        XCTAssertNotEqual(afterAgain["p/manifest.json"], afterFirst["p/manifest.json"], "the manifest is replaced on every run")
    }

    /// A tree model's files are shared objects: uploading the second version sends only
    /// the one file that changed (plus its history record and the manifest).
    func testAWSScriptUploadsOnlyTheChangedFileOfATree() throws {
        let s3 = try LoggedMoto()
        let site = try Scratch("modelcast-upload-site"), source = try Scratch("modelcast-tree-source")
        _ = try shell("cp -R '\(repositoryRoot)/examples/models/TinyClassifier.mlpackage' '\(source.path)/'")
        let tree = source.at("TinyClassifier.mlpackage")
        let dest = "s3://\(s3.moto.bucket)/p"
        func publishAndUpload(_ version: String) throws -> [String] {
            let published = try modelcast(["publish", tree, "--no-zip", "--version", version, "--base-url", base, "--to", site.path])
            XCTAssertEqual(published.status, 0, published.stderr)
            let upload = try runScript(site.at("_modelcast/upload-aws.sh"), [dest, "--endpoint-url", s3.endpoint], environment: s3.moto.environment)
            XCTAssertEqual(upload.status, 0, upload.stderr)
            let requests = puts(s3.takeRequests())
            // One summary line (issue 25, item 14): the immutable objects it sent, counted, and what it replaced.
            let sent = requests.filter { !$0.hasSuffix("/manifest.json") && !$0.contains("/_modelcast/") }.count
            XCTAssertTrue(upload.stdout.hasPrefix("upload-aws.sh: uploaded \(sent) object\(sent == 1 ? "" : "s") ("), upload.stdout)
            XCTAssertTrue(upload.stdout.contains("already stored; replaced") && upload.stdout.hasSuffix("manifest.json at \(dest)\n"), upload.stdout)
            return requests
        }
        XCTAssertEqual(try publishAndUpload("1.0.0").filter { $0.contains("/blobs/") }.count, 3)
        try source.write("TinyClassifier.mlpackage/Data/com.apple.CoreML/weights/weight.bin", patternBytes(16384, seed: 7))
        let second = try publishAndUpload("1.1.0")
        let live = try Release.decode(try Data(contentsOf: URL(fileURLWithPath: site.at("manifest.json"))), source: "live")
        let changed = try XCTUnwrap(live.models["TinyClassifier"]?.files.first { $0.path == "Data/com.apple.CoreML/weights/weight.bin" })
        XCTAssertEqual(second, ["PUT /\(s3.moto.bucket)/p/\(changed.key)", "PUT /\(s3.moto.bucket)/p/manifests/00000002.json",
                                "PUT /\(s3.moto.bucket)/p/manifest.json"])
        let verify = try modelcast(["verify", dest, "--json"], environment: s3.moto.environment)
        let report = try JSONDecoder().decode(VerifyReport.self, from: Data(verify.stdout.utf8))
        XCTAssertEqual(report.failures, 0, "\(report.checks.filter { $0.status != .pass })")
    }

    func testAWSScriptRefusesDifferentContentUnderAnImmutableKeyAndUploadsNothing() throws {
        let s3 = try LoggedMoto()
        let site = try publishedSite()
        let dest = "s3://\(s3.moto.bucket)/p"
        // An earlier release left other bytes under one artifact key and one history key.
        let other = try Scratch()
        try other.write("other.bin", patternBytes(1024, seed: 9))
        try other.write("other.json", text: "{\"sequence\": 1}\n")
        try s3.moto.awsCLI(["s3api", "put-object", "--bucket", s3.moto.bucket, "--key", "p/models/tiny-llm/1.0.0/tiny-llm.gguf", "--body", other.at("other.bin")])
        try s3.moto.awsCLI(["s3api", "put-object", "--bucket", s3.moto.bucket, "--key", "p/manifests/00000001.json", "--body", other.at("other.json")])
        let before = try s3.state()
        _ = s3.takeRequests()

        let result = try runScript(site.at("_modelcast/upload-aws.sh"), [dest, "--endpoint-url", s3.endpoint], environment: s3.moto.environment)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("s3://\(s3.moto.bucket)/p/models/tiny-llm/1.0.0/tiny-llm.gguf"), result.stderr)
        XCTAssertTrue(result.stderr.contains("s3://\(s3.moto.bucket)/p/manifests/00000001.json"), result.stderr)
        XCTAssertTrue(result.stderr.contains("different content"), result.stderr)
        // Nothing was uploaded: the bucket is exactly as it was.
        XCTAssertEqual(puts(s3.takeRequests()), [])
        XCTAssertEqual(try s3.state(), before)
        XCTAssertEqual(try s3.moto.download("p/models/tiny-llm/1.0.0/tiny-llm.gguf"), Data(patternBytes(1024, seed: 9)))
    }

    /// An object stored without sha256 metadata (by an older script or another tool) is
    /// downloaded and hashed: the same bytes are accepted, other bytes refused.
    func testAWSScriptProvesObjectsWithoutMetadataByTheirBytes() throws {
        let s3 = try LoggedMoto()
        let site = try publishedSite()
        let dest = "s3://\(s3.moto.bucket)/p"
        let key = "models/tiny-llm/1.0.0/tiny-llm-mmproj.gguf"
        try s3.moto.awsCLI(["s3api", "put-object", "--bucket", s3.moto.bucket, "--key", "p/" + key, "--body", site.at(key)])
        let stored = try s3.state()["p/" + key]
        let result = try runScript(site.at("_modelcast/upload-aws.sh"), [dest, "--endpoint-url", s3.endpoint], environment: s3.moto.environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertFalse(puts(s3.takeRequests()).contains("PUT /\(s3.moto.bucket)/p/\(key)"))
        XCTAssertEqual(try s3.state()["p/" + key], stored)
    }

    /// A key that appears between the check and the upload (another publisher): the
    /// conditional put refuses to overwrite it; other content is an error naming the
    /// key, the same content is accepted.
    func testAWSScriptConditionalPutLosesARaceWithoutOverwriting() throws {
        let aws = try XCTUnwrap(which("aws"))
        let key = "models/tiny-llm/1.1.0/tiny-llm.gguf"
        for sameContent in [false, true] {
            let s3 = try LoggedMoto()
            let site = try publishedSite()
            let bin = try Scratch("modelcast-race-bin")
            let planted = sameContent ? site.at(key) : try bin.write("planted.bin", patternBytes(1024, seed: 5))
            // A test double around the real aws cli: the first head-object of the key
            // lets "another publisher" store `planted` there, then answers 404 as the
            // check would have seen a moment earlier.
            try bin.write("aws", text: """
                #!/bin/sh
                prev="" is_head=0 is_key=0
                for a in "$@"; do
                    [ "$a" = head-object ] && is_head=1
                    [ "$prev" = --key ] && [ "$a" = "p/\(key)" ] && is_key=1
                    prev="$a"
                done
                if [ $is_head = 1 ] && [ $is_key = 1 ] && [ ! -e '\(bin.at("raced"))' ]; then
                    : > '\(bin.at("raced"))'
                    '\(aws)' s3api put-object --bucket '\(s3.moto.bucket)' --key 'p/\(key)' --body '\(planted)' --endpoint-url '\(s3.moto.endpoint)' > /dev/null || exit 99
                    echo 'An error occurred (404) when calling the HeadObject operation: Not Found' >&2
                    exit 255
                fi
                exec '\(aws)' "$@"
                """)
            chmod(bin.at("aws"), 0o755)
            let result = try runScript(site.at("_modelcast/upload-aws.sh"), ["s3://\(s3.moto.bucket)/p", "--endpoint-url", s3.endpoint],
                                       environment: s3.moto.environment, pathPrefix: bin.path)
            XCTAssertTrue(FileManager.default.fileExists(atPath: bin.at("raced")), "the race was not staged")
            let requests = s3.takeRequests()
            XCTAssertTrue(requests.contains { $0.hasPrefix("PUT /\(s3.moto.bucket)/p/\(key)") }, "the script tried its conditional put: \(requests)")
            XCTAssertEqual(try s3.moto.download("p/" + key), try Data(contentsOf: URL(fileURLWithPath: planted)), "the other publisher's object was overwritten")
            if sameContent {
                XCTAssertEqual(result.status, 0, result.stderr)
                XCTAssertTrue(puts(requests).last == "PUT /\(s3.moto.bucket)/p/manifest.json", "\(requests)")
            } else {
                XCTAssertNotEqual(result.status, 0)
                XCTAssertTrue(result.stderr.contains("s3://\(s3.moto.bucket)/p/\(key)"), result.stderr)
                XCTAssertFalse(puts(requests).contains("PUT /\(s3.moto.bucket)/p/manifest.json"), "the manifest must not go live: \(requests)")
            }
        }
    }

    /// Issue #10's mistake through the script: each release published into a fresh
    /// directory and uploaded. The second directory's history record 1 is not the
    /// bucket's, so nothing is uploaded and the first release stays live.
    func testAWSScriptRefusesAFreshDirectoryOverAnExistingHistory() throws {
        let s3 = try LoggedMoto()
        let dest = "s3://\(s3.moto.bucket)/p"
        func freshSite(_ version: String, epoch: Int) throws -> Scratch {
            let site = try Scratch("modelcast-fresh-site")
            let environment = pinnedEnvironment(epoch: epoch)
            let result = try modelcast(["publish", "examples/models/tiny-llm.gguf", "--name", "tiny-llm", "--version", version,
                                        "--base-url", base, "--to", site.path], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
            return site
        }
        let first = try freshSite("1.0.0", epoch: 1_790_000_000)
        let upload = try runScript(first.at("_modelcast/upload-aws.sh"), [dest, "--endpoint-url", s3.endpoint], environment: s3.moto.environment)
        XCTAssertEqual(upload.status, 0, upload.stderr)
        let before = try s3.state()
        _ = s3.takeRequests()

        let second = try freshSite("1.1.0", epoch: 1_790_003_600)
        let result = try runScript(second.at("_modelcast/upload-aws.sh"), [dest, "--endpoint-url", s3.endpoint], environment: s3.moto.environment)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("\(dest)/manifests/00000001.json already holds different content"), result.stderr)
        XCTAssertEqual(puts(s3.takeRequests()), [])
        XCTAssertEqual(try s3.state(), before)
        XCTAssertEqual(try Release.decode(try s3.moto.download("p/manifest.json"), source: "live").models["tiny-llm"]?.version, "1.0.0")
    }

    func testAWSScriptRefusesADestinationThatIsNotS3() throws {
        let site = try publishedSite()
        let result = try runScript(site.at("_modelcast/upload-aws.sh"), ["my-bucket/p"], environment: ProcessInfo.processInfo.environment)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("s3://BUCKET"), result.stderr)
    }

    // MARK: - rclone and wrangler (not installed: small fakes on PATH record the calls)

    func testRcloneScriptCopiesImmutableObjectsWithImmutable() throws {
        let site = try publishedSite()
        let text = try String(contentsOfFile: site.at("_modelcast/upload-rclone.sh"), encoding: .utf8)
        let bin = try Scratch("modelcast-fake-rclone")
        try bin.write("rclone", text: "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '\(bin.at("calls.log"))'\n")
        chmod(bin.at("rclone"), 0o755)
        let result = try runScript(site.at("_modelcast/upload-rclone.sh"), ["r2:bucket/p", "--s3-no-check-bucket"],
                                   environment: ProcessInfo.processInfo.environment, pathPrefix: bin.path)
        XCTAssertEqual(result.status, 0, result.stderr + text)
        let calls = try String(contentsOfFile: bin.at("calls.log"), encoding: .utf8).split(separator: "\n").map(String.init)
        let listed = try objects(site)
        XCTAssertEqual(calls.count, listed.count, calls.joined(separator: "\n"))
        for (call, object) in zip(calls, listed) {
            XCTAssertTrue(call.hasPrefix("copyto \(site.path)/\(object.key) r2:bucket/p/\(object.key) "), call)
            XCTAssertTrue(call.hasSuffix(" --s3-no-check-bucket"), call)
            let immutable = object.role == "artifact" || object.role == "history"
            XCTAssertEqual(call.contains(" --immutable"), immutable, call)
        }
        XCTAssertTrue(calls.last?.contains("/manifest.json ") == true)
    }

    /// A stand-in for wrangler's `r2 object get/put` over a directory; it logs its calls.
    /// `FAKE_R2_FAIL=1` makes every get fail as an authentication error would.
    func fakeWrangler(_ bin: Scratch) throws -> String {
        let store = try bin.mkdir("r2")
        try bin.write("wrangler", text: """
            #!/bin/sh
            printf '%s\\n' "$*" >> '\(bin.at("calls.log"))'
            [ "$1 $2" = "r2 object" ] || exit 2
            command="$3" path="$4"
            shift 4
            file="" pipe=0
            while [ $# -gt 0 ]; do
                case "$1" in
                --file) file="$2"; shift 2 ;;
                --pipe) pipe=1; shift ;;
                *) shift ;;
                esac
            done
            case "$command" in
            get)
                if [ -n "${FAKE_R2_FAIL:-}" ]; then echo 'X [ERROR] A request to the Cloudflare API failed. Authentication error [code: 10000]' >&2; exit 1; fi
                [ $pipe = 1 ] || exit 3
                if [ -f '\(store)'/"$path" ]; then cat '\(store)'/"$path"; else echo 'X [ERROR] The specified key does not exist.' >&2; exit 1; fi ;;
            put)
                mkdir -p "$(dirname '\(store)'/"$path")" && cp "$file" '\(store)'/"$path" ;;
            *) exit 4 ;;
            esac
            """)
        chmod(bin.at("wrangler"), 0o755)
        return store
    }

    func testWranglerScriptChecksEachImmutableKeyFirst() throws {
        let site = try publishedSite()
        let bin = try Scratch("modelcast-fake-wrangler")
        let store = try fakeWrangler(bin)
        let script = site.at("_modelcast/upload-wrangler.sh")
        func calls() -> [String] {
            let lines = ((try? String(contentsOfFile: bin.at("calls.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            try? FileManager.default.removeItem(atPath: bin.at("calls.log"))
            return lines
        }
        func putKeys(_ calls: [String]) -> [String] {
            calls.filter { $0.hasPrefix("r2 object put ") }.map { String($0.split(separator: " ")[3]) }
        }
        let listed = try objects(site)
        var environment = ProcessInfo.processInfo.environment

        let first = try runScript(script, ["bucket/p"], environment: environment, pathPrefix: bin.path)
        XCTAssertEqual(first.status, 0, first.stderr)
        var log = calls()
        XCTAssertEqual(putKeys(log), listed.map { "bucket/p/" + $0.key }, log.joined(separator: "\n"))
        let firstPut = try XCTUnwrap(log.firstIndex { $0.hasPrefix("r2 object put ") })
        XCTAssertFalse(log[firstPut...].contains { $0.hasPrefix("r2 object get ") }, "every check comes before any upload")
        for object in listed {
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store + "/bucket/p/" + object.key)), try Data(contentsOf: URL(fileURLWithPath: site.at(object.key))))
        }

        // Unchanged: only the manifest is put again.
        let again = try runScript(script, ["bucket/p"], environment: environment, pathPrefix: bin.path)
        XCTAssertEqual(again.status, 0, again.stderr)
        log = calls()
        XCTAssertEqual(putKeys(log), ["bucket/p/manifest.json"], log.joined(separator: "\n"))

        // Other bytes under an immutable key: refused by name, nothing put.
        let key = "models/tiny-llm/1.0.0/tiny-llm.gguf"
        try Data(patternBytes(64, seed: 4)).write(to: URL(fileURLWithPath: store + "/bucket/p/" + key))
        let conflict = try runScript(script, ["bucket/p"], environment: environment, pathPrefix: bin.path)
        XCTAssertNotEqual(conflict.status, 0)
        XCTAssertTrue(conflict.stderr.contains("bucket/p/\(key)"), conflict.stderr)
        XCTAssertEqual(putKeys(calls()), [])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: store + "/bucket/p/" + key)), Data(patternBytes(64, seed: 4)))

        // A check that fails for another reason than absence is not taken as absence.
        try FileManager.default.removeItem(atPath: store + "/bucket/p/" + key)
        environment["FAKE_R2_FAIL"] = "1"
        let failing = try runScript(script, ["bucket/p"], environment: environment, pathPrefix: bin.path)
        XCTAssertNotEqual(failing.status, 0)
        XCTAssertTrue(failing.stderr.contains("Authentication error"), failing.stderr)
        XCTAssertEqual(putKeys(calls()), [])
    }
}
