package dev.modelcast.client.trust

import java.io.File

/** The conformance vectors' folder (`modelcast.repository` is set by the build script). */
object Vectors {
    val root: File = File(System.getProperty("modelcast.repository") ?: error("run through ./build: modelcast.repository is not set"), "conformance/vectors")

    fun file(path: String): File = File(root, path)
    fun bytes(path: String): ByteArray = file(path).readBytes()
    fun text(path: String): String = String(bytes(path), Charsets.UTF_8)
    @Suppress("UNCHECKED_CAST")
    fun json(path: String): Map<String, Any?> = TestJson.parse(text(path)) as Map<String, Any?>
}

fun hex(text: String): ByteArray = ByteArray(text.length / 2) { text.substring(2 * it, 2 * it + 2).toInt(16).toByte() }

@Suppress("UNCHECKED_CAST")
fun Any?.obj(): Map<String, Any?> = this as Map<String, Any?>
@Suppress("UNCHECKED_CAST")
fun Any?.list(): List<Any?> = this as List<Any?>

/** A small JSON reader for the tests' vector files (numbers as Long, or Double when fractional). */
object TestJson {
    fun parse(text: String): Any? {
        val reader = Reader(text)
        val value = reader.value()
        reader.space()
        check(reader.at == text.length) { "trailing text at ${reader.at}" }
        return value
    }

    private class Reader(val s: String) {
        var at = 0
        fun space() { while (at < s.length && s[at].isWhitespace()) at++ }
        fun value(): Any? {
            space()
            return when (s[at]) {
                '{' -> {
                    at++
                    val map = LinkedHashMap<String, Any?>()
                    space()
                    if (s[at] == '}') { at++; return map }
                    while (true) {
                        space()
                        val key = value() as String
                        space(); check(s[at++] == ':')
                        map[key] = value()
                        space()
                        if (s[at++] == '}') return map
                    }

                }
                '[' -> {
                    at++
                    val list = ArrayList<Any?>()
                    space()
                    if (s[at] == ']') { at++; return list }
                    while (true) {
                        list.add(value())
                        space()
                        if (s[at++] == ']') return list
                    }

                }
                '"' -> {
                    at++
                    val out = StringBuilder()
                    while (s[at] != '"') {
                        if (s[at] == '\\') {
                            at++
                            when (val c = s[at++]) {
                                'n' -> out.append('\n'); 't' -> out.append('\t'); 'r' -> out.append('\r')
                                'b' -> out.append('\b'); 'f' -> out.append('\u000c')
                                'u' -> { out.append(s.substring(at, at + 4).toInt(16).toChar()); at += 4 }
                                else -> out.append(c)
                            }
                        } else out.append(s[at++])
                    }
                    at++
                    out.toString()
                }
                't' -> { at += 4; true }
                'f' -> { at += 5; false }
                'n' -> { at += 4; null }
                else -> {
                    val start = at
                    while (at < s.length && (s[at].isDigit() || s[at] in "+-.eE")) at++
                    val number = s.substring(start, at)
                    number.toLongOrNull() ?: number.toDouble()
                }
            }
        }
    }
}

/** The median of [runs] timings of [body], in milliseconds, after [warmUp] untimed runs. */
fun medianMillis(runs: Int = 100, warmUp: Int = 200, body: () -> Unit): Double {
    repeat(warmUp) { body() }
    val times = LongArray(runs) {
        val start = System.nanoTime()
        body()
        System.nanoTime() - start
    }
    times.sort()
    return times[runs / 2] / 1e6
}

fun ByteArray.hexString(): String = joinToString("") { String.format("%02x", it.toInt() and 0xff) }

/** A PEM PUBLIC KEY (SubjectPublicKeyInfo, id-ecPublicKey, prime256v1) holding [point] as given, 64-column lines. */
fun p256Pem(point: ByteArray): String {
    val identifier = hex("301306072a8648ce3d020106082a8648ce3d030107")
    val bits = byteArrayOf(0x03, (point.size + 1).toByte(), 0) + point
    val body = identifier + bits
    val der = byteArrayOf(0x30, body.size.toByte()) + body
    return "-----BEGIN PUBLIC KEY-----\n" + java.util.Base64.getEncoder().encodeToString(der).chunked(64).joinToString("\n") +
        "\n-----END PUBLIC KEY-----\n"
}
