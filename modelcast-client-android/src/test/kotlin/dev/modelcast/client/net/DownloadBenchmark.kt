package dev.modelcast.client.net

import java.nio.file.Files
import java.nio.file.Paths

/**
 * Not a test: downloads one file with [Downloader] and prints the time, for the comparison
 * with `curl -s URL | openssl dgst -sha256` (BENCHMARKS). Run:
 *
 *     java -cp out/tests.jar:out/modelcast-client.jar:/usr/share/java/kotlin-stdlib.jar \
 *         dev.modelcast.client.net.DownloadBenchmark URL SHA256 SIZE DIRECTORY
 */
object DownloadBenchmark {
    @JvmStatic
    fun main(arguments: Array<String>) {
        val (url, sha, size, directory) = arguments
        val repeat = if (arguments.size > 4) arguments[4].toInt() else 1
        val downloads = Paths.get(directory)
        for (round in 1..repeat) HttpStream().use { http ->
            val downloader = Downloader(downloads, http)
            val file = RemoteFile(url, sha, size.toLong(), "bench", "bench.bin")
            Files.deleteIfExists(downloader.path(sha))
            Files.deleteIfExists(downloader.path(sha, ".part"))
            val start = System.nanoTime()
            val path = downloader.fetch(file)
            val seconds = (System.nanoTime() - start) / 1e9
            println("downloaded ${Files.size(path)} bytes in ${"%.3f".format(seconds)} s (${"%.0f".format(size.toLong() / seconds / 1e6)} MB/s)")
            Files.delete(path)
        }
    }
}
