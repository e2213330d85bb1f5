import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// A site whose models carry OpenSSF model signatures before `publish --model-signing-key`
/// writes them: each release is published with the real CLI, then the test signs the
/// files a device installs with the Core API (or `model_signing`), writes the bundle into
/// the published directory (declared in `_modelcast/objects.json`, so `modelcast serve`
/// serves it) and names it as the model's `model_signature` in the served manifest
/// (unsigned: these devices pin no minisign key, only the model-signing key).
final class ModelSignatureSite {
    let site: ClientTests.Site
    /// The pinned pair, made by `modelcast keygen --model-signing`, and the hint it printed.
    let key: P256PrivateKey
    let publicKeyPath: String
    let printedHint: String

    init() throws {
        site = try ClientTests.Site()
        (key, publicKeyPath, printedHint) = try Self.keygen(site.work, name: "signing")
    }

    /// The manifest and objects file as the CLI last wrote them: put back before it runs
    /// again, since it reads the live ones (and refuses a manifest its history lacks).
    private var cliFiles: [String: Data] = [:]

    var work: Scratch { site.work }
    var manifestPath: String { site.root + "/manifest.json" }
    var objectsPath: String { site.root + "/_modelcast/objects.json" }

    /// Publishes with the CLI (`ClientTests.Site.publish`: signed, which these devices ignore).
    func publish(_ files: [String], version: String) throws {
        try restoreCLIFiles()
        try site.publish(files, version: version)
        try keepCLIFiles()
    }

    /// Runs another CLI command (`rollback`) on the CLI's own files.
    func run(_ arguments: [String]) throws {
        try restoreCLIFiles()
        try site.run(arguments)
        try keepCLIFiles()
    }

    private func restoreCLIFiles() throws {
        for (path, data) in cliFiles { try data.write(to: URL(fileURLWithPath: path)) }
    }

    private func keepCLIFiles() throws {
        for path in [manifestPath, objectsPath] { cliFiles[path] = try Data(contentsOf: URL(fileURLWithPath: path)) }
    }

    /// `modelcast keygen --model-signing --unencrypted`: the private key, the public key's
    /// path and the hint the command printed.
    static func keygen(_ work: Scratch, name: String) throws -> (P256PrivateKey, String, String) {
        let result = try modelcast(["keygen", "--model-signing", "--unencrypted", "--private-key", work.at("\(name).pem"), "--public-key", work.at("\(name).pub")])
        XCTAssertEqual(result.status, 0, result.stderr)
        let hint = result.stdout.components(separatedBy: "(hint ").dropFirst().first.map { String($0.prefix(64)) } ?? ""
        return (try P256PrivateKey.load(path: work.at("\(name).pem"), passphrase: nil), work.at("\(name).pub"), hint)
    }

    /// A device of this site pinning the model-signing public key at `keyPath` (default:
    /// the site's).
    func configuration(directory: String, keyPath: String? = nil) throws -> ClientConfiguration {
        var configuration = site.configuration(directory: directory, keys: [])
        configuration.modelSigningPublicKey = try ModelSigningPublicKey(pem: String(contentsOfFile: keyPath ?? publicKeyPath, encoding: .utf8))
        return configuration
    }

    /// The statement of `files` (name in the model → SHA-256 hex).
    static func statement(_ files: [String: String], modelName: String = "m", ignorePaths: [String]) throws -> ModelSigningStatement {
        var digests: [ModelFilePath: SHA256Hex] = [:]
        for (name, digest) in files { digests[try ModelFilePath(name)] = try XCTUnwrap(SHA256Hex(hex: digest)) }
        return ModelSigningStatement(modelName: modelName, files: digests, ignorePaths: try ignorePaths.map(ModelFilePath.init))
    }

    /// The bundle file of `statement` signed with `signer` (default: the pinned key).
    func bundle(_ statement: ModelSigningStatement, signer: P256PrivateKey? = nil) throws -> Data {
        try ModelSignatureBundle.sign(statement, with: signer ?? key).json
    }

    /// Writes `bundle` at `models/MODEL/signatures/SHA256.sig`, declares it for serve, and
    /// names it as `model_signature` of `models.MODEL` in the served manifest; `claimedSHA256`
    /// is what the manifest says its digest is (default: the true one). Returns its URL.
    @discardableResult
    func attach(_ bundle: Data, model: String = "m", claimedSHA256: String? = nil) throws -> String {
        let digest = try SHA256Hasher.digest(bundle).hex
        let key = "models/\(model)/signatures/\(digest).sig"
        try work.mkdir("site/models/\(model)/signatures")
        try bundle.write(to: URL(fileURLWithPath: site.root + "/" + key))
        try editJSON(objectsPath) { objects in
            var list = (objects["objects"] as? [[String: Any]] ?? []).filter { $0["key"] as? String != key }
            list.append(["key": key, "cache_control": "public, max-age=31536000, immutable", "content_type": "application/json",
                         "size": bundle.count, "sha256": digest])
            objects["objects"] = list
        }
        let url = site.base + "/" + key
        try editModel(model) { entry in
            entry["model_signature"] = ["key": key, "url": url, "sha256": claimedSHA256 ?? digest, "size": bundle.count]
        }
        return url
    }

    /// Takes `model_signature` away from `models.MODEL` in the served manifest.
    func removeSignature(model: String = "m") throws {
        try editModel(model) { $0.removeValue(forKey: "model_signature") }
    }

    private func editModel(_ model: String, _ edit: (inout [String: Any]) -> Void) throws {
        try editJSON(manifestPath) { manifest in
            var models = try XCTUnwrap(manifest["models"] as? [String: Any])
            var entry = try XCTUnwrap(models[model] as? [String: Any])
            edit(&entry)
            models[model] = entry
            manifest["models"] = models
        }
    }

    private func editJSON(_ path: String, _ edit: (inout [String: Any]) throws -> Void) throws {
        var object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        try edit(&object)
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted]).write(to: URL(fileURLWithPath: path))
    }

    /// The GET requests for model signature bundles.
    var bundleRequests: [String] { site.requests.filter { $0.contains("/signatures/") } }
}

/// What a refused update must leave exactly as it was: where `current` points, the version
/// directories (hidden leftovers of a staged version included) and the saved state.
struct DeviceDisk: Equatable {
    let current: String?
    let versions: [String]
    let state: Data?

    init(_ directory: String, model: String = "m") {
        let models = directory + "/models/" + model
        current = try? FileManager.default.destinationOfSymbolicLink(atPath: models + "/current")
        versions = ((try? FileManager.default.contentsOfDirectory(atPath: models + "/versions")) ?? []).sorted()
        state = FileManager.default.contents(atPath: directory + "/state.json")
    }
}
