package dev.modelcast.client

import dev.modelcast.client.format.ModelSignatureRef
import dev.modelcast.client.format.ReleaseModel
import dev.modelcast.client.net.BodyReceiver
import dev.modelcast.client.net.Cancellation
import dev.modelcast.client.net.HttpRequest
import dev.modelcast.client.net.HttpResponse
import dev.modelcast.client.net.HttpStream
import dev.modelcast.client.net.isRetriable
import dev.modelcast.client.net.pause
import dev.modelcast.client.trust.InstalledFiles
import dev.modelcast.client.trust.ModelFilePath
import dev.modelcast.client.trust.ModelSignatureCheck
import dev.modelcast.client.trust.ModelSigningPublicKey
import dev.modelcast.client.trust.ModelSigningStatement
import java.io.ByteArrayOutputStream
import java.nio.file.Path
import java.security.MessageDigest

/**
 * Checks model versions against their OpenSSF model signatures with the pinned key
 * ([ClientConfiguration.modelSigningPublicKey]): [statement] fetches a version's bundle,
 * proves its bytes by the manifest's SHA-256 and size, and returns the statement its
 * signature verifies; [compare] then holds the version directory on disk against that
 * statement before the version is switched to.
 *
 * @param retries attempts after a dropped connection or a server error (not after a too
 *   slow or overlong attempt).
 */
internal class ModelSignatures(private val key: ModelSigningPublicKey, private val http: HttpStream, private val retries: Int) {
    /**
     * The statement the model signature of [model] signs, verified with the pinned key.
     * @throws ClientError.ModelSignatureMissing when the manifest names none;
     *   [ClientError.HashMismatch] / [ClientError.SizeMismatch] for other bytes than the
     *   manifest's; [ClientError.ModelSignatureUntrustedKey] or [ClientError.BadModelSignature].
     */
    fun statement(model: ReleaseModel, cancellation: Cancellation?): ModelSigningStatement {
        val reference = model.modelSignature ?: throw ClientError.ModelSignatureMissing(model.name.text, model.version.text)
        val bytes = download(reference, model.name.text, cancellation)
        return ModelSignatureCheck.verifiedStatement(bytes, key, model.name.text, model.version.text, reference.url.text)
    }

    /** The bundle's bytes, proven; a dropped connection or a server error is retried after a backoff. */
    private fun download(reference: ModelSignatureRef, model: String, cancellation: Cancellation?): ByteArray {
        var attempt = 0
        while (true) {
            try {
                return attemptDownload(reference, model, cancellation)
            } catch (error: ClientError) {
                if (attempt >= retries || !error.isRetriable) throw error
                attempt += 1
                pause(200L * attempt, cancellation)
            }
        }
    }

    /**
     * One GET of the bundle: a 200 whose body is never read past the manifest's size (at
     * most [ModelSignatureRef.MAXIMUM_SIZE]), then exactly that size and SHA-256.
     */
    private fun attemptDownload(reference: ModelSignatureRef, model: String, cancellation: Cancellation?): ByteArray {
        val url = reference.url.text
        val size = reference.size
        val body = ByteArrayOutputStream()
        http.get(HttpRequest(url), metadata = true, cancellation = cancellation, receiver = object : BodyReceiver {
            override fun onResponse(response: HttpResponse) {
                if (response.status != 200) throw ClientError.Http(url, response.status)
                val length = response.contentLength
                if (length != null && length != size) throw ClientError.SizeMismatch(model, url, size, length)
            }

            override fun onData(buffer: ByteArray, count: Int) {
                val total = body.size().toLong() + count
                if (total > size) throw ClientError.SizeMismatch(model, url, size, total)
                body.write(buffer, 0, count)
            }

            override fun readLimit(): Long = size - body.size() + 1
        })
        val data = body.toByteArray()
        if (data.size.toLong() != size) throw ClientError.SizeMismatch(model, url, size, data.size.toLong())
        val digest = MessageDigest.getInstance("SHA-256").digest(data).joinToString("") { String.format("%02x", it.toInt() and 0xff) }
        if (digest != reference.sha256.text) throw ClientError.HashMismatch(model, url, reference.sha256.text, digest)
        return data
    }

    companion object {
        /**
         * Holds the version directory [version] of [model] (staged, or kept and about to be
         * switched to again) against the verified [statement]: the files of the signature's
         * subject, less those under its ignore paths, must be exactly the files it lists, each
         * with its SHA-256. Throws [ClientError.ModelSignatureMismatch] naming every changed,
         * missing or extra file.
         */
        fun compare(statement: ModelSigningStatement, model: ReleaseModel, version: Path) {
            val subject = Subject.of(model)
            val installed = InstalledFiles.scan(subject.path(version), statement.ignorePaths, subject.knownDigests(model))
            ModelSignatureCheck.compare(statement, installed, model.name.text, model.version.text)
        }
    }

    /**
     * What a model version's signature covers, named as `model_signing` names it when given
     * the same thing on disk: one plain file (its one resource named `.`); one zipped
     * directory or a tree (the directory, its files by their path in it); several files (the
     * version directory, each by where it goes; the client's own records are ignore paths).
     */
    private sealed class Subject {
        class File(val name: String) : Subject()
        class Directory(val name: String) : Subject()
        object VersionDirectory : Subject()

        /** Where the subject lies in the version directory [version]. */
        fun path(version: Path): Path = when (this) {
            is File -> version.resolve(name)
            is Directory -> version.resolve(name)
            VersionDirectory -> version
        }

        /**
         * The digests the manifest itself gives, named as in the statement (plain and tree
         * files, which their downloads proved): they are not read again. A zip's entries are
         * hashed from the disk.
         */
        fun knownDigests(model: ReleaseModel): Map<ModelFilePath, String> {
            val digests = HashMap<ModelFilePath, String>()
            for (file in model.files) {
                val name = when (this) {
                    is File -> ModelFilePath.WHOLE_FILE
                    is Directory -> file.path?.let { ModelFilePath.parse(it.text) }
                    VersionDirectory -> if (file.packedDirectoryName == null) ModelFilePath.parse(file.placement.text) else null
                }
                if (name != null) digests[name] = file.sha256.text
            }
            return digests
        }

        companion object {
            fun of(model: ReleaseModel): Subject {
                val tree = model.tree
                val only = model.files.singleOrNull()
                return when {
                    tree != null -> Directory(tree.text)
                    only != null && only.packedDirectoryName != null -> Directory(only.packedDirectoryName!!)
                    only != null -> File(only.name.text)
                    else -> VersionDirectory
                }
            }
        }
    }
}
