import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct SignModel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-model",
            abstract: "Sign a model file or directory with an OpenSSF model signature (ECDSA P-256 key).",
            discussion: """
                Writes the Sigstore bundle `model_signing sign key` writes; `model_signing verify \
                key` and `modelcast inspect --model-signature` check it.
                Details: docs/cli.md#sign-model
                """
        )

        @Argument(help: "The model file or directory.")
        var model: String

        @Option(help: ArgumentHelp("The P-256 private key (PEM PKCS#8 or SEC 1).", valueName: "KEY.pem"))
        var key: String

        @Option(help: ArgumentHelp("Where to write the signature bundle.", valueName: "FILE"))
        var signature: String

        @Flag(help: "Replace an existing signature file.")
        var force = false

        @Flag(help: "Print a JSON object (model, signature, files, subject digest, key hint) instead of text.")
        var json = false

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            var passphrase: String?
            if try P256PrivateKey.isEncrypted(path: key) {
                passphrase = try Passphrase.obtain(prompt: "passphrase for \(key): ", environment: environment)
                guard passphrase != nil else { throw ModelCastError.passphraseRequired(source: key) }
            }
            let privateKey = try P256PrivateKey.load(path: key, passphrase: passphrase)
            let signed = try ModelSigning.sign(model: model, key: privateKey, signaturePath: signature)
            try signed.bundle.write(to: signature, force: force)
            let root = signed.statement.rootDigest()
            if json {
                print(try JSONOutput.encode(SignModelOutput(
                    model: model, signature: signature, modelName: signed.statement.modelName, files: signed.statement.resources.count,
                    subjectSHA256: root.hex, keyHint: privateKey.publicKey.hint)), terminator: "")
                return
            }
            print("signed \(counted(signed.statement.resources.count, "file")) of \(model) (model '\(signed.statement.modelName)', subject sha256 \(root.hex)) with the key with hint \(privateKey.publicKey.hint): \(signature)")
        }
    }
}

/// sign-model's `--json` (schema/cli/sign-model.schema.json): the bundle written and what it signs.
private struct SignModelOutput: Encodable {
    let model: String
    let signature: String
    let modelName: String
    let files: Int
    let subjectSHA256: String
    let keyHint: String

    enum CodingKeys: String, CodingKey {
        case model, signature, files
        case modelName = "model_name", subjectSHA256 = "subject_sha256", keyHint = "key_hint"
    }
}
