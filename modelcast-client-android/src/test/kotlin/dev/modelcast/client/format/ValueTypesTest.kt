package dev.modelcast.client.format

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File
import java.time.Instant

/** The value types' rules at their edges (the manifest vectors cover them inside a manifest). */
class ValueTypesTest {
    private fun refusal(make: () -> Any): ManifestValueException = assertThrows(ManifestValueException::class.java) { make() }

    @Test
    fun pathSegments() {
        assertEquals("é日本.bin", PathSegment("é日本.bin").text)
        assertEquals("..m.bin", PathSegment("..m.bin").text)
        assertEquals("a b", PathSegment("a b").text)
        assertEquals("é".repeat(127), PathSegment("é".repeat(127)).text)
        assertTrue(refusal { PathSegment("é".repeat(128)) }.reason.contains("longer than 255 bytes (256)"))
        assertTrue(refusal { PathSegment("e\u0301") }.reason.contains("normal form C"))
        assertTrue(refusal { PathSegment("\u2024\uFF0E.") }.reason.contains("only of dots"))
        assertTrue(refusal { PathSegment("a\u29F5b") }.reason.contains("(U+29F5)"))
        assertTrue(refusal { PathSegment("a\u00A0b") }.reason.contains("invisible character (U+A0)"))  // a space other than U+0020
        assertTrue(refusal { PathSegment("a\uE000b") }.reason.contains("(U+E000)"))  // private use
        assertTrue(refusal { PathSegment("a\uD800b") }.reason.contains("(U+D800)"))  // a lone surrogate made by code
        assertEquals("", refusal { PathSegment("") }.field)
    }

    @Test
    fun relativePaths() {
        val path = RelativePath("Data/é/w.bin")
        assertEquals(listOf("Data", "é", "w.bin"), path.segments.map { it.text })
        assertEquals(File(File(File(File("/base"), "Data"), "é"), "w.bin"), path.appendedTo(File("/base")))
        assertTrue(refusal { RelativePath("a/") }.reason.contains("has a segment '' that is empty"))
        assertTrue(refusal { RelativePath("a/../b") }.reason.contains("has a segment '..'"))
        assertTrue(refusal { RelativePath("/a") }.reason.contains("absolute"))
        assertTrue(refusal { RelativePath("k".repeat(1025)) }.reason.contains("longer than 1024 bytes"))
        val longest = List(5) { "k".repeat(204) }.joinToString("/")
        assertEquals(1024, RelativePath(longest).text.length)
    }

    /** Accepted and refused as Swift 6.3's URL parser and the Swift client's rules took them (probed). */
    @Test
    fun httpUrls() {
        val accepted = mapOf(
            "https://cdn.example.com/m.bin" to "cdn.example.com", "HTTPS://cdn.example.com/m.bin" to "cdn.example.com",
            "http://host:8080" to "host", "http://[::1]:80/x" to "::1", "http://host/a%zz" to "host", "http://host/a\"b<c>{d}|e^f`g" to "host",
            "http://host:99999/x" to "host", "http://host:/x" to "host", "http://host?x" to "host", "http://host#x" to "host", "http://ho_st.~/x" to "ho_st.~")
        for ((text, host) in accepted) {
            val url = HttpUrl(text)
            assertEquals(host, url.host, text)
            assertTrue(url.scheme == "http" || url.scheme == "https", text)
        }
        val refused = mapOf(
            "http://" to "has no host", "http:///path" to "has no host", "http://:80/x" to "has no host", "http:host/x" to "has no host",
            "http://@host/x" to "user name or password", "http://user@host/x" to "user name or password", "http://:@host/x" to "user name or password",
            "http://a@b@c/x" to "user name or password", "http://host:port/x" to "cannot be read", "http://ho^st/x" to "cannot be read",
            "http://[::1/x" to "cannot be read", "http://host:-1/x" to "cannot be read", "http://host\\path" to "cannot be read",
            "https//host/x" to "not an absolute URL", "1http://host/x" to "not an absolute URL", "ftp://host/x" to "scheme 'ftp'",
            "https://host/a b" to "spaces, control or non-ASCII")
        for ((text, reason) in refused) assertTrue(refusal { HttpUrl(text) }.reason.contains(reason), text)
        // The credentials never reach the message.
        val error = refusal { HttpUrl("https://user:secret@cdn.example.com/m.bin") }
        assertEquals("https://…@cdn.example.com…", error.value)
    }

    @Test
    fun timestamps() {
        assertEquals(Instant.ofEpochSecond(1767225600), Timestamp("2026-01-01T00:00:00Z").instant)
        assertEquals(Instant.ofEpochSecond(1767225600, 250_000_000), Timestamp("2026-01-01T00:00:00.250Z").instant)
        assertEquals(Instant.ofEpochSecond(1767218400), Timestamp("2026-01-01T00:00:00+02:00").instant)
        assertEquals(Instant.ofEpochSecond(1767231000), Timestamp("2026-01-01T00:00:00-01:30").instant)
        assertEquals(Instant.ofEpochSecond(1767225600), Timestamp("2026-01-01t00:00:00z").instant)
        assertEquals(Instant.ofEpochSecond(1709164800), Timestamp("2024-02-29T00:00:00Z").instant)
        assertEquals(Instant.ofEpochSecond(1767225600, 123456789), Timestamp("2026-01-01T00:00:00.1234567891Z").instant)
        for (text in listOf("2026-02-29T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T23:59:60Z", "2026-01-01T00:00:00", "2026-01-01T00:00:00+0200",
                "2026-01-01T00:00:00+02", "2026-01-01 00:00:00Z", " 2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z ", "2026/01/01T00:00:00Z",
                "26-01-01T00:00:00Z", "2026-1-1T0:0:0Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00UTC", "２０２６-01-01T00:00:00Z",
                "2026-01-01T00:00:00+24:00", "2026-13-01T00:00:00Z", "2026-01-01T00:00:00." + "1".repeat(50) + "Z")) {
            assertNull(Timestamp.parse(text), text)
        }
        assertEquals("2026-11-22T03:00:00Z", Timestamp.format(Instant.parse("2026-11-22T03:00:00.900Z")))
        assertTrue(Timestamp("2026-01-01T00:00:00Z") < Timestamp("2026-01-01T00:00:00.001Z"))
        assertEquals(Timestamp("2026-01-01T02:00:00+02:00"), Timestamp("2026-01-01T00:00:00Z"))
    }

    @Test
    fun namesDigestsAndSizes() {
        assertEquals("A.b_c-1", ModelName("A.b_c-1").text)
        assertTrue(ModelName("a") < ModelName("b"))
        refusal { ModelName("..") }
        refusal { ModelName("n".repeat(129)) }
        assertEquals("0-beta", ChannelName("0-beta").text)
        refusal { ChannelName("Beta") }
        refusal { ChannelName("b".repeat(65)) }
        val digest = "53200ef98d9149b943537a56536ec256c0b17b6ba8b1aefc091a222dc61f51c6"
        assertEquals(digest, Sha256Hex(digest).toDigest().hex)
        assertTrue(refusal { Sha256Hex(digest.map { if (it in 'a'..'f') it - 32 else it }.joinToString("")) }.reason.contains("lowercase"))
        assertEquals(ByteSize.MAXIMUM, ByteSize(1L shl 53).bytes)
        refusal { ByteSize((1L shl 53) + 1) }
        refusal { ByteSize(-1) }
        assertEquals(DownloadPolicy.ON_DEMAND, DownloadPolicy.parse("on-demand"))
        assertTrue(DownloadPolicy.ESSENTIAL < DownloadPolicy.PREFETCH)
        refusal { DownloadPolicy.parse("ON-DEMAND") }
    }

    @Test
    fun versionsBeyondTheVectors() {
        // semver.org's own precedence example.
        val ordered = listOf("1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0")
            .map { ModelVersion(it).semantic }
        assertEquals(ordered, ordered.shuffled(java.util.Random(7)).sorted())
        // Unsigned 64-bit numbers, compared as such.
        assertTrue(ModelVersion("9223372036854775807.0.0").semantic < ModelVersion("18446744073709551615.0.0").semantic)
        refusal { ModelVersion("18446744073709551616.0.0") }
        assertEquals(ModelVersion("1.0.0+a").semantic, ModelVersion("1.0.0+b").semantic)
        assertTrue(ModelVersion("1.0.0+a") != ModelVersion("1.0.0+b"))
        // An app version's build part is not read; numbers may have leading zeros.
        assertEquals(AppVersion("1.2"), AppVersion("1.02.0+any text at all"))
        assertEquals(AppVersion("1.0-1"), AppVersion("1.0-01"))
        assertTrue(AppVersion("1.0-99999999999999999999") > AppVersion("1.0-18446744073709551615"))  // past 64 bits: compared as text
        refusal { AppVersion("1" + ".0".repeat(32)) }
    }
}
