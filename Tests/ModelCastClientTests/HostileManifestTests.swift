import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// Every string and number of a manifest is hostile (issue 23). A device with a model
/// installed is served, one after another, manifests that each carry one bad value, both
/// unsigned and signed with the pinned key. For each: no crash, a `ClientError` naming
/// the field, canary files around and above the client's directory byte-identical, and
/// the client's own directory (state, links, versions) exactly as it was.
final class HostileManifestTests: XCTestCase {
    /// One hostile manifest: a change to the good next release, the error it must get, and
    /// a word the error's text must contain (the field's JSON path, mostly).
    struct Case {
        enum Kind { case invalid, wrongChannel, tooLarge }
        let label: String
        let kind: Kind
        /// A word the error's text must contain.
        let mentions: String
        let mutate: (inout [String: Any]) -> Void
        /// Rewrites the serialised manifest (for what JSONSerialization cannot write).
        var raw: ((String) -> String)?

        init(_ label: String, mentions: String, kind: Kind = .invalid, _ mutate: @escaping (inout [String: Any]) -> Void) {
            self.label = label
            self.kind = kind
            self.mentions = mentions
            self.mutate = mutate
        }

        static func raw(_ label: String, mentions: String, kind: Kind = .invalid, _ rewrite: @escaping (String) -> String) -> Case {
            var item = Case(label, mentions: mentions, kind: kind) { _ in }
            item.raw = rewrite
            return item
        }

        func expects(_ error: ClientError) -> Bool {
            switch (kind, error) {
            case (.invalid, .invalidManifest), (.wrongChannel, .wrongChannel), (.tooLarge, .manifestTooLarge): return true
            default: return false
            }
        }
    }

    /// Edits `models.m` (and its first file) of a manifest.
    static func model(_ manifest: inout [String: Any], _ edit: (inout [String: Any]) -> Void) {
        var models = manifest["models"] as! [String: Any]
        var model = models["m"] as! [String: Any]
        edit(&model)
        models["m"] = model
        manifest["models"] = models
    }

    /// A `segments` object of a file entry, valid but for what is given.
    static func segments(key: String = "models/m/segments/i.s1.mcsx", url: String = "http://127.0.0.1/models/m/segments/i.s1.mcsx",
                         sha256: String = String(repeating: "a", count: 64), size: Int64 = 84) -> [String: Any] {
        ["key": key, "url": url, "sha256": sha256, "size": size]
    }

    static func file(_ manifest: inout [String: Any], _ edit: @escaping (inout [String: Any]) -> Void) {
        model(&manifest) { model in
            var files = model["files"] as! [[String: Any]]
            edit(&files[0])
            model["files"] = files
        }
    }

    static func rename(_ manifest: inout [String: Any], to name: String) {
        var models = manifest["models"] as! [String: Any]
        models[name] = models.removeValue(forKey: "m")
        manifest["models"] = models
    }

    static func asTree(_ manifest: inout [String: Any], tree: String, path: String) {
        model(&manifest) { model in
            model["tree"] = tree
            var files = model["files"] as! [[String: Any]]
            files[0]["path"] = path
            model["files"] = files
        }
    }

    static var cases: [Case] { [
        // Model names (the key of `models`): each becomes a directory on the device.
        Case("name climbing out", mentions: "models.['../../victim']") { rename(&$0, to: "../../victim") },
        Case("name as a long climb", mentions: "is not a model name") { rename(&$0, to: String(repeating: "../", count: 12) + "tmp/x") },
        Case("empty name", mentions: "is not a model name") { rename(&$0, to: "") },
        Case("name '.'", mentions: "is not a model name") { rename(&$0, to: ".") },
        Case("name '..'", mentions: "is not a model name") { rename(&$0, to: "..") },
        Case("name with a slash", mentions: "is not a model name") { rename(&$0, to: "a/b") },
        Case("name with a look-alike letter", mentions: "is not a model name") { rename(&$0, to: "\u{FF4D}") },
        Case("name with NUL", mentions: "\\u{0}") { rename(&$0, to: "m\u{0}x") },
        Case("name of 300 characters", mentions: "300 characters") { rename(&$0, to: String(repeating: "n", count: 300)) },
        // Versions: each becomes part of a directory name.
        Case("version climbing out", mentions: "models.m.version") { model(&$0) { $0["version"] = "../../../../x" } },
        Case("version with a path after it", mentions: "models.m.version") { model(&$0) { $0["version"] = "1.0.0/../../x" } },
        Case("empty version", mentions: "models.m.version") { model(&$0) { $0["version"] = "" } },
        Case("version in look-alike digits", mentions: "models.m.version") { model(&$0) { $0["version"] = "\u{FF11}.0.0" } },
        Case("version of 600 characters", mentions: "models.m.version") { model(&$0) { $0["version"] = "1.0.0-" + String(repeating: "a", count: 600) } },
        Case("version as a number", mentions: "version") { model(&$0) { $0["version"] = 1 } },
        // Tree directory names and tree paths.
        Case("tree climbing out", mentions: "models.m.tree") { asTree(&$0, tree: "../../../../../treeout", path: "w.bin") },
        Case("tree '.'", mentions: "models.m.tree") { asTree(&$0, tree: ".", path: "w.bin") },
        Case("tree with a bidi override", mentions: "\\u{202e}") { asTree(&$0, tree: "a\u{202E}b.mlpackage", path: "w.bin") },
        Case("tree path climbing out", mentions: "models.m.files[0].path") { asTree(&$0, tree: "T.mlpackage", path: "../../../escape") },
        Case("absolute tree path", mentions: "models.m.files[0].path") { asTree(&$0, tree: "T.mlpackage", path: "/etc/x") },
        Case("tree path with an empty segment", mentions: "models.m.files[0].path") { asTree(&$0, tree: "T.mlpackage", path: "a//b") },
        Case("path on a model that is no tree", mentions: "models.m.files[0].path") { file(&$0) { $0["path"] = "a/b" } },
        // File names: each becomes a file on the device.
        Case("file name climbing out", mentions: "models.m.files[0].name") { file(&$0) { $0["name"] = "../../canary" } },
        Case("absolute file name", mentions: "models.m.files[0].name") { file(&$0) { $0["name"] = "/etc/passwd" } },
        Case("file name with look-alike slashes", mentions: "models.m.files[0].name") { file(&$0) { $0["name"] = "a\u{2215}..\u{2215}b" } },
        Case("empty file name", mentions: "models.m.files[0].name") { file(&$0) { $0["name"] = "" } },
        Case("file name with a line feed", mentions: "\\u{a}") { file(&$0) { $0["name"] = "x\n.bin" } },
        // SHA-256 digests: the download's file name.
        Case("digest climbing out", mentions: "models.m.files[0].sha256") { file(&$0) { $0["sha256"] = "../../canary" } },
        Case("digest '../..'", mentions: "models.m.files[0].sha256") { file(&$0) { $0["sha256"] = "../.." } },
        Case("digest as an absolute climb", mentions: "models.m.files[0].sha256") { file(&$0) { $0["sha256"] = String(repeating: "../", count: 20) + "tmp/canary" } },
        Case("uppercase digest", mentions: "not lowercase") { file(&$0) { $0["sha256"] = ($0["sha256"] as! String).uppercased() } },
        Case("digest of 63 digits", mentions: "models.m.files[0].sha256") { file(&$0) { $0["sha256"] = String(($0["sha256"] as! String).dropLast()) } },
        Case("digest in look-alike digits", mentions: "models.m.files[0].sha256") { file(&$0) { $0["sha256"] = String(repeating: "\u{FF46}", count: 64) } },
        // URLs.
        Case("URL that does not parse", mentions: "models.m.files[0].url") { file(&$0) { $0["url"] = "ht!tp://x" } },
        Case("empty URL", mentions: "models.m.files[0].url") { file(&$0) { $0["url"] = "" } },
        Case("ftp URL", mentions: "scheme 'ftp'") { file(&$0) { $0["url"] = "ftp://127.0.0.1/x" } },
        Case("file URL", mentions: "scheme 'file'") { file(&$0) { $0["url"] = "file:///etc/passwd" } },
        Case("URL with a password", mentions: "user name or password") { file(&$0) { $0["url"] = "http://user:secret@127.0.0.1/x" } },
        Case("URL without a host", mentions: "models.m.files[0].url") { file(&$0) { $0["url"] = "http://" } },
        // Sizes.
        Case("size 2^63-1", mentions: "models.m.files[0].size") { file(&$0) { $0["size"] = Int64.max } },
        Case("negative size", mentions: "models.m.files[0].size") { file(&$0) { $0["size"] = -1 } },
        Case("1,025 files of 2^53 bytes each", mentions: "add up to more than 2^63 bytes") {
            model(&$0) { model in
                let first = (model["files"] as! [[String: Any]])[0]
                model["files"] = (0...1024).map { index -> [String: Any] in
                    var file = first
                    file["name"] = "f\(index).bin"
                    file["size"] = Int64(1) << 53
                    file["sha256"] = String(repeating: "0", count: 60) + String(format: "%04x", index)
                    return file
                }
            }
        },
        Case.raw("size 1e300", mentions: "valid JSON") { $0.replacingOccurrences(of: "\"size\":", with: "\"size\":1e300,\"x\":") },
        // Keys and content types.
        Case("key climbing out", mentions: "models.m.files[0].key") { file(&$0) { $0["key"] = "../../x" } },
        Case("content type with a header in it", mentions: "models.m.files[0].content_type") { file(&$0) { $0["content_type"] = "text/plain\r\nX-Injected: 1" } },
        // The release's own fields.
        Case("channel climbing out", mentions: "channel") { $0["channel"] = "../beta" },
        Case("another channel's manifest", mentions: "channel 'beta'", kind: .wrongChannel) { $0["channel"] = "beta" },
        Case("negative sequence", mentions: "sequence") { $0["sequence"] = -5 },
        Case("sequence 2^63-1", mentions: "sequence") { $0["sequence"] = Int64.max },
        Case("published_at that is no time", mentions: "published_at") { $0["published_at"] = "yesterday" },
        Case("expires_at that is no time", mentions: "expires_at") { $0["expires_at"] = "never" },
        Case("min_app_version that is no version", mentions: "min_app_version") { $0["min_app_version"] = "latest" },
        Case("rollout without a salt", mentions: "rollout.salt") {
            $0["rollout"] = ["percent": 10, "salt": "", "started_at": "2026-11-20T00:00:00Z"]
            $0["rollback"] = ["sequence": 1, "models": $0["models"]!]
        },
        Case("rollout salt with an escape sequence", mentions: "rollout.salt: '0123456789abcdef\\u{1b}]0;owned\\u{7}'") {
            $0["rollout"] = ["percent": 10, "salt": "0123456789abcdef\u{1B}]0;owned\u{07}", "started_at": "2026-11-20T00:00:00Z"]
            $0["rollback"] = ["sequence": 1, "models": $0["models"]!]
        },
        Case("rollout salt of 100 KB", mentions: "rollout.salt") {
            $0["rollout"] = ["percent": 10, "salt": String(repeating: "a", count: 100_000), "started_at": "2026-11-20T00:00:00Z"]
            $0["rollback"] = ["sequence": 1, "models": $0["models"]!]
        },
        Case("rollout salt that is not hex", mentions: "rollout.salt") {
            $0["rollout"] = ["percent": 10, "salt": "salt-salt-salt-salt", "started_at": "2026-11-20T00:00:00Z"]
            $0["rollback"] = ["sequence": 1, "models": $0["models"]!]
        },
        Case("rollout of 200 percent", mentions: "rollout") {
            $0["rollout"] = ["percent": 200, "salt": "0123456789abcdef0123", "started_at": "2026-11-20T00:00:00Z"]
            $0["rollback"] = ["sequence": 1, "models": $0["models"]!]
        },
        Case("rollout schedule with no time", mentions: "schedule") {
            $0["rollout"] = ["percent": 10, "salt": "0123456789abcdef0123", "started_at": "2026-11-20T00:00:00Z",
                             "schedule": [["at": "soon", "percent": 10]]]
            $0["rollback"] = ["sequence": 1, "models": $0["models"]!]
        },
        Case("rollback naming a model outside", mentions: "rollback.models") {
            let models = $0["models"] as! [String: Any]
            $0["rollback"] = ["sequence": 1, "models": ["../../victim": models["m"]!]]
        },
        // The segment index (issue 27): every field parsed before it is fetched or stored.
        Case("segment index key climbing out", mentions: "models.m.files[0].segments.key") { file(&$0) { $0["segments"] = segments(key: "../../canary") } },
        Case("segment index URL with a password", mentions: "models.m.files[0].segments.url") { file(&$0) { $0["segments"] = segments(url: "http://user:secret@127.0.0.1/x.mcsx") } },
        Case("segment index URL of another scheme", mentions: "models.m.files[0].segments.url") { file(&$0) { $0["segments"] = segments(url: "file:///etc/passwd") } },
        Case("segment index digest climbing out", mentions: "models.m.files[0].segments.sha256") { file(&$0) { $0["segments"] = segments(sha256: "../../canary") } },
        Case("segment index of 10 bytes", mentions: "models.m.files[0].segments.size: 10 is not the size of a segment index") { file(&$0) { $0["segments"] = segments(size: 10) } },
        Case("segment index of 2^60 bytes", mentions: "models.m.files[0].segments.size") { file(&$0) { $0["segments"] = segments(size: 1 << 60) } },
        Case("segment index as a string", mentions: "segments") { file(&$0) { $0["segments"] = "index.mcsx" } },
        Case("two files going to one place", mentions: "same place") { model(&$0) { $0["files"] = [($0["files"] as! [Any])[0], ($0["files"] as! [Any])[0]] } },
        Case("a model without files", mentions: "models.m.files") { model(&$0) { $0["files"] = [Any]() } },
        Case("models as an array", mentions: "models") { $0["models"] = [1, 2] },
        Case.raw("meta nested 100,000 deep", mentions: "deeper than") {
            $0.replacingOccurrences(of: "\"channel\":", with: "\"meta\":{\"x\":" + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "},\"channel\":")
        },
        Case.raw("a manifest of 5 MB", mentions: "larger than", kind: .tooLarge) {
            $0.replacingOccurrences(of: "\"channel\":", with: "\"meta\":{\"x\":\"" + String(repeating: "a", count: 5 << 20) + "\"},\"channel\":")
        },
    ] }

    /// Every entry under `root` without following links: files by SHA-256, links by target.
    func tree(_ root: String) throws -> [String: String] {
        var result: [String: String] = [:]
        func walk(_ relative: String) throws {
            let path = relative.isEmpty ? root : root + "/" + relative
            var info = stat()
            guard lstat(path, &info) == 0 else { return }
            switch info.st_mode & S_IFMT {
            case S_IFLNK: result[relative] = "link:" + (try FileManager.default.destinationOfSymbolicLink(atPath: path))
            case S_IFDIR:
                result[relative + "/"] = "dir"
                for entry in try FileManager.default.contentsOfDirectory(atPath: path) { try walk(relative.isEmpty ? entry : relative + "/" + entry) }
            default: result[relative] = try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: path))).hex
            }
        }
        try walk("")
        return result
    }

    func testHostileManifestsNeitherEscapeNorCrash() async throws {
        XCTAssertGreaterThanOrEqual(Self.cases.count, 40)
        let work = try Scratch("modelcast-hostile")
        // The client lives two levels down; canaries sit beside and above it.
        let deviceDirectory = work.at("a/b/device")
        for canary in ["canary", "a/canary", "a/b/canary", "a/victim/keep.txt", "tmp/canary", "a/b/written.part"] {
            _ = try work.write(canary, Array("canary \(canary)\n".utf8))
        }
        let port = try freeLoopbackPort()
        let base = "http://127.0.0.1:\(port)/ok"
        let site = try work.atMadeParent("sites/ok")
        _ = try modelcast(["keygen", "--unencrypted", "--public-key", work.at("k.pub"), "--secret-key", work.at("k.key")])
        let published = try modelcast(["publish", try work.write("v1/m.bin", patternBytes(50_000, seed: 1)), "--name", "m", "--version", "1.0.0",
                                        "--base-url", base, "--to", site, "--sign", work.at("k.key")])
        XCTAssertEqual(published.status, 0, published.stderr)
        let server = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/misbehaving_server.py", work.at("sites"), String(port)])
        XCTAssertEqual(server.firstLine, "ready")
        let publicKey = try String(contentsOfFile: work.at("k.pub"), encoding: .utf8)
        let secretKey = try MinisignSecretKey.load(path: work.at("k.key"), passphrase: nil)
        let good = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: site + "/manifest.json"))) as? [String: Any])

        for signed in [false, true] {
            let directory = deviceDirectory + (signed ? "-signed" : "")
            let configuration = ClientConfiguration(
                manifestURL: URL(string: base + "/manifest.json")!, directory: URL(fileURLWithPath: directory), deviceID: "d",
                publicKeys: signed ? [publicKey] : [], retries: 1, requestTimeout: 5)
            // The good release first (its bytes re-serialised, so signed again): the device has a model installed to lose.
            let goodBytes = try JSONSerialization.data(withJSONObject: good, options: [.sortedKeys])
            try goodBytes.write(to: URL(fileURLWithPath: site + "/manifest.json"))
            let comment = TrustedComment(timestamp: 1, file: "manifest.json", sequence: 1, version: "1.0.0", expiresAt: nil).text
            try secretKey.sign(message: [UInt8](goodBytes), trustedComment: comment).write(toFile: site + "/manifest.json.minisig", atomically: true, encoding: .utf8)
            let first = try await ModelUpdater(configuration).update()
            XCTAssertEqual(first, .updated(sequence: 1, models: ["m": "1.0.0"]))
            let outside = try tree(work.path).filter { !$0.key.hasPrefix("a/b/device") && !$0.key.hasPrefix("sites/") }
            let inside = try tree(directory)

            for item in Self.cases {
                let label = "\(item.label) (\(signed ? "signed" : "unsigned"))"
                var manifest = good
                manifest["sequence"] = 2
                item.mutate(&manifest)
                var text = String(decoding: try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]), as: UTF8.self)
                if let raw = item.raw { text = raw(text) }
                let bytes = Array(text.utf8)
                try Data(bytes).write(to: URL(fileURLWithPath: site + "/manifest.json"))
                let sequence = (manifest["sequence"] as? NSNumber)?.int64Value ?? 2
                let comment = TrustedComment(timestamp: 1, file: "manifest.json", sequence: sequence, version: "1.0.0", expiresAt: nil).text
                try secretKey.sign(message: bytes, trustedComment: comment).write(toFile: site + "/manifest.json.minisig", atomically: true, encoding: .utf8)

                let updater = try ModelUpdater(configuration)
                do {
                    let outcome = try await updater.update()
                    XCTFail("\(label): accepted (\(outcome))")
                } catch let error as ClientError {
                    XCTAssertTrue(item.expects(error), "\(label): \(error)")
                    XCTAssertTrue(error.description.contains(item.mentions), "\(label): the error does not name \(item.mentions): \(error)")
                    XCTAssertEqual(error.errorDescription, error.description)
                    XCTAssertFalse(error.description.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202E}" }, "\(label): raw control characters in \(error)")
                } catch {
                    XCTFail("\(label): not a ClientError: \(error)")
                }
                XCTAssertEqual(try tree(work.path).filter { !$0.key.hasPrefix("a/b/device") && !$0.key.hasPrefix("sites/") }, outside, "\(label): something outside the client's directory changed")
                XCTAssertEqual(try tree(directory), inside, "\(label): the client's own directory changed")
                XCTAssertEqual(updater.installed("m")?.version, "1.0.0", label)
            }
        }
        _ = server
    }
}
