package dev.modelcast.client

import dev.modelcast.client.format.LicenceTerms
import dev.modelcast.client.format.ManifestValueException
import dev.modelcast.client.format.ModelName
import dev.modelcast.client.install.Installer
import dev.modelcast.client.install.Json
import dev.modelcast.client.net.ioReason
import java.io.IOException
import java.nio.file.Path

/**
 * The licences the app's user accepted (`licences.json` in the client's directory): per
 * model, the terms (SPDX id and URL, exactly) accepted last. A model whose manifest names
 * other terms waits again: the acceptance was for what the user read, not for the model.
 * Written whole to a temporary file renamed over the old one, so a crash keeps one or the
 * other; an unreadable file counts as no acceptance (the user is asked again, never skipped).
 * Another process's acceptance recorded at the same moment is kept ([RecordFileLock]).
 */
internal class LicenceStore(private val path: Path) {
    private val lock = Any()

    /** Model name → the terms accepted for it. */
    fun accepted(): Map<String, LicenceTerms> = synchronized(lock) { read() }

    /** Records that the user accepted [terms] for [model], replacing an earlier acceptance. */
    fun accept(model: String, terms: LicenceTerms) = synchronized(lock) { RecordFileLock.updating(path) {
        val all = LinkedHashMap(read())
        all[model] = terms
        val document = all.mapValues { (_, value) -> linkedMapOf<String, Any?>().apply {
            value.spdx?.let { put("spdx", it) }
            value.url?.let { put("url", it) }
        } }
        try {
            Installer.writeAtomically(path, Json.write(document))
        } catch (error: IOException) {
            throw ClientError.Io(path.toString(), ioReason(error))
        }
    } }

    private fun read(): Map<String, LicenceTerms> {
        val root = readRecordObject(path, MAX_BYTES, "licences") ?: return emptyMap()
        val out = LinkedHashMap<String, LicenceTerms>()
        for (model in root.keys()) {
            val entry = root.objectValue(model) ?: continue
            if (!ModelName.isValid(model)) continue
            // Terms that no longer parse were never accepted as the manifest spells them.
            try { out[model] = LicenceTerms(entry.string("spdx"), entry.string("url")) } catch (error: ManifestValueException) {}
        }
        return out
    }

    companion object {
        /** The file's name in the client's directory. */
        const val FILE_NAME = "licences.json"
        /** The largest file read: thousands of models' terms. */
        const val MAX_BYTES = 4L shl 20
    }
}
