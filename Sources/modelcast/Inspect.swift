import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Inspect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Detect and validate a model, and show what would be published.",
            discussion: """
                Recognises .gguf (checks magic, version, counts, and that every tensor fits in the file), \
                .mlpackage (Manifest.json and its root model), .mlmodelc, .mlmodel, .tflite and .onnx; \
                anything else is published as a generic file or directory. A file that claims a format \
                and fails its check is an error. Size and SHA-256 are those of the artifact `pack` \
                would write (for a directory, the deterministic zip), computed without writing it. \
                For Core ML, GGUF and ONNX models the interface an app depends on (inputs, outputs, \
                classes; architecture, vocabulary, tokenizer) follows; one that cannot be read is \
                shown as unreadable.
                """
        )

        @Argument(help: "The model file or directory.")
        var model: String

        @Flag(help: "Print a JSON object instead of text.")
        var json = false

        @Flag(name: .customLong("no-hash"), help: "Only detect and validate; skip hashing.")
        var noHash = false

        @OptionGroup(title: "Progress")
        var progressOptions: ProgressOptions

        func run() async throws {
            let description = try ModelInspector.describe(model)
            let interface = try ModelInterface.readResult(description)
            let packer = Packer()
            let artifact = noHash ? nil : try packer.digest(description, progress: progressOptions.display(json: json).factory)
            let report = InspectReport(description: description, artifactName: packer.artifactName(for: description, zip: description.isDirectory), artifact: artifact, interface: interface)
            if json {
                print(try JSONOutput.encode(report), terminator: "")
            } else {
                print(report.text, terminator: "")
            }
        }
    }
}
