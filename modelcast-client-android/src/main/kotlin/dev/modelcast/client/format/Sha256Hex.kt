package dev.modelcast.client.format

/**
 * A SHA-256 digest as modelcast writes it: exactly 64 lowercase hexadecimal digits.
 * Uppercase is refused (publish never writes it), so one digest has one spelling.
 * @throws ManifestValueException when [text] is not one.
 */
class Sha256Hex(text: String) {
    val text: String = check(text)

    /** The digest as a file name (it is one: 64 characters from [0-9a-f]). */
    val segment: PathSegment get() = PathSegment(text)

    /** The 32 bytes. */
    fun toDigest(): Sha256Digest = Sha256Digest.fromHex(text)

    override fun equals(other: Any?): Boolean = other is Sha256Hex && other.text == text
    override fun hashCode(): Int = text.hashCode()
    override fun toString(): String = text

    private companion object {
        fun lowerHex(char: Char) = char in '0'..'9' || char in 'a'..'f'

        fun check(text: String): String {
            if (text.length == 64 && text.all(::lowerHex)) return text
            val upper = text.length == 64 && text.all { lowerHex(it) || it in 'A'..'F' }
            throw ManifestValueException("", text,
                if (upper) "is not lowercase hexadecimal (modelcast writes SHA-256 digests in lowercase)"
                else "is not a SHA-256 digest (64 lowercase hexadecimal digits)")
        }
    }
}
