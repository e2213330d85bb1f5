package dev.modelcast.client.trust

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** conformance/vectors/minisign (see its README): every vector, read with this package's own types. */
class MinisignVectorsTest {
    @Test
    fun everySignatureHasItsOutcome() {
        val vectors = Vectors.json("minisign/minisign.json")
        val keys = HashMap<String, MinisignPublicKey>()
        for ((name, entry) in vectors.getValue("keys").obj()) {
            val file = entry.obj().getValue("file") as String
            val key = MinisignPublicKey.parse(Vectors.text("minisign/$file"), file)
            assertEquals(entry.obj()["key_id"], key.keyId.hex, name)
            assertEquals(entry.obj()["public_key"], key.base64, name)
            // The bare line reads as the same key.
            assertEquals(key, MinisignPublicKey.parse(key.base64, "$name (base64)"), name)
            keys[file] = key
        }
        assertEquals(3, keys.size)
        val signatures = vectors.getValue("signatures").list()
        assertEquals(28, signatures.size)
        val failures = ArrayList<String>()
        for (item in signatures) {
            val vector = item.obj()
            val label = vector.getValue("name") as String
            val message = Vectors.bytes("minisign/" + vector["message"])
            val text = Vectors.text("minisign/" + vector["signature"])
            val trusted = vector.getValue("trusted_keys").list().map { keys.getValue(it as String) }
            val outcome = try {
                val verified = MinisignSignature.parse(text, label).verify(message, trusted, label)
                if (verified.publicKey != keys[vector["signer"]]) failures.add("$label: signed by ${verified.publicKey}")
                if (verified.trustedComment != vector["trusted_comment"]) failures.add("$label: comment ${verified.trustedComment}")
                "valid"
            } catch (error: TrustError.MalformedSignature) {
                "malformed"
            } catch (error: TrustError.LegacySignatureRefused) {
                "legacy-refused"
            } catch (error: TrustError.UnsupportedSignatureAlgorithm) {
                "unsupported-algorithm"
            } catch (error: TrustError.UntrustedSigningKey) {
                "untrusted-key"
            } catch (error: TrustError.SignatureMismatch) {
                "signature-mismatch"
            } catch (error: TrustError.TrustedCommentMismatch) {
                "trusted-comment-mismatch"
            }
            if (outcome != vector["outcome"]) failures.add("$label: $outcome, expected ${vector["outcome"]}")
        }
        assertEquals(emptyList<String>(), failures)
    }

    @Test
    fun everyTrustedCommentParsesAsTheVectorsSay() {
        val vectors = Vectors.json("minisign/trusted-comments.json")
        val parse = vectors.getValue("parse").list()
        assertEquals(20, parse.size)
        for (item in parse) {
            val vector = item.obj()
            val label = vector.getValue("why") as String
            val comment = TrustedComment.parse(vector.getValue("comment") as String)
            val parsed = vector["parsed"]
            if (parsed == null) {
                assertNull(comment, label)
                continue
            }
            assertNotNull(comment, label)
            val fields = parsed.obj()
            assertEquals(fields["timestamp"], comment!!.timestamp, label)
            assertEquals(fields["file"], comment.file, label)
            assertEquals(fields["sequence"], comment.sequence, label)
            assertEquals(fields["version"], comment.version, label)
            assertEquals(fields["expires_at"], comment.expiresAt, label)
            // What modelcast writes reads back the same.
            assertEquals(comment, TrustedComment.parse(comment.text), label)
        }
    }

    @Test
    fun everyBindingFindsItsProblemsInOrder() {
        val bindings = Vectors.json("minisign/trusted-comments.json").getValue("bindings").list()
        assertEquals(11, bindings.size)
        for (item in bindings) {
            val vector = item.obj()
            val comment = TrustedComment.parse(vector.getValue("comment") as String)!!
            val manifest = vector.getValue("manifest").obj()
            val problems = comment.problems(
                manifest["sequence"] as Long, manifest["expires_at"] as String?,
                manifest.getValue("channel") as String, manifest.getValue("manifest_name") as String
            )
            assertEquals(vector["problems"], problems.map { it.field.vectorName }, vector.toString())
            assertTrue(problems.all { it.reason.isNotEmpty() })
        }
    }
}
