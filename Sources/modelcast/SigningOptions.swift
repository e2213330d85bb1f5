import ArgumentParser
import Foundation
import ModelCastCore

/// Signing and expiry options shared by publish, rollback and resign.
struct SigningOptions: ParsableArguments {
    // The passphrase of an encrypted key: $MODELCAST_SIGNING_PASSPHRASE or the terminal (docs/cli.md#signing).
    // Repeated for a key set's manifest threshold: the first key's signature is manifest.json.minisig,
    // all of them go in manifest.json.sigs (docs/signing.md#key-sets).
    @Option(help: ArgumentHelp("Sign the manifest with this minisign secret key (repeatable; or $MODELCAST_SIGNING_KEY).", valueName: "KEYFILE"))
    var sign: [String] = []

    @Option(help: ArgumentHelp("How long the manifest is valid (30d, 12h, 2w).", valueName: "DURATION"))
    var expiresIn: String?

    @Flag(help: ArgumentHelp("Also carry the signature inside the manifest (modelcast profile).", visibility: .hidden))
    var inlineSignature = false

    @Flag(help: ArgumentHelp("Replace a signed live manifest with an unsigned one (refused otherwise).", visibility: .hidden))
    var unsigned = false

    // Devices that pinned only the old key refuse this and every later update (docs/cli.md#signing).
    @Flag(help: ArgumentHelp("Sign with a key other than the live manifest's (refused otherwise; ship an app that pins both first).", visibility: .hidden))
    var rotateKey = false

    /// The signing settings, with the key loaded (nil when nothing was asked for).
    func settings(environment: [String: String]) throws -> SigningSettings? {
        if unsigned, !sign.isEmpty || inlineSignature || rotateKey {
            throw ValidationError("--unsigned cannot be combined with --sign, --inline-signature or --rotate-key")
        }
        let signers = try loadKeys(environment: environment)
        let signer = signers.first
        let expiresIn = try self.expiresIn.map(parseDuration)
        if rotateKey, signer == nil {
            throw ValidationError("--rotate-key needs the new signing key (--sign KEYFILE or $MODELCAST_SIGNING_KEY)")
        }
        guard signer != nil || expiresIn != nil || inlineSignature else { return nil }
        var settings = SigningSettings(signer: signer, expiresIn: expiresIn, inline: inlineSignature)
        settings.rotatesKey = rotateKey
        settings.coSigners = Array(signers.dropFirst())
        return settings
    }

    private func loadKeys(environment: [String: String]) throws -> [MinisignSecretKey] {
        if !sign.isEmpty {
            var keys: [MinisignSecretKey] = []
            for path in sign {
                let prompt = "passphrase for \(path): "
                let passphrase = try MinisignSecretKey.isEncrypted(path: path) ? try Passphrase.obtain(prompt: prompt, environment: environment) : nil
                let key = try MinisignSecretKey.load(path: path, passphrase: passphrase)
                // One key counts once toward a threshold: a repeat is a mistake, not a second signer.
                if keys.contains(where: { $0.keyID == key.keyID }) {
                    throw ModelCastError.usage("--sign \(path) is key \(key.keyID.hex) again: each key signs once")
                }
                keys.append(key)
            }
            return keys
        }
        return try loadEnvironmentKey(environment: environment).map { [$0] } ?? []
    }

    private func loadEnvironmentKey(environment: [String: String]) throws -> MinisignSecretKey? {
        guard !unsigned, let text = environment[MinisignSecretKey.environmentVariable], !text.isEmpty else { return nil }
        let source = "environment variable \(MinisignSecretKey.environmentVariable)"
        let passphrase = try MinisignSecretKey.isEncrypted(text: text, source: source)
            ? try Passphrase.obtain(prompt: "passphrase for the key in $\(MinisignSecretKey.environmentVariable): ", environment: environment) : nil
        return try MinisignSecretKey(text: text, passphrase: passphrase, source: source)
    }
}
