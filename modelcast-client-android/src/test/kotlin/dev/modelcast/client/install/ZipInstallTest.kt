package dev.modelcast.client.install

import dev.modelcast.client.ClientError
import dev.modelcast.client.testing.ZipWriter
import dev.modelcast.client.testing.bytes
import dev.modelcast.client.testing.names
import dev.modelcast.client.testing.sha256Hex
import dev.modelcast.client.testing.temporaryDirectory
import dev.modelcast.client.testing.thrown
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import java.nio.file.Files
import java.nio.file.Path

/** Zipped directories (`NAME.EXT.zip`) installed unpacked, and every hostile zip refused before the switch. */
/** Every test is bounded: a broken bound fails it instead of hanging the run. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ZipInstallTest {
    private val base: Path = temporaryDirectory()
    private val client: Path = base.resolve("client").also { Files.createDirectories(it) }
    /** A file outside the client's directory that no zip may reach. */
    private val canary: Path = base.resolve("canary.txt").also { Files.write(it, "untouched".toByteArray()) }

    /** Installs `zip` as model m's package, returning what the installer says (or throwing its refusal). */
    private fun install(zip: ByteArray, installer: Installer = Installer(client)): Path {
        val download = base.resolve(sha256Hex(zip)).also { Files.write(it, zip) }
        val version = InstallVersion("m", "1.0.0", listOf(InstallFile("m.mlpackage.zip", sha256Hex(zip), zip.size.toLong(), packedDirectory = "m.mlpackage")))
        return installer.build(version, mapOf(sha256Hex(zip) to download), "https://cdn/manifest.json", 1)
    }

    /** Refused as unsafe, with nothing left behind: no version, no staging directory, the canary as it was. */
    private fun refused(zip: ByteArray, installer: Installer = Installer(client)): String {
        val error = thrown<ClientError.UnsafeArchive> { install(zip, installer) }
        assertEquals("m", error.model)
        assertEquals(emptySet<String>(), names(client.resolve("models/m/versions")))
        assertEquals("untouched", String(Files.readAllBytes(canary)))
        assertEquals(setOf("client", "canary.txt") + names(base).filter { it.length == 64 }, names(base))
        return error.reason
    }

    @Test
    fun aZippedDirectoryIsUnpackedUnderItsName() {
        val weights = bytes(300_000)
        val zip = ZipWriter().directory("m.mlpackage/").directory("m.mlpackage/Data/")
            .file("m.mlpackage/Data/weights.bin", weights, deflate = false)
            .file("m.mlpackage/Manifest.json", "{\"a\": 1}".toByteArray())
            .file("m.mlpackage/Data/model.mlmodel", ByteArray(50_000) { 3 }).bytes()
        val installer = Installer(client)
        val version = install(zip, installer)
        assertArrayEquals(weights, Files.readAllBytes(version.resolve("m.mlpackage/Data/weights.bin")))
        assertEquals("{\"a\": 1}", String(Files.readAllBytes(version.resolve("m.mlpackage/Manifest.json"))))
        assertEquals(50_000L, Files.size(version.resolve("m.mlpackage/Data/model.mlmodel")))
        assertEquals(300_000L + 8 + 50_000, installer.unpackedSize(base.resolve(sha256Hex(zip)), "m", "m.mlpackage.zip"))
        installer.activate("m", version)
        assertEquals(installer.currentLink("m").resolve("m.mlpackage"), installer.installed("m")!!.mainFile)
    }

    @Test
    fun anEntryClimbingOutIsRefusedAndTheFileOutsideIsUntouched() {
        val climb = "m.mlpackage/../../../../../canary.txt"
        val reason = refused(ZipWriter().file("m.mlpackage/ok.bin", bytes(10)).file(climb, "overwritten".toByteArray()).bytes())
        assertEquals("entry '$climb' could leave the model's directory: it has a segment '..' that is made only of dots (it would name a directory above)", reason)
    }

    @Test
    fun absolutePathsOtherRootsBackslashesAndEmptySegmentsAreRefused() {
        assertEquals("entry '/m.mlpackage/x' is outside m.mlpackage/", refused(ZipWriter().file("/m.mlpackage/x", bytes(5)).bytes()))
        assertEquals("entry 'other/x' is outside m.mlpackage/", refused(ZipWriter().file("other/x", bytes(5)).bytes()))
        assertTrue(refused(ZipWriter().file("m.mlpackage/..\\..\\x", bytes(5)).bytes()).contains("contains a path separator"))
        assertTrue(refused(ZipWriter().file("m.mlpackage//x", bytes(5)).bytes()).contains("is empty"))
        assertTrue(refused(ZipWriter().file("m.mlpackage/./x", bytes(5)).bytes()).contains("made only of dots"))
    }

    @Test
    fun aSymbolicLinkEntryIsRefused() {
        val link = ZipWriter.Entry("m.mlpackage/weights.bin", "/etc/passwd".toByteArray(), deflate = false, unixMode = 0xA1FF)
        assertEquals("entry 'm.mlpackage/weights.bin' is a symbolic link", refused(ZipWriter().add(link).bytes()))
        val fifo = ZipWriter.Entry("m.mlpackage/pipe", deflate = false, unixMode = 0x11A4)
        assertEquals("entry 'm.mlpackage/pipe' is not a regular file or directory", refused(ZipWriter().add(fifo).bytes()))
    }

    @Test
    fun anEntryIsInflatedNoFurtherThanItsDeclaredSizeAndMustReachIt() {
        val bomb = ZipWriter.Entry("m.mlpackage/big.bin", ByteArray(10 shl 20), declaredSize = 1000)
        assertEquals("entry 'm.mlpackage/big.bin' inflates past the 1000 bytes it declares", refused(ZipWriter().add(bomb).bytes()))
        val short = ZipWriter.Entry("m.mlpackage/short.bin", bytes(1000), declaredSize = 5000)
        assertEquals("entry 'm.mlpackage/short.bin' unpacks to 1000 bytes, not the 5000 it declares", refused(ZipWriter().add(short).bytes()))
        val crc = ZipWriter.Entry("m.mlpackage/crc.bin", bytes(1000), crc = 12345)
        assertEquals("entry 'm.mlpackage/crc.bin' fails its CRC-32", refused(ZipWriter().add(crc).bytes()))
    }

    @Test
    fun theDeclaredTotalIsCheckedAgainstTheCapBeforeAnythingIsUnpacked() {
        // The first entry fails its CRC: had unpacking begun, that would be the error.
        val broken = ZipWriter.Entry("m.mlpackage/a.bin", bytes(100), deflate = false, crc = 1)
        val big = ZipWriter.Entry("m.mlpackage/b.bin", bytes(100), declaredSize = 5000)
        val zip = ZipWriter().add(broken).add(big).bytes()
        val reason = refused(zip, Installer(client, maxInstallBytes = 1000))
        assertTrue(reason.startsWith("its entries declare 5100 bytes unpacked, more than the 1000 it may take"), reason)
    }

    @Test
    fun moreEntriesThanTheCapAreRefused() {
        val writer = ZipWriter()
        for (index in 0..InstallSpace.MAX_ZIP_ENTRIES) writer.directory("m.mlpackage/d$index/")
        assertEquals("more than ${InstallSpace.MAX_ZIP_ENTRIES} entries", refused(writer.bytes()))
    }

    @Test
    fun bytesTheEntryListDoesNotShowAreRefused() {
        // A local entry before the listed ones: a streaming extractor would unpack it.
        val hidden = ZipWriter().file("hidden/evil.sh", bytes(100)).bytes().let { zip -> zip.copyOf(30 + "hidden/evil.sh".length + 100) }
        val zip = ZipWriter().raw(hidden).file("m.mlpackage/ok.bin", bytes(10)).bytes()
        // (the listed entry's offset counts from the start of the file: shift the writer's offsets)
        val reason = refused(zip)
        assertTrue(reason.contains("that no listed entry accounts for") || reason.contains("no local header"), reason)
        val renamed = ZipWriter().add(ZipWriter.Entry("m.mlpackage/ok.bin", bytes(10), localName = "m.mlpackage/ev.sh")).bytes()
        assertEquals("entry 'm.mlpackage/ok.bin': its local header names it 'm.mlpackage/ev.sh', so extractors disagree on its name", refused(renamed))
        assertEquals("entry 'm.mlpackage/x' appears twice", refused(ZipWriter().file("m.mlpackage/x", bytes(3)).file("m.mlpackage/x", bytes(4)).bytes()))
        assertEquals("no end of central directory record ending the file", refused("this is not a zip at all, only text".toByteArray()))
        assertEquals("5 bytes: too short for a zip", refused("short".toByteArray()))
    }

    @Test
    fun theRoomCheckNamesTheCapOrTheSpace() {
        val version = InstallVersion("m", "1.0.0", listOf(InstallFile("m.bin", "a".repeat(64), 10)))
        val tooLarge = InstallSpace.roomProblem(listOf(Pair(version, InstallSize(5000, 0))), cap = 1000, free = null)!!
        assertEquals("model 'm' 1.0.0 installs 5000 bytes, more than the cap of 1000", tooLarge.second.message)
        val noRoom = InstallSpace.roomProblem(listOf(Pair(version, InstallSize(50 shl 20, 50 shl 20))), cap = null, free = 60L shl 20)!!
        assertTrue(noRoom.second is ClientError.InsufficientSpace)
        assertNull(InstallSpace.roomProblem(listOf(Pair(version, InstallSize(40 shl 20, 40 shl 20))), cap = null, free = 60L shl 20))
    }
}
