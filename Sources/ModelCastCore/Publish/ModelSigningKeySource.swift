import Foundation

/// Where a publish's model-signing key comes from, first found wins: `--model-signing-key
/// FILE`, the config file's `model_signing_key`, the PEM text in
/// `$MODELCAST_MODEL_SIGNING_KEY`. An encrypted key's passphrase comes from
/// `$MODELCAST_SIGNING_PASSPHRASE` or the terminal. The key's text is never printed.
package struct ModelSigningKeySource: Sendable {
    /// `--model-signing-key`.
    package var path: String?
    package var environment: [String: String] = [:]
    /// `--rotate-model-signing-key`.
    package var rotatesKey = false
    /// `--unsigned-models`: no key is read, whatever the config file or environment say.
    package var unsigned = false

    package init() {}

    /// The settings, with the key loaded; nil when no key is given anywhere.
    func settings(configPath: String?) throws -> ModelSigningSettings? {
        if unsigned {
            guard path == nil, !rotatesKey else {
                throw ModelCastError.usage("--unsigned-models cannot be combined with --model-signing-key or --rotate-model-signing-key")
            }
            return nil
        }
        let key: P256PrivateKey
        if let path = path ?? configPath {
            let passphrase = try P256PrivateKey.isEncrypted(path: path) ? try obtainPassphrase(for: path) : nil
            key = try P256PrivateKey.load(path: path, passphrase: passphrase)
        } else if let text = environment[ModelSigningSettings.environmentVariable], !text.isEmpty {
            let source = "environment variable \(ModelSigningSettings.environmentVariable)"
            let passphrase = try P256PrivateKey.isEncrypted(pem: text, source: source) ? try obtainPassphrase(for: "the key in $\(ModelSigningSettings.environmentVariable)") : nil
            key = try P256PrivateKey(pem: text, passphrase: passphrase, source: source)
        } else {
            guard !rotatesKey else {
                throw ModelCastError.usage("--rotate-model-signing-key needs the new key (--model-signing-key KEY.pem, model_signing_key in the config file, or $\(ModelSigningSettings.environmentVariable))")
            }
            return nil
        }
        return ModelSigningSettings(key: key, rotatesKey: rotatesKey)
    }

    private func obtainPassphrase(for source: String) throws -> String {
        guard let passphrase = try Passphrase.obtain(prompt: "passphrase for \(source): ", environment: environment) else {
            throw ModelCastError.passphraseRequired(source: source)
        }
        return passphrase
    }
}
