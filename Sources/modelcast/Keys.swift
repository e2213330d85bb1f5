import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create, rotate, sign and push a target's key set: offline root keys that sign the manifest keys apps trust.",
            discussion: """
                A key set (keys/N.json, with keys/N.json.minisig and keys/N.json.sigs) names \
                the root keys and the manifest keys, each with a threshold, and an expiry. Apps \
                pin keys/1.json and follow each version the root keys sign. Roots held by \
                different people: rotate --out DIR, then keys sign, then keys push.
                Details: docs/cli.md#keys
                """,
            subcommands: [KeysCreate.self, KeysRotate.self, KeysSign.self, KeysPush.self]
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

/// The root secret keys a `keys` command signs with.
struct RootKeyOptions: ParsableArguments {
    // Passphrases: $MODELCAST_SIGNING_PASSPHRASE or the terminal, one per encrypted key.
    @Option(name: .customLong("sign-root"), help: ArgumentHelp("Sign the key set with this root secret key (repeat for each root key that signs).", valueName: "KEYFILE"))
    var signRoot: [String] = []

    /// The root secret keys, decrypted (none when none was given); none of their material
    /// is ever printed.
    func load(environment: [String: String]) throws -> [MinisignSecretKey] {
        try signRoot.map { path in
            let passphrase = try MinisignSecretKey.isEncrypted(path: path) ? try Passphrase.obtain(prompt: "passphrase for \(path): ", environment: environment) : nil
            return try MinisignSecretKey.load(path: path, passphrase: passphrase)
        }
    }
}

/// The root signing keys of `keys create` and `keys rotate`, and where the new key set goes.
struct RootSigningOptions: ParsableArguments {
    @OptionGroup
    var keys: RootKeyOptions

    @Option(help: ArgumentHelp("How long the key set is trusted as the newest (default 365d).", valueName: "DURATION"))
    var expiresIn: String = "365d"

    @Option(help: ArgumentHelp("Write keys/N.json and its signatures under DIR, not the target (fewer signatures allowed).", valueName: "DIR"))
    var out: String?

    /// The expiry of a key set made now.
    func expiresAt(now: Date = Date()) throws -> Date { now.addingTimeInterval(try parseDuration(expiresIn)) }

    /// The root secret keys. A target is written only with signatures; a pending version
    /// under `--out` may have none yet (others add theirs with `keys sign`).
    func loadRootKeys(environment: [String: String]) throws -> [MinisignSecretKey] {
        if out == nil, keys.signRoot.isEmpty {
            throw ValidationError("give at least one --sign-root KEYFILE (a root secret key), or --out DIR to write a pending version that root key holders sign with modelcast keys sign")
        }
        return try keys.load(environment: environment)
    }

    /// Writes `signed` to the target `storage`, once proven (`KeySetIssue.prove` from
    /// `previous`, the version it follows), or under `--out DIR` as it is, pending or not,
    /// with `previousBytes` (the document of the version it follows) beside it as
    /// `keys/(N-1).json`, so that `keys sign` finds the root keys that may sign. Returns
    /// where it went.
    func write(_ signed: SignedKeySet, previous: KeySet?, previousBytes: Data?, to storage: any Storage, environment: [String: String]) async throws -> String {
        guard let out else {
            try KeySetIssue.prove(signed, after: previous)
            try await KeySetWriter.write(signed, to: storage)
            return storage.location
        }
        // A pending version under the target itself would be where devices read it.
        if Self.resolved(out) == Self.resolved(storage.location) {
            throw ModelCastError.usage("--out \(quotedValue(out, limit: 4096)) is the target itself: give another directory (a version goes on the target only once proven, with modelcast keys push)")
        }
        return try await withStorage(TargetSettings(target: out), environment: environment) { directory in
            try await KeySetWriter.write(signed, to: directory, previous: previous.flatMap { set in previousBytes.map { (set, $0) } })
            return directory.location
        }
    }
}

extension RootSigningOptions {
    /// A directory path with `.`, `..`, repeated slashes and symbolic links resolved, so two
    /// spellings of one directory compare equal.
    static func resolved(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }
}

/// What `keys create` and `keys rotate` print: the key set written, and for a version
/// under `--out` what to run next (`keys sign` while pending, then `keys push`).
func keySetOutput(target: String, signed: SignedKeySet, previous: KeySet?, out: String?, targetArgument: String?) -> KeySetOutput {
    var output = KeySetOutput(target: target, signed: signed, tally: KeySetTally(signed, previous: previous))
    guard let out else {
        output.onTarget = true
        return output
    }
    var directory = Substring(out)
    while directory.count > 1, directory.hasSuffix("/") { directory = directory.dropLast() }
    let file = shellWord(String(directory) + "/" + signed.keySet.path)
    let push = "modelcast keys push \(shellWord(targetArgument ?? "TARGET")) \(file)"
    output.next = output.pending ? "modelcast keys sign \(file) --sign-root KEYFILE (each further root key holder), then \(push)" : push
    return output
}

/// `text` as one word a POSIX shell reads back: as it is when it holds only characters
/// no shell treats specially, else single-quoted.
func shellWord(_ text: String) -> String {
    let plain = text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "/._:@%+=,-".unicodeScalars.contains($0)) }
    return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
}

/// Reads a list of `--root` / `--manifest-key` public key files.
func loadPublicKeys(_ paths: [String]) throws -> [MinisignPublicKey] {
    try paths.map { try MinisignPublicKey.load(path: $0) }
}

/// What the `keys` commands print with `--json` (schema/cli/keys.schema.json): the key set
/// written, signed or pushed, and how far its signatures go towards its thresholds.
struct KeySetOutput: Encodable {
    /// Where the key set is: the target or `--out` DIR written, or the file `keys sign` signed.
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
    /// True while a threshold is not met: it cannot go on a target yet.
    let pending: Bool
    let thresholds: [Threshold]
    /// `keys sign`: the keys whose signatures this run added, and those that had signed already.
    var added: [String]?
    var alreadySigned: [String]?
    /// What to run next, for the text output (not in the JSON).
    var next: String?
    /// True when the key set is on the target (written there and proven), not in a file.
    var onTarget = false

    /// One threshold the key set must meet.
    struct Threshold: Encodable {
        let keySet: Int64
        let threshold: Int
        let signedBy: [String]

        enum CodingKeys: String, CodingKey { case keySet = "key_set", threshold, signedBy = "signed_by" }
    }

    init(target: String, signed: SignedKeySet, tally: KeySetTally) {
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
        pending = !tally.complete
        thresholds = tally.counts.map { Threshold(keySet: $0.keySetVersion, threshold: $0.threshold, signedBy: $0.signers.map(\.hex)) }
        self.tally = tally
    }

    private let tally: KeySetTally

    enum CodingKeys: String, CodingKey {
        case target, path, version, pending, thresholds, added
        case expiresAt = "expires_at", rootThreshold = "root_threshold", rootKeys = "root_keys", manifestThreshold = "manifest_threshold"
        case manifestKeys = "manifest_keys", sequenceFloors = "sequence_floors", signedBy = "signed_by", alreadySigned = "already_signed"
    }

    /// The text lines after the first (what the command did): what the key set says, who
    /// signed it, and whether it is complete.
    var details: [String] {
        ["  root: \(rootThreshold) of \(rootKeys.joined(separator: ", "))",
         "  manifest: \(manifestThreshold) of \(manifestKeys.joined(separator: ", "))"]
            + (sequenceFloors.isEmpty ? [] : ["  sequence floors: " + sequenceFloors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")])
            + ["  signed by: \(signedBy.isEmpty ? "no root key yet" : signedBy.joined(separator: ", "))",
               (pending ? "pending: " : onTarget ? "proven: " : "ready to push: ") + tally.summary]
            + (next.map { ["next: \($0)"] } ?? [])
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
