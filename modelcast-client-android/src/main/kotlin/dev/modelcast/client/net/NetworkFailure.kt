package dev.modelcast.client.net

import java.io.EOFException
import java.io.IOException
import java.net.ConnectException
import java.net.HttpRetryException
import java.net.MalformedURLException
import java.net.NoRouteToHostException
import java.net.PortUnreachableException
import java.net.ProtocolException
import java.net.SocketException
import java.net.SocketTimeoutException
import java.net.URL
import java.net.UnknownHostException
import java.util.Locale
import javax.net.ssl.SSLException
import javax.net.ssl.SSLHandshakeException
import javax.net.ssl.SSLPeerUnverifiedException

/** Where a request was when it failed: the words differ (a timeout while connecting is not a silent server). */
internal enum class Phase { CONNECTING, WAITING, READING }

/**
 * A failed transfer's exception as a person reads it ("the server sent nothing for 30 s
 * (timed out)", "cannot connect to cdn.example.com:443 (connection refused)"), never an
 * exception's class name or a stack of them (TLS failures carry both). `url` names the host.
 */
internal fun networkFailureReason(error: Throwable, url: String, bounds: TransferBounds, phase: Phase): String {
    val parsed = try { URL(url) } catch (bad: MalformedURLException) { null }
    val host = parsed?.host ?: url
    val port = parsed?.let { if (it.port >= 0) it.port else it.defaultPort } ?: 80
    val message = asciiLowercase(error.message ?: "")
    return when {
        error is SocketTimeoutException && phase == Phase.CONNECTING ->
            "cannot connect to $host:$port within ${seconds(bounds.connectTimeoutSeconds)} s (timed out)"
        error is SocketTimeoutException -> "the server sent nothing for ${seconds(bounds.idleTimeoutSeconds)} s (timed out)"
        error is UnknownHostException -> "cannot find the host $host (name lookup failed)"
        error is ConnectException -> "cannot connect to $host:$port (connection refused)"
        error is NoRouteToHostException || error is PortUnreachableException -> "cannot reach $host:$port (no route to the host)"
        error is SSLPeerUnverifiedException || error is SSLHandshakeException && certificateProblem(error) ->
            "the certificate of $host is not trusted"
        error is SSLException -> "the TLS connection to $host could not be made"
        error is HttpRetryException -> "the server asked for credentials or a retry the client does not make (HTTP ${error.responseCode()})"
        error is ProtocolException || message.contains("invalid http response") || message.contains("invalid http header") ->
            "the server's answer is not valid HTTP"
        error is EOFException || message.contains("premature eof") || message.contains("unexpected end of file") ->
            if (phase == Phase.READING) "the connection to $host was lost" else "the server closed the connection before answering"
        error is SocketException && (message.contains("reset") || message.contains("broken pipe") || message.contains("closed")) ->
            "the connection to $host was lost"
        error is SocketException -> "the connection to $host failed"
        error is IOException -> "the transfer from $host failed"
        else -> "the transfer from $host failed"
    }
}

/** A TLS handshake that failed over the server's certificate (its chain, its dates, its name). */
private fun certificateProblem(error: Throwable): Boolean {
    var cause: Throwable? = error
    while (cause != null) {
        if (cause is java.security.cert.CertificateException) return true
        val text = asciiLowercase(cause.message ?: "")
        if (text.contains("certif") || text.contains("pkix")) return true
        cause = cause.cause
    }
    return false
}

/** "30", or "2.5" for a bound that is not whole. */
internal fun seconds(value: Double): String =
    if (value == Math.floor(value) && value < 1e15) value.toLong().toString() else String.format(Locale.ROOT, "%.1f", value)
