package dev.modelcast.device

import dev.modelcast.client.ClientConfiguration
import dev.modelcast.client.CurrentDevice
import dev.modelcast.client.InstalledModel
import dev.modelcast.client.ModelUpdater
import dev.modelcast.client.ProgressListener
import dev.modelcast.client.UpdateOutcome
import dev.modelcast.client.UpdatePlan
import dev.modelcast.client.UpdateProgress
import dev.modelcast.client.format.Accelerator
import dev.modelcast.client.format.DevicePlatform
import dev.modelcast.client.format.DownloadPolicy
import dev.modelcast.client.format.ManifestValueException
import dev.modelcast.client.trust.ModelSigningPublicKey
import java.io.File
import java.util.Locale
import kotlin.system.exitProcess

/**
 * The one-shot form: every setting on the command line, one update (or check, or revert) per
 * run, nothing recorded but the client's own state. Its exit statuses are the protocol's
 * ([ExitStatus]); its output lines are the Swift device's.
 */
object OneShot {
    private val usageText = """
        usage: modelcast-device --manifest URL --dir DIR [--device-id ID] [--public-key KEY]... [--model-signing-public-key FILE]
                 [--app-version V] [--keep N] [--check]
                 [--memory BYTES] [--platform P] [--os-version V] [--arch A] [--accelerator A]... [--capability C]...
                 [--policy essential|prefetch|on-demand] [--download-policy MODEL=POLICY]... [--request MODEL]... [--max-download BYTES]
               modelcast-device revert MODEL --reason TEXT --manifest URL --dir DIR
               modelcast-device init --dir D --manifest-url U [--public-key FILE]... | [--trusted-keys FILE] [--model-signing-public-key FILE]
                 [--app-version V] [--device-id ID] [--device k=v,...]... [--min-rate BYTES] [--rate-window SECONDS]
                 [--deadline SECONDS] [--max-install BYTES]
               modelcast-device update --dir D [--policy essential|prefetch|on-demand] [--request MODEL]...
               modelcast-device state --dir D
               modelcast-device revert --dir D MODEL --reason TEXT
        """.trimIndent() + "\n"

    /** Options that take a value; every other `-…` word but the flags is a usage mistake. */
    private val valued = setOf("--manifest", "--dir", "--device-id", "--public-key", "--app-version", "--keep", "--memory", "--platform",
        "--os-version", "--arch", "--accelerator", "--capability", "--policy", "--download-policy", "--request", "--max-download", "--reason",
        "--model-signing-public-key")

    private fun usage(message: String): Nothing {
        System.out.flush()
        System.err.print("modelcast-device: " + escapedLine(message) + "\n" + usageText)
        System.err.flush()
        exitProcess(ExitStatus.USAGE.code)
    }

    /** `8G`, `512M`, `1024K` (binary units) or a number of bytes. */
    private fun byteCount(text: String): Long? {
        val unit = when (text.lastOrNull()) {
            'K', 'k' -> 1L shl 10
            'M', 'm' -> 1L shl 20
            'G', 'g' -> 1L shl 30
            else -> null
        }
        return if (unit != null) text.dropLast(1).toLongOrNull()?.let { it * unit } else text.toLongOrNull()
    }

    private fun policy(text: String): DownloadPolicy = try {
        DownloadPolicy.parse(text)
    } catch (error: ManifestValueException) {
        usage("'$text' is not a download policy (essential, prefetch or on-demand)")
    }

    /** `running m 1.0.0 (variant small): models/m/current/m.bin` */
    private fun describe(model: InstalledModel): String =
        "running ${model.name} ${model.version}" + (model.variant?.let { " (variant $it)" } ?: "") +
            ": models/${model.name}/current/${model.mainFile.fileName}"

    /** One line per model with variants (the one taken, or why none), per refused version. */
    private fun explain(plan: UpdatePlan) {
        for (name in plan.variants.keys.sorted()) {
            val choice = plan.variants.getValue(name)
            val skipped = choice.skipped.joinToString("; ") { "${it.variant}: ${it.reasons.joinToString(", ")}" }
            val chosen = choice.chosen
            if (chosen != null) {
                println("$name: variant ${chosen.variant?.text ?: "?"} ${chosen.version}" + (if (skipped.isEmpty()) "" else " (skipped $skipped)"))
            } else {
                println("$name: no variant for this device, left as it is ($skipped)")
            }
        }
        for (name in plan.refused.keys.sorted()) {
            val refused = plan.refused.getValue(name)
            println("$name: ${refused.version} refused on this device (${refused.reason}), left as it is")
        }
    }

    fun run(commandLine: List<String>): Nothing {
        val options = LinkedHashMap<String, MutableList<String>>()
        val flags = HashSet<String>()
        val positional = ArrayList<String>()
        var index = 0
        while (index < commandLine.size) {
            val argument = commandLine[index++]
            when {
                argument == "--check" || argument == "--help" -> flags.add(argument)
                argument in valued -> {
                    val value = commandLine.getOrNull(index++) ?: usage("$argument needs a value")
                    options.getOrPut(argument) { ArrayList() }.add(value)
                }
                argument.startsWith("-") -> usage("unknown argument '$argument'")
                else -> positional.add(argument)
            }
        }
        if ("--help" in flags) usage("help")
        val manifest = options["--manifest"]?.last() ?: usage("--manifest URL is required")
        val directory = options["--dir"]?.last() ?: usage("--dir DIR is required")
        // A key is a `.pub` file or the key's text itself.
        val keys = options["--public-key"].orEmpty().map { value ->
            val file = File(value)
            if (!file.exists()) value else try { file.readText() } catch (error: Exception) { usage("--public-key $value: ${error.message}") }
        }
        val modelSigningKey = options["--model-signing-public-key"]?.last()?.let { path ->
            try {
                ModelSigningPublicKey.parse(File(path).readText())
            } catch (error: Exception) {
                usage("--model-signing-public-key $path: ${error.message}")
            }
        }
        var device = CurrentDevice.profile
        options["--memory"]?.last()?.let { memory ->
            device = device.copy(physicalMemory = byteCount(memory) ?: usage("--memory '$memory' is not a byte count (8G, 512M, 1048576)"))
        }
        options["--platform"]?.last()?.let { name ->
            device = device.copy(platform = DevicePlatform.fromWireName(name)
                ?: usage("--platform '$name' is not one of ${DevicePlatform.values().joinToString(", ") { it.wireName }}"))
        }
        options["--os-version"]?.last()?.let { device = device.copy(osVersion = it) }
        options["--arch"]?.last()?.let { device = device.copy(architecture = it) }
        options["--accelerator"]?.let { names ->
            device = device.copy(accelerators = names.map { name ->
                Accelerator.fromWireName(name) ?: usage("--accelerator '$name' is not gpu or neural-engine")
            }.toSet())
        }
        options["--capability"]?.let { device = device.copy(capabilities = it.toSet()) }
        val policies = LinkedHashMap<String, DownloadPolicy>()
        for (assignment in options["--download-policy"].orEmpty()) {
            val parts = assignment.split("=", limit = 2).filter { it.isNotEmpty() }
            if (parts.size != 2) usage("--download-policy '$assignment' is not MODEL=POLICY")
            policies[parts[0]] = policy(parts[1])
        }
        val shouldDownload = options["--max-download"]?.last()?.let { text ->
            val limit = byteCount(text) ?: usage("--max-download '$text' is not a byte count")
            val approve: (UpdatePlan) -> Boolean = { plan -> plan.bytesToDownload <= limit }
            approve
        }
        val configuration = ClientConfiguration(
            manifestUrl = manifest, directory = File(directory), deviceId = options["--device-id"]?.last() ?: "device-0",
            publicKeys = keys, modelSigningPublicKey = modelSigningKey, appVersion = options["--app-version"]?.last(),
            keepPreviousVersions = options["--keep"]?.last()?.toIntOrNull() ?: 1, device = device, downloadPolicies = policies,
            shouldDownload = shouldDownload)

        val updater = try { ModelUpdater(configuration) } catch (error: Exception) { fail(error) }
        if (positional.firstOrNull() == "revert") {
            if (positional.size != 2) usage("revert takes one MODEL")
            val reason = options["--reason"]?.last() ?: usage("revert needs --reason TEXT")
            try {
                val model = updater.reportUnusableBlocking(positional[1], reason)
                println("reverted ${model.name} to ${model.version}" + (model.variant?.let { " (variant $it)" } ?: "") + "; the version it ran is refused")
            } catch (error: Exception) {
                fail(error)
            }
            done()
        }
        if (positional.isNotEmpty()) usage("unknown argument '${positional[0]}'")
        updater.addProgressListener(QuarterSteps())
        val scope = options["--policy"]?.last()?.let(::policy) ?: DownloadPolicy.ON_DEMAND
        try {
            if ("--check" in flags) {
                val plan = updater.checkBlocking(scope)
                if (plan != null) {
                    println("sequence ${plan.sequence}: " + plan.versions.keys.sorted().joinToString(", ") { "$it ${plan.versions[it]}" } +
                        (if (plan.takesCandidate) "" else " (the rollout's fallback)") + ", ${plan.bytesToDownload} bytes to download")
                    explain(plan)
                } else {
                    println("not modified")
                }
                done()
            }
            val requested = options["--request"]
            if (requested != null) {
                for (name in requested) println("requested " + describe(updater.requestBlocking(name)))
            } else {
                when (val outcome = updater.updateBlocking(scope)) {
                    is UpdateOutcome.Deferred -> {
                        println("deferred: ${outcome.plan.bytesToDownload} bytes to download, more than --max-download")
                        explain(outcome.plan)
                    }
                    else -> println(describe(outcome))
                }
            }
            // A file built from the installed version's segments: what it cost.
            for (file in updater.lastDownloads) {
                val seed = file.seededFrom ?: continue
                val requests = file.rangeRequests ?: continue
                val share = if (file.size > 0) String.format(Locale.ROOT, "%.2f", file.fetchedBytes * 100.0 / file.size) else "0.00"
                println("fetched ${file.fetchedBytes} of ${file.size} bytes of ${file.file} ($share %) in $requests range request" +
                    (if (requests == 1) "" else "s") + "; the rest copied from $seed")
            }
        } catch (error: Exception) {
            fail(error)
        }
        val models = File(directory, "models")
        for (name in models.list().orEmpty().sorted()) {
            // The path an app opens: through the `current` link, which an update swaps in one rename.
            updater.installed(name)?.let { println(describe(it)) }
        }
        done()
    }

    private fun done(): Nothing {
        System.out.flush()
        exitProcess(ExitStatus.SUCCESS.code)
    }

    /** Download progress on stderr, a line each time a quarter more of the update is on disk. */
    private class QuarterSteps : ProgressListener {
        private var lastPercent = -1L

        override fun onProgress(progress: UpdateProgress) {
            if (progress.totalBytes <= 0) return
            val percent = progress.completedBytes * 100 / progress.totalBytes
            if (percent / 25 != lastPercent / 25) {
                System.err.println("downloading ${progress.file} $percent%")
                lastPercent = percent
            }
        }
    }
}
