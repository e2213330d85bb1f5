package dev.modelcast.device

import dev.modelcast.client.ClientError
import kotlin.system.exitProcess

/**
 * The exit statuses of the conformance kit's client protocol (`conformance/CLIENT-CLI.md`),
 * which the one-shot form shares.
 */
enum class ExitStatus(val code: Int) {
    /** Done: installed, up to date, reverted, recorded, printed. */
    SUCCESS(0),
    /** A rule said no: the manifest, a signature, an object, the device's own limits or a refusal; nothing was installed from it. */
    REFUSED(1),
    /** The command line (or, for the one-shot form, the configuration it builds) is wrong. */
    USAGE(2),
    /** The network or the disk failed, or the directory holds no configuration: another attempt may succeed. */
    UNAVAILABLE(3);

    companion object {
        /**
         * The status a failed call exits with, by the library's own classification of its
         * errors ([ClientError.kind]). Anything else (an I/O exception that escaped, an
         * interruption) is no rule saying no: it is treated as the disk or the network failing.
         */
        fun of(error: Throwable): ExitStatus = when ((error as? ClientError)?.kind) {
            ClientError.Kind.REFUSED -> REFUSED
            ClientError.Kind.CONFIGURATION -> USAGE
            else -> UNAVAILABLE
        }
    }
}

/**
 * Ends the process with [status] after one line on stderr, `modelcast-device: <reason>`,
 * whose control and invisible characters are escaped: a server's text never reaches the
 * terminal raw, and the reason stays one line.
 */
fun fail(status: ExitStatus, reason: String): Nothing {
    System.out.flush()
    System.err.println("modelcast-device: " + escapedLine(reason))
    System.err.flush()
    exitProcess(status.code)
}

/** Ends the process with the status and the message of [error]. */
fun fail(error: Throwable): Nothing = fail(ExitStatus.of(error), describe(error))

/** What a person reads of [error]: a [ClientError]'s message, else the exception's class and message. */
fun describe(error: Throwable): String = when (error) {
    is ClientError -> error.message ?: error.javaClass.simpleName
    else -> error.message?.let { "${error.javaClass.simpleName}: $it" } ?: error.javaClass.simpleName
}

/**
 * [text] with every control, format, separator (but the space), private-use, surrogate and
 * unassigned character written as `\u{…}`.
 */
fun escapedLine(text: String): String {
    val out = StringBuilder(text.length)
    var index = 0
    while (index < text.length) {
        val point = text.codePointAt(index)
        index += Character.charCount(point)
        if (isInvisible(point)) out.append("\\u{").append(Integer.toHexString(point)).append('}') else out.appendCodePoint(point)
    }
    return out.toString()
}

/** True for what [escapedLine] escapes. */
fun isInvisible(point: Int): Boolean = when (Character.getType(point)) {
    Character.CONTROL.toInt(), Character.FORMAT.toInt(), Character.LINE_SEPARATOR.toInt(), Character.PARAGRAPH_SEPARATOR.toInt(),
    Character.PRIVATE_USE.toInt(), Character.SURROGATE.toInt(), Character.UNASSIGNED.toInt() -> true
    Character.SPACE_SEPARATOR.toInt() -> point != ' '.toInt()
    else -> false
}
