import Foundation
import ModelCastFormat

/// The hosting files every write keeps current (directory targets): every object of every
/// channel, with the headers it is served with.
extension TargetWriter {
    /// Renders the hosting files for every object the target holds: the artifacts of
    /// `records` still present, their history records (`recordObjects`) and the signatures
    /// signed releases keep beside them, then `live`
    /// (signature and manifest, manifest last) — and the same of every other channel, as
    /// the target holds it, so publishing one channel never drops another's rules.
    /// Returns the warnings where the directory crosses a host's documented limit (`HostLimits`).
    /// `others`: the other channels' states when the caller has read them already.
    @discardableResult
    func writeHostingFiles(
        _ hosting: HostingTarget, records: [Release], recordObjects: [Int64: ObjectMetadata], live: [HostedObject], excluding: Set<String> = [],
        others: [ChannelState]? = nil, hostedOn: Set<HostLimits.Host> = [], added: Set<String> = []
    ) async throws -> [String] {
        var channels = [ChannelObjects(manifestKey: hosting.manifestKey, records: records, recordObjects: recordObjects, live: live)]
        var others = others
        if others == nil { others = try await otherChannels(besides: hosting.manifestKey) }
        for other in others! {
            channels.append(ChannelObjects(manifestKey: other.manifestKey, records: other.state.history, recordObjects: other.state.recordObjects,
                                           live: try liveHostedObjects(state: other.state, manifestKey: other.manifestKey)))
        }
        // Stable's manifest first, then the other channels by name.
        channels.sort { ($0.manifestKey.hasPrefix(Channels.folder) ? 1 : 0, $0.manifestKey) < ($1.manifestKey.hasPrefix(Channels.folder) ? 1 : 0, $1.manifestKey) }
        let artifacts = Self.artifactHeaders(of: channels.flatMap(\.records))
        var objects: [HostedObject] = []
        for key in artifacts.keys.sorted() where !excluding.contains(key) {
            // Pruned objects are gone; the hosting files list only what is there.
            if try await storage.head(key) != nil {
                objects.append(HostedObject(key: key, role: .artifact, metadata: artifacts[key]!))
            }
        }
        for channel in channels {
            for record in channel.records {
                guard let metadata = channel.recordObjects[record.sequence] else { continue }
                objects.append(HostedObject(key: TargetLayout.historyKey(manifestKey: channel.manifestKey, sequence: record.sequence), role: .history, metadata: metadata))
                // The signature a signed release keeps beside its record: devices read it when
                // the live signature is not the live manifest's, so the host must have it too.
                // A few hundred bytes, read from the directory the hosting files describe.
                let keptKey = TargetLayout.signatureRecordKey(manifestKey: channel.manifestKey, sequence: record.sequence)
                if let kept = try await storage.get(keptKey, limit: SignedManifest.maximumSignatureSize) {
                    objects.append(HostedObject(key: keptKey, role: .history, metadata: try ObjectMetadata(
                        of: kept, cacheControl: CachePolicy.immutable, contentType: SignedManifest.signatureContentType)))
                }
                // Several signers' list kept beside it: under a key set with a threshold
                // above one, the kept .minisig alone proves nothing.
                let keptList = TargetLayout.signatureListRecordKey(manifestKey: channel.manifestKey, sequence: record.sequence)
                if let kept = try await storage.get(keptList, limit: MinisignSignatureList.maxBytes) {
                    objects.append(HostedObject(key: keptList, role: .history, metadata: try ObjectMetadata(
                        of: kept, cacheControl: CachePolicy.immutable, contentType: SignedManifest.signatureContentType)))
                }
            }
        }
        objects += try await keySetObjects()
        for channel in channels {
            objects += try await withSignatureList(channel.live, manifestKey: channel.manifestKey)
        }
        // A caller may name an object (the new record's kept list) the target already holds.
        var seen = Set<String>()
        objects = objects.filter { seen.insert($0.key).inserted }
        let files = try HostingFiles(objects: objects, baseURL: hosting.baseURL, root: realPath(hosting.folder.root) ?? hosting.folder.root, templates: hosting.templates)
        for file in files.files {
            try await hosting.folder.write(file.path, Data(file.content.utf8), file.path.hasSuffix(".sh"))
        }
        // Only the hosts the user deploys to, and only about what this run adds.
        return files.warnings(hosts: hostedOn, added: added)
    }

    /// The key set chain the target holds (`keys/N.json` with its `.minisig` and `.sigs`),
    /// as history-like immutable objects: devices walk it before they trust a manifest, so
    /// the host must serve every version. Per version the signatures come before the
    /// document, the order `KeySetWriter` writes them in, so an upload script never makes a
    /// document visible before its signatures.
    func keySetObjects() async throws -> [HostedObject] {
        var versions: [Int: [String]] = [:]
        for key in try await storage.list(prefix: KeySet.folder) {
            let name = key.dropFirst(KeySet.folder.count)
            guard let dot = name.firstIndex(of: "."), let version = Int(name[..<dot]), version > 0,
                  ["json", "json.minisig", "json.sigs"].contains(name[name.index(after: dot)...]) else { continue }
            versions[version, default: []].append(key)
        }
        var objects: [HostedObject] = []
        for version in versions.keys.sorted() {
            // .minisig, .sigs, then the document.
            for key in versions[version]!.sorted(by: { ($0.hasSuffix(".json") ? 1 : 0, $0) < ($1.hasSuffix(".json") ? 1 : 0, $1) }) {
                guard let data = try await storage.get(key, limit: KeySet.maxBytes) else { continue }
                let contentType = key.hasSuffix(".json") ? "application/json" : SignedManifest.signatureContentType
                objects.append(HostedObject(key: key, role: .history, metadata: try ObjectMetadata(of: data, cacheControl: CachePolicy.immutable, contentType: contentType)))
            }
        }
        return objects
    }

    /// `live` with the channel's `manifest.json.sigs` before its manifest when the target
    /// holds one and `live` does not name it: replaced with the manifest, cached like it.
    func withSignatureList(_ live: [HostedObject], manifestKey: String) async throws -> [HostedObject] {
        let listKey = manifestKey + ".sigs"
        guard !live.contains(where: { $0.key == listKey }), let manifest = live.firstIndex(where: { $0.role == .manifest }),
              let list = try await storage.get(listKey, limit: MinisignSignatureList.maxBytes) else { return live }
        var live = live
        live.insert(HostedObject(key: listKey, role: .signature, metadata: try ObjectMetadata(
            of: list, cacheControl: live[manifest].metadata.cacheControl, contentType: SignedManifest.signatureContentType)), at: manifest)
        return live
    }

    /// Every object the records name (files, segment indexes, model signatures, their
    /// rollback sections' too: prune keeps them) with the headers it is served with.
    static func artifactHeaders(of records: [Release]) -> [String: ObjectMetadata] {
        var artifacts: [String: ObjectMetadata] = [:]
        for record in records {
            for object in record.objects {
                guard let digest = SHA256Digest(hex: object.sha256) else { continue }
                artifacts[object.key] = ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: object.contentType, size: object.size, sha256: digest)
            }
        }
        return artifacts
    }

    /// Another channel of the target, as read.
    typealias ChannelState = (manifestKey: String, state: TargetState)

    /// Every channel of the target but the one at `manifestKey`, read (their index and live
    /// manifest): what hosting files and prune must also cover.
    func otherChannels(besides manifestKey: String) async throws -> [ChannelState] {
        var others: [ChannelState] = []
        for key in try await Channels.otherManifestKeys(storage, besides: manifestKey) {
            others.append((key, try await TargetState.load(from: storage, manifestKey: key)))
        }
        return others
    }

    /// What one channel adds to the hosting files.
    struct ChannelObjects {
        let manifestKey: String
        let records: [Release]
        let recordObjects: [Int64: ObjectMetadata]
        /// Its signature and manifest, manifest last.
        let live: [HostedObject]
    }

    /// The live signature and manifest as hosting-file entries (manifest last).
    func liveHostedObjects(state: TargetState, manifestKey: String) throws -> [HostedObject] {
        let cacheControl = liveManifestCacheControl(state: state, manifestKey: manifestKey)
        var objects: [HostedObject] = []
        if let signature = state.signatureData {
            objects.append(HostedObject(key: SignedManifest.signatureKey(for: manifestKey), role: .signature, metadata: try ObjectMetadata(
                of: signature, cacheControl: cacheControl, contentType: SignedManifest.signatureContentType)))
        }
        if let manifest = state.manifestData {
            objects.append(HostedObject(key: manifestKey, role: .manifest, metadata: try ObjectMetadata(
                of: manifest, cacheControl: cacheControl, contentType: "application/json")))
        }
        return objects
    }
}

/// Where and how a directory target's hosting files are written. Loading it reads
/// and parses the templates, so a bad `--templates` fails before anything is stored.
struct HostingTarget {
    let folder: HostingFolder
    let manifestKey: String
    let baseURL: String
    let templates: [String: String]

    /// nil for targets that are not a directory (they get no hosting files).
    init?(storage: any Storage, manifestKey: String, baseURL: String, templatesDirectory: String?) throws {
        guard let folder = storage.capabilities.hosting else { return nil }
        self.folder = folder
        self.manifestKey = manifestKey
        self.baseURL = baseURL
        templates = try HostingFiles.templates(overrideDirectory: templatesDirectory)
        _ = try HostingFiles(objects: [], baseURL: baseURL, root: folder.root, templates: templates)
    }
}
