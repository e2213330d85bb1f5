import ArgumentParser
import Foundation
import ModelCastCore

extension ZipCompression: ExpressibleByArgument {}

extension ModelCast {
    struct Pack: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Build the publishable artifact for a model and print its size and SHA-256.",
            discussion: """
                A file is published as it is (copied, and hashed in the same read). A directory \
                (.mlpackage, .mlmodelc, anything) becomes a deterministic zip: sorted entries, fixed \
                timestamps and modes, UTF-8 NFC names, so the same tree gives the same bytes on any \
                machine. The output is written under a temporary name and renamed into place when complete.
                Standard output carries only the result: `PATH<TAB>SIZE<TAB>SHA256`, or a JSON object with --json.
                """
        )

        @Argument(help: "The model file or directory.")
        var model: String

        @Option(name: .shortAndLong, help: ArgumentHelp("Output file, or a directory to write into (made if missing when the value ends in /; default: the current directory).", valueName: "FILE|DIR"))
        var out: String?

        @Flag(inversion: .prefixedNo, help: "Zip the model (default: zip directories, keep files as they are).")
        var zip: Bool?

        @Option(help: "Zip entry compression: store (default, byte-reproducible everywhere) or deflate.")
        var compression: ZipCompression = .store

        @Flag(help: "Print a JSON object (path, size, sha256, kind, files, …) instead of one line.")
        var json = false

        func validate() throws {
            if compression != .store && zip == false {
                throw ValidationError("--compression \(compression.rawValue) needs a zip, but --no-zip was given")
            }
        }

        func run() async throws {
            let result = try Packer().pack(model, options: PackOptions(output: out, zip: zip, compression: compression, progress: terminalProgress))
            if json {
                print(try JSONOutput.encode(result), terminator: "")
            } else {
                print("\(result.path)\t\(result.size)\t\(result.sha256.hex)")
            }
        }
    }
}
