package dev.modelcast.client.testing

import java.nio.file.Files
import java.nio.file.Path
import java.security.MessageDigest
import java.util.Random

/** ASCII-lowered text (no locale, no version-dependent String API). */
fun lower(text: String): String = String(CharArray(text.length) { Character.toLowerCase(text[it]) })

/** Deterministic bytes. */
fun bytes(size: Int, seed: Long = 1): ByteArray = ByteArray(size).also { Random(seed).nextBytes(it) }

fun sha256Hex(bytes: ByteArray): String = MessageDigest.getInstance("SHA-256").digest(bytes).joinToString("") { String.format("%02x", it) }

/** Seconds a block took. */
inline fun <T> timed(body: () -> T): Pair<T, Double> {
    val start = System.nanoTime()
    val value = body()
    return Pair(value, (System.nanoTime() - start) / 1e9)
}

/** A fresh temporary directory. */
fun temporaryDirectory(prefix: String = "modelcast-test"): Path = Files.createTempDirectory(prefix)

/** The error `body` throws, which must be of type `T` (else the test fails naming what happened). */
inline fun <reified T : Throwable> thrown(body: () -> Unit): T {
    try {
        body()
    } catch (error: Throwable) {
        if (error is T) return error
        throw AssertionError("expected ${T::class.java.simpleName}, got ${error.javaClass.simpleName}: ${error.message}", error)
    }
    throw AssertionError("expected ${T::class.java.simpleName}, nothing was thrown")
}

/** Asserts a message reads as words: no exception class names, no Java package paths. */
fun assertPlainWords(message: String?) {
    val text = message ?: throw AssertionError("no message")
    if (text.contains("Exception") || text.contains("java.") || text.contains("sun.")) throw AssertionError("not plain words: $text")
}

/** The names in a directory (empty when there is none). */
fun names(directory: Path): Set<String> = directory.toFile().list()?.toSet() ?: emptySet()
