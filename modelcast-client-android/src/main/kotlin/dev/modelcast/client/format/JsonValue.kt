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
    data class Bool(val value: Boolean) : JsonValue()

    /** A number written without fraction or exponent that fits in 64 bits. */
    data class Integer(val value: Long) : JsonValue()

    /**
     * Any other number: with a fraction or an exponent, or an integer beyond 64 bits. [text]
     * is the literal as written (valid JSON number syntax, checked by the parser).
     */
    data class Decimal(val text: String) : JsonValue() {
        /** The nearest double (infinite when the literal is beyond the double range). */
        fun toDouble(): Double = text.toDouble()

        /** The exact value, or null when its exponent is beyond what [BigDecimal] holds. */
        fun toBigDecimal(): BigDecimal? = try { BigDecimal(text) } catch (e: NumberFormatException) { null }
    }

    /** A string (valid Unicode: the parser refuses lone surrogates and invalid UTF-8). */
    data class Text(val value: String) : JsonValue()

    /** An array. */
    data class Array(val items: List<JsonValue>) : JsonValue()

    /** An object; [members] iterate in document order. */
    data class Object(val members: Map<String, JsonValue>) : JsonValue() {
        /** The member named [key], or null. */
        operator fun get(key: String): JsonValue? = members[key]
    }

    /** The string, when this is one. */
    val stringValue: String? get() = (this as? Text)?.value

    /** Compact JSON text of the value. */
    override fun toString(): String = Json.write(this)
}
