import ArgumentParser
import Foundation
import ModelCastCore

/// Signing and expiry options shared by publish, rollback and resign.
struct SigningOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Sign the manifest with this minisign secret key (or $MODELCAST_SIGNING_KEY: the key file's text). Writes MANIFEST.minisig; an encrypted key's passphrase comes from $MODELCAST_SIGNING_PASSPHRASE or the terminal.", valueName: "KEYFILE"))
    var sign: String?

    @Option(help: ArgumentHelp("The manifest is valid this long (30d, 12h, 2w): expires_at in the modelcast profile, and in the signed trusted comment.", valueName: "DURATION"))
    var expiresIn: String?

    @Flag(help: "Also carry the signature inside the manifest (modelcast profile), for clients that want one file.")
    var inlineSignature = false

    @Flag(help: "Replace a signed live manifest with an unsigned one (refused otherwise).")
    var unsigned = false

    @Flag(help: ArgumentHelp("Sign with a key other than the live manifest's (refused otherwise): devices that pinned only the old key refuse this and every later update. Ship an app that pins both keys first (README: Rotating the signing key)."))
    var rotateKey = false

    /// The signing settings, with the key loaded (nil when nothing was asked for).
    func settings(environment: [String: String]) throws -> SigningSettings? {
        if unsigned, sign != nil || inlineSignature || rotateKey {
            throw ValidationError("--unsigned cannot be combined with --sign, --inline-signature or --rotate-key")
        }
        let signer = try loadKey(environment: environment)
        let expiresIn = try self.expiresIn.map(parseDuration)
        if rotateKey, signer == nil {
            throw ValidationError("--rotate-key needs the new signing key (--sign KEYFILE or $MODELCAST_SIGNING_KEY)")
        }
        guard signer != nil || expiresIn != nil || inlineSignature else { return nil }
        var settings = SigningSettings(signer: signer, expiresIn: expiresIn, inline: inlineSignature)
        settings.rotatesKey = rotateKey
        return settings
    }

    private func loadKey(environment: [String: String]) throws -> MinisignSecretKey? {
        if let sign {
            let prompt = "passphrase for \(sign): "
            let passphrase = try MinisignSecretKey.isEncrypted(path: sign) ? try Passphrase.obtain(prompt: prompt, environment: environment) : nil
            return try MinisignSecretKey.load(path: sign, passphrase: passphrase)
        }
        guard !unsigned, let text = environment[MinisignSecretKey.environmentVariable], !text.isEmpty else { return nil }
        let source = "environment variable \(MinisignSecretKey.environmentVariable)"
        let passphrase = try MinisignSecretKey.isEncrypted(text: text, source: source)
            ? try Passphrase.obtain(prompt: "passphrase for the key in $\(MinisignSecretKey.environmentVariable): ", environment: environment) : nil
        return try MinisignSecretKey(text: text, passphrase: passphrase, source: source)
    }
}
