import Foundation
import ModelCastCore

/// The write commands (publish, rollback, resign, promote, rollout, prune, history) run
/// through Core's API against a `Storage`, as the CLI's commands call it but in this
/// process: the tests whose subject is commit, prune, rollback or history logic use this
/// instead of starting `modelcast`. This is the one place those tests reach the command
/// types (`Publisher`, `Pruner`, …), so a change of their API is made here once.
package struct TargetCommands: Sendable {
    package let storage: any Storage
    /// What the commands logged (warnings and notes the CLI prints to standard error).
    package let log = LogLines()

    package init(_ storage: any Storage) {
        self.storage = storage
    }

    /// The go-live settings of a run at `epoch` (`SOURCE_DATE_EPOCH`), as the CLI makes them.
    package static func goLive(epoch: Int, signing: SigningSettings? = nil, dryRun: Bool = false, allowUnsigned: Bool = false,
                               trustStored: Bool = false, adoptLive: Bool = false) -> GoLive {
        GoLive(dryRun: dryRun, publishedAt: Date(timeIntervalSince1970: TimeInterval(epoch)), publishedAtOrigin: "SOURCE_DATE_EPOCH=\(epoch)",
               signing: signing, allowUnsigned: allowUnsigned, trustStored: trustStored, adoptLive: adoptLive)
    }

    /// What every write command is given: the store, this log, and the gate before the manifest.
    private func writer(beforeManifest: (@Sendable (Data) async throws -> Void)? = nil) -> TargetWriter {
        TargetWriter(storage: storage, log: log.add, beforeManifest: beforeManifest)
    }

    /// `modelcast publish MODELS --name NAME --version VERSION --base-url BASE` at `epoch`;
    /// `configure` sets any other flag on the command line (as the CLI's options do).
    @discardableResult
    package func publish(_ models: [String], name: String? = "m", version: String?, baseURL: String? = "https://cdn.example.com/m",
                         epoch: Int = 1_790_000_000, signing: SigningSettings? = nil, adoptLive: Bool = false,
                         configure: (inout PublishCommandLine) -> Void = { _ in },
                         beforeManifest: (@Sendable (Data) async throws -> Void)? = nil) async throws -> PublishReport {
        var line = PublishCommandLine()
        line.models = models
        line.name = name
        line.version = version
        line.baseURL = baseURL
        line.target = storage.location
        line.goLive = Self.goLive(epoch: epoch, signing: signing, adoptLive: adoptLive)
        configure(&line)
        let (_, request) = try line.makeRequest()
        return try await Publisher(writer: writer(beforeManifest: beforeManifest)).publish(request)
    }

    /// `modelcast rollback TARGET --version VERSION` (with `--model`, `--bump`, `--bump-to`).
    @discardableResult
    package func rollback(to version: String, model: String? = nil, bump: Bool = false, bumpTo: String? = nil, epoch: Int = 1_790_000_000,
                          signing: SigningSettings? = nil, manifestKey: String = "manifest.json") async throws -> PublishReport {
        try await RollbackPublisher(writer: writer()).rollback(RollbackRequest(version: version, model: model, bump: bump, bumpVersion: bumpTo, manifestKey: manifestKey,
                                                       goLive: Self.goLive(epoch: epoch, signing: signing)))
    }

    /// `modelcast resign TARGET` (`--sign`, `--expires-in`).
    @discardableResult
    package func resign(epoch: Int = 1_790_000_000, signing: SigningSettings? = nil, manifestKey: String = "manifest.json") async throws -> PublishReport {
        try await Resigner(writer: writer()).resign(ResignRequest(manifestKey: manifestKey, goLive: Self.goLive(epoch: epoch, signing: signing)))
    }

    /// `modelcast promote TARGET --from FROM --to TO`.
    @discardableResult
    package func promote(from: String, to: String, epoch: Int = 1_790_000_000, signing: SigningSettings? = nil) async throws -> PublishReport {
        try await Promoter(writer: writer()).promote(PromoteRequest(from: from, to: to, goLive: Self.goLive(epoch: epoch, signing: signing)))
    }

    /// `modelcast rollout TARGET --percent/--halt/--complete`.
    @discardableResult
    package func changeRollout(_ change: RolloutChangeRequest.Change, epoch: Int = 1_790_000_000, signing: SigningSettings? = nil) async throws -> PublishReport {
        try await RolloutChanger(writer: writer()).changeRollout(RolloutChangeRequest(change: change, goLive: Self.goLive(epoch: epoch, signing: signing)))
    }

    /// `modelcast prune TARGET --keep N` (`--dry-run`).
    @discardableResult
    package func prune(keep: Int, dryRun: Bool = false, manifestKey: String = "manifest.json") async throws -> PruneReport {
        try await Pruner(writer: writer()).prune(PruneRequest(keep: keep, manifestKey: manifestKey, dryRun: dryRun))
    }

    /// `modelcast history TARGET --json`'s releases, newest first.
    package func history(manifestKey: String = "manifest.json") async throws -> [HistoryEntry] {
        try await TargetState.load(from: storage, manifestKey: manifestKey, reading: .all).entries()
    }

    /// `modelcast history TARGET --rebuild-index`: the state it rewrote the index from.
    @discardableResult
    package func rebuildIndex(manifestKey: String = "manifest.json") async throws -> TargetState {
        try await IndexRebuilder(writer: writer()).rebuildIndex(manifestKey: manifestKey)
    }

    /// `modelcast verify TARGET`: the target read through its store (`verify s3://…`'s path),
    /// with `--public-key`, `--strict` and `--model-signing-public-key`.
    package func verify(manifestKey: String = "manifest.json", publicKeys: [MinisignPublicKey] = [], strict: Bool = false,
                        modelSigningPublicKey: String? = nil) async throws -> VerifyReport {
        var options = VerifyOptions()
        options.publicKeys = publicKeys
        options.strict = strict
        if let modelSigningPublicKey { options.modelSigningPublicKey = try P256PublicKey.load(path: modelSigningPublicKey) }
        return await Verifier.verify(store: storage, manifestKey: manifestKey, options: options)
    }

    /// The live manifest as a release (nil when nothing is live).
    package func live(manifestKey: String = "manifest.json") async throws -> Release? {
        guard let data = try await storage.get(manifestKey, limit: 1 << 24) else { return nil }
        return try Release.decode(data, source: "the live manifest")
    }
}

/// Lines logged by a command, in order.
package final class LogLines: @unchecked Sendable {
    // @unchecked: `lines` is read and written under `lock` only.
    private let lock = NSLock()
    private var lines: [String] = []

    package init() {}

    package var all: [String] { lock.withLock { lines } }

    package var text: String { all.joined(separator: "\n") }

    /// Appends one line (the `log` a `TargetWriter` is given).
    package var add: @Sendable (String) -> Void { { [self] line in lock.withLock { lines.append(line) } } }
}

/// Keys written to a scratch directory by Core (no `modelcast keygen` process).
package struct TestKeys: Sendable {
    /// The minisign secret key's file, and the key.
    package let secretKeyPath: String
    package let publicKeyPath: String
    package let secretKey: MinisignSecretKey
    /// The model-signing key (PEM) and its public key.
    package let modelSigningPath: String
    package let modelSigningPublicPath: String

    package init(in scratch: Scratch) throws {
        let pair = try MinisignKeyPair.generate()
        secretKeyPath = scratch.at("k.key")
        publicKeyPath = scratch.at("k.pub")
        try pair.write(publicKeyPath: publicKeyPath, secretKeyPath: secretKeyPath, passphrase: nil)
        secretKey = pair.secretKey
        let modelKey = try P256PrivateKey.generate()
        modelSigningPath = scratch.at("ms.pem")
        modelSigningPublicPath = scratch.at("ms.pub")
        try modelKey.write(to: modelSigningPath, passphrase: nil)
        try modelKey.publicKey.write(to: modelSigningPublicPath)
    }

    /// Signing with the minisign key (`--sign k.key`).
    package var signing: SigningSettings { SigningSettings(signer: secretKey) }
}
