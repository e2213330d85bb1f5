package dev.modelcast.client.net

import java.io.IOException
import java.nio.file.AccessDeniedException
import java.nio.file.DirectoryNotEmptyException
import java.nio.file.FileAlreadyExistsException
import java.nio.file.FileSystemException
import java.nio.file.FileVisitResult
import java.nio.file.Files
import java.nio.file.LinkOption
import java.nio.file.NoSuchFileException
import java.nio.file.NotDirectoryException
import java.nio.file.Path
import java.nio.file.SimpleFileVisitor
import java.nio.file.attribute.BasicFileAttributes

/**
 * A file operation's failure as a person reads it: the system's reason ("No space left on
 * device") where the JDK gives one, never the exception's class name.
 */
internal fun ioReason(error: Throwable): String {
    val system = (error as? FileSystemException)?.reason
    return when {
        system != null && system.isNotBlank() -> system
        error is NoSuchFileException -> "no such file or directory"
        error is FileAlreadyExistsException -> "already exists"
        error is AccessDeniedException -> "permission denied"
        error is DirectoryNotEmptyException -> "directory not empty"
        error is NotDirectoryException -> "not a directory"
        error.message?.let { it.isNotBlank() && !it.contains("Exception") && !it.contains("java.") } == true ->
            error.message!!.let { if (it.length > 200) it.substring(0, 200) else it }
        else -> "the file operation failed"
    }
}

/** The size of the regular file at `path` (links not followed), or null when there is none. */
internal fun regularFileSize(path: Path): Long? = try {
    val attributes = Files.readAttributes(path, BasicFileAttributes::class.java, LinkOption.NOFOLLOW_LINKS)
    if (attributes.isRegularFile) attributes.size() else null
} catch (error: IOException) {
    null
}

/**
 * Deletes `path` and, if it is a directory, everything under it, never following a link
 * (a link planted inside is removed, not what it points to). Missing is fine.
 */
internal fun deleteTree(path: Path) {
    if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) return
    if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
        Files.deleteIfExists(path)
        return
    }
    Files.walkFileTree(path, object : SimpleFileVisitor<Path>() {
        override fun visitFile(file: Path, attributes: BasicFileAttributes): FileVisitResult {
            Files.deleteIfExists(file)
            return FileVisitResult.CONTINUE
        }

        override fun postVisitDirectory(directory: Path, error: IOException?): FileVisitResult {
            if (error != null) throw error
            Files.deleteIfExists(directory)
            return FileVisitResult.CONTINUE
        }
    })
}

/** [deleteTree], whose failure is left for a later clean-up (a leftover is never in the way: names are fresh or checked). */
internal fun deleteTreeQuietly(path: Path) {
    try {
        deleteTree(path)
    } catch (error: IOException) {
    }
}
