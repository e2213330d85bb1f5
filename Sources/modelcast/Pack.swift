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

                With --no-zip, a directory is a tree: every regular file is hashed where it is (several \
                at a time, one per core; nothing is copied) and the listing is written as NAME.files.json \
                (to --out when given). Standard output has one line per file, `PATH<TAB>SIZE<TAB>SHA256` \
                with PATH inside the model, or with --json the listing: name, kind, format "tree", size, \
                and files[] of path, size, sha256 and content_type. This is what `publish --no-zip` \
                publishes, each file as its own object.
                """
        )

        @Argument(help: "The model file or directory.")
        var model: String

        @Option(name: .shortAndLong, help: ArgumentHelp("Output file, or a directory to write into (made if missing when the value ends in /; default: the current directory).", valueName: "FILE|DIR"))
        var out: String?

        @Flag(inversion: .prefixedNo, help: "Zip the model (default: zip directories, keep files as they are); --no-zip lists a directory's files instead.")
        var zip: Bool?

        @Option(help: "Zip entry compression: store (default, byte-reproducible everywhere) or deflate.")
        var compression: ZipCompression = .store

        @Flag(help: "Print a JSON object (path, size, sha256, kind, files, …) instead of one line.")
        var json = false

        @OptionGroup(title: "Progress")
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
