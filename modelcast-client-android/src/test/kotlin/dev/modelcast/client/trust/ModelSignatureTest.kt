package dev.modelcast.client.trust

import dev.modelcast.client.ClientError
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files

class ModelSignatureTest {
    private val signerPem = Vectors.text("model-signature/keys/signer.pub")
    private val signer = ModelSigningPublicKey.parse(signerPem)
    private val directoryBundle = Vectors.bytes("model-signature/bundles/directory.sig")

    @Test
    fun theCanonicalPemIsWhatOpenSslWrites() {
        assertEquals(signerPem, signer.canonicalPem)
        // CRLF line ends and surrounding text do not change the key.
        assertEquals(signer, ModelSigningPublicKey.parse("key:\r\n" + signerPem.replace("\n", "\r\n") + "trailing"))
        assertNotEquals(signer, ModelSigningPublicKey.parse(Vectors.text("model-signature/keys/other.pub")))
    }

    @Test
    fun otherKeysAreRefusedWithTheReason() {
        fun reason(pem: String) = assertThrows(ClientError.InvalidModelSigningKey::class.java) { ModelSigningPublicKey.parse(pem) }.reason
        assertEquals("not a PEM file (no -----BEGIN PUBLIC KEY----- line)", reason("MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE"))
        assertEquals("this is a private key ('PRIVATE KEY'); a device needs only the public key (PEM PUBLIC KEY)",
            reason(Vectors.text("model-signature/keys/signer.pem")))
        assertEquals("holds a PEM 'CERTIFICATE', not a PUBLIC KEY", reason("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
        assertEquals("the PEM PUBLIC KEY has no -----END PUBLIC KEY----- line", reason(signerPem.replace("-----END PUBLIC KEY-----", "")))
        assertEquals("the PEM PUBLIC KEY's body is not base64", reason("-----BEGIN PUBLIC KEY-----\nnot*base64\n-----END PUBLIC KEY-----\n"))
        assertEquals("the PEM PUBLIC KEY does not hold a DER SubjectPublicKeyInfo", reason("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
        assertEquals("the key's algorithm is RSA; model signatures use ECDSA P-256 (prime256v1) keys", reason("""
            -----BEGIN PUBLIC KEY-----
            MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDje/xQ5QcGQy5dTdeARcxywRuh
            qTdMoXpNsuyxlXt6sxZwvOwJurKkxXESYsYxaJYP2woGw2C4meMZLg6ZuqfXUYsG
            zfPfJUBIA9v4BQW8rkD43BA07O0T8LX+RvJteN/0Feo2HLl6IrGOxk5R1m5COSWh
            wPov1Y9+SVYYzhX0owIDAQAB
            -----END PUBLIC KEY-----
            """))
        assertEquals("the key is an EC key on curve secp384r1; only P-256 (prime256v1) is supported", reason("""
            -----BEGIN PUBLIC KEY-----
            MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE9fkPiKrqTTYJNcjYFLpDBOG2hFdG9svg
            AzWsu6BGDVPm1vMAkvkLCP+nk6K2/MH9BzdaVTXKtpyypQLAXOUHLU8EFEq27TUL
            O51IUHEIuO67OrCPlf40pBS3SEdIWUaz
            -----END PUBLIC KEY-----
            """))
        assertEquals("the key's algorithm is Ed25519; model signatures use ECDSA P-256 (prime256v1) keys",
            reason("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEARlUOD/4aEZNnXOA4WFLcJp4gBrRUMta1VRMUfCwOXK0=\n-----END PUBLIC KEY-----\n"))
        val point = java.util.Base64.getMimeDecoder().decode(signerPem.lines().filter { !it.startsWith("-----") }.joinToString("")).copyOfRange(26, 91)
        point[64] = (point[64].toInt() xor 1).toByte()
        assertEquals("its point is not on the P-256 curve", reason(p256Pem(point)))
        assertEquals("its point is neither an uncompressed (65 bytes) nor a compressed (33 bytes) P-256 point", reason(p256Pem(point.copyOf(64))))
        // A compressed x = 1: x³ − 3x + b is no square, so no point has it.
        assertEquals("its point is not on the P-256 curve", reason(p256Pem(byteArrayOf(0x02) + ByteArray(31) + byteArrayOf(1))))
    }

    @Test
    fun theClientLayerReportsClientErrors() {
        val statement = ModelSignatureCheck.verifiedStatement(directoryBundle, signer, "tiny", "1.0.0", "https://h/b.json")
        assertEquals("tiny-model", statement.modelName)
        assertEquals(statement.rootDigest(), "5c53cbf983a609d1c6b368e9e10644aaa6bcfa4526f28dfe3cae782bac36862b")
        val other = ModelSigningPublicKey.parse(Vectors.text("model-signature/keys/other.pub"))
        val untrusted = assertThrows(ClientError.ModelSignatureUntrustedKey::class.java) {
            ModelSignatureCheck.verifiedStatement(directoryBundle, other, "tiny", "1.0.0", "https://h/b.json")
        }
        assertEquals(signer.hint, untrusted.keyHint)
        assertEquals(other.hint, untrusted.pinnedHint)
        val bad = assertThrows(ClientError.BadModelSignature::class.java) {
            ModelSignatureCheck.verifiedStatement(Vectors.bytes("model-signature/bundles/two-signatures.sig"), signer, "tiny", "1.0.0", "https://h/b.json")
        }
        assertEquals("model signature https://h/b.json: bundle.dsseEnvelope.signatures: (2 entries) must have exactly one signature", bad.reason)
        assertTrue(bad.cause is TrustError.MalformedModelSignature)
    }

    @Test
    fun compareNamesEveryDifferenceAndProblem() {
        val statement = ModelSignatureBundle.parse(directoryBundle, "b").verifiedStatement(signer, "b")
        val installed = InstalledFiles.of(listOf(
            "README.md" to "9B6164A7C8606EEFC76F0BD84106F98346E113EECA93C14A9828FC3F6BBBFFA4",  // either case
            "weights/w.bin" to "0".repeat(64),
            "weights/extra.bin" to "1".repeat(64),
            ".git/HEAD" to "2".repeat(64),  // ignored
            "../escape" to "3".repeat(64)
        ), statement.ignorePaths)
        val error = assertThrows(ClientError.ModelSignatureMismatch::class.java) { ModelSignatureCheck.compare(statement, installed, "tiny", "1.0.0") }
        assertEquals(listOf(
            "'weights/w.bin' changed (signed sha256 e63f0c3d6bf7c8e73d6c688272d18fc28fbd20051c6b1c9d5e3f590fa8f786f0, now ${"0".repeat(64)})",
            "missing 'config.json' (signed, not in the model)",
            "extra 'weights/extra.bin' (in the model, not signed)",
            "'../escape' is a name model signing cannot hold"
        ), error.differences)
        assertThrows(IllegalArgumentException::class.java) { InstalledFiles.of(listOf("a" to "xyz"), emptyList()) }
    }

    @Test
    fun aScanReportsWhatModelSigningCannotHold() {
        val directory = Files.createTempDirectory("model")
        try {
            Files.write(directory.resolve("a.bin"), byteArrayOf(1))
            Files.createDirectories(directory.resolve(".git"))
            Files.write(directory.resolve(".git/HEAD"), byteArrayOf(2))
            Files.createSymbolicLink(directory.resolve("link"), directory.resolve("a.bin"))
            val scanned = InstalledFiles.scan(directory, listOf(ModelFilePath.parse(".git")!!),
                known = mapOf(ModelFilePath.parse("a.bin")!! to "f".repeat(64)))
            assertEquals(mapOf(ModelFilePath.parse("a.bin")!! to "f".repeat(64)), scanned.digests, "a known digest is not read again")
            assertEquals(listOf("'link' is not a regular file (model signing signs regular files only)"), scanned.problems)
            assertEquals(mapOf(ModelFilePath.WHOLE_FILE to "4bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a"),
                InstalledFiles.scan(directory.resolve("a.bin"), emptyList()).digests)
            assertEquals(emptyMap<ModelFilePath, String>(), InstalledFiles.scan(directory.resolve("absent"), emptyList()).digests)
        } finally {
            directory.toFile().deleteRecursively()
        }
    }

    @Test
    fun modelFileNamesAreRelativeAndNormalised() {
        assertNull(ModelFilePath.rule("."))
        assertNull(ModelFilePath.rule("a/b.txt"))
        assertEquals("is empty", ModelFilePath.rule(""))
        assertEquals("is an absolute path (a model's files are named relative to it)", ModelFilePath.rule("/etc/passwd"))
        assertEquals("has an empty path component (a doubled or trailing /)", ModelFilePath.rule("a//b"))
        assertEquals("has an empty path component (a doubled or trailing /)", ModelFilePath.rule("a/"))
        assertEquals("has a . or .. component", ModelFilePath.rule("a/../../b"))
        assertEquals("has a . or .. component", ModelFilePath.rule("./a"))
        assertEquals("contains a control character", ModelFilePath.rule("a\nb"))
        assertEquals("is longer than 4096 bytes", ModelFilePath.rule("é".repeat(2049)))
        // model_signing's order: by component, each by code point (an astral character after U+FFFD).
        val names = listOf("a-b", "a/b", "a.txt", "\uFFFD", "\uD83D\uDE00", "a").map { ModelFilePath.parse(it)!! }
        assertEquals(listOf("a", "a/b", "a-b", "a.txt", "\uFFFD", "\uD83D\uDE00"), names.sorted().map { it.rawValue })
        assertTrue(ModelFilePath.parse(".git/HEAD")!!.isWithin(ModelFilePath.parse(".git")!!))
        assertTrue(!ModelFilePath.parse(".github")!!.isWithin(ModelFilePath.parse(".git")!!))
        assertTrue(!ModelFilePath.parse("a")!!.isWithin(ModelFilePath.WHOLE_FILE))
    }

    @Test
    fun hostileJsonIsRefusedBeforeItIsRead() {
        fun field(json: String) = assertThrows(TrustError.MalformedModelSignature::class.java) {
            ModelSignatureBundle.parse(json.toByteArray(), "b")
        }
        assertEquals("(document)", field("[".repeat(9) + "]".repeat(9)).field)
        // A repeated member could be read two ways: refused as no JSON.
        val repeated = field("{\"mediaType\": \"a\", \"mediaType\": \"application/vnd.dev.sigstore.bundle.v0.3+json\"}")
        assertEquals("not JSON (80 bytes: truncated, or not a signature bundle)", repeated.reason)
        assertEquals("bundle.mediaType", field("{\"mediaType\": 1}").field)
        assertEquals("not JSON (3 bytes: truncated, or not a signature bundle)", field("{}x").reason)
        assertEquals("not JSON (6 bytes: truncated, or not a signature bundle)",
            assertThrows(TrustError.MalformedModelSignature::class.java) { ModelSignatureBundle.parse(byteArrayOf(0x22, 0xff.toByte(), 0x22, 0x20, 0x20, 0x20), "b") }.reason)
    }

    @Test
    fun aP256VerificationIsFast() {
        val bundle = ModelSignatureBundle.parse(directoryBundle, "b")
        val signed = bundle.signedBytes
        val signature = bundle.signature
        assertTrue(signer.isValidSignature(signature, signed))
        val median = medianMillis { signer.isValidSignature(signature, signed) }
        println("P-256 verify: median of 100 after warm-up: %.3f ms".format(median))
        assertTrue(median < 20.0, "median $median ms")
    }
}
