package dev.modelcast.client.net

import java.util.TreeMap

/**
 * A GET to send: its URL (http or https) and its own headers (`Range`, `If-Range`,
 * `If-None-Match`). `Accept-Encoding: identity` is always sent, so what is hashed is the
 * object as stored, never a re-encoding of it.
 */
data class HttpRequest(val url: String, val headers: Map<String, String> = emptyMap())

/**
 * A response's head. [url] is where the answer came from (after redirects); errors name the
 * URL that was asked for. Header names are case-insensitive.
 */
class HttpResponse(val url: String, val status: Int, headers: Map<String, List<String>>) {
    private val fields = TreeMap<String, List<String>>(String.CASE_INSENSITIVE_ORDER).apply { putAll(headers) }

    /** Every header, by name (case-insensitive). */
    val headers: Map<String, List<String>> get() = fields

    /**
     * The header's value; a header sent more than once reads as its values joined by ", "
     * (as HTTP combines them), so an exact comparison (a Content-Range) fails on a repeat.
     */
    fun header(name: String): String? = fields[name]?.takeIf { it.isNotEmpty() }?.joinToString(", ")

    /** The Content-Length, when there is exactly one that is a number of 0 or more. */
    val contentLength: Long?
        get() {
            val values = fields["Content-Length"] ?: return null
            if (values.size != 1) return null
            val text = values[0].trim()
            if (text.isEmpty() || !text.all { it in '0'..'9' } || text.length > 18) return null
            return text.toLong()
        }

    /** True when the body comes in chunks (its Content-Length, if any, does not frame it). */
    internal val chunked: Boolean
        get() = fields["Transfer-Encoding"]?.any { asciiLowercase(it).contains("chunked") } == true

    override fun toString(): String = "HTTP $status from $url"
}

/**
 * What a request does with its answer, called on the request's own thread, one call at a
 * time, never after the request has ended (a bound, a cancel, a throw). Throwing from any
 * of them ends the request with that error at once, and its connection is closed.
 */
interface BodyReceiver {
    /** The response head, before any byte of the body. */
    fun onResponse(response: HttpResponse)

    /** The next `count` bytes of the body, in `buffer` from 0: valid only during the call. */
    fun onData(buffer: ByteArray, count: Int)

    /**
     * The most bytes the next read may ask for: one more than the receiver still accepts,
     * so a body longer than it should be is seen at once and never read much past its
     * bound. The default reads a full buffer.
     */
    fun readLimit(): Long = Long.MAX_VALUE
}
