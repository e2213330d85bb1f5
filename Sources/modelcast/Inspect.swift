import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Inspect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Detect and validate a model, and show what would be published.",
            discussion: """
                Recognises .gguf, .mlpackage, .mlmodelc, .mlmodel, .tflite and .onnx; anything \
                else is a generic file or directory. Size and SHA-256 are those of the artifact \
                `pack` would write; the install size is the one publish writes in the manifest. \
                A licence the model file declares is shown, never published.
                Details: docs/cli.md#inspect
                """
        )

        @Argument(help: "The model file or directory.")
        var model: String

        @Flag(help: "Print a JSON object instead of text.")
        var json = false

        @Flag(name: .customLong("no-hash"), help: "Only detect and validate; skip hashing.")
        var noHash = false

        @Option(help: ArgumentHelp("Verify the model against this OpenSSF model signature (needs --public-key).", valueName: "FILE"))
        var modelSignature: String?

        @Option(help: ArgumentHelp("The P-256 public key (PEM) that --model-signature must verify with.", valueName: "KEY.pub"))
        var publicKey: String?

        @OptionGroup
        var progressOptions: ProgressOptions

        func validate() throws {
            if modelSignature != nil, publicKey == nil {
                throw ValidationError("--model-signature needs --public-key (the signer's P-256 public key in PEM)")
            }
            if publicKey != nil, modelSignature == nil {
                throw ValidationError("--public-key is for checking a --model-signature; give the signature file too")
            }
        }

        func run() async throws {
            // The signature is checked first: a model that fails it gets no report.
            let verification = try modelSignature.map { signature in
                try ModelSigning.verify(model: model, signaturePath: signature, publicKey: try P256PublicKey.load(path: publicKey ?? ""))
            }
            let description = try ModelInspector.describe(model)
            let interface = try ModelInterface.readResult(description)
            let licence = try DeclaredLicence.readResult(description)
            let packer = Packer()
            let artifact = noHash ? nil : try packer.digest(description, progress: progressOptions.display(json: json).factory)
            let report = InspectReport(description: description, artifactName: packer.artifactName(for: description, zip: description.isDirectory), artifact: artifact, interface: interface, declaredLicence: licence)
            if json {
                print(try JSONOutput.encode(InspectOutput(report: report, modelSignature: verification)), terminator: "")
            } else {
                print(report.text, terminator: "")
                if let verification { print(verification.summary) }
            }
        }
    }
}

/// inspect's JSON: the report's members, and `model_signature` when one was verified.
private struct InspectOutput: Encodable {
    let report: InspectReport
    let modelSignature: ModelSignatureVerification?

    enum CodingKeys: String, CodingKey { case modelSignature = "model_signature" }

    func encode(to encoder: Encoder) throws {
        try report.encode(to: encoder)
        guard let modelSignature else { return }
        // The same keyed container as the report's: its members and this one form one object.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(modelSignature, forKey: .modelSignature)
    }
}
