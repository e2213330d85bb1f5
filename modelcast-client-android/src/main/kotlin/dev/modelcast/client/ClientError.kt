package dev.modelcast.client

import dev.modelcast.client.install.InstallSpace

/**
 * Every failure of the client, named: what was refused or what failed, with the model, the
 * field and the value where there is one (values are escaped by [quoted]: a server's text
 * never reaches a log or a terminal raw). [kind] sorts them as modelcast's exit statuses do.
 * The same cases as the Swift client's `ClientError`.
 */
sealed class ClientError(message: String) : Exception(message) {
    /** What kind of failure this is: what an app (or the example device's exit status) reacts to. */
    enum class Kind { REFUSED, NETWORK, IO, CONFIGURATION }

    abstract val kind: Kind

    // -- refused: the manifest, a signature, an object or a rule said no ---------------------
    class InvalidManifest(val url: String, val field: String, val value: String?, val reason: String) :
        ClientError("$url: $field${value?.let { " " + quoted(it) } ?: ""} $reason") { override val kind = Kind.REFUSED }
    class ManifestTooLarge(val url: String, val limit: Long) :
        ClientError("$url: the manifest is larger than $limit bytes") { override val kind = Kind.REFUSED }
    class TooLarge(val url: String, val objectName: String, val limit: Long) :
        ClientError("$url: the $objectName is larger than $limit bytes") { override val kind = Kind.REFUSED }
    class WrongChannel(val url: String, val expected: String, val actual: String) :
        ClientError("$url: the manifest is channel ${quoted(actual)}'s, not ${quoted(expected)}'s") { override val kind = Kind.REFUSED }
    class Unsigned(val url: String) :
        ClientError("$url: no signature (a key is pinned, so an unsigned manifest is refused)") { override val kind = Kind.REFUSED }
    class BadSignature(val url: String, val reason: String) :
        ClientError("$url: $reason") { override val kind = Kind.REFUSED }
    class Expired(val url: String, val expiresAt: String, val now: String) :
        ClientError("$url: the manifest expired at $expiresAt (now $now)") { override val kind = Kind.REFUSED }
    class Replayed(val url: String, val sequence: Long, val highestAccepted: Long) :
        ClientError("$url: sequence $sequence is lower than $highestAccepted, already accepted (a replayed manifest)") { override val kind = Kind.REFUSED }
    class RequiresNewerApp(val minimum: String, val current: String) :
        ClientError("the release needs app version ${quoted(minimum)} or later; this is ${quoted(current)}") { override val kind = Kind.REFUSED }
    class HashMismatch(val model: String, val file: String, val expected: String, val actual: String) :
        ClientError("model ${quoted(model)}, file ${quoted(file)}: SHA-256 $actual, expected $expected") { override val kind = Kind.REFUSED }
    class SizeMismatch(val model: String, val file: String, val expected: Long, val actual: Long) :
        ClientError("model ${quoted(model)}, file ${quoted(file)}: $actual bytes, expected $expected") { override val kind = Kind.REFUSED }
    class UnsafeArchive(val model: String, val file: String, val reason: String) :
        ClientError("model ${quoted(model)}, file ${quoted(file)}: $reason") { override val kind = Kind.REFUSED }
    class UnknownModel(val url: String, val model: String) :
        ClientError("$url names no model ${quoted(model)}") { override val kind = Kind.REFUSED }
    class NoVariantForDevice(val model: String, val reasons: List<String>) :
        ClientError("model ${quoted(model)}: no variant for this device (${reasons.joinToString("; ")})") { override val kind = Kind.REFUSED }
    class NotInstalled(val model: String) :
        ClientError("model ${quoted(model)} is not installed") { override val kind = Kind.REFUSED }
    class NoPreviousVersion(val model: String) :
        ClientError("model ${quoted(model)} has no previous version kept to go back to") { override val kind = Kind.REFUSED }
    class InstallTooLarge(val model: String, val version: String, val bytes: Long, val limit: Long) :
        ClientError("model ${quoted(model)} $version installs $bytes bytes, more than the cap of $limit") { override val kind = Kind.REFUSED }
    class ModelSignatureMissing(val model: String, val version: String) :
        ClientError("model ${quoted(model)} $version carries no model signature (a model-signing key is configured)") { override val kind = Kind.REFUSED }
    class BadModelSignature(val model: String, val version: String, val reason: String) :
        ClientError("model ${quoted(model)} $version: $reason") { override val kind = Kind.REFUSED }
    class ModelSignatureUntrustedKey(val model: String, val keyHint: String, val pinnedHint: String) :
        ClientError("model ${quoted(model)}: its model signature was made with another key (key hint ${quoted(keyHint)}), not the one this app pins (hint $pinnedHint)") { override val kind = Kind.REFUSED }
    class ModelSignatureMismatch(val model: String, val version: String, val differences: List<String>) :
        ClientError("model ${quoted(model)} $version does not match its model signature: ${differences.joinToString("; ")}") { override val kind = Kind.REFUSED }
    /** The model's licence requires acceptance ([ModelUpdater.acceptLicence]) and these terms were not accepted. */
    class LicenceNotAccepted(val model: String, val spdx: String?, val url: String?) :
        ClientError("model ${quoted(model)}: ${WaitReason.Licence(spdx, url).description} (acceptLicence); nothing was downloaded") { override val kind = Kind.REFUSED }
    /** The model's download conditions are not met now ([reason] says which); a later call may install it. */
    class ConditionsNotMet(val model: String, val reason: WaitReason) :
        ClientError("model ${quoted(model)} ${reason.description}; nothing was downloaded") { override val kind = Kind.REFUSED }
    /**
     * Installing [model] would take the installed models past [ClientConfiguration.storageBudget]
     * ([needed] bytes against [budget]) even after evicting every on-demand model it may:
     * [wouldEvict] names what would have to go. Nothing was evicted nor downloaded.
     */
    class OverStorageBudget(val model: String, val needed: Long, val budget: Long, val wouldEvict: List<String>) :
        ClientError("model ${quoted(model)}: the models would take $needed bytes, more than the storage budget of $budget (storageBudget); " +
            (if (wouldEvict.isEmpty()) "no other model is installed to remove" else "it would have to remove ${wouldEvict.joinToString(", ") { quoted(it) }}") +
            "; nothing was downloaded or removed") { override val kind = Kind.REFUSED }
    /**
     * Before any download: the volume has [free] bytes, less than the [needed] bytes the
     * models to download take (what is left to download, their install size and the reserve),
     * first past it at [model]. Nothing was downloaded.
     */
    class InsufficientSpaceForDownload(val model: String, val needed: Long, val free: Long) :
        ClientError("model ${quoted(model)}: $needed bytes of free space needed (downloads, install and the ${InstallSpace.RESERVED_SPACE} always left free), " +
            "the volume has $free; nothing was downloaded") { override val kind = Kind.REFUSED }
    /**
     * A key set of the chain walked from the app's trusted key set
     * ([ClientConfiguration.trustedKeySet]) was refused ([path], [version]): a bad document,
     * too few root signatures, a version gap, a missing `.sigs`, or the newest set expired.
     * Nothing was installed; the versions verified before it are kept.
     */
    class KeySetRefused(val path: String, val version: Long, val reason: String) :
        ClientError("key set $path (version $version) refused: $reason") { override val kind = Kind.REFUSED }
    /** The manifest at [url] is not signed by the manifest threshold of key set [keySetVersion]'s manifest keys (a revoked key's signature does not count). */
    class ManifestThresholdNotMet(val url: String, val keySetVersion: Long, val reason: String) :
        ClientError("$url: not signed by enough manifest keys of key set $keySetVersion: $reason") { override val kind = Kind.REFUSED }

    // -- network: trying again later may work ---------------------------------------------
    class Http(val url: String, val status: Int) :
        ClientError("$url: HTTP $status") { override val kind = Kind.NETWORK }
    class Network(val url: String, val reason: String) :
        ClientError("$url: $reason") { override val kind = Kind.NETWORK }
    class TooSlow(val url: String, val received: Long, val seconds: Double, val minimumRate: Long) :
        ClientError("$url: the transfer brought $received bytes in ${"%.0f".format(seconds)} s, less than the minimum of $minimumRate bytes/s; abandoned") { override val kind = Kind.NETWORK }
    class DeadlineExceeded(val url: String, val received: Long, val deadline: Double) :
        ClientError("$url: not complete within ${"%.0f".format(deadline)} s ($received bytes received); abandoned") { override val kind = Kind.NETWORK }
    class BadRangeResponse(val url: String, val reason: String) :
        ClientError("$url: $reason") { override val kind = Kind.NETWORK }

    // -- io: the disk or a local file ----------------------------------------------------
    class Io(val path: String, val reason: String) :
        ClientError("$path: $reason") { override val kind = Kind.IO }
    class InsufficientSpace(val model: String, val bytes: Long, val available: Long) :
        ClientError("model ${quoted(model)} needs $bytes bytes of free space, $available available") { override val kind = Kind.IO }
    class DirectoryBusy(val path: String, val waitedSeconds: Double) :
        ClientError("$path is held by another process (waited ${"%.0f".format(waitedSeconds)} s)") { override val kind = Kind.IO }
    class InsufficientDiskSpace(val needed: Long, val available: Long) :
        ClientError("$needed bytes of free space needed to download, $available available") { override val kind = Kind.IO }

    // -- configuration: the app's own mistake ----------------------------------------------
    class Configuration(val reason: String) :
        ClientError("configuration: $reason") { override val kind = Kind.CONFIGURATION }
    class InvalidModelSigningKey(val reason: String) :
        ClientError("model-signing public key: $reason") { override val kind = Kind.CONFIGURATION }
}

/** `'value'` with control, format and non-printing characters escaped as `\u{…}`, cut at 120 characters. */
fun quoted(value: String): String {
    val out = StringBuilder("'")
    var count = 0
    var index = 0
    while (index < value.length) {
        val point = value.codePointAt(index)
        index += Character.charCount(point)
        if (count == 120) { out.append("…(").append(value.codePointCount(0, value.length)).append(" characters)"); break }
        val type = Character.getType(point)
        val invisible = Character.isISOControl(point) || type == Character.FORMAT.toInt() || type == Character.UNASSIGNED.toInt() ||
            type == Character.LINE_SEPARATOR.toInt() || type == Character.PARAGRAPH_SEPARATOR.toInt() ||
            type == Character.PRIVATE_USE.toInt() || type == Character.SURROGATE.toInt()
        if (invisible) out.append("\\u{").append(Integer.toHexString(point)).append('}') else out.appendCodePoint(point)
        count++
    }
    return out.append("'").toString()
}
