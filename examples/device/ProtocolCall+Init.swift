import Foundation
import ModelCastClient
import ModelCastFormat

extension ProtocolCall {
    /// `init --dir D --manifest-url U [--public-key FILE]… | [--trusted-keys FILE] [--model-signing-public-key FILE]
    /// [--app-version V] [--device-id ID] [--device k=v,…]… [--min-rate BYTES]
    /// [--rate-window SECONDS] [--deadline SECONDS] [--max-install BYTES] [--storage-budget BYTES]`:
    /// parses every
    /// value (reading the key files) and the configuration they make, and only then writes
    /// `D/device.json`. A bad value exits 2 with nothing written; makes no request.
    static func initialize(_ words: ArraySlice<String>) throws {
        let arguments = try ProtocolArguments(
            words,
            single: ["--dir", "--manifest-url", "--trusted-keys", "--model-signing-public-key", "--app-version", "--device-id", "--min-rate",
                     "--rate-window", "--deadline", "--max-install", "--storage-budget"],
            repeatable: ["--public-key", "--device"])
        try arguments.expectPositional(0, "")
        let directory = URL(fileURLWithPath: try arguments.required("--dir", "D"), isDirectory: true)
        let manifest = try arguments.required("--manifest-url", "U")
        let publicKeys = try arguments.values("--public-key").map { path in
            let text = try StrictValue.fileText(path, "--public-key")
            do { _ = try MinisignPublicKey(text: text, source: path) } catch {
                throw UsageError("--public-key \(quotedValue(path)) is not a minisign public key: \(error)")
            }
            return text
        }
        // The key set's exact bytes are kept: they are what its root signatures signed.
        let trustedKeys = try arguments.value("--trusted-keys").map { try StrictValue.fileText($0, "--trusted-keys") }
        let signingKey = try arguments.value("--model-signing-public-key").map { path in
            let text = try StrictValue.fileText(path, "--model-signing-public-key")
            do { _ = try ModelSigningPublicKey(pem: text) } catch {
                throw UsageError("--model-signing-public-key \(quotedValue(path)) is not a PEM P-256 public key: \(error)")
            }
            return text
        }
        let device = try DeviceOverrides(arguments.values("--device"))
        let stored = DeviceSettings.Stored(
            format: DeviceSettings.format, manifestURL: manifest, publicKeys: publicKeys.isEmpty ? nil : publicKeys, trustedKeys: trustedKeys,
            modelSigningPublicKey: signingKey,
            appVersion: arguments.value("--app-version"), deviceID: arguments.value("--device-id"), device: device.text,
            minRate: arguments.value("--min-rate"), rateWindow: arguments.value("--rate-window"), deadline: arguments.value("--deadline"),
            maxInstall: arguments.value("--max-install"), storageBudget: arguments.value("--storage-budget"))
        let settings = try DeviceSettings(stored) { "--" + $0.rawValue }
        // What the library refuses to start with (a channel name the URL's path cannot be…).
        do { try settings.configuration(directory: directory).validate() } catch {
            throw UsageError("--manifest-url \(quotedValue(manifest)): \(error)")
        }
        try settings.save(in: directory)
        print("recorded " + directory.appendingPathComponent(DeviceSettings.fileName).path)
    }
}
