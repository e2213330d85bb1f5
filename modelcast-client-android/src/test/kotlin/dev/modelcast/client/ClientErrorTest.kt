package dev.modelcast.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class ClientErrorTest {
    @Test
    fun quotedEscapesControlCharacters() {
        assertEquals("'a\\u{1b}[2Jb'", quoted("a\u001b[2Jb"))
        assertEquals("'m.bin'", quoted("m.bin"))
    }

    @Test
    fun everyErrorHasAKind() {
        assertEquals(ClientError.Kind.NETWORK, ClientError.Http("u", 404).kind)
        assertEquals(ClientError.Kind.REFUSED, ClientError.Unsigned("u").kind)
        assertEquals(ClientError.Kind.IO, ClientError.Io("p", "r").kind)
    }
}
