import Foundation

/// Every failure of the CLI's own work (files, models, archives, keys, targets, stores,
/// commits). Each message names the offending value (a path, a field, a version) so the
/// user can act on it without reading logs. What the shared format's readers refuse is
/// `FormatError` (ModelCastFormat), which devices see too.
package enum ModelCastError: Error, Equatable, Sendable {
    /// The path does not exist.
    case notFound(path: String)
    /// A directory model contains no regular file.
    case emptyDirectory(path: String)
    /// A symbolic link was found inside a model tree; links are never followed or archived.
    case symlink(path: String, target: String)
    /// A device, FIFO or socket where a regular file or directory was expected.
    case specialFile(path: String, kind: String)
    /// Two names in one tree that an app's case-insensitive, normalising file system would merge.
    case nameCollision(first: String, second: String, rule: String)
    /// A file name that is not valid UTF-8.
    case nonUTF8Name(path: String)
    /// A file name with a control character (U+0000–U+001F, U+007F): it would break
    /// line- and tab-separated output, manifests and the files a device writes.
    case controlCharacterInName(path: String)
    /// A file name no device creates (`PathSegment`'s rule: a look-alike of `/` or `.`, an
    /// invisible character, more than 255 bytes).
    case unsafeName(path: String, rule: String)
    /// A file that cannot be opened or read.
    case unreadable(path: String, reason: String)
    /// Any other system call failure on a path.
    case io(operation: String, path: String, reason: String)
    /// A file that claims a model format (by name or magic) and fails that format's check.
    case invalidModel(path: String, format: String, reason: String)
    /// A file whose size changed between scanning and packing.
    case changedWhilePacking(path: String, expected: Int64, actual: Int64)
    /// The zip writer (zlib) reported an error.
    case archive(path: String, message: String)
    /// libcrypto reported an error.
    case crypto(operation: String, message: String)
    /// What the user typed cannot work: an option or argument value, a config-file value,
    /// or a combination of flags, with the value that caused it. Failures that come from
    /// what a target, store or manifest holds have their own cases below.
    case usage(String)
    /// The target does not hold what the command needs, or holds something it cannot act
    /// on: nothing is published there, it has no release history, its live manifest matches
    /// no history record (edited by hand, or a record was deleted), the live release names
    /// an unknown profile, no record says which base URL it is served from, or a history
    /// record names an object with an invalid digest.
    case targetState(String)
    /// A version breaks the version rules against what the target has published: lower
    /// than the live version, the same version with other files, a `--bump-to` that is not
    /// above the live version or was already used, or no automatic bump that sorts higher.
    case versionConflict(String)
    /// The request conflicts with the live release other than by version: a publish that
    /// would drop a model or the signature the live manifest has, or a `--remove-model` /
    /// rollback `--model` naming a model the live release does not have.
    case liveReleaseConflict(String)
    /// The release a rollback asks for cannot be served again: it never went live, went
    /// live only for some models, is not in the history, or its stored objects are gone or
    /// fail their proof.
    case rollbackTargetUnavailable(String)
    /// A manifest (served, stored or given as a file) that is not valid JSON of any
    /// profile, or lacks a field its profile needs: `source` names it, `reason` the field.
    case invalidManifest(source: String, reason: String)
    /// A body served with a Content-Encoding that cannot be decoded as a device would:
    /// an unsupported encoding, corrupt data, or more than the allowed size.
    case undecodableBody(url: String, encoding: String, reason: String)
    /// The manifest would already be expired when it goes live: its `published_at` (fixed
    /// in the past, e.g. by SOURCE_DATE_EPOCH, whose origin `origin` names) plus the
    /// validity period ends before `now`. Times are as the manifest writes them.
    case expiredManifest(publishedAt: String, origin: String?, validity: String, expiresAt: String, now: String)
    /// A publish that stopped part-way: the staged release failed the checks run before
    /// its manifest (`--verify-url`), the manifest write failed or was not confirmed (a
    /// concurrent publish, a lost answer), or undoing the steps before it left something
    /// behind. The message says what is live now and what was undone.
    case commitFailed(String)
    /// An encrypted minisign secret key was given without a passphrase.
    case passphraseRequired(source: String)
    /// A decrypted minisign secret key failed its checksum: the passphrase is wrong
    /// or the key file is damaged (the two cannot be told apart).
    case wrongPassphrase(source: String)
    /// A model-signing key (ECDSA P-256 in PEM, for OpenSSF model signatures) that cannot be
    /// read, parsed or used. `source` names the file; `reason` never contains key material.
    case modelSigningKey(source: String, reason: String)
    /// A model whose files differ from those its verified signature lists: each entry of
    /// `differences` names one changed, missing or extra file.
    case modelSignatureMismatch(model: String, source: String, differences: [String])

    /// The one-line message shown to the user.
    package var message: String {
        switch self {
        case .notFound(let path):
            return "no such file or directory: \(path)"
        case .emptyDirectory(let path):
            return "directory contains no files: \(path)"
        case .symlink(let path, let target):
            return "symbolic link refused: \(path) -> \(target) (copy the real file into the model instead)"
        case .specialFile(let path, let kind):
            return "not a regular file or directory (\(kind)): \(path)"
        case .nameCollision(let first, let second, let rule):
            return "names collide after \(rule): '\(first)' and '\(second)' (they would overwrite each other on a device)"
        case .nonUTF8Name(let path):
            return "file name is not valid UTF-8: \(path)"
        case .controlCharacterInName(let path):
            return "file name contains a control character: \(escapingControlCharacters(path)) (it would break manifests, tab-separated output and the files a device writes); rename it"
        case .unsafeName(let path, let rule):
            return "file name \(quotedValue(path)) is one no device can create: it \(rule); rename it"
        case .unreadable(let path, let reason):
            return "cannot read \(path): \(reason)"
        case .io(let operation, let path, let reason):
            return "\(operation) failed for \(path): \(reason)"
        case .invalidModel(let path, let format, let reason):
            return "invalid \(format) model \(path): \(reason)"
        case .changedWhilePacking(let path, let expected, let actual):
            return "file changed while packing: \(path) (was \(expected) bytes, now \(actual))"
        case .archive(let path, let message):
            return "zip error for \(path): \(message)"
        case .crypto(let operation, let message):
            return "\(operation) failed: \(message)"
        case .usage(let message), .targetState(let message), .versionConflict(let message),
             .liveReleaseConflict(let message), .rollbackTargetUnavailable(let message), .commitFailed(let message):
            return message
        case .invalidManifest(let source, let reason):
            return "manifest \(source): \(reason)"
        case .undecodableBody(let url, let encoding, let reason):
            return "\(url): cannot decode its Content-Encoding '\(encoding)': \(reason)"
        case .expiredManifest(let publishedAt, let origin, let validity, let expiresAt, let now):
            return "the manifest would be expired before it is published: published_at \(publishedAt)\(origin.map { " (\($0))" } ?? "") plus --expires-in \(validity) is \(expiresAt), and it is now \(now); unset SOURCE_DATE_EPOCH or give a longer --expires-in"
        case .passphraseRequired(let source):
            return "secret key \(source) is encrypted: a passphrase is required (type it at a terminal, or set MODELCAST_SIGNING_PASSPHRASE)"
        case .wrongPassphrase(let source):
            return "cannot decrypt secret key \(source): wrong passphrase or corrupt key (checksum mismatch)"
        case .modelSigningKey(let source, let reason):
            return "model-signing key \(source): \(reason)"
        case .modelSignatureMismatch(let model, let source, let differences):
            return "model \(model) does not match its signature \(source): " + differences.joined(separator: "; ")
        }
    }
}

extension ModelCastError: LocalizedError, CustomStringConvertible {
    package var errorDescription: String? { message }
    package var description: String { message }
}
