package dev.modelcast.client.install

import dev.modelcast.client.ClientError
import dev.modelcast.client.net.ioReason
import java.io.IOException
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.nio.file.LinkOption
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.nio.file.StandardOpenOption
import java.nio.channels.FileChannel
import java.nio.ByteBuffer
import java.util.UUID

/**
 * What the client remembers between launches (`state.json`), the fields of the Swift
 * client's `ClientState` under the same names. Every field may be missing (a file written
 * by an older client reads as it was meant); an entry missing what it cannot do without is
 * left out, and unknown fields are ignored. Immutable: change it with `copy`.
 *
 * @property sequences the highest sequence accepted, per manifest URL (a channel switch starts a new one).
 * @property etags the ETag of the manifest last accepted, per manifest URL.
 * @property coverage what the update that saved each ETag covered, per manifest URL.
 * @property trusted the manifest each ETag stands for (its expiry), per manifest URL.
 * @property installed per model, the version in use and those kept for a local rollback.
 * @property refused per model, the version this device refuses until the manifest names another one.
 * @property keySet the newest key set this client verified by walking the chain from the
 *   app's ([dev.modelcast.client.ClientConfiguration.trustedKeySet]): the next check walks on from it.
 */
data class ClientState(
    val sequences: Map<String, Long> = emptyMap(),
    val etags: Map<String, String> = emptyMap(),
    val coverage: Map<String, Coverage> = emptyMap(),
    val trusted: Map<String, Trusted> = emptyMap(),
    val installed: Map<String, Installed> = emptyMap(),
    val refused: Map<String, Refusal> = emptyMap(),
    val keySet: VerifiedKeySet? = null
) {
    /** A verified key set: its version and its document's exact bytes, base64 (signatures are over those bytes). */
    data class VerifiedKeySet(val version: Long, val document: String)

    /** An installed model: its version, its version directory's name, and the directories kept for a rollback, newest first. */
    data class Installed(val version: String, val id: String, val previous: List<String> = emptyList())

    /** A version reported unusable on this device (its version directory's name, version, variant, and why). */
    data class Refusal(val id: String, val version: String, val variant: String?, val reason: String)

    /**
     * What the update that saved a manifest's ETag covered: a 304 stands for "nothing to do"
     * only for a call that covers no more. `policy` is a download policy's name
     * (`essential`, `prefetch`, `on-demand`); `context` a digest of the device and overrides.
     */
    data class Coverage(val policy: String, val context: String)

    /** What a 304 answers for: when the manifest the ETag stands for stops being fresh (as it spells it), null when never. */
    data class Trusted(val expiresAt: String?)

    /** The JSON `save` writes. */
    fun toJson(): String = Json.write(linkedMapOf<String, Any?>(
        "sequences" to sequences,
        "etags" to etags,
        "coverage" to coverage.mapValues { (_, value) -> mapOf("policy" to value.policy, "context" to value.context) },
        "trusted" to trusted.mapValues { (_, value) -> value.expiresAt?.let { mapOf("expiresAt" to it) } ?: emptyMap<String, Any?>() },
        "installed" to installed.mapValues { (_, value) -> mapOf("version" to value.version, "id" to value.id, "previous" to value.previous) },
        "refused" to refused.mapValues { (_, value) ->
            val fields = linkedMapOf<String, Any?>("id" to value.id, "version" to value.version, "reason" to value.reason)
            if (value.variant != null) fields["variant"] = value.variant
            fields
        }
    ).also { fields -> keySet?.let { fields["keySet"] = linkedMapOf("version" to it.version, "document" to it.document) } })

    /**
     * Writes the state to `path`: a temporary file beside it, synced, renamed over the old
     * one, so a crash leaves the old state or the new one, never half of one.
     * @throws ClientError.Io naming the file and the system's reason.
     */
    fun save(path: Path) {
        val temporary = path.resolveSibling(".${path.fileName}.tmp-${UUID.randomUUID()}")
        try {
            FileChannel.open(temporary, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).use { channel ->
                val bytes = ByteBuffer.wrap(toJson().toByteArray(StandardCharsets.UTF_8))
                while (bytes.hasRemaining()) channel.write(bytes)
                channel.force(true)
            }
            Files.move(temporary, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
        } catch (error: IOException) {
            try { Files.deleteIfExists(temporary) } catch (ignored: IOException) {}
            throw ClientError.Io(path.toString(), ioReason(error))
        }
    }

    companion object {
        /** The largest state file read: far more than any state needs, far less than memory. */
        const val MAX_BYTES = 16L shl 20

        /**
         * The state at `path`; an empty state when there is no file.
         * @throws ClientError.Io "unreadable state" for a file that is not a state (garbage,
         *   the wrong types, larger than [MAX_BYTES]): the caller starts afresh and repairs from the disk.
         */
        fun load(path: Path): ClientState {
            if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) return ClientState()
            val text = try {
                if (Files.size(path) > MAX_BYTES) throw ClientError.Io(path.toString(), "unreadable state (larger than $MAX_BYTES bytes)")
                String(Files.readAllBytes(path), StandardCharsets.UTF_8)
            } catch (error: IOException) {
                throw ClientError.Io(path.toString(), ioReason(error))
            }
            return try {
                parse(text)
            } catch (error: JsonError) {
                throw ClientError.Io(path.toString(), "unreadable state (${error.message})")
            }
        }

        /** The state `text` holds (see the type's rules for missing fields). */
        internal fun parse(text: String): ClientState {
            val root = JsonObject.asObject(Json.parse(text), "state") ?: throw JsonError("not a JSON object")
            val sequences = root.objectValue("sequences")?.let { members ->
                members.keys().mapNotNull { key -> members.long(key)?.let { key to it } }.toMap()
            } ?: emptyMap()
            val etags = root.objectValue("etags")?.let { members ->
                members.keys().mapNotNull { key -> members.string(key)?.let { key to it } }.toMap()
            } ?: emptyMap()
            val coverage = root.objects("coverage")?.mapNotNullValues { value ->
                val policy = value.string("policy")
                val context = value.string("context")
                if (policy != null && context != null) Coverage(policy, context) else null
            } ?: emptyMap()
            val trusted = root.objects("trusted")?.mapValues { (_, value) -> Trusted(value.string("expiresAt")) } ?: emptyMap()
            val installed = root.objects("installed")?.mapNotNullValues { value ->
                val version = value.string("version")
                val id = value.string("id")
                if (version != null && id != null) Installed(version, id, value.stringList("previous") ?: emptyList()) else null
            } ?: emptyMap()
            val refused = root.objects("refused")?.mapNotNullValues { value ->
                val id = value.string("id")
                val version = value.string("version")
                if (id != null && version != null) Refusal(id, version, value.string("variant"), value.string("reason") ?: "") else null
            } ?: emptyMap()
            val keySet = root.objectValue("keySet")?.let { value ->
                val version = value.long("version")
                val document = value.string("document")
                if (version != null && document != null) VerifiedKeySet(version, document) else null
            }
            return ClientState(sequences, etags, coverage, trusted, installed, refused, keySet)
        }

        private inline fun <V : Any> Map<String, JsonObject>.mapNotNullValues(transform: (JsonObject) -> V?): Map<String, V> {
            val out = LinkedHashMap<String, V>()
            for ((key, value) in this) transform(value)?.let { out[key] = it }
            return out
        }
    }
}
