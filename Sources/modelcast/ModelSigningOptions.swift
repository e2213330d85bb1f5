import ArgumentParser
import Foundation
import ModelCastCore

/// publish's OpenSSF model-signature options.
struct ModelSigningOptions: ParsableArguments {
    // Also model_signing_key in the config file or $MODELCAST_MODEL_SIGNING_KEY (the key's text); the signature is what model_signing verify key checks.
    @Option(help: ArgumentHelp("Also sign the models (OpenSSF; P-256 PEM private key).", valueName: "KEY.pem"))
    var modelSigningKey: String?

    @Flag(help: ArgumentHelp("Publish models without model signatures although the live ones have them (refused otherwise).", visibility: .hidden))
    var unsignedModels = false

    @Flag(help: ArgumentHelp("Sign the models with a key other than the live ones' (refused otherwise; ship the new public key first).", visibility: .hidden))
    var rotateModelSigningKey = false

    func source(environment: [String: String]) -> ModelSigningKeySource {
        var source = ModelSigningKeySource()
        source.path = modelSigningKey
        source.environment = environment
        source.rotatesKey = rotateModelSigningKey
        source.unsigned = unsignedModels
        return source
    }
}
