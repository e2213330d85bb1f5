import ArgumentParser
import Foundation
import ModelCastCore

/// publish's OpenSSF model-signature options.
struct ModelSigningOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Also sign each model version with an OpenSSF model signature (P-256 PEM private key; or model_signing_key in the config file, or $MODELCAST_MODEL_SIGNING_KEY: the key's text). Checkable with model_signing verify key.", valueName: "KEY.pem"))
    var modelSigningKey: String?

    @Flag(help: "Publish models without model signatures although the live ones have them (refused otherwise).")
    var unsignedModels = false

    @Flag(help: "Sign the models with a key other than the live model signatures' (refused otherwise; ship the new public key first).")
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
