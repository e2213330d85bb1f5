package dev.modelcast.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File
import java.util.concurrent.TimeUnit

/**
 * The library's bytecode calls no method Android lacks. Compiled against JDK 17, a call to
 * `ByteBuffer.clear()` (or flip, limit(Int), position(Int), mark, reset, rewind) names the
 * override returning ByteBuffer that Java 9 added and Android only has from API 34: a
 * NoSuchMethodError on the devices this library supports (API 26+).
 */
class AndroidApiTest {
    @Test
    fun noBufferMethodOnlyJava9HasIsCalled() {
        val repository = System.getProperty("modelcast.repository") ?: error("run through modelcast-client-android/build")
        val jar = File(repository, "modelcast-client-android/out/modelcast-client.jar")
        assertTrue(jar.isFile, "$jar is not built")
        val process = ProcessBuilder("sh", "-c", "javap -c -p -classpath '${jar.path}' \$(unzip -Z1 '${jar.path}' | grep '\\.class\$' | sed 's/\\.class\$//; s#/#.#g')")
            .redirectErrorStream(true).start()
        val output = process.inputStream.bufferedReader().readText()
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "javap did not finish")
        assertEquals(0, process.exitValue(), output.takeLast(2000))
        val pattern = Regex("""Method java/nio/ByteBuffer\.(clear|flip|limit|position|mark|reset|rewind):\([I]?\)Ljava/nio/ByteBuffer;""")
        val calls = output.lines().filter { pattern.containsMatchIn(it) }
        assertTrue(calls.isEmpty(), "calls Android lacks before API 34:\n" + calls.joinToString("\n"))
    }
}
