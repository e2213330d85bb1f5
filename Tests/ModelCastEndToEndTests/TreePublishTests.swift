import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// Directory models published as trees (`--no-zip`): every file its own object under a
/// content-addressed key, rebuilt on a device from the manifest, shared across versions.
final class TreePublishTests: XCTestCase {
    let environment: [String: String] = {
        var environment = pinnedEnvironment()
        return environment
    }()

    /// Copies the example Core ML package into `scratch/dir/`, returning its path.
    func copyExample(into scratch: Scratch, _ dir: String) throws -> String {
        try scratch.mkdir(dir)
        let destination = scratch.at(dir + "/TinyClassifier.mlpackage")
        _ = try shell("cp -R '\(repositoryRoot)/examples/models/TinyClassifier.mlpackage' '\(destination)'")
        return destination
    }

    /// The release the manifest at `url` names (through curl, as a device fetches it).
    func liveRelease(_ url: String) throws -> Release {
        let result = try runProcess("/usr/bin/env", ["curl", "-sS", "--fail", url])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try Release.decode(Data(result.stdout.utf8), source: url)
    }

    /// Downloads every file of `model` by its URL into `into/<tree>/<path>`, as a device
    /// rebuilds the tree; returns the rebuilt directory.
    func rebuild(_ model: ReleaseModel, into: String) throws -> String {
        let tree = try XCTUnwrap(model.tree)
        for file in model.files {
            let path = into + "/" + tree + "/" + (try XCTUnwrap(file.path))
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            let result = try runProcess("/usr/bin/env", ["curl", "-sS", "--fail", "-o", path, file.url])
            XCTAssertEqual(result.status, 0, "\(file.url): \(result.stderr)")
        }
        return into + "/" + tree
    }

    /// `diff -r`: the two trees hold the same files with the same bytes.
    func assertSameTree(_ a: String, _ b: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try runProcess("/usr/bin/env", ["diff", "-r", a, b])
        XCTAssertEqual(result.status, 0, "diff -r \(a) \(b):\n\(result.stdout)\(result.stderr)", file: file, line: line)
    }

    func publishReport(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let result = try modelcast(["publish"] + arguments + ["--json"], environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stdout, file: file, line: line)
    }

    /// Keys of the artifacts a publish report says this run created.
    func createdArtifacts(_ report: [String: Any]) -> [String] {
        ((report["objects"] as? [[String: Any]]) ?? []).filter { $0["role"] as? String == "artifact" && $0["outcome"] as? String == "created" }
            .compactMap { $0["key"] as? String }
    }

    func testTreePublishRebuildsTheSourceAndSharesUnchangedFiles() throws {
        let scratch = try Scratch()
        let source = try copyExample(into: scratch, "src")
        let v1 = try copyExample(into: scratch, "v1")
        let site = scratch.at("site")
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)"

        // A newcomer's command: the path and --no-zip, no --name.
        let first = try publishReport([source, "--no-zip", "--version", "1.0.0", "--base-url", base, "--to", site])
        XCTAssertEqual(createdArtifacts(first).count, 3, "\(first)")
        let server = try BackgroundProcess(modelcastBinary, ["serve", site, "--port", String(port)])
        _ = server
        var live = try liveRelease(base + "/manifest.json")
        let model = try XCTUnwrap(live.models["TinyClassifier"], "the model is named after the directory")
        XCTAssertEqual(model.tree, "TinyClassifier.mlpackage")
        XCTAssertEqual(model.files.compactMap(\.path), ["Data/com.apple.CoreML/model.mlmodel", "Data/com.apple.CoreML/weights/weight.bin", "Manifest.json"])
        for file in model.files {
            XCTAssertEqual(file.key, "models/TinyClassifier/blobs/" + file.sha256)
            XCTAssertEqual(file.contentType, "application/octet-stream")
        }
        let verify = try modelcast(["verify", base + "/manifest.json", "--allow-http"])
        XCTAssertEqual(verify.status, 0, verify.stdout)
        try assertSameTree(try rebuild(model, into: scratch.at("device1")), source)

        // 1.1.0 changes one file: one object goes up, the other two are shared.
        var weights = try Data(contentsOf: URL(fileURLWithPath: source + "/Data/com.apple.CoreML/weights/weight.bin"))
        weights[0] ^= 0xFF
        try weights.write(to: URL(fileURLWithPath: source + "/Data/com.apple.CoreML/weights/weight.bin"))
        let second = try publishReport([source, "--no-zip", "--version", "1.1.0", "--base-url", base, "--to", site])
        XCTAssertEqual(createdArtifacts(second).count, 1, "only the changed file is stored: \(second)")
        live = try liveRelease(base + "/manifest.json")
        XCTAssertEqual(Set(live.models["TinyClassifier"]!.files.map(\.key)).intersection(model.files.map(\.key)).count, 2, "two objects shared with 1.0.0")
        // verify checks 1.1.0 and its rollback target, 1.0.0, file by file.
        let verifyBoth = try modelcast(["verify", base + "/manifest.json", "--allow-http", "--json"])
        XCTAssertEqual(verifyBoth.status, 0, verifyBoth.stdout)
        XCTAssertEqual(live.rollback?.models["TinyClassifier"]?.version, "1.0.0")
        try assertSameTree(try rebuild(live.models["TinyClassifier"]!, into: scratch.at("device2")), source)

        // 1.2.0 changes another; then a rollback to 1.0.0 serves exactly its tree.
        var mlmodel = try Data(contentsOf: URL(fileURLWithPath: source + "/Data/com.apple.CoreML/model.mlmodel"))
        mlmodel.append(0x0A)
        try mlmodel.write(to: URL(fileURLWithPath: source + "/Data/com.apple.CoreML/model.mlmodel"))
        // The appended byte leaves model.mlmodel unreadable: said on purpose (issue 44, item 4).
        let third = try publishReport([source, "--no-zip", "--version", "1.2.0", "--base-url", base, "--to", site, "--allow-unreadable-interface"])
        XCTAssertEqual(createdArtifacts(third).count, 1)
        let rollback = try modelcast(["rollback", site, "--version", "1.0.0"], environment: environment)
        XCTAssertEqual(rollback.status, 0, rollback.stderr)
        live = try liveRelease(base + "/manifest.json")
        try assertSameTree(try rebuild(live.models["TinyClassifier"]!, into: scratch.at("device3")), v1)

        // Prune keeps the live release (1.0.0's bytes) and its rollback target: every object
        // they name stays, shared ones included; only the files 1.1.0 and 1.2.0 added go.
        let added = Set(createdArtifacts(second) + createdArtifacts(third))
        let prune = try modelcast(["prune", site, "--keep", "1", "--json"])
        XCTAssertEqual(prune.status, 0, prune.stderr)
        let pruned = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(prune.stdout.utf8)) as? [String: Any])
        let deleted = Set((pruned["deleted"] as? [String] ?? []).filter { $0.hasPrefix("models/") })
        XCTAssertEqual(deleted, added, "\(pruned)")
        let records = try FileManager.default.contentsOfDirectory(atPath: site + "/manifests").filter { $0.hasSuffix(".json") }
        for name in records {
            let record = try Release.decode(try Data(contentsOf: URL(fileURLWithPath: site + "/manifests/" + name)), source: name)
            let named = record.models.values.flatMap(\.files) + (record.rollback?.models.values.flatMap(\.files) ?? [])
            for file in named {
                XCTAssertTrue(FileManager.default.fileExists(atPath: site + "/" + file.key), "\(file.key), named by kept record \(name), is gone")
            }
        }
        let afterPrune = try modelcast(["verify", base + "/manifest.json", "--allow-http"])
        XCTAssertEqual(afterPrune.status, 0, afterPrune.stdout)
        let bucket = try modelcast(["verify", site, "--allow-http"])
        XCTAssertEqual(bucket.status, 0, bucket.stdout)
    }

    /// Against a real S3 API: re-publishing a 50-file tree with one changed file sends
    /// exactly one object PUT, counted in moto's own request log.
    func testOneChangedFileOfAFiftyFileTreeUploadsOneObject() throws {
        let moto = try MotoS3()
        let scratch = try Scratch()
        for index in 0..<50 {
            try scratch.write("shards/part-\(index / 10)/shard-\(String(format: "%02d", index)).bin", patternBytes(4096, seed: UInt32(index + 1)))
        }
        let publish = treePublisher(scratch.at("shards"), to: moto, prefix: "ml")
        // The paths of the blob PUTs moto logged, in order. A PUT the publisher retried
        // (a timeout on a loaded machine) is logged twice: an upload counts once per object.
        func blobPUTs() -> [String] {
            moto.loggedRequests().filter { $0.method == "PUT" && $0.path.contains("/blobs/") }.map(\.path)
        }
        let first = try publish("1.0.0")
        XCTAssertEqual(first.status, 0, first.stderr)
        let afterFirst = blobPUTs()
        XCTAssertEqual(Set(afterFirst).count, 50)

        try scratch.write("shards/part-3/shard-37.bin", patternBytes(4096, seed: 999))
        let requestsBefore = moto.loggedRequests().count
        let second = try publish("1.1.0")
        XCTAssertEqual(second.status, 0, second.stderr)
        // The shared files are found in the live release's own list: no request per file.
        let secondRequests = moto.loggedRequests().dropFirst(requestsBefore)
        let blobHEADs = secondRequests.filter { $0.method == "HEAD" && $0.path.contains("/blobs/") }
        XCTAssertLessThanOrEqual(Set(blobHEADs.map(\.path)).count, 1, "only the changed file is looked up (and proven once stored): \(blobHEADs.map(\.path))")
        XCTAssertLessThanOrEqual(secondRequests.count, 20, "requests for one changed file of 50: \(secondRequests.map { "\($0.method) \($0.path)" })")
        let afterSecond = blobPUTs()
        let secondPUTs = Set(afterSecond.dropFirst(afterFirst.count))
        XCTAssertEqual(secondPUTs.count, 1, "one changed file, one object uploaded: \(secondPUTs)")
        XCTAssertTrue(secondPUTs.isDisjoint(with: afterFirst), "the changed file is a new object")
        let unchanged = try publish("1.1.0")
        XCTAssertEqual(unchanged.status, 0, unchanged.stderr)
        XCTAssertEqual(blobPUTs().count, afterSecond.count, "an unchanged re-publish uploads nothing")

        // A re-sign proves the shared files and uploads none of them.
        let keygen = try modelcast(["keygen", "--unencrypted", "--public-key", scratch.at("k.pub"), "--secret-key", scratch.at("k.key")])
        XCTAssertEqual(keygen.status, 0, keygen.stderr)
        let resign = try modelcast(["resign", "s3://\(moto.bucket)/ml", "--sign", scratch.at("k.key"), "--expires-in", "30d"], environment: moto.environment)
        XCTAssertEqual(resign.status, 0, resign.stderr)
        XCTAssertEqual(blobPUTs().count, afterSecond.count, "a re-sign uploads no file")
        let signed = try modelcast(["verify", "s3://\(moto.bucket)/ml", "--public-key", scratch.at("k.pub")], environment: moto.environment)
        XCTAssertEqual(signed.status, 0, signed.stdout + signed.stderr)

        let keys = try moto.listing().keys.filter { $0.contains("/blobs/") }
        XCTAssertEqual(keys.count, 51)
        let verify = try modelcast(["verify", "s3://\(moto.bucket)/ml", "--json"], environment: moto.environment)
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        let live = try Release.decode(try moto.download("ml/manifest.json"), source: "live")
        XCTAssertEqual(live.models["shards"]?.files.count, 50)
        XCTAssertEqual(live.rollback?.models["shards"]?.files.count, 50)
    }

    /// The requests of a re-publish with one changed file, counted in moto's log: the state
    /// read (index, manifest with its headers in one GET, signature, the next record's
    /// absence, the live record), the changed blob and the record each in one conditional
    /// PUT (the blob proven by the store's answer), the index and the manifest, and (issue
    /// 44) one listing that shows the 19 blobs taken over from the live release are still
    /// there with their sizes, and (issue 51) the read of `keys/1.json` that tells whether the
    /// signing keys must meet a key set's threshold (a 404 here): eleven, with no HEAD
    /// anywhere. At most twelve, should a retried request be logged twice.
    func testRepublishWithOneChangedFileSendsAtMostElevenRequests() throws {
        let moto = try MotoS3()
        let scratch = try Scratch()
        for index in 0..<20 {
            try scratch.write("shards/part-\(index % 4)/shard-\(String(format: "%02d", index)).bin", patternBytes(8192, seed: UInt32(index + 7)))
        }
        let publish = treePublisher(scratch.at("shards"), to: moto, prefix: "r")
        let first = try publish("1.0.0")
        XCTAssertEqual(first.status, 0, first.stderr)
        try scratch.write("shards/part-1/shard-05.bin", patternBytes(8192, seed: 4242))
        let before = moto.loggedRequests().count
        let second = try publish("1.1.0")
        XCTAssertEqual(second.status, 0, second.stderr)
        let requests = moto.loggedRequests().dropFirst(before).map { "\($0.method) \($0.path)" }
        XCTAssertLessThanOrEqual(requests.count, 12, "requests for one changed file of 20: \(requests)")
        XCTAssertEqual(requests.filter { $0.hasPrefix("HEAD ") }, [], "a new blob and a new record need no HEAD: \(requests)")
        XCTAssertEqual(Set(requests.filter { $0.hasPrefix("PUT ") && $0.contains("/blobs/") }).count, 1, "\(requests)")
        let verify = try modelcast(["verify", "s3://\(moto.bucket)/r"], environment: moto.environment)
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
    }

    /// A first publish of a tree to a directory reads each file once (it is copied into
    /// staging as it is hashed), counted as the bytes the process read (Linux `rchar`); a
    /// re-publish with one changed file reads the tree once too.
    func testTreePublishToADirectoryReadsEachFileOnce() throws {
        let scratch = try Scratch()
        for index in 0..<16 {
            try scratch.write("shards/part-\(index % 4)/shard-\(String(format: "%02d", index)).bin", patternBytes(2 << 20, seed: UInt32(index + 31)))
        }
        let tree = scratch.at("shards")
        let treeBytes = 16.0 * Double(2 << 20)
        func readBytes(_ version: String) throws -> Double {
            let run = try BytesReadRun(["publish", tree, "--no-zip", "--version", version, "--base-url", "https://cdn.example.com/d", "--to", scratch.at("site")],
                                       environment: environment, errorFile: scratch.at("err-" + version))
            XCTAssertEqual(run.status, 0, run.stderr)
            return Double(run.bytes)
        }
        let first = try readBytes("1.0.0")
        XCTAssertLessThanOrEqual(first / treeBytes, 1.05, "a first publish read \(first) bytes of a \(treeBytes)-byte tree")
        try scratch.write("shards/part-2/shard-06.bin", patternBytes(2 << 20, seed: 777))
        let second = try readBytes("1.1.0")
        XCTAssertLessThanOrEqual(second / treeBytes, 1.2, "a re-publish with one changed file read \(second) bytes of a \(treeBytes)-byte tree")
        let verify = try modelcast(["verify", scratch.at("site")])
        XCTAssertEqual(verify.status, 0, verify.stdout)
    }

    /// `kill -9` at several points of a tree publish, on moto and on a directory: the
    /// target always verifies (the manifest is the old one or names only stored files),
    /// and the next publish reuses the files a killed run stored, after proving them.
    func testKilledTreePublishLeavesTheTargetConsistent() throws {
        let moto = try MotoS3()
        let scratch = try Scratch()
        for index in 0..<40 {
            try scratch.write("shards/shard-\(String(format: "%02d", index)).bin", patternBytes(256 << 10, seed: UInt32(index + 100)))
        }
        let tree = scratch.at("shards")
        let environment = pinnedEnvironment(moto.environment)
        for target in ["s3://\(moto.bucket)/k", scratch.at("site")] {
            let first = try modelcast(["publish", "examples/models/tiny-llm.gguf", "--name", "shards", "--version", "1.0.0",
                                       "--base-url", "https://cdn.example.com/k", "--to", target], environment: environment)
            XCTAssertEqual(first.status, 0, first.stderr)
            for (index, delay) in [0.05, 0.2, 0.5, 1.0].enumerated() {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: modelcastBinary)
                // The tree replaces a GGUF: an intended interface change.
                process.arguments = ["publish", tree, "--no-zip", "--version", "2.\(index).0", "--base-url", "https://cdn.example.com/k", "--to", target,
                                     "--interface-change", "--min-app-version", "2.\(index)"]
                process.environment = environment
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                usleep(UInt32(delay * 1_000_000))
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                let verify = try modelcast(["verify", target], environment: moto.environment)
                XCTAssertEqual(verify.status, 0, "\(target), killed after \(delay) s:\n\(verify.stdout)")
            }
            let final = try modelcast(["publish", tree, "--no-zip", "--version", "3.0.0", "--base-url", "https://cdn.example.com/k", "--to", target, "--json",
                                       "--interface-change", "--min-app-version", "3.0"],
                                      environment: environment)
            XCTAssertEqual(final.status, 0, final.stderr)
            let verify = try modelcast(["verify", target], environment: moto.environment)
            XCTAssertEqual(verify.status, 0, "\(target) after a complete publish:\n\(verify.stdout)")
        }
    }

    func testTreeRefusalsNameTheProblemAndLeaveTheTargetAlone() throws {
        let scratch = try Scratch()
        let source = try copyExample(into: scratch, "src")
        let site = scratch.at("site")
        let base = "https://cdn.example.com/m"
        func refused(_ arguments: [String], mentions: [String], file: StaticString = #filePath, line: UInt = #line) throws {
            let result = try modelcast(["publish"] + arguments, environment: environment)
            XCTAssertEqual(result.status, 1, result.stderr, file: file, line: line)
            for text in mentions { XCTAssertTrue(result.stderr.contains(text), "\(text) not in: \(result.stderr)", file: file, line: line) }
            XCTAssertFalse(FileManager.default.fileExists(atPath: site), "the target was touched", file: file, line: line)
        }
        // Profiles whose clients read one URL per model.
        try refused([source, "--no-zip", "--version", "1.0.0", "--base-url", base, "--to", site, "--profile", "nomlens",
                     "--meta", "num_classes=2", "--meta", "class_list_version=1", "--meta", "training_date=2026-01-01"],
                    mentions: ["profile nomlens", "TinyClassifier", "tree"])
        for profile in ["tiers", "catalog", "latest"] {
            try refused([source, "--no-zip", "--version", "1.0.0", "--base-url", base, "--to", site, "--profile", profile],
                        mentions: ["profile \(profile)", "tree"])
        }
        // A file is not a tree.
        try refused(["examples/models/tiny-llm.gguf", "--no-zip", "--version", "1.0.0", "--base-url", base, "--to", site],
                    mentions: ["examples/models/tiny-llm.gguf", "is a file"])
        // The refusals pack has: a link inside the tree, an empty directory.
        let linked = try copyExample(into: scratch, "linked")
        XCTAssertEqual(symlink("Manifest.json", linked + "/alias.json"), 0)
        try refused([linked, "--no-zip", "--version", "1.0.0", "--base-url", base, "--to", site], mentions: ["symbolic link", "alias.json"])
        try refused([try scratch.mkdir("emptymodel"), "--no-zip", "--version", "1.0.0", "--base-url", base, "--to", site],
                    mentions: ["contains no files", "emptymodel"])
        // The config file's layout is checked by name.
        let config = try scratch.write("modelcast.yml", text: """
            base_url: \(base)
            models:
              classifier:
                version: 1.0.0
                files: [src/TinyClassifier.mlpackage]
                layout: folder
            """)
        try refused(["--config", config, "--to", site], mentions: ["models.classifier.layout 'folder'", "zip, tree"])
    }

    func testConfigLayoutTreeAndPackListing() throws {
        let scratch = try Scratch()
        _ = try copyExample(into: scratch, "src")
        let site = scratch.at("site")
        let config = try scratch.write("modelcast.yml", text: """
            base_url: https://cdn.example.com/m
            models:
              classifier:
                version: 1.0.0
                files: [src/TinyClassifier.mlpackage]
                layout: tree
            """)
        let report = try publishReport(["--config", config, "--to", site])
        XCTAssertEqual(createdArtifacts(report).count, 3, "\(report)")
        let live = try Release.decode(try Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json")), source: "live")
        XCTAssertEqual(live.models["classifier"]?.tree, "TinyClassifier.mlpackage")
        // The JSON Schema takes the tree form and refuses a path that climbs out of the tree.
        let script = """
            import json, sys, jsonschema
            validator = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
            doc = json.load(open(sys.argv[2]))
            validator.validate(doc)
            for bad in ["../escape", "/abs", "a//b", "a/./b", "dir/"]:
                broken = json.loads(json.dumps(doc)); broken["models"]["classifier"]["files"][0]["path"] = bad
                assert not validator.is_valid(broken), bad
            print("ok")
            """
        let schema = try runProcess("/usr/bin/env", ["python3", "-c", script, repositoryRoot + "/schema/modelcast-manifest.schema.json", site + "/manifest.json"])
        XCTAssertEqual(schema.stdout, "ok\n", schema.stderr)

        // pack --no-zip lists the same files with the same hashes, copying nothing.
        let out = try Scratch()
        let pack = try modelcast(["pack", scratch.at("src/TinyClassifier.mlpackage"), "--no-zip", "--out", out.path + "/"])
        XCTAssertEqual(pack.status, 0, pack.stderr)
        let lines = pack.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        XCTAssertEqual(lines.map { $0[0] }, live.models["classifier"]!.files.compactMap(\.path))
        XCTAssertEqual(lines.map { $0[2] }, live.models["classifier"]!.files.map(\.sha256))
        XCTAssertEqual(out.listing(), ["TinyClassifier.mlpackage.files.json"], "only the listing is written")
        // Without --out, as a newcomer runs it: the listing goes to the current directory.
        let cwd = try Scratch()
        let plain = try modelcast(["pack", scratch.at("src/TinyClassifier.mlpackage"), "--no-zip"], cwd: cwd.path)
        XCTAssertEqual(plain.status, 0, plain.stderr)
        XCTAssertEqual(plain.stdout, pack.stdout)
        XCTAssertEqual(cwd.listing(), ["TinyClassifier.mlpackage.files.json"])
        let listing = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out.at("TinyClassifier.mlpackage.files.json")))) as? [String: Any])
        XCTAssertEqual(listing["format"] as? String, "tree")
        XCTAssertEqual((listing["files"] as? [[String: Any]])?.compactMap { $0["sha256"] as? String }, lines.map { $0[2] })
    }

    /// Publishes the tree at `tree` (`--no-zip`) to `s3://BUCKET/PREFIX` on `moto`, as
    /// the given version.
    func treePublisher(_ tree: String, to moto: MotoS3, prefix: String) -> (String) throws -> ProcessOutput {
        let environment = pinnedEnvironment(moto.environment)
        return { version in
            try PublishRun([tree], name: nil, version: version, baseURL: "https://cdn.example.com/\(prefix)", to: "s3://\(moto.bucket)/\(prefix)",
                           ["--no-zip"], environment: environment).run()
        }
    }
}
