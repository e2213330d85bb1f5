package dev.modelcast.client.format

import java.io.File

/**
 * The shared test vectors (`conformance/vectors/`) of the checkout the build runs in, read
 * with this package's own JSON reader. A member missing or of another type reads as an empty
 * value, so a vector of the wrong shape fails the comparison that uses it, naming the vector.
 */
object Vectors {
    val root: File = File(System.getProperty("modelcast.repository") ?: error("-Dmodelcast.repository is not set (run ./build)"), "conformance/vectors")

    fun bytes(path: String): ByteArray = File(root, path).readBytes()

    // The vector files themselves nest deeper than a manifest may (they hold the 65-level one).
    fun load(path: String): JsonValue = Json.parse(bytes(path), maxDepth = 1000)
}

/** Member [key] of an object, or null. */
operator fun JsonValue.invoke(key: String): JsonValue = (this as? JsonValue.Object)?.get(key) ?: JsonValue.Null

val JsonValue.text: String get() = stringValue ?: ""
val JsonValue.optionalText: String? get() = stringValue
val JsonValue.integer: Long get() = (this as? JsonValue.Integer)?.value ?: Long.MIN_VALUE
val JsonValue.optionalInteger: Long? get() = (this as? JsonValue.Integer)?.value
val JsonValue.flag: Boolean get() = (this as? JsonValue.Bool)?.value ?: false
val JsonValue.items: List<JsonValue> get() = (this as? JsonValue.Array)?.items ?: emptyList()
val JsonValue.members: Map<String, JsonValue> get() = (this as? JsonValue.Object)?.members ?: emptyMap()

fun obj(vararg members: Pair<String, JsonValue>): JsonValue = JsonValue.Object(linkedMapOf(*members))
fun str(text: String): JsonValue = JsonValue.Text(text)

/** The object with [key] set to [value] (in place, or added last). */
fun JsonValue.setting(key: String, value: JsonValue): JsonValue = JsonValue.Object(LinkedHashMap(members).also { it[key] = value })

fun hex(bytes: ByteArray): String = bytes.joinToString("") { String.format("%02x", it.toInt() and 0xFF) }
