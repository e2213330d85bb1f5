import ArgumentParser
import Foundation
import ModelCastCore

extension ModelCast {
    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a signing key pair: Ed25519 in minisign's formats, or with --model-signing ECDSA P-256 in PEM.",
            discussion: """
                The secret key is encrypted with a passphrase (asked twice, or \
                $MODELCAST_SIGNING_PASSPHRASE) unless --unencrypted. Existing files are kept \
                unless --force.
                Details: docs/cli.md#keygen
                """
        )

        @Option(help: ArgumentHelp("Where to write the public key (default: modelcast.pub, or model-signing.pub).", valueName: "FILE"))
        var publicKey: String?

        @Option(help: ArgumentHelp("Where to write the minisign secret key (mode 0600; default: modelcast.key).", valueName: "FILE"))
        var secretKey: String?

        @Flag(help: "Create an ECDSA P-256 PEM pair for OpenSSF model signatures instead.")
        var modelSigning = false

        @Option(help: ArgumentHelp("With --model-signing: where to write the private key (PEM PKCS#8, mode 0600; default: model-signing.pem).", valueName: "FILE"))
        var privateKey: String?

        @Flag(help: "Store the secret key without a passphrase (for a CI secret store).")
        var unencrypted = false

        @Flag(help: "Replace existing key files.")
        var force = false

        @Flag(help: "Print a JSON object (paths, key id, public key) instead of text.")
        var json = false

        /// The public and private (or secret) key paths, defaults applied.
        var paths: (public: String, secret: String) {
            modelSigning ? (publicKey ?? "model-signing.pub", privateKey ?? "model-signing.pem")
                : (publicKey ?? "modelcast.pub", secretKey ?? "modelcast.key")
        }

        func validate() throws {
            if modelSigning, secretKey != nil {
                throw ValidationError("--secret-key names a minisign secret key; with --model-signing give --private-key")
            }
            if !modelSigning, privateKey != nil {
                throw ValidationError("--private-key is for --model-signing keys; a minisign key pair takes --secret-key")
            }
            let (publicPath, secretPath) = paths
            let same = URL(fileURLWithPath: publicPath).standardizedFileURL.resolvingSymlinksInPath()
                == URL(fileURLWithPath: secretPath).standardizedFileURL.resolvingSymlinksInPath()
            guard !same else {
                let option = modelSigning ? "--private-key" : "--secret-key"
                throw ValidationError("--public-key and \(option) are the same file (\(secretPath)): one would overwrite the other")
            }
        }

        func run() async throws {
            let (publicPath, secretPath) = paths
            // Before the passphrase and the key: scrypt takes seconds, a typo in a path none.
            try checkKeyFileDestinations([secretPath, publicPath], force: force)
            let passphrase = unencrypted ? nil : try Self.newPassphrase(for: secretPath)
            if modelSigning {
                let key = try P256PrivateKey.generate()
                try key.write(to: secretPath, passphrase: passphrase, force: force)
                try key.publicKey.write(to: publicPath, force: force)
                if json {
                    print(try JSONOutput.encode(KeygenOutput(kind: "model-signing", publicKeyPath: publicPath, secretKeyPath: secretPath,
                                                             encrypted: passphrase != nil, hint: key.publicKey.hint)), terminator: "")
                    return
                }
                print("public key (hint \(key.publicKey.hint)) written to \(publicPath)")
                print("private key written to \(secretPath) (\(passphrase == nil ? "UNENCRYPTED: keep it only in a CI secret store" : "encrypted with your passphrase"))")
                return
            }
            let pair = try MinisignKeyPair.generate()
            try pair.write(publicKeyPath: publicPath, secretKeyPath: secretPath, passphrase: passphrase, force: force)
            if json {
                print(try JSONOutput.encode(KeygenOutput(kind: "minisign", publicKeyPath: publicPath, secretKeyPath: secretPath, encrypted: passphrase != nil,
                                                         keyID: pair.publicKey.keyID.hex, publicKey: pair.publicKey.base64)), terminator: "")
                return
            }
            print("public key \(pair.publicKey.keyID.hex) written to \(publicPath):")
            print(pair.publicKey.base64)
            print("secret key written to \(secretPath) (\(passphrase == nil ? "UNENCRYPTED: keep it only in a CI secret store" : "encrypted with your passphrase"))")
        }

        /// The passphrase for a new key: $MODELCAST_SIGNING_PASSPHRASE, or typed twice at the terminal.
        static func newPassphrase(for path: String) throws -> String {
            let environment = ProcessInfo.processInfo.environment
            if let value = environment[Passphrase.environmentVariable], !value.isEmpty { return value }
            guard let first = try Passphrase.readFromTerminal(prompt: "passphrase for \(path): ") else {
                throw ModelCastError.usage("no terminal to ask for a passphrase: set \(Passphrase.environmentVariable), or pass --unencrypted for a key kept only in a CI secret store; nothing was written")
            }
            guard !first.isEmpty else { throw ModelCastError.usage("the passphrase is empty; pass --unencrypted for an unprotected key; nothing was written") }
            guard try Passphrase.readFromTerminal(prompt: "the same passphrase again: ") == first else {
                throw ModelCastError.usage("the two passphrases differ; nothing was written")
            }
            return first
        }
    }
}

/// keygen's `--json` (schema/cli/keygen.schema.json): where the pair went and how to pin
/// it. The secret key itself is never printed.
private struct KeygenOutput: Encodable {
    let kind: String
    let publicKeyPath: String
    let secretKeyPath: String
    let encrypted: Bool
    var keyID: String?
    var publicKey: String?
    var hint: String?

    enum CodingKeys: String, CodingKey {
        case kind, encrypted, hint
        case publicKeyPath = "public_key_path", secretKeyPath = "secret_key_path", keyID = "key_id", publicKey = "public_key"
    }
}
