package dev.modelcast.client.trust

import dev.modelcast.client.format.Json
import dev.modelcast.client.format.JsonException
import dev.modelcast.client.quoted
import java.security.MessageDigest

/** One file of a signed model and its SHA-256 (lowercase hex): an entry of `predicate.resources`. */
data class ModelSigningResource(val path: ModelFilePath, val sha256: String)

/**
 * The in-toto statement an OpenSSF model signature signs (predicate type
 * `https://model_signing/signature/v1.0`, "files" serialization with SHA-256): the model's
 * name, every file with its SHA-256, and the paths left out. See docs/model-signing.md.
 */
class ModelSigningStatement private constructor(
    /** `subject[0].name`: the model's file or directory name. Informative only. */
    val modelName: String,
    /** `predicate.resources`, in the order listed (and hashed for the subject). */
    val resources: List<ModelSigningResource>,
    /** `predicate.serialization.ignore_paths`: files under these are not part of the model. */
    val ignorePaths: List<ModelFilePath>,
    /** `predicate.serialization.allow_symlinks` (modelcast always writes false). */
    val allowSymlinks: Boolean
) {
    /** The files as a name → SHA-256 map. */
    val files: Map<ModelFilePath, String> get() = resources.associate { it.path to it.sha256 }

    /** `subject[0].digest.sha256`: the SHA-256 of the resources' raw 32-byte digests, concatenated in order. */
    fun rootDigest(): String {
        val sha256 = MessageDigest.getInstance("SHA-256")
        for (resource in resources) sha256.update(hexBytes(resource.sha256))
        return sha256.digest().toHex()
    }

    companion object {
        const val STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
        const val PREDICATE_TYPE = "https://model_signing/signature/v1.0"
        /** The predicate type model_signing 0.2 wrote, named in its refusal. */
        private const val COMPAT_PREDICATE_TYPE = "https://model_signing/Digests/v0.1"
        /** The most files a statement may list (bounds the work before the first digest is compared). */
        private const val MAXIMUM_RESOURCES = 1_000_000
        private const val MAXIMUM_IGNORE_PATHS = 4096
        /** How deeply a statement's JSON may nest (it needs 5 levels). */
        private const val MAXIMUM_DEPTH = 8

        /**
         * Parses a DSSE payload: hostile even though it is read only after its signature is
         * checked. Every member is typed; the predicate may carry members a later version adds
         * (v1.0 says to ignore them). The subject digest must be the SHA-256 over the listed
         * resource digests. Throws [FieldError].
         */
        internal fun parse(payload: ByteArray): ModelSigningStatement {
            val json = try {
                Json.parse(payload, MAXIMUM_DEPTH)
            } catch (error: JsonException) {
                if (error.tooDeep) throw FieldError("(document)", "", error.reason)
                throw FieldError("payload", "(${payload.size} bytes)", "is not JSON")
            }
            val root = BundleFields(json, "payload", setOf("_type", "subject", "predicateType", "predicate"))
            root.constant("_type", STATEMENT_TYPE)
            val type = root.string("predicateType")
            if (type != PREDICATE_TYPE) {
                throw FieldError(root.path("predicateType"), quoted(type),
                    if (type == COMPAT_PREDICATE_TYPE) "is model_signing 0.2's format, which is not supported (re-sign with model_signing 1.x or modelcast)"
                    else "is not '$PREDICATE_TYPE'")
            }
            val subjects = root.array("subject", 16)
            if (subjects.size != 1) throw FieldError(root.path("subject"), "(${subjects.size} entries)", "must have exactly one entry (the model)")
            val subject = BundleFields(subjects[0], "payload.subject[0]", setOf("name", "digest"))
            val name = subject.string("name")
            val subjectDigest = subject.obj("digest", setOf("sha256")).digest("sha256")
            val predicate = root.obj("predicate", null)
            val serialization = predicate.obj("serialization", setOf("method", "hash_type", "allow_symlinks", "ignore_paths", "shard_size"))
            val method = serialization.string("method")
            if (method != "files") {
                throw FieldError(serialization.path("method"), quoted(method),
                    if (method == "shards") "is not supported: only whole-file ('files') signatures are (sign without sharding)" else "is not 'files'")
            }
            serialization.constant("hash_type", "sha256", "is not supported: only 'sha256' is (sign with the default hash)")
            val allowSymlinks = serialization.bool("allow_symlinks")
            val ignorePaths = if (!serialization.has("ignore_paths")) emptyList() else
                serialization.array("ignore_paths", MAXIMUM_IGNORE_PATHS).mapIndexed { index, item ->
                    val field = serialization.path("ignore_paths") + "[$index]"
                    val text = BundleFields.string(item, field)
                    ModelFilePath.parse(text) ?: throw FieldError(field, quoted(text), ModelFilePath.rule(text)!!)
                }
            val statement = ModelSigningStatement(name, resources(predicate), ignorePaths, allowSymlinks)
            val computed = statement.rootDigest()
            if (computed != subjectDigest) {
                throw FieldError("payload.subject[0].digest.sha256", quoted(subjectDigest),
                    "is not the SHA-256 of the listed resource digests ($computed): the statement is inconsistent")
            }
            return statement
        }

        /** `predicate.resources`: each file once, with its SHA-256. */
        private fun resources(predicate: BundleFields): List<ModelSigningResource> {
            val items = predicate.array("resources", MAXIMUM_RESOURCES)
            val seen = HashSet<ModelFilePath>()
            val resources = ArrayList<ModelSigningResource>(items.size)
            items.forEachIndexed { index, item ->
                val entry = BundleFields(item, predicate.path("resources") + "[$index]", setOf("name", "algorithm", "digest"))
                entry.constant("algorithm", "sha256")
                val text = entry.string("name")
                val path = ModelFilePath.parse(text) ?: throw FieldError(entry.path("name"), quoted(text), ModelFilePath.rule(text)!!)
                if (!seen.add(path)) throw FieldError(entry.path("name"), quoted(path.rawValue), "is listed twice")
                resources.add(ModelSigningResource(path, entry.digest("digest")))
            }
            if (ModelFilePath.WHOLE_FILE in seen && resources.size > 1) {
                throw FieldError(predicate.path("resources"), "'.'", "names a single-file model's file beside other files")
            }
            return resources
        }

        private fun hexBytes(hex: String): ByteArray = ByteArray(hex.length / 2) { hex.substring(2 * it, 2 * it + 2).toInt(16).toByte() }
    }
}
