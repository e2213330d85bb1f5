import Foundation

/// Reads what the release page shows: every channel of a directory or store target, or
/// the one channel a manifest URL serves (with the history records its host serves).
package enum ReleasePageReader {
    /// What SOURCE shows, read through `scope`: every channel of a directory or store
    /// target (or only `channel`), or the one channel a manifest URL serves.
    /// With the target's key sets, when it has any (`ReleaseKeySetsReader`).
    package static func read(_ scope: SourceScope, baseManifestKey: String = "manifest.json", channel: String? = nil, at now: Date) async throws -> ReleasePage {
        var page: ReleasePage
        switch scope.source {
        case .manifestURL(let url):
            page = try await read(manifestURL: url, http: scope.http(), at: now)
        case .bucket, .directory:
            page = try await read(scope.storage(), baseManifestKey: baseManifestKey, channel: channel, at: now)
        case .manifestFile(let path):
            throw ModelCastError.usage("\(path) is a file: report reads a published directory, s3://bucket/prefix or a manifest URL")
        }
        await ReleaseKeySetsReader.add(to: &page, fetch: try scope.keySetFetch(), now: now)
        return page
    }

    /// Every channel of `storage` (or only `channel`). A channel that cannot be read is
    /// shown with what went wrong, beside the others.
    package static func read(_ storage: any Storage, baseManifestKey: String = "manifest.json", channel: String? = nil, at now: Date) async throws -> ReleasePage {
        var names = try await Channels.list(storage, base: baseManifestKey)
        guard !names.isEmpty else {
            throw ModelCastError.targetState("nothing is published at \(storage.location): no \(baseManifestKey), and no channels/NAME/\(baseManifestKey)")
        }
        if let channel {
            // A mistyped channel is named, not drawn as an empty page.
            guard names.contains(channel) else {
                throw ModelCastError.targetState("\(storage.location) has no channel \(quotedValue(channel)): its channels are \(names.joined(separator: ", "))")
            }
            names = [channel]
        }
        var states: [(name: String, key: String, state: Result<TargetState, Error>)] = []
        for name in names {
            let key = Channels.manifestKey(channel: name, base: baseManifestKey)
            do {
                states.append((name, key, .success(try await TargetState.load(from: storage, manifestKey: key))))
            } catch {
                states.append((name, key, .failure(error)))
            }
        }
        var histories: [String: [Release]] = [:]
        // try?: an unreadable channel is shown as such below; it names no promotions.
        for (name, _, state) in states { histories[name] = (try? state.get())?.history ?? [] }
        let channels = states.map { name, key, state in
            switch state {
            case .success(let state):
                return ChannelReport.make(name: name, manifestKey: key, state: state, otherChannels: histories.filter { $0.key != name }, now: now)
            case .failure(let error):
                return ChannelReport.unreadable(name: name, manifestKey: key, error: error)
            }
        }
        return ReleasePage(target: storage.location, at: formatTimestamp(now), channels: channels)
    }

    /// The channel a manifest URL serves, as a device reads it: the manifest, its detached
    /// signature, and the history records the host serves beside it (up to `historyLimit`,
    /// newest first). A web server cannot list, so the target's other channels are not shown.
    static func read(manifestURL: String, http: HTTPFetcher, at now: Date, historyLimit: Int = 100) async throws -> ReleasePage {
        try await read(try ManifestPlace(manifestURL), http: http, at: now, historyLimit: historyLimit)
    }

    private static func read(_ place: ManifestPlace, http: HTTPFetcher, at now: Date, historyLimit: Int) async throws -> ReleasePage {
        guard let manifest = try await fetch(place.url, http: http, limit: TargetLayout.recordLimit) else {
            // The server answered: nothing is published there (a refusal, not an I/O failure).
            throw ModelCastError.targetState("no manifest at \(place.url): nothing is published there")
        }
        let signature = try await fetch(SignedManifest.signatureKey(for: place.url), http: http, limit: SignedManifest.maximumSignatureSize)
        // The newest sequence devices have seen: the manifest's own or its signature's.
        let newest = try TargetState.assemble(records: [], manifest: manifest, signature: signature).liveManifestSequence
        var records: [(sequence: Int64, data: Data, source: String)] = []
        var notes: [String] = []
        @Sendable func record(_ sequence: Int64) async throws -> (sequence: Int64, data: Data, source: String)? {
            let url = place.base + "/" + TargetLayout.historyKey(manifestKey: place.manifestKey, sequence: sequence)
            return try await fetch(url, http: http, limit: TargetLayout.recordLimit).map { (sequence, $0, url) }
        }
        // At most `historyBudget` bytes of records: a host serving huge records cannot
        // make the page take all memory (a real record is a few KiB).
        var read = 0
        func add(_ found: (sequence: Int64, data: Data, source: String)) {
            records.append(found)
            read += found.data.count
        }
        if let newest, newest > 0 {
            let low = newest > Int64(historyLimit) ? newest - Int64(historyLimit) + 1 : 1
            var sequences = Array((low...newest).reversed())
            while !sequences.isEmpty, read <= Self.historyBudget {
                let batch = Array(sequences.prefix(8))
                sequences.removeFirst(batch.count)
                for found in try await boundedMap(batch, concurrency: 8, { try await record($0) }) { found.map(add) }
            }
            // Records above the live one: a publish under way, or one that failed.
            var next = newest
            while records.count < historyLimit + 10, read <= Self.historyBudget, next < Int64.max, let above = try await record(next + 1) {
                add(above)
                next += 1
            }
            if low > 1 { notes.append("history: the newest \(historyLimit) sequences read over HTTP (\(low)–\(newest)); run report on the target for all") }
        } else {
            var next: Int64 = 1
            while records.count < historyLimit, read <= Self.historyBudget, let found = try await record(next) {
                add(found)
                next += 1
            }
        }
        if read > Self.historyBudget {
            notes.append("history: stopped reading records over HTTP after \(formatBytes(Int64(read))) (the most read is \(formatBytes(Int64(Self.historyBudget))))")
        }
        notes.append("read over HTTP from \(place.url): a web server cannot list the target's other channels; run report on the target (directory or s3://) for every channel")
        var report: ChannelReport
        do {
            let state = try TargetState.assemble(records: records, manifest: manifest, signature: signature)
            report = ChannelReport.make(name: place.channel, manifestKey: place.manifestKey, state: state, otherChannels: [:], now: now)
        } catch {
            report = ChannelReport.unreadable(name: place.channel, manifestKey: place.manifestKey, error: error)
        }
        report.notes += notes
        return ReleasePage(target: place.url, at: formatTimestamp(now), channels: [report])
    }

    /// The most bytes of history records read from a manifest URL's host.
    static let historyBudget = 64 << 20

    /// The body of a GET of `url`; nil for 404 (or 403, which S3-backed hosts answer for a missing key).
    private static func fetch(_ url: String, http: HTTPFetcher, limit: Int) async throws -> Data? {
        try await http.getSmallObject(url, limit: limit, absent: [403, 404])
    }
}

/// Where a manifest URL sits in its target: `…/manifest.json` is stable's, and
/// `…/channels/NAME/manifest.json` channel NAME's, both under the target's base URL (as
/// verify reads them: `targetRoot(ofManifestURL:)`, `targetKey(ofManifestURL:)`).
struct ManifestPlace {
    let url: String
    /// The target's base URL (no trailing slash).
    let base: String
    let channel: String
    /// The manifest's key in the target.
    let manifestKey: String

    /// Refuses anything but an http(s) URL whose path ends in a `.json` file.
    init(_ url: String) throws {
        guard var parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), scheme == "https" || scheme == "http",
              !(parts.host ?? "").isEmpty else {
            throw ModelCastError.usage("\(quotedValue(url)) is not a manifest URL: give http(s)://HOST/…/manifest.json")
        }
        parts.query = nil
        parts.fragment = nil
        let plain = parts.string ?? url
        let key = targetKey(ofManifestURL: plain)
        // try?: refused just below, naming the URL.
        guard key.hasSuffix(".json"), (try? validateKey(key)) != nil else {
            throw ModelCastError.usage("\(quotedValue(url)) names no manifest: its path must end in a .json file (…/manifest.json, …/channels/beta/manifest.json)")
        }
        self.url = url
        manifestKey = key
        channel = Channels.split(manifestKey: key).channel
        base = String(targetRoot(ofManifestURL: plain).dropLast())
    }
}

extension ChannelReport {
    /// A channel whose records or manifest could not be read: the error, and nothing else.
    static func unreadable(name: String, manifestKey: String, error: Error) -> ChannelReport {
        ChannelReport(name: name, manifestKey: manifestKey, live: nil, rollout: nil,
                      signature: SignatureReport(state: .unsigned, keyID: nil, signedSequence: nil, expiresAt: nil, daysLeft: nil, checked: nil),
                      history: [], verify: nil, notes: ["cannot read this channel: \(error)"])
    }
}
