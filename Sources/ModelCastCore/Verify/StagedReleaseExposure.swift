import Foundation
import ModelCastFormat

/// What `--verify-url` shows `modelcast serve` while it checks a staged release through it:
/// the objects the staged manifest names under the verify URL, with the headers verify
/// expects (`StagedObjectsFile`). Made by the gate that runs after publish has stored and
/// proven every object the release names and before anything names them, and withdrawn
/// when the check ends, pass or fail: serve never answers an object no publish proved.
/// Other targets serve what is stored already, so nothing is written for them.
package struct StagedReleaseExposure: Sendable {
    let root: String

    /// Lists what `manifest` names under `baseURL` for a directory target; nil for other
    /// targets, and for a manifest that cannot be read (verify then reports why).
    package static func expose(_ manifest: Data, baseURL: String, storage: any Storage) throws -> StagedReleaseExposure? {
        guard let root = storage.capabilities.hostingRoot,
              let facts = try? ManifestFacts.read(manifest, source: "the staged manifest") else { return nil }
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        var entries: [String: StagedObjectsFile.Entry] = [:]
        func add(_ url: String, contentType: String) {
            guard let key = keyOfURL(url, under: base) else { return }
            entries[key] = StagedObjectsFile.Entry(key: key, cacheControl: CachePolicy.immutable, contentType: contentType)
        }
        // Every object verify fetches (segment indexes and model signatures are among them),
        // with the type it expects (`Verifier.checkHeaders`): the manifest's, else the file name's.
        for object in facts.objects {
            add(object.url, contentType: object.contentType ?? ContentType.forArtifact(named: String(object.url.split(separator: "/").last ?? "")))
        }
        try StagedObjectsFile.write(entries.keys.sorted().map { entries[$0]! }, root: root)
        return StagedReleaseExposure(root: root)
    }

    /// Removes the list: the staged objects are served again only once the release is live.
    package func withdraw() {
        StagedObjectsFile.remove(root: root)
    }
}
