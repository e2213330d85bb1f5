import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an Ed25519 signing key pair in minisign's formats.",
            discussion: """
                The public key file is what minisign reads (`minisign -Vm manifest.json -p KEY.pub`); \
                ship its second line (printed here) in the app. The secret key is encrypted with \
                a passphrase as minisign does (scrypt), asked for twice at the terminal or taken \
                from $MODELCAST_SIGNING_PASSPHRASE. --unencrypted writes it unprotected, marked so \
                in its comment line: only for storing as a CI secret ($MODELCAST_SIGNING_KEY).
                Existing files are never overwritten unless --force is given.
                """
        )

        @Option(help: ArgumentHelp("Where to write the public key.", valueName: "FILE"))
        var publicKey = "modelcast.pub"

        @Option(help: ArgumentHelp("Where to write the secret key (mode 0600).", valueName: "FILE"))
        var secretKey = "modelcast.key"

        @Flag(help: "Store the secret key without a passphrase (for a CI secret store).")
        var unencrypted = false

        @Flag(help: "Replace existing key files.")
        var force = false

        func validate() throws {
            let same = URL(fileURLWithPath: publicKey).standardizedFileURL.resolvingSymlinksInPath()
                == URL(fileURLWithPath: secretKey).standardizedFileURL.resolvingSymlinksInPath()
            guard !same else {
                throw ValidationError("--public-key and --secret-key are the same file (\(secretKey)): one would overwrite the other")
            }
        }

        func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            var passphrase: String?
            if !unencrypted {
                if let value = environment[Passphrase.environmentVariable], !value.isEmpty {
                    passphrase = value
                } else {
                    guard let first = try Passphrase.readFromTerminal(prompt: "passphrase for \(secretKey): ") else {
                        throw ModelCastError.usage("no terminal to ask for a passphrase: set \(Passphrase.environmentVariable), or pass --unencrypted for a key kept only in a CI secret store; nothing was written")
                    }
                    guard !first.isEmpty else { throw ModelCastError.usage("the passphrase is empty; pass --unencrypted for an unprotected key; nothing was written") }
                    guard try Passphrase.readFromTerminal(prompt: "the same passphrase again: ") == first else {
                        throw ModelCastError.usage("the two passphrases differ; nothing was written")
                    }
                    passphrase = first
                }
            }
            let pair = try MinisignKeyPair.generate()
            try pair.write(publicKeyPath: publicKey, secretKeyPath: secretKey, passphrase: passphrase, force: force)
            print("public key \(pair.publicKey.keyID.hex) written to \(publicKey):")
            print(pair.publicKey.base64)
            print("secret key written to \(secretKey) (\(passphrase == nil ? "UNENCRYPTED: keep it only in a CI secret store" : "encrypted with your passphrase"))")
        }
    }
}
