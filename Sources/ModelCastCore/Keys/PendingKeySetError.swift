import Foundation
import ModelCastFormat

/// Why a key set version on local disk (`keys sign`, `keys push`) is refused before any
/// signature is added or anything is uploaded. Paths are quoted (control characters
/// escaped); every case is exit 1.
package enum PendingKeySetError: Error, Equatable, Sendable {
    /// The file's name is not `N.json` for the version it holds.
    case misnamed(path: String, version: Int64)
    /// The document is not written as `modelcast keys` writes it (canonical JSON), so it
    /// was edited by hand.
    case notCanonical(path: String)
    /// The previous version given (`--previous`, or `keys/(N-1).json` beside it) is not
    /// version N-1.
    case wrongPrevious(path: String, found: Int64, expected: Int64)
    /// A signature list or `.minisig` that is not what `keys` writes: a key listed twice, a
    /// `.minisig` not in the list, a `.minisig` holding more than one signature.
    case inconsistentSignatures(path: String, detail: String)
    /// A signature by a key that is no root key of the version or of the one before it.
    case strangerSignature(path: String, keyID: MinisignKeyID, roots: [MinisignKeyID])
    /// A signature that does not verify over the document or does not bind it.
    case badSignature(path: String, keyID: MinisignKeyID, detail: String)
    /// A version with no signature list, pushed.
    case unsigned(path: String, sigsPath: String)

    /// The one-line message.
    package var message: String {
        switch self {
        case let .misnamed(path, version):
            return "\(path) holds key set version \(version), so it must be named \(version).json (it is uploaded as \(KeySet.path(version: version)), and its signatures sit beside it under that name)"
        case let .notCanonical(path):
            return "\(path) is not written as modelcast keys writes a key set (canonical JSON: sorted keys, two-space indentation, a line feed at the end): root keys sign only the bytes modelcast writes, so it was changed by hand"
        case let .wrongPrevious(path, found, expected):
            return "\(path) is key set version \(found), not \(expected), the version the pending one follows"
        case let .inconsistentSignatures(path, detail):
            return "\(path): \(detail)"
        case let .strangerSignature(path, keyID, roots):
            return "\(path) holds a signature by key \(keyID.hex), which is no root key of the key set or of the one before it (root keys: \(roots.map(\.hex).joined(separator: ", ")))"
        case let .badSignature(path, keyID, detail):
            return "\(path): the signature by key \(keyID.hex) does not verify over the document (was the document changed after it was signed?): \(detail)"
        case let .unsigned(path, sigsPath):
            return "\(path) has no root signatures (no \(sigsPath) beside it): add them with modelcast keys sign \(path) --sign-root KEYFILE"
        }
    }
}

extension PendingKeySetError: LocalizedError, CustomStringConvertible, ExitStatusProviding {
    package var errorDescription: String? { message }
    package var description: String { message }
    /// What a local file holds: refused.
    package var exitStatus: ExitStatus { .refused }
}
