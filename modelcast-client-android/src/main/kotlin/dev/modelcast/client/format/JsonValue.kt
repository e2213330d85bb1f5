package dev.modelcast.client.format

import java.math.BigDecimal

/**
 * A JSON value as [Json.parse] reads it. Integers stay exact ([Integer], 64 bits); any other
 * number keeps its literal text ([Decimal]) so nothing is rounded before a field's decoder
 * decides what it accepts. Objects keep their members in document order; keys are unique.
 */
sealed class JsonValue {
    /** `null`. */
    object Null : JsonValue() {
        override fun toString(): String = "null"
    }

    /** `true` or `false`. */
    data class Bool(val value: Boolean) : JsonValue() {
        override fun toString(): String = Json.write(this)
    }

    /** A number written without fraction or exponent that fits in 64 bits. */
    data class Integer(val value: Long) : JsonValue() {
        override fun toString(): String = Json.write(this)
    }

    /**
     * Any other number: with a fraction or an exponent, or an integer beyond 64 bits. [text]
     * is the literal as written (valid JSON number syntax, checked by the parser).
     */
    data class Decimal(val text: String) : JsonValue() {
        /** The nearest double (infinite when the literal is beyond the double range). */
        fun toDouble(): Double = text.toDouble()

        /** The exact value, or null when its exponent is beyond what [BigDecimal] holds. */
        fun toBigDecimal(): BigDecimal? = try { BigDecimal(text) } catch (e: NumberFormatException) { null }

        override fun toString(): String = text
    }

    /** A string (valid Unicode: the parser refuses lone surrogates and invalid UTF-8). */
    data class Text(val value: String) : JsonValue() {
        override fun toString(): String = Json.write(this)
    }

    /** An array. */
    data class Array(val items: List<JsonValue>) : JsonValue() {
        override fun toString(): String = Json.write(this)
    }

    /** An object; [members] iterate in document order. */
    data class Object(val members: Map<String, JsonValue>) : JsonValue() {
        /** The member named [key], or null. */
        operator fun get(key: String): JsonValue? = members[key]

        override fun toString(): String = Json.write(this)
    }

    /**
     * The value as an exact 64-bit integer: an integer literal, or a number literal whose
     * value is one (`1.0`, `1e2`, as the Swift client's decoder takes them); null for a
     * fraction, a number beyond 64 bits, or anything but a number. What an integer field reads.
     * A literal longer than 100 characters is not read exactly (no one writes an integer so,
     * and an exact reading costs time quadratic in its length): null.
     */
    fun toLongExact(): Long? = when (this) {
        is Integer -> value
        is Decimal -> if (text.length > 100) null else toBigDecimal()?.let { decimal ->
            val stripped = if (decimal.signum() == 0) BigDecimal.ZERO else decimal.stripTrailingZeros()
            // Checked before longValueExact, which would expand a huge exponent digit by digit.
            if (stripped.scale() > 0 || stripped.precision() - stripped.scale() > 19) null
            else try { stripped.longValueExact() } catch (e: ArithmeticException) { null }
        }
        else -> null
    }

    /** The string, when this is one. */
    val stringValue: String? get() = (this as? Text)?.value

    // Every case's toString is its compact JSON text (Json.write): what a message shows.
}
