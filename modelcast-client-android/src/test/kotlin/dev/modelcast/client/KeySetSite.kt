package dev.modelcast.client

import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import dev.modelcast.client.testing.temporaryDirectory
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import java.io.Closeable
import java.io.File
import java.net.InetAddress
import java.net.InetSocketAddress
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/** A minisign key pair the CLI made, and its key id (hex). */
class CliKey(val secret: File, val pub: File, val id: String)

/**
 * Serves a folder as files (every request reads the disk, so a test can change the site
 * between updates); a missing file answers [missingStatus] (403 as a private S3 bucket
 * without list permission answers). A path given to [misbehave] is answered by its handler
 * instead (a huge, endless or trickling body).
 */
class FolderServer(private val folder: File, private val missingStatus: Int = 404) : Closeable {
    private val server = HttpServer.create(InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0)
    private val handlers = ConcurrentHashMap<String, (HttpExchange) -> Unit>()
    /** Each request as `PATH STATUS` (`PATH handler` for a [misbehave] path). */
    val requests = CopyOnWriteArrayList<String>()

    init {
        server.executor = Executors.newCachedThreadPool { runnable -> Thread(runnable, "folder-server").apply { isDaemon = true } }
        server.createContext("/") { exchange ->
            try {
                val path = exchange.requestURI.path
                val handler = handlers[path]
                val file = File(folder, path)
                when {
                    handler != null -> {
                        requests.add("$path handler")
                        handler(exchange)
                    }
                    !file.canonicalPath.startsWith(folder.canonicalPath + File.separator) || !file.isFile -> {
                        requests.add("$path $missingStatus")
                        exchange.sendResponseHeaders(missingStatus, -1)
                    }
                    else -> {
                        requests.add("$path 200")
                        val body = file.readBytes()
                        exchange.sendResponseHeaders(200, body.size.toLong())
                        exchange.responseBody.write(body)
                    }
                }
            } catch (hungUp: java.io.IOException) {
                // The client closed the connection: what a bounded read of an endless body does.
            } finally {
                exchange.close()
            }
        }
        server.start()
    }

    val base: String get() = "http://127.0.0.1:${server.address.port}"

    /** Answers requests for [path] (`/site/keys/2.json`) with [handler]. */
    fun misbehave(path: String, handler: (HttpExchange) -> Unit) {
        handlers[path] = handler
    }

    override fun close() = server.stop(0)
}

/**
 * A site the real CLI writes (`keys create`, `keys rotate`, `publish --sign`) under `site/` of
 * a scratch folder, served on 127.0.0.1 by a [FolderServer], with keys made by the CLI:
 * roots R1, R2 and manifest keys K1, K2 (more on request). The Swift client's
 * KeySetClientTests.Site: the vectors prove the format, only a CLI-written site proves the
 * two implementations agree on the files.
 */
class KeySetSite(private val cli: File, missingStatus: Int = 404) : Closeable {
    val work: File = temporaryDirectory("keyset-walk").toFile()
    val root = File(work, "site")
    val server = FolderServer(work, missingStatus)
    val base = server.base + "/site"
    val r1 = keygen("r1")
    val r2 = keygen("r2")
    val k1 = keygen("k1")
    val k2 = keygen("k2")

    /** Runs [command]; fails the test naming it and its output unless it exits 0. */
    fun run(vararg command: String): String {
        val process = ProcessBuilder(*command).redirectErrorStream(true).start()
        val output = process.inputStream.bufferedReader().readText()
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), "timed out: ${command.joinToString(" ")}")
        assertEquals(0, process.exitValue(), "${command.joinToString(" ")}: $output")
        return output
    }

    fun modelcast(vararg arguments: String): String = run(cli.path, *arguments)

    fun keygen(name: String): CliKey {
        val secret = File(work, "$name.key")
        val pub = File(work, "$name.pub")
        val output = modelcast("keygen", "--unencrypted", "--public-key", pub.path, "--secret-key", secret.path, "--json")
        val id = Regex("\"key_id\"\\s*:\\s*\"([0-9A-Fa-f]+)\"").find(output)?.groupValues?.get(1) ?: throw AssertionError("no key_id in $output")
        return CliKey(secret, pub, id)
    }

    /** `publish` of one model `m` at [version], signed by [signers] (with `--inline-signature` when [inline]). */
    fun publish(version: String, vararg signers: CliKey, inline: Boolean = false) {
        val file = File(work, "in/$version/m.bin")
        file.parentFile.mkdirs()
        file.writeBytes(dev.modelcast.client.testing.bytes(5000, version.hashCode().toLong()))
        modelcast("publish", file.path, "--name", "m", "--version", version, "--base-url", base, "--to", root.path,
            *(if (inline) arrayOf("--inline-signature") else emptyArray()),
            *signers.flatMap { listOf("--sign", it.secret.path) }.toTypedArray())
    }

    /** `keys create`: roots R1 and R2 (threshold 2), [manifestKeys] (K1 by default, threshold [manifestThreshold]), signed by both roots. */
    fun createKeySet(manifestKeys: List<CliKey> = listOf(k1), manifestThreshold: Int = 1) {
        modelcast("keys", "create", root.path, "--root", r1.pub.path, "--root", r2.pub.path, "--root-threshold", "2",
            *manifestKeys.flatMap { listOf("--manifest-key", it.pub.path) }.toTypedArray(),
            "--manifest-threshold", manifestThreshold.toString(), "--sign-root", r1.secret.path, "--sign-root", r2.secret.path)
    }

    /** `keys rotate`: K2 in, K1 revoked, signed by both roots (key set 2). */
    fun rotateToK2() {
        rotate("--manifest-key", k2.pub.path, "--revoke", k1.id)
    }

    /** `keys rotate` with [changes] (none: the same keys, a renewed expiry), signed by both roots. */
    fun rotate(vararg changes: String) {
        modelcast("keys", "rotate", root.path, *changes, "--sign-root", r1.secret.path, "--sign-root", r2.secret.path)
    }

    /** A device that ships [shipping] (key set 1 when null), judging expiry by [clock], its metadata requests bounded by [metadataDeadlineSeconds]. */
    fun device(name: String, shipping: ByteArray? = null, clock: () -> Instant = { Instant.now() }, metadataDeadlineSeconds: Double = 60.0): ModelUpdater =
        ModelUpdater(ClientConfiguration(
            base + "/manifest.json", File(work, name), name, retries = 0, requestTimeoutSeconds = 10.0,
            trustedKeySet = shipping ?: File(root, "keys/1.json").readBytes(), clock = clock, metadataDeadlineSeconds = metadataDeadlineSeconds))

    private val manifestFiles = listOf("manifest.json", "manifest.json.minisig", "manifest.json.sigs")

    /** The served manifest's files, to put back what the CLI wrote after a forgery. */
    fun save(): Map<String, ByteArray?> = manifestFiles.associateWith { File(root, it).takeIf { file -> file.isFile }?.readBytes() }

    fun restore(saved: Map<String, ByteArray?>) {
        for ((name, bytes) in saved) {
            val file = File(root, name)
            file.delete()
            if (bytes != null) file.writeBytes(bytes)
        }
    }

    /**
     * What a holder of [key] can serve: the live manifest (its sequence set to [sequence]
     * when given) signed by [key] alone with stock minisign, with the CLI's trusted
     * comment (its sequence changed to match).
     */
    fun forge(key: CliKey, sequence: Long? = null) {
        val manifest = File(root, "manifest.json")
        val signature = File(root, "manifest.json.minisig")
        var comment = signature.readLines().first { it.startsWith("trusted comment: ") }.removePrefix("trusted comment: ")
        if (sequence != null) {
            manifest.writeText(Regex("\"sequence\"(\\s*):(\\s*)[0-9]+").replace(manifest.readText(), "\"sequence\"$1:$2$sequence"))
            comment = Regex("sequence:[0-9]+").replace(comment, "sequence:$sequence")
        }
        File(root, "manifest.json.sigs").delete()
        signature.delete()
        run("minisign", "-S", "-s", key.secret.path, "-m", manifest.path, "-t", comment)
    }

    /** The version folders a device installed. */
    fun models(device: String): List<String> = File(work, "$device/models").list()?.toList() ?: emptyList()

    override fun close() {
        server.close()
        work.deleteRecursively()
    }

    companion object {
        /**
         * A site, when the CLI is built in this repository (`swift build --product modelcast`);
         * else the test is skipped, not passed (the message says so). CI builds the CLI first and
         * sets MODELCAST_REQUIRE_CLI=1: there a missing CLI fails.
         */
        fun start(missingStatus: Int = 404): KeySetSite {
            val cli = File(System.getProperty("modelcast.repository") ?: error("run through ./build"), ".build/debug/modelcast")
            if (System.getenv("MODELCAST_REQUIRE_CLI") == "1") check(cli.canExecute()) { "${cli.path} is missing and MODELCAST_REQUIRE_CLI=1" }
            assumeTrue(cli.canExecute(), "${cli.path} is missing: build it with `swift build --product modelcast` (these tests are SKIPPED, not passed)")
            return KeySetSite(cli, missingStatus)
        }
    }
}
