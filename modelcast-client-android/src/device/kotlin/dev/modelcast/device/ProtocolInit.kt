package dev.modelcast.device

import dev.modelcast.client.ClientError
import dev.modelcast.client.quoted
import dev.modelcast.client.trust.MinisignPublicKey
import dev.modelcast.client.trust.ModelSigningPublicKey
import java.io.File

/**
 * `init --dir D --manifest-url U [--public-key FILE]… | [--trusted-keys FILE] [--model-signing-public-key FILE]
 * [--app-version V] [--device-id ID] [--device k=v,…]… [--min-rate BYTES]
 * [--rate-window SECONDS] [--deadline SECONDS] [--max-install BYTES] [--storage-budget BYTES]`: parses every value
 * (reading the key files) and the configuration they make, and only then writes
 * `D/device.json`. A bad value exits 2 with nothing written; makes no request.
 */
fun ProtocolCall.initialize(words: List<String>) {
    val arguments = ProtocolArguments(words,
        single = setOf("--dir", "--manifest-url", "--trusted-keys", "--model-signing-public-key", "--app-version", "--device-id", "--min-rate",
            "--rate-window", "--deadline", "--max-install", "--storage-budget"),
        repeatable = setOf("--public-key", "--device"))
    arguments.expectPositional(0, "")
    val directory = File(arguments.required("--dir", "D"))
    val manifest = arguments.required("--manifest-url", "U")
    val publicKeys = arguments.values("--public-key").map { path ->
        val text = StrictValue.fileText(path, "--public-key")
        try {
            MinisignPublicKey.parse(text, path)
        } catch (error: Exception) {
            throw UsageError("--public-key ${quoted(path)} is not a minisign public key: ${error.message}")
        }
        text
    }
    // Kept as text (a key set is ASCII, so byte for byte); parsed by DeviceSettings below.
    val trustedKeys = arguments.value("--trusted-keys")?.let { StrictValue.fileText(it, "--trusted-keys") }
    val signingKey = arguments.value("--model-signing-public-key")?.let { path ->
        val text = StrictValue.fileText(path, "--model-signing-public-key")
        try {
            ModelSigningPublicKey.parse(text)
        } catch (error: ClientError) {
            throw UsageError("--model-signing-public-key ${quoted(path)} is not a PEM P-256 public key: ${error.message}")
        }
        text
    }
    val device = DeviceOverrides.parse(arguments.values("--device"))
    val stored = DeviceSettings.Stored(
        format = DeviceSettings.FORMAT_VERSION, manifestUrl = manifest, publicKeys = if (publicKeys.isEmpty()) null else publicKeys,
        modelSigningPublicKey = signingKey, appVersion = arguments.value("--app-version"), deviceId = arguments.value("--device-id"),
        device = device.text, minRate = arguments.value("--min-rate"), rateWindow = arguments.value("--rate-window"),
        deadline = arguments.value("--deadline"), maxInstall = arguments.value("--max-install"),
        storageBudget = arguments.value("--storage-budget"), trustedKeys = trustedKeys)
    val settings = DeviceSettings(stored) { "--$it" }
    // What the library refuses to start with (a channel name the URL's path cannot be…).
    try {
        settings.configuration(directory).validate()
    } catch (error: ClientError) {
        throw UsageError("--manifest-url ${quoted(manifest)}: ${error.message}")
    }
    settings.save(directory)
    println("recorded " + File(directory, DeviceSettings.FILE_NAME).path)
}
