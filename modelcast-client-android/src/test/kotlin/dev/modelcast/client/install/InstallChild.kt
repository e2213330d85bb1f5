package dev.modelcast.client.install

import java.nio.file.Files
import java.nio.file.Paths

/**
 * Not a test: what the kill tests run in a child JVM, so it can be killed (SIGKILL) at any
 * moment. `switch DIR`: switches model m between the installed versions for ever.
 * `build DIR`: builds (and removes) versions of m for ever. `lock DIR`: takes the
 * directory's lock and holds it. Each says "ready" once under way.
 */
object InstallChild {
    @JvmStatic
    fun main(arguments: Array<String>) {
        val directory = Paths.get(arguments[1])
        val installer = Installer(directory)
        when (arguments[0]) {
            "switch" -> {
                val versions = installer.versions("m").map { installer.versionsDirectory("m").resolve(it) }
                println("ready")
                var index = 0
                while (true) installer.activate("m", versions[index++ % versions.size])
            }
            "build" -> {
                val source = directory.resolve("download.bin")
                val sha = dev.modelcast.client.testing.sha256Hex(Files.readAllBytes(source))
                println("ready")
                var count = 0
                while (true) {
                    val version = InstallVersion("m", "2.0.${count++}", listOf(InstallFile("m.bin", sha, Files.size(source))))
                    val built = installer.build(version, mapOf(sha to source), "https://cdn/manifest.json", 2)
                    installer.activate("m", built)
                }
            }
            "lock" -> {
                DirectoryLock.acquire(directory, 0.0)
                println("ready")
                Thread.sleep(60_000)
            }
        }
    }
}
