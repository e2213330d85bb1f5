package dev.modelcast.client.trust

import dev.modelcast.client.format.ChannelName

/**
 * Where a target keeps what modelcast writes besides artifacts, as keys relative to the
 * target's root (the Swift `TargetKeys`; the server writes these keys, the client reads them).
 *
 * - `stable`'s manifest is the manifest key itself (`manifest.json`); any other channel
 *   NAME's is `channels/NAME/<manifest key>`.
 * - A manifest's history records sit under `manifests/` (`manifests/00000007.json` for
 *   `manifest.json`), `manifests/<stem>/` for another manifest key, and the same beneath
 *   `manifests/channels/NAME/` for a channel's.
 * - A signed release keeps its detached signature beside its record
 *   (`manifests/00000007.json.minisig`), never replaced: a device whose live signature does
 *   not sign the live manifest (a publish stopped between the two writes) reads that one.
 */
object TargetKeys {
    /** The channel a target serves at the manifest key itself. */
    const val STABLE_CHANNEL = "stable"
    /** Where every other channel's manifest lives. */
    const val CHANNELS_FOLDER = "channels/"

    /** The manifest key of [channel] for the target's manifest key [base]. */
    fun manifestKey(channel: String, base: String = "manifest.json"): String =
        if (channel == STABLE_CHANNEL) base else "$CHANNELS_FOLDER$channel/$base"

    /**
     * The channel a manifest key belongs to and the target's manifest key it derives from:
     * `channels/beta/manifest.json` → (beta, manifest.json); any other key is stable's.
     */
    fun split(manifestKey: String): Pair<String, String> {
        if (!manifestKey.startsWith(CHANNELS_FOLDER)) return Pair(STABLE_CHANNEL, manifestKey)
        val rest = manifestKey.substring(CHANNELS_FOLDER.length)
        val slash = rest.indexOf('/')
        if (slash < 0) return Pair(STABLE_CHANNEL, manifestKey)
        return Pair(rest.substring(0, slash), rest.substring(slash + 1))
    }

    /** Where minisign looks for a file's signature: `manifest.json.minisig` beside `manifest.json`. */
    fun signatureKey(manifestKey: String): String = "$manifestKey.minisig"

    /**
     * The history folder of a manifest key: `manifests/` for `manifest.json`,
     * `manifests/<stem>/` for any other manifest, both beneath `manifests/channels/NAME/` for
     * channel NAME's.
     */
    fun historyPrefix(manifestKey: String): String {
        val (channel, base) = split(manifestKey)
        val folder = if (channel == STABLE_CHANNEL) "manifests/" else "manifests/$CHANNELS_FOLDER$channel/"
        return if (base == "manifest.json") folder else folder + base.dropLast(".json".length) + "/"
    }

    /** The key of the history record of [sequence]: its prefix and the sequence in at least eight digits. */
    fun historyKey(manifestKey: String, sequence: Long): String =
        historyPrefix(manifestKey) + String.format(java.util.Locale.ROOT, "%08d", sequence) + ".json"

    /** Where a signed release keeps its detached signature beside its history record (`manifests/00000007.json.minisig`). */
    fun keptSignatureKey(manifestKey: String, sequence: Long): String = signatureKey(historyKey(manifestKey, sequence))

    /**
     * Splits the text of a manifest's URL path at its target's root, as the server lays a
     * target out: `…/channels/NAME/FILE` (NAME a channel name) is channel NAME's manifest
     * under `…/`, any other `…/FILE` is stable's under its own directory. The root keeps its
     * trailing `/`; nothing is decoded. Null when the text has no `/`.
     */
    fun splitAtRoot(manifestLocation: String): Pair<String, String>? {
        val parts = manifestLocation.split('/')
        val count = parts.size
        if (count < 2) return null
        if (count >= 4 && parts[count - 3] + "/" == CHANNELS_FOLDER && ChannelName.isValid(parts[count - 2])) {
            return Pair(parts.subList(0, count - 3).joinToString("/") + "/", parts.subList(count - 3, count).joinToString("/"))
        }
        return Pair(parts.subList(0, count - 1).joinToString("/") + "/", parts[count - 1])
    }
}
