package dev.modelcast.client.trust

import dev.modelcast.client.ClientError
import dev.modelcast.client.quoted
import java.io.IOException
import java.nio.file.Files
import java.nio.file.LinkOption
import java.nio.file.Path
import java.nio.file.attribute.BasicFileAttributes
import java.security.MessageDigest

/**
 * The files of a model version as its signature names them (`.` for a single-file model),
 * with their SHA-256 in lowercase hex, less those under the statement's ignore paths;
 * [problems] lists what model signing cannot hold (a symbolic link or special file, a name
 * it cannot write). What [ModelSignatureCheck.compare] holds against a verified statement.
 */
class InstalledFiles(val digests: Map<ModelFilePath, String>, val problems: List<String>) {
    companion object {
        /**
         * From (relative path, SHA-256) pairs the caller already has: a path model signing
         * cannot hold becomes a problem, one under [ignoring] is left out. A digest must be
         * 64 hex digits (either case; kept in lowercase).
         */
        fun of(files: List<Pair<String, String>>, ignoring: List<ModelFilePath>): InstalledFiles {
            val digests = LinkedHashMap<ModelFilePath, String>()
            val problems = ArrayList<String>()
            for ((name, sha256) in files) {
                val digest = String(CharArray(sha256.length) { index -> sha256[index].let { if (it in 'A'..'F') it + ('a' - 'A') else it } })
                require(isSha256Hex(digest)) { "the SHA-256 of ${quoted(name)} is not 64 hex digits: ${quoted(sha256)}" }
                val path = ModelFilePath.parse(name)
                if (path == null) {
                    problems.add("${quoted(name)} is a name model signing cannot hold")
                } else if (ignoring.none { path.isWithin(it) }) {
                    digests[path] = digest
                }
            }
            return InstalledFiles(digests, problems)
        }

        /**
         * Reads the signature's subject at [subject]: a regular file is the single file `.`; a
         * directory is walked (names sorted, symbolic links not followed); nothing there means
         * every signed file is missing. A file whose digest [known] gives (the manifest's, which
         * the download proved) is not read again. Throws [ClientError.Io] when a file cannot be
         * read.
         */
        fun scan(subject: Path, ignoring: List<ModelFilePath>, known: Map<ModelFilePath, String> = emptyMap()): InstalledFiles {
            val found = ArrayList<Pair<ModelFilePath, Path>>()
            val problems = ArrayList<String>()
            val attributes = attributes(subject)
            when {
                attributes == null -> Unit
                attributes.isRegularFile -> found.add(Pair(ModelFilePath.WHOLE_FILE, subject))
                attributes.isDirectory -> walk(subject, emptyList(), ignoring, found, problems)
            }
            val digests = LinkedHashMap<ModelFilePath, String>()
            for ((name, path) in found) digests[name] = known[name] ?: sha256(path)
            return InstalledFiles(digests, problems)
        }

        private fun walk(directory: Path, under: List<String>, ignoring: List<ModelFilePath>,
                         found: MutableList<Pair<ModelFilePath, Path>>, problems: MutableList<String>) {
            val entries = try {
                Files.newDirectoryStream(directory).use { stream -> stream.map { it.fileName.toString() } }
            } catch (error: IOException) {
                throw ClientError.Io(directory.toString(), error.toString())
            }
            for (entry in entries.sorted()) {
                val path = directory.resolve(entry)
                val relative = (under + entry).joinToString("/")
                val name = ModelFilePath.parse(relative)
                if (name == null) {
                    problems.add("${quoted(relative)} is a name model signing cannot hold")
                    continue
                }
                if (ignoring.any { name.isWithin(it) }) continue
                val attributes = attributes(path)
                when {
                    attributes?.isDirectory == true -> walk(path, under + entry, ignoring, found, problems)
                    attributes?.isRegularFile == true -> found.add(Pair(name, path))
                    else -> problems.add("${quoted(relative)} is not a regular file (model signing signs regular files only)")
                }
            }
        }

        /** The entry's own attributes (a symbolic link is not followed); null when nothing is there. */
        private fun attributes(path: Path): BasicFileAttributes? = try {
            Files.readAttributes(path, BasicFileAttributes::class.java, LinkOption.NOFOLLOW_LINKS)
        } catch (error: IOException) {
            null
        }

        private fun sha256(path: Path): String {
            val digest = MessageDigest.getInstance("SHA-256")
            try {
                Files.newInputStream(path).use { input ->
                    val buffer = ByteArray(1 shl 16)
                    while (true) {
                        val count = input.read(buffer)
                        if (count < 0) break
                        digest.update(buffer, 0, count)
                    }
                }
            } catch (error: IOException) {
                throw ClientError.Io(path.toString(), "cannot hash: $error")
            }
            return digest.digest().toHex()
        }
    }
}
