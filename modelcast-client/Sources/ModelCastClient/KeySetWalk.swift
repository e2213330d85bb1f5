import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one check's walk of the key set chain reached.
struct KeySetWalkResult: Sendable {
    /// The newest key set verified (the start when no newer one was found).
    let newest: KeySet
    /// `newest`'s document bytes, when it is newer than the start (to keep in the state).
    let newestBytes: Data?
    /// The key set whose `sequence_floors` replace the client's floors, when a step rotated a
    /// manifest key out (`KeySetChain.resetsSequenceFloors`, the last such step's); nil: keep
    /// the floors.
    let floorReset: KeySet?
    /// Why the walk stopped before the end of the chain; the verified prefix still counts.
    let failure: ClientError?
}

/// Walks a target's key sets from one the client trusts: `keys/(N+1).json` and its
/// `.sigs`, one version at a time, until the server has none (404, or the 403 of a private
/// bucket: `OptionalObject`), at most
/// `KeySetChain.maxVersionsPerCheck` versions per check. Each document and list is read
/// with a metadata request's bounds (`KeySet.maxBytes`, `MinisignSignatureList.maxBytes`,
/// the metadata deadline), so a hostile server costs a check bounded work.
struct KeySetWalk: Sendable {
    let configuration: ClientConfiguration
    let http: HTTPStream

    /// The target's root, where `keys/` is: the manifest URL's folder, above
    /// `channels/NAME/` for a channel other than stable.
    var targetBase: URL {
        var base = configuration.manifestURL.deletingLastPathComponent()
        let parts = base.pathComponents
        if parts.count >= 2, parts[parts.count - 2] == "channels", parts[parts.count - 1] == configuration.channel, configuration.channel != "stable" {
            base = base.deletingLastPathComponent().deletingLastPathComponent()
        }
        return base
    }

    /// Steps from `start` as far as the chain (and the per-check bound) goes. A refused
    /// link or a failed request ends the walk with `failure` set; what was verified before
    /// it is returned, as it is trusted whatever follows.
    func walk(from start: KeySet) async -> KeySetWalkResult {
        var current = start
        var bytes: Data?
        var floorReset: KeySet?
        for _ in 0..<KeySetChain.maxVersionsPerCheck {
            let version = current.version + 1
            let path = KeySet.path(version: version)
            let documentURL = targetBase.appendingPathComponent(path)
            do {
                guard let document = try await OptionalObject.fetch(documentURL, http: http, object: .keySet, limit: KeySet.maxBytes).body else { break }
                let list = try await OptionalObject.fetch(documentURL.appendingPathExtension("sigs"), http: http, object: .signatureList,
                                                          limit: MinisignSignatureList.maxBytes)
                guard let listBytes = list.body else {
                    throw ClientError.keySetRefused(path: path, version: version, reason: "\(path).sigs is missing (HTTP \(list.status)): the root signatures are not published")
                }
                let next: KeySet
                do {
                    let list = try MinisignSignatureList(data: listBytes, source: path + ".sigs")
                    next = try KeySetChain.step(trusted: current, nextBytes: document, nextSignatures: list.signatures, ed25519: ManifestFetcher.ed25519)
                } catch {
                    throw ClientError.keySetRefused(path: path, version: version, reason: String(describing: error))
                }
                if KeySetChain.resetsSequenceFloors(after: current, next: next) { floorReset = next }
                current = next
                bytes = document
            } catch {
                let failure = error as? ClientError ?? ClientError.keySetRefused(path: path, version: version, reason: String(describing: error))
                return KeySetWalkResult(newest: current, newestBytes: bytes, floorReset: floorReset, failure: failure)
            }
        }
        return KeySetWalkResult(newest: current, newestBytes: bytes, floorReset: floorReset, failure: nil)
    }
}
