import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create and rotate a target's key set: offline root keys that sign the manifest keys apps trust.",
            discussion: """
                A key set (keys/N.json, with keys/N.json.minisig and keys/N.json.sigs) names \
                the root keys and the manifest keys, each with a threshold, and an expiry. Apps \
                pin keys/1.json and follow each version the root keys sign.
                Details: docs/cli.md#keys
                """,
            subcommands: [KeysCreate.self, KeysRotate.self]
        )
    }
}

/// The target of a `keys` command. Not `PublishedTargetOptions`: its hidden
/// `--manifest-key` (the manifest's object key) would take the name `keys` gives manifest
/// public keys, as the issue and the docs spell it.
struct KeysTargetOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("Target: a published directory or s3://bucket/prefix (or $MODELCAST_TARGET).", valueName: "TARGET"))
    var target: String?

    @Flag(help: "Print a JSON summary instead of text.")
    var json = false

    @OptionGroup(title: "S3 targets")
    var s3: S3ConnectionOptions

    /// How to reach the target: the TARGET argument, or `$MODELCAST_TARGET`.
    func settings(environment: [String: String]) throws -> TargetSettings {
        guard let target = target ?? environment["MODELCAST_TARGET"] else {
            throw ValidationError("give the TARGET (a directory or s3://bucket/prefix) or set MODELCAST_TARGET")
        }
        return s3.settings(for: target)
    }
}

/// The root signing keys of a `keys` command, and where the new key set goes.
struct RootSigningOptions: ParsableArguments {
    // Passphrases: $MODELCAST_SIGNING_PASSPHRASE or the terminal, one per encrypted key.
    @Option(name: .customLong("sign-root"), help: ArgumentHelp("Sign the key set with this root secret key (repeat for each root key that signs).", valueName: "KEYFILE"))
    var signRoot: [String] = []

    @Option(help: ArgumentHelp("How long the key set is trusted as the newest (default 365d).", valueName: "DURATION"))
    var expiresIn: String = "365d"

    @Option(help: ArgumentHelp("Write keys/N.json and its signatures under DIR, not the target.", valueName: "DIR"))
    var out: String?

    /// The expiry of a key set made now.
    func expiresAt(now: Date = Date()) throws -> Date { now.addingTimeInterval(try parseDuration(expiresIn)) }

    /// The root secret keys, decrypted; none of their material is ever printed.
    func loadRootKeys(environment: [String: String]) throws -> [MinisignSecretKey] {
        guard !signRoot.isEmpty else { throw ValidationError("give at least one --sign-root KEYFILE (a root secret key)") }
        return try signRoot.map { path in
            let passphrase = try MinisignSecretKey.isEncrypted(path: path) ? try Passphrase.obtain(prompt: "passphrase for \(path): ", environment: environment) : nil
            return try MinisignSecretKey.load(path: path, passphrase: passphrase)
        }
    }

    /// Writes `signed` to `--out DIR` (a directory target of its own) or to `storage`.
    func write(_ signed: SignedKeySet, to storage: any Storage, environment: [String: String]) async throws -> String {
        guard let out else {
            try await KeySetWriter.write(signed, to: storage)
            return storage.location
        }
        return try await withStorage(TargetSettings(target: out), environment: environment) { directory in
            try await KeySetWriter.write(signed, to: directory)
            return directory.location
        }
    }
}

/// Reads a list of `--root` / `--manifest-key` public key files.
func loadPublicKeys(_ paths: [String]) throws -> [MinisignPublicKey] {
    try paths.map { try MinisignPublicKey.load(path: $0) }
}

/// What `keys create` and `keys rotate` print with `--json` (the key set written).
struct KeySetOutput: Encodable {
    let target: String
    let path: String
    let version: Int64
    let expiresAt: String
    let rootThreshold: Int
    let rootKeys: [String]
    let manifestThreshold: Int
    let manifestKeys: [String]
    let sequenceFloors: [String: Int64]
    let signedBy: [String]

    init(target: String, signed: SignedKeySet) {
        let keySet = signed.keySet
        self.target = target
        path = keySet.path
        version = keySet.version
        expiresAt = keySet.expiresAtText
        rootThreshold = keySet.root.threshold
        rootKeys = keySet.root.keys.map(\.keyID.hex)
        manifestThreshold = keySet.manifest.threshold
        manifestKeys = keySet.manifest.keys.map(\.keyID.hex)
        sequenceFloors = Dictionary(uniqueKeysWithValues: keySet.sequenceFloors.map { ($0.key.rawValue, $0.value) })
        signedBy = signed.signatures.map(\.keyID.hex)
    }

    enum CodingKeys: String, CodingKey {
        case target, path, version
        case expiresAt = "expires_at", rootThreshold = "root_threshold", rootKeys = "root_keys", manifestThreshold = "manifest_threshold"
        case manifestKeys = "manifest_keys", sequenceFloors = "sequence_floors", signedBy = "signed_by"
    }

    /// The text lines: what was written, and what it says.
    var lines: [String] {
        ["wrote \(path) to \(target) (version \(version), expires \(expiresAt))",
         "  root: \(rootThreshold) of \(rootKeys.joined(separator: ", "))",
         "  manifest: \(manifestThreshold) of \(manifestKeys.joined(separator: ", "))"]
            + (sequenceFloors.isEmpty ? [] : ["  sequence floors: " + sequenceFloors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")])
            + ["  signed by: \(signedBy.joined(separator: ", "))"]
    }
}

/// `--sequence-floor [CHANNEL=]N`, repeatable: a channel's floor (stable's without CHANNEL=).
enum SequenceFloorOption {
    static func parse(_ values: [String]) throws -> [ChannelName: Int64] {
        var floors: [ChannelName: Int64] = [:]
        for text in values {
            let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let channelText = parts.count == 2 ? parts[0] : Channels.stable
            guard let channel = try? ChannelName(channelText) else {  // try?: the error below names the value
                throw ValidationError("--sequence-floor \(quotedValue(text)): \(quotedValue(channelText)) is not a channel name (lowercase letters, digits and '-')")
            }
            guard let floor = Int64(parts.last ?? "") else {
                throw ValidationError("--sequence-floor \(quotedValue(text)) is not [CHANNEL=]N with N a whole number")
            }
            guard floors[channel] == nil else {
                throw ValidationError("--sequence-floor names channel \(channel) twice")
            }
            floors[channel] = floor
        }
        return floors
    }
}
