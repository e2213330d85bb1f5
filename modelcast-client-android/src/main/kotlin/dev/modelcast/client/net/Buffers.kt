package dev.modelcast.client.net

import java.nio.Buffer
import java.nio.ByteBuffer

// ByteBuffer's clear(), flip() and limit(Int) return ByteBuffer only since Java 9; compiled
// against a newer JDK, a call names that override, which Android's ByteBuffer lacks before
// API 34 (NoSuchMethodError at run time). Calling them through Buffer names the methods
// every Java and Android version has.

/** `clear()` through `Buffer`: position 0, limit at the capacity. */
internal fun ByteBuffer.clearForAnyJava(): ByteBuffer { (this as Buffer).clear(); return this }

/** `flip()` through `Buffer`: limit at the position, position 0. */
internal fun ByteBuffer.flipForAnyJava(): ByteBuffer { (this as Buffer).flip(); return this }

/** `limit(n)` through `Buffer`. */
internal fun ByteBuffer.limitForAnyJava(limit: Int): ByteBuffer { (this as Buffer).limit(limit); return this }

/** `rewind()` through `Buffer`: position 0, the limit kept. */
internal fun ByteBuffer.rewindForAnyJava(): ByteBuffer { (this as Buffer).rewind(); return this }
