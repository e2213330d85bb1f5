package dev.modelcast.client.testing

import java.io.File
import java.nio.file.Paths

/** Starts `mainClass` in a new JVM with the library, the tests and Kotlin's standard library on its class path. */
fun startJava(mainClass: String, vararg arguments: String): Process {
    fun location(type: Class<*>): String = Paths.get(type.protectionDomain.codeSource.location.toURI()).toString()
    val classPath = listOf(
        location(dev.modelcast.client.ClientError::class.java),
        location(ObjectServer::class.java),
        location(KotlinVersion::class.java)
    ).distinct().joinToString(File.pathSeparator)
    val java = Paths.get(System.getProperty("java.home"), "bin", "java").toString()
    return ProcessBuilder(listOf(java, "-cp", classPath, mainClass) + arguments).redirectErrorStream(true).start()
}

/** Reads the child's output until a line equals `line` (or it ends); true when it came. */
fun Process.awaitLine(line: String): Boolean {
    val reader = inputStream.bufferedReader()
    while (true) {
        val next = reader.readLine() ?: return false
        if (next == line) return true
    }
}
