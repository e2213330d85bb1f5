import Foundation

/// Key and signature files are a few hundred bytes; anything much larger is not
/// one, and is refused before it is read into memory.
let maximumKeyFileSize = 64 * 1024

/// Reads a small text file (a key or signature file) as UTF-8. The byte buffers
/// are wiped afterwards (the returned String cannot be: best effort). `kind` says what
/// the file should have been, for errors.
func readKeyFile(_ path: String, kind: String = "a minisign key or signature file") throws -> String {
    let file = try FileDescriptor.openForReading(path)
    var bytes = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 4096)
    defer { wipeSecret(&bytes); wipeSecret(&chunk) }
    while true {
        let n = try chunk.withUnsafeMutableBytes { try file.read(into: $0) }
        if n == 0 { break }
        bytes += chunk[0..<n]
        if bytes.count > maximumKeyFileSize {
            throw ModelCastError.unreadable(path: path, reason: "larger than \(maximumKeyFileSize) bytes, so not \(kind)")
        }
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
        throw ModelCastError.unreadable(path: path, reason: "not UTF-8 text, so not \(kind)")
    }
    return text
}

/// Refuses, before a key is made or a passphrase asked for (scrypt takes seconds), key
/// files that could not be written: one that exists (unless `force`, and then it must not be
/// a directory), or whose directory is missing, not a directory or not writable. Writing
/// checks again; this only makes the common mistakes fail at once, with nothing written.
package func checkKeyFileDestinations(_ paths: [String], force: Bool) throws {
    for path in paths {
        var info = stat()
        if lstat(path, &info) == 0 {
            guard force else { throw keyFileExistsError(path) }
            if case .directory = FileType(mode: info.st_mode) {
                throw ModelCastError.usage("\(escapingControlCharacters(path)) is a directory; a key file cannot replace it (give a file path); nothing was written")
            }
        }
        let parent = PathText.parent(path)
        let directory = parent.isEmpty ? "." : parent
        func refuse(_ reason: String) -> ModelCastError {
            .io(operation: "write the key file", path: escapingControlCharacters(path), reason: "\(reason); nothing was written")
        }
        var directoryInfo = stat()
        guard stat(directory, &directoryInfo) == 0 else {
            let code = errno
            throw refuse(code == ENOENT ? "its directory \(escapingControlCharacters(directory)) does not exist: create it first"
                                        : "its directory \(escapingControlCharacters(directory)): \(errnoDescription(code))")
        }
        guard case .directory = FileType(mode: directoryInfo.st_mode) else {
            throw refuse("\(escapingControlCharacters(directory)) is not a directory")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw refuse("its directory \(escapingControlCharacters(directory)) is not writable: \(errnoDescription())")
        }
    }
}

/// Writes a key file with exactly `mode` permissions, never leaving a partial file
/// at `path`: the text goes to a temporary file beside it (created with `mode`,
/// registered for removal if the process is interrupted), which is then put in
/// place. With `force` it is renamed over `path`; without, it is hard-linked to
/// `path`, which fails if `path` exists, so an existing key is never replaced.
func writeKeyFile(_ path: String, contents: String, mode: mode_t, force: Bool) throws {
    var bytes = Array(contents.utf8)
    defer { wipeSecret(&bytes) }
    if !force, linkStatusExists(path) {
        throw keyFileExistsError(path)
    }
    let directory = PathText.parent(path)
    let name = PathText.lastComponent(path)
    let temporary = (directory.isEmpty ? "." : directory)
        + "/.\(name).modelcast-\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16)).tmp"
    Interrupts.shared.registerTemporary(temporary)
    defer {
        unlink(temporary)  // gone already after a rename; a leftover link otherwise
        Interrupts.shared.unregisterTemporary(temporary)
    }
    try writeNewFile(temporary, reportedAs: path, bytes: bytes, mode: mode)
    if force {
        guard rename(temporary, path) == 0 else {
            throw ModelCastError.io(operation: "rename", path: path, reason: errnoDescription())
        }
    } else if link(temporary, path) != 0 {
        let code = errno
        if code == EEXIST { throw keyFileExistsError(path) }
        guard [EPERM, ENOTSUP, EOPNOTSUPP, ENOSYS].contains(code) else {
            throw ModelCastError.io(operation: "link", path: path, reason: errnoDescription(code))
        }
        // A file system without hard links: create `path` itself exclusively. A
        // reader could see it half-written, but it is never a replaced key.
        try writeNewFile(path, reportedAs: path, bytes: bytes, mode: mode)
    }
    syncDirectory(of: path)
}

/// Creates `path` exclusively with `mode` and writes `bytes` durably; removes the
/// file again if anything fails after it was created.
private func writeNewFile(_ path: String, reportedAs reported: String, bytes: [UInt8], mode: mode_t) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    guard fd >= 0 else {
        let code = errno
        if code == EEXIST && path == reported { throw keyFileExistsError(reported) }
        throw ModelCastError.io(operation: "create", path: reported, reason: errnoDescription(code))
    }
    let file = FileDescriptor(fd: fd, path: reported)
    do {
        // The umask may have cleared bits of `mode`; set exactly what was asked.
        guard fchmod(fd, mode) == 0 else {
            throw ModelCastError.io(operation: "chmod", path: reported, reason: errnoDescription())
        }
        try bytes.withUnsafeBytes { try file.writeAll($0) }
        try file.sync()
        try file.close()
    } catch {
        unlink(path)
        throw error
    }
}

private func linkStatusExists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

/// An existing key file, which is never replaced without --force.
func keyFileExistsError(_ path: String) -> ModelCastError {
    // A refusal, not an I/O failure: running again changes nothing.
    .usage("\(path) already exists; refusing to overwrite a key file (pass --force to replace it)")
}
