import ArgumentParser
import Foundation
import ModelCastCore

extension ZipCompression: ExpressibleByArgument {}

extension ModelCast {
    struct Pack: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Build the publishable artifact for a model and print its size and SHA-256.",
            discussion: """
                A file is published as it is; a directory becomes a deterministic zip (the same \
                tree gives the same bytes on any machine). Standard output: PATH, SIZE and SHA256.
                Details: docs/cli.md#pack
                """
        )

        @Argument(help: "The model file or directory.")
        var model: String

        // A directory is made if missing when the value ends in /.
        @Option(name: .shortAndLong, help: ArgumentHelp("Output file or directory (default: the current directory).", valueName: "FILE|DIR"))
        var out: String?

        @Flag(inversion: .prefixedNo, help: "Zip the model (default: directories only); --no-zip lists a directory's files.")
        var zip: Bool?

        @Option(help: "Zip entry compression (store: byte-reproducible everywhere).")
        var compression: ZipCompression = .store

        @Flag(help: "Print a JSON object (path, size, sha256, kind, files, …) instead of one line.")
        var json = false

        @OptionGroup
        var progressOptions: ProgressOptions

        func validate() throws {
            if compression != .store && zip == false {
                throw ValidationError("--compression \(compression.rawValue) needs a zip, but --no-zip was given")
            }
        }

        func run() async throws {
            let progress = progressOptions.display(json: json).factory
            if zip == false, isDirectory(model) {
                let listing = try Packer().listTree(model, options: PackOptions(output: out, progress: progress))
                if json {
                    print(try JSONOutput.encode(listing), terminator: "")
                } else {
                    for file in listing.files { print("\(escapingControlCharacters(file.path))\t\(file.size)\t\(file.sha256.hex)") }
                }
                return
            }
            let result = try Packer().pack(model, options: PackOptions(output: out, zip: zip, compression: compression, progress: progress))
            if json {
                print(try JSONOutput.encode(result), terminator: "")
            } else {
                print("\(result.path)\t\(result.size)\t\(result.sha256.hex)")
            }
        }
    }
}

/// True when `path` is a directory (following a link given as the argument itself).
private func isDirectory(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
}
