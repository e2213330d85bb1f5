package dev.modelcast.client.trust

import dev.modelcast.client.ClientError
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

/** conformance/vectors/model-signature (see its README): every bundle, read with this package's own types. */
class ModelSignatureVectorsTest {
    @Test
    fun everyKeyHasItsHint() {
        val hints = Vectors.json("model-signature/model-signature.json").getValue("key_hints").obj()
        assertEquals(2, hints.size)
        for ((name, hint) in hints) {
            assertEquals(hint, ModelSigningPublicKey.parse(Vectors.text("model-signature/keys/$name.pub")).hint, name)
        }
    }

    @Test
    fun everyBundleHasItsOutcome() {
        val bundles = Vectors.json("model-signature/model-signature.json").getValue("bundles").list()
        assertEquals(26, bundles.size)
        val failures = ArrayList<String>()
        for (item in bundles) {
            val vector = item.obj()
            val label = vector.getValue("name") as String
            val key = ModelSigningPublicKey.parse(Vectors.text("model-signature/" + vector["public_key"]))
            val data = Vectors.bytes("model-signature/" + vector["bundle"])
            var field: String? = null
            // The client's order: parse, compare the hint, verify, then the statement; then the files.
            val outcome = try {
                val statement = ModelSignatureBundle.parse(data, label).verifiedStatement(key, label)
                val installed = InstalledFiles.scan(Vectors.file("model-signature/" + vector["model"]).toPath(), statement.ignorePaths)
                val differences = ModelSignatureDifferences(statement.files, installed.digests)
                val signed = vector.getValue("signed_files").list().map { it.obj() }
                if (statement.resources.map { it.path.rawValue } != signed.map { it["path"] }) failures.add("$label: paths ${statement.resources}")
                if (statement.resources.map { it.sha256 } != signed.map { it["sha256"] }) failures.add("$label: digests ${statement.resources}")
                if (statement.ignorePaths.map { it.rawValue }.sorted() != vector["ignore_paths"]) failures.add("$label: ignore paths ${statement.ignorePaths}")
                val kinds = differences.changed.map { listOf("changed", it.path.rawValue) } +
                    differences.missing.map { listOf("missing", it.rawValue) } + differences.extra.map { listOf("extra", it.rawValue) }
                val expected = (vector["differences"] ?: emptyList<Any?>()).list().map { listOf(it.obj()["kind"], it.obj()["path"]) }
                if (kinds != expected) failures.add("$label: differences $kinds")
                if (installed.problems.isNotEmpty()) failures.add("$label: problems ${installed.problems}")
                // The client layer says the same.
                val mismatch = try {
                    ModelSignatureCheck.compare(statement, installed, "m", "1.0.0")
                    null
                } catch (error: ClientError.ModelSignatureMismatch) {
                    error
                }
                if ((mismatch == null) != differences.isEmpty) failures.add("$label: compare said $mismatch")
                if (differences.isEmpty) "valid" else "files-differ"
            } catch (error: TrustError.MalformedModelSignature) {
                field = error.field ?: ""
                "malformed-bundle"
            } catch (error: TrustError.ModelSignatureUntrustedKey) {
                "untrusted-key"
            } catch (error: TrustError.ModelSignatureDoesNotVerify) {
                "bad-signature"
            } catch (error: TrustError.InvalidStatement) {
                field = error.field
                "invalid-statement"
            }
            if (outcome != vector["outcome"]) failures.add("$label: $outcome, expected ${vector["outcome"]}")
            val expectedField = vector["field"]
            if (expectedField != null && field != expectedField) failures.add("$label: field $field, expected $expectedField")
        }
        assertEquals(emptyList<String>(), failures)
    }
}
