import Foundation

/// `verify SOURCE` once its flags are read: which manifests of SOURCE are verified (one
/// channel, or every channel a directory or store holds) and how their objects are read.
/// The command line turns the flags into `options` and checks them against what SOURCE
/// is; `withSource` opens (and closes) what SOURCE and `--origin` name.
package struct VerifyRun: Sendable {
    /// SOURCE as given (a merged report names it).
    package let source: String
    /// The manifest key inside a directory or store; each channel's derives from it.
    package let manifestKey: String
    /// `--channel`: only this channel; nil: every channel a directory or store holds.
    package let channel: String?
    package let options: VerifyOptions

    package init(source: String, manifestKey: String, channel: String?, options: VerifyOptions) {
        self.source = source
        self.manifestKey = manifestKey
        self.channel = channel
        self.options = options
    }

    /// Verifies SOURCE as `scope` reads it: a bucket through the store's API, a directory
    /// from its files (its history from the directory as a target), a manifest URL or file
    /// over HTTP. `standInFor`: the base URL the release was published for, its objects
    /// fetched from the same paths on the stand-in server the manifest URL names.
    /// `origin`: the target whose live manifest the URL must serve.
    package func verify(in scope: SourceScope, standInFor: String? = nil, origin: TargetSettings? = nil) async throws -> VerifyReport {
        if case .bucket = scope.source { return try await verify(store: scope.storage()) }
        let target = try VerifyTarget.resolve(scope.source, baseURLs: options.expectedPrefixes, manifestKey: manifestKey, maxManifestBytes: options.maxManifestBytes)
        if let directory = target.directory { return try await verify(directory: directory, storage: scope.storage()) }
        return await verify(target, http: scope.http(), standInFor: standInFor, origin: try origin.map(scope.open))
    }

    /// The longest silence an HTTP read of this run tolerates: the request timeout, 15 s at most.
    package var httpIdleTimeout: TimeInterval { min(options.requestTimeout, 15) }

    /// An s3:// target, read through the store's API.
    func verify(store storage: any Storage) async throws -> VerifyReport {
        let storeOptions = options
        return try await eachChannel(of: storage) { key in
            await Verifier.verify(store: storage, manifestKey: key, options: storeOptions)
        }
    }

    /// A published directory: objects read from disk, and the directory, opened as a
    /// target (`storage`), for its history.
    func verify(directory: DirectoryFetcher, storage: any Storage) async throws -> VerifyReport {
        var options = options
        if options.expectedPrefixes.isEmpty { options.expectedPrefixes = [directory.baseURL] }
        // The directory's history says which release went live last.
        options.historyStorage = storage
        let directoryOptions = options
        return try await eachChannel(of: storage) { key in
            var options = directoryOptions
            options.historyManifestKey = key
            let url = URLParts.url(base: directory.baseURL, key: key)
            return await Verifier(fetcher: directory, options: options).verify(manifestURL: url)
        }
    }

    /// A manifest URL or a local manifest file, its objects fetched through `http`.
    func verify(_ target: VerifyTarget, http: HTTPFetcher, standInFor: String?, origin: (any Storage)?) async -> VerifyReport {
        var options = options
        var fetcher: any ObjectFetcher = http
        if let standInFor {
            if options.expectedPrefixes.isEmpty { options.expectedPrefixes = [standInFor] }
            fetcher = StandInFetcher(http, production: standInFor, manifestURL: target.manifestURL)
        }
        options.origin = origin
        return await Verifier(fetcher: fetcher, options: options).verify(
            manifestURL: target.manifestURL, localManifest: target.localManifest, localSignature: target.localSignature)
    }

    /// Verifies `channel`'s manifest, or every channel the target holds (stable's
    /// alone, unmerged, when it has no other).
    func eachChannel(of storage: any Storage, _ verifyChannel: (String) async throws -> VerifyReport) async throws -> VerifyReport {
        var channels: [String]
        if let channel {
            channels = [channel]
        } else {
            // A store that cannot be listed is reported by the verify of stable's manifest, in its table.
            channels = (try? await Channels.list(storage, base: manifestKey)) ?? []
        }
        if channels.isEmpty { channels = [Channels.stable] }  // what is missing is then reported
        var reports: [(channel: String, manifestKey: String, report: VerifyReport)] = []
        for name in channels {
            let key = Channels.manifestKey(channel: name, base: manifestKey)
            reports.append((name, key, try await verifyChannel(key)))
        }
        if channel == nil, reports.count == 1 { return reports[0].report }
        return VerifyReport.merging(reports, source: source, strict: options.strict)
    }
}
