import Foundation
import ModelCastFormat

/// Writes a signed key set's objects through a target's storage, create-only (key sets are
/// immutable, served for a year like history records): the signatures first and the
/// document last, so a reader that finds `keys/N.json` finds its signatures. If a write
/// fails, the objects this run created are deleted again, leaving the target as it was.
package enum KeySetWriter {
    /// Writes `signed` to `storage`, and first, when given, `previous` (the document of the
    /// version it follows, which a pending version under `--out` carries for `keys sign`);
    /// returns the keys written.
    @discardableResult
    package static func write(_ signed: SignedKeySet, to storage: any Storage, previous: (keySet: KeySet, bytes: Data)? = nil) async throws -> [String] {
        let objects = (previous.map { [($0.keySet.path, $0.bytes, "application/json")] } ?? []) + signed.objects
        var created: [String] = []
        do {
            for object in objects {
                let metadata = try ObjectMetadata(of: object.data, cacheControl: CachePolicy.immutable, contentType: object.contentType)
                if try await storage.putIfAbsent(object.key, data: object.data, metadata: metadata) == .created { created.append(object.key) }
            }
        } catch {
            // The undo is best effort: the write's own error is the one to report, and the
            // document goes last, so a signature file left behind has no document a reader finds.
            for key in created.reversed() { try? await storage.delete(key) }
            throw error
        }
        return objects.map(\.key)
    }
}
