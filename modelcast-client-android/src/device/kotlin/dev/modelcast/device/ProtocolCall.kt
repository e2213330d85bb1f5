package dev.modelcast.device

import dev.modelcast.client.ClientError
import dev.modelcast.client.ModelUpdater
import java.io.File

/**
 * The conformance kit's client protocol (`conformance/CLIENT-CLI.md`, version 1): one call
 * per process, `init`, `update`, `state` or `revert`, everything kept under `--dir D`. Each
 * subcommand is in its own file (`ProtocolInit.kt`, …).
 */
object ProtocolCall {
    /** The subcommands; `revert` is the protocol's only when no `--manifest` is given (with one, it is the one-shot form's). */
    val subcommands = setOf("init", "update", "state", "revert")

    /**
     * Runs [subcommand] with [words] and exits with the protocol's status: 0 done, 1 refused,
     * 2 usage, 3 network or I/O (a directory `init` never configured included).
     */
    fun run(subcommand: String, words: List<String>): Nothing {
        try {
            when (subcommand) {
                "init" -> initialize(words)
                "update" -> update(words)
                "state" -> state(words)
                else -> revert(words)
            }
        } catch (error: UsageError) {
            fail(ExitStatus.USAGE, error.message.orEmpty())
        } catch (error: DeviceSettings.LoadError) {
            fail(ExitStatus.UNAVAILABLE, error.message.orEmpty())
        } catch (error: Exception) {
            fail(error)
        }
        System.out.flush()
        kotlin.system.exitProcess(ExitStatus.SUCCESS.code)
    }

    /**
     * The client of the directory [directory], configured as `init` recorded.
     * @throws DeviceSettings.LoadError when there is no usable configuration (exit 3).
     */
    fun updater(directory: String): ModelUpdater {
        val folder = File(directory)
        val configuration = DeviceSettings.load(folder).configuration(folder)
        // `init` checked every value; a file edited since is refused before anything is created.
        try {
            configuration.validate()
        } catch (error: ClientError) {
            throw DeviceSettings.LoadError("${File(folder, DeviceSettings.FILE_NAME).path}: not a configuration this client reads: ${error.message}")
        }
        return ModelUpdater(configuration)
    }
}
