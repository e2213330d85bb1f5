package dev.modelcast.device

import dev.modelcast.client.ClientConfiguration
import dev.modelcast.client.ClientError
import dev.modelcast.client.CurrentDevice
import dev.modelcast.client.format.Json
import dev.modelcast.client.format.JsonException
import dev.modelcast.client.format.JsonValue
import dev.modelcast.client.trust.KeySet
import dev.modelcast.client.trust.MinisignPublicKey
import dev.modelcast.client.trust.ModelSigningPublicKey
import java.io.File
import java.io.FileInputStream
import java.io.IOException
import java.nio.file.AtomicMoveNotSupportedException
import java.nio.file.Files
import java.nio.file.StandardCopyOption

/**
 * The configuration `init` records in `D/device.json` and every later call reads back.
 *
 * The file keeps each value as the text `init` was given, under the option's name
 * (`"min-rate": "512"`), except the keys: `--public-key`, `--trusted-keys` and
 * `--model-signing-public-key` name files, whose text is read at `init` and kept, so later calls need nothing outside `D`
 * and a key file moved or changed afterwards changes nothing. Reading the file parses every
 * value again with the parser `init` used, so a damaged file is refused, never half-used.
 * (The Swift device writes the same file: either device reads the other's.)
 */
class DeviceSettings(val stored: Stored, label: (String) -> String) {
    /** `device.json` as written: texts only, each under its option's name. */
    data class Stored(
        val format: Long,
        val manifestUrl: String,
        /** null when no key is pinned. */
        val publicKeys: List<String>?,
        val modelSigningPublicKey: String?,
        val appVersion: String?,
        val deviceId: String?,
        val device: String?,
        val minRate: String?,
        val rateWindow: String?,
        val deadline: String?,
        val maxInstall: String?,
        val storageBudget: String? = null,
        /** The app's key set (`keys/N.json`), as the file `--trusted-keys` named held it; null without one. */
        val trustedKeys: String? = null
    ) {
        /** The file's JSON, keys as the options name them. */
        fun json(): Map<String, Any?> {
            val members = LinkedHashMap<String, Any?>()
            members[FORMAT] = format
            members[MANIFEST_URL] = manifestUrl
            publicKeys?.let { members[PUBLIC_KEY] = it }
            trustedKeys?.let { members[TRUSTED_KEYS] = it }
            modelSigningPublicKey?.let { members[MODEL_SIGNING_PUBLIC_KEY] = it }
            appVersion?.let { members[APP_VERSION] = it }
            deviceId?.let { members[DEVICE_ID] = it }
            device?.let { members[DEVICE] = it }
            minRate?.let { members[MIN_RATE] = it }
            rateWindow?.let { members[RATE_WINDOW] = it }
            deadline?.let { members[DEADLINE] = it }
            maxInstall?.let { members[MAX_INSTALL] = it }
            storageBudget?.let { members[STORAGE_BUDGET] = it }
            return members
        }
    }

    private val device: DeviceOverrides
    private val minimumTransferRate: Long?
    private val transferRateWindow: Double?
    private val metadataDeadline: Double?
    private val maxInstallBytes: Long?
    private val storageBudget: Long?
    private val modelSigningPublicKey: ModelSigningPublicKey?

    init {
        if (stored.format != FORMAT_VERSION) throw UsageError("${label(FORMAT)} ${stored.format} is not $FORMAT_VERSION")
        StrictValue.manifestURL(stored.manifestUrl, label(MANIFEST_URL))
        stored.publicKeys.orEmpty().forEachIndexed { index, text ->
            try {
                MinisignPublicKey.parse(text, "${label(PUBLIC_KEY)} ${index + 1}")
            } catch (error: Exception) {
                throw UsageError("${label(PUBLIC_KEY)} ${index + 1} is not a minisign public key: ${error.message}")
            }
        }
        stored.trustedKeys?.let { text ->
            if (stored.publicKeys != null) throw UsageError("${label(TRUSTED_KEYS)} and ${label(PUBLIC_KEY)} are both given: a key set names the manifest keys itself")
            try {
                KeySet.parse(text.toByteArray(Charsets.UTF_8))
            } catch (error: Exception) {
                throw UsageError("${label(TRUSTED_KEYS)} is not a key set: ${error.message}")
            }
        }
        modelSigningPublicKey = stored.modelSigningPublicKey?.let { text ->
            try {
                ModelSigningPublicKey.parse(text)
            } catch (error: ClientError) {
                throw UsageError("${label(MODEL_SIGNING_PUBLIC_KEY)} is not a PEM P-256 public key: ${error.message}")
            }
        }
        stored.appVersion?.let { StrictValue.version(it, label(APP_VERSION)) }
        stored.deviceId?.let { StrictValue.name(it, label(DEVICE_ID)) }
        device = DeviceOverrides.parse(listOfNotNull(stored.device), label(DEVICE))
        minimumTransferRate = stored.minRate?.let { StrictValue.count(it, label(MIN_RATE), positive = false, unit = "bytes per second") }
        transferRateWindow = stored.rateWindow?.let { StrictValue.seconds(it, label(RATE_WINDOW)) }
        metadataDeadline = stored.deadline?.let { StrictValue.seconds(it, label(DEADLINE)) }
        maxInstallBytes = stored.maxInstall?.let { StrictValue.count(it, label(MAX_INSTALL), positive = true, unit = "bytes") }
        storageBudget = stored.storageBudget?.let { StrictValue.count(it, label(STORAGE_BUDGET), positive = false, unit = "bytes") }
    }

    /**
     * The client's configuration for [directory]; the options not given keep
     * [ClientConfiguration]'s defaults, the device keys not given this machine's.
     */
    fun configuration(directory: File): ClientConfiguration {
        val defaults = ClientConfiguration(stored.manifestUrl, directory, stored.deviceId ?: "device-0")
        return defaults.copy(
            publicKeys = stored.publicKeys.orEmpty(), trustedKeySet = stored.trustedKeys?.toByteArray(Charsets.UTF_8), modelSigningPublicKey = modelSigningPublicKey, appVersion = stored.appVersion,
            device = device.appliedTo(CurrentDevice.profile),
            minimumTransferRate = minimumTransferRate ?: defaults.minimumTransferRate,
            transferRateWindowSeconds = transferRateWindow ?: defaults.transferRateWindowSeconds,
            metadataDeadlineSeconds = metadataDeadline ?: defaults.metadataDeadlineSeconds,
            maxInstallBytes = maxInstallBytes ?: defaults.maxInstallBytes,
            storageBudget = storageBudget)
    }

    /** Writes `device.json` in [directory] (created if needed) with one rename, so a call killed half-way leaves the old file or the new one. */
    fun save(directory: File) {
        val target = File(directory, FILE_NAME)
        val temporary = File(directory, ".$FILE_NAME.${java.util.UUID.randomUUID()}.tmp")
        try {
            Files.createDirectories(directory.toPath())
            temporary.writeText(JsonText.pretty(stored.json()) + "\n")
            try {
                Files.move(temporary.toPath(), target.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
            } catch (error: AtomicMoveNotSupportedException) {
                Files.move(temporary.toPath(), target.toPath(), StandardCopyOption.REPLACE_EXISTING)
            }
        } catch (error: IOException) {
            temporary.delete()
            throw ClientError.Io(target.path, error.message ?: error.javaClass.simpleName)
        }
    }

    /** Why [load] found no configuration it can use (exit 3). */
    class LoadError(message: String) : Exception(message)

    companion object {
        /** The file's name in the client's directory. */
        const val FILE_NAME = "device.json"
        /** The layout this code writes and reads. */
        const val FORMAT_VERSION = 1L
        /** Largest `device.json` read: keys and a few values, far below it. */
        const val MAX_FILE_BYTES = 1 shl 20

        const val FORMAT = "format"
        const val MANIFEST_URL = "manifest-url"
        const val PUBLIC_KEY = "public-key"
        const val TRUSTED_KEYS = "trusted-keys"
        const val MODEL_SIGNING_PUBLIC_KEY = "model-signing-public-key"
        const val APP_VERSION = "app-version"
        const val DEVICE_ID = "device-id"
        const val DEVICE = "device"
        const val MIN_RATE = "min-rate"
        const val RATE_WINDOW = "rate-window"
        const val DEADLINE = "deadline"
        const val MAX_INSTALL = "max-install"
        const val STORAGE_BUDGET = "storage-budget"

        /** The configuration `init` recorded in [directory]. */
        fun load(directory: File): DeviceSettings {
            val file = File(directory, FILE_NAME)
            if (!file.isFile) throw LoadError("${file.path}: no configuration (run init --dir first)")
            fun unusable(reason: String) = LoadError("${file.path}: not a configuration this client reads: $reason")
            val bytes = try {
                FileInputStream(file).use { stream -> readAtMost(stream, MAX_FILE_BYTES + 1) }
            } catch (error: IOException) {
                throw unusable(error.message ?: error.javaClass.simpleName)
            }
            if (bytes.size > MAX_FILE_BYTES) throw unusable("larger than $MAX_FILE_BYTES bytes")
            val stored = try { decode(Json.parse(bytes)) } catch (error: JsonException) { null } ?: throw unusable("not the JSON init writes")
            try {
                return DeviceSettings(stored) { "$FILE_NAME: $it" }
            } catch (error: UsageError) {
                throw unusable(error.message.orEmpty())
            }
        }

        /** The stored texts of a `device.json` document, or null when it is not the shape `init` writes. */
        private fun decode(document: JsonValue): Stored? {
            if (document !is JsonValue.Object) return null
            fun text(key: String): String? = when (val value = document[key]) {
                null, JsonValue.Null -> null
                is JsonValue.Text -> value.value
                else -> throw NotTheShape()
            }
            return try {
                val format = (document[FORMAT] as? JsonValue.Integer)?.value ?: return null
                val keys = when (val value = document[PUBLIC_KEY]) {
                    null, JsonValue.Null -> null
                    is JsonValue.Array -> value.items.map { (it as? JsonValue.Text)?.value ?: return null }
                    else -> return null
                }
                Stored(format, text(MANIFEST_URL) ?: return null, keys, text(MODEL_SIGNING_PUBLIC_KEY), text(APP_VERSION), text(DEVICE_ID),
                    text(DEVICE), text(MIN_RATE), text(RATE_WINDOW), text(DEADLINE), text(MAX_INSTALL), text(STORAGE_BUDGET),
                    text(TRUSTED_KEYS))
            } catch (error: NotTheShape) {
                null
            }
        }

        /** A member of another type than `init` writes. */
        private class NotTheShape : Exception()

        /** Up to [limit] bytes of [stream]. */
        fun readAtMost(stream: java.io.InputStream, limit: Int): ByteArray {
            val out = java.io.ByteArrayOutputStream()
            val buffer = ByteArray(16 shl 10)
            while (out.size() < limit) {
                val count = stream.read(buffer, 0, minOf(buffer.size, limit - out.size()))
                if (count < 0) break
                out.write(buffer, 0, count)
            }
            return out.toByteArray()
        }
    }
}
