import Foundation
import ModelCastFormat

/// What a call would do, decided before anything is downloaded: the manifest it accepts
/// (`acceptedManifest`) and what it does with it on this device (`plan`,
/// `UpdateCheck+Plan.swift`). It reads the network and the disk and changes nothing but
/// `state.json` when the key set chain moved (`trustedKeySet(_:)`).
struct UpdateCheck: Sendable {
    let configuration: ClientConfiguration
    let http: HTTPStream
    let modelsDirectory: ModelsDirectory
    let downloader: Downloader
    /// Where `state.json` is: a check that verifies a newer key set keeps it there at once.
    let statePath: URL

    /// The manifest, fetched and proven, when it is new; its sequence must not be below
    /// the highest this device accepted from this URL. An update asks for it conditionally
    /// (`If-None-Match`) when the last accepted one was applied in full for at least the
    /// models this call covers, and is still fresh; a request always fetches it whole.
    /// nil for a 304 to a conditional GET.
    ///
    /// With a trusted key set, the chain is walked first (`trustedKeySet(_:)`), which may
    /// change `state` (and save it): the newest key set verified, and the sequence floor
    /// it resets.
    func acceptedManifest(_ state: inout ClientState, scope: UpdateScope) async throws -> CheckedManifest? {
        let url = configuration.manifestURL.absoluteString
        var fetcher = ManifestFetcher(configuration: configuration, http: http)
        fetcher.keySet = try await trustedKeySet(&state)
        // The conditional GET is only safe while every model is installed as recorded (a
        // name in `state.json` that is no model name is not).
        let complete = state.installed.allSatisfy { name, record in
            (try? ModelName(name)).flatMap { modelsDirectory.current($0)?.lastPathComponent } == record.id
        }
        // A 304 would keep the device on the manifest it trusts: once that one has expired,
        // the manifest is fetched whole and judged as a fresh device judges it (an expiry
        // that fails the check, whatever the reason, is "not fresh": no ETag is sent).
        let trusted = state.trusted[url]
        let fresh = trusted.map { trusted in trusted.expiresAt.map { (try? fetcher.checkFresh($0)) != nil } ?? true } ?? false
        var etag: String?
        if case .policy(let policy) = scope, complete, fresh, let coverage = state.coverage[url], coverage.context == coverageContext, policy <= coverage.policy {
            etag = state.etags[url]
        }
        guard let checked = try await fetcher.fetch(ifNoneMatch: etag) else {
            // "Not modified" stands for the manifest asked about, and only while it is
            // fresh (the clock is read again: it may have expired during the request).
            if let expiresAt = trusted?.expiresAt { try fetcher.checkFresh(expiresAt) }
            guard etag != nil else { throw ClientError.http(url: url, status: 304) }
            return nil
        }
        let release = checked.release
        if let highest = state.sequences[url], release.sequence < highest {
            throw ClientError.replayed(url: url, sequence: release.sequence, highestAccepted: highest)
        }
        // Both were parsed already (the manifest by its decoding, the app's by the configuration's validation).
        if let minimum = release.minAppVersion, let app = configuration.appVersion,
           let required = try? AppVersion(minimum), let current = try? AppVersion(app), current < required {
            throw ClientError.requiresNewerApp(minimum: minimum, current: app)
        }
        return checked
    }

    /// The key set the manifest must be proven by, nil when the app ships none: the chain
    /// walked from the newest key set verified before (or the app's), the newest link
    /// verified kept in the state, saved at once (before the manifest is fetched, so a
    /// refused manifest does not undo it). When a step rotated a manifest key out, the
    /// sequence floor of every manifest URL becomes that key set's floor for the URL's
    /// channel (`sequence_floors`, `KeySetChain.resetsSequenceFloors`), replacing one a leaked key may have raised; and every
    /// ETag is dropped, as a 304 would stand for a manifest proven under the older set.
    /// The newest key set must not have expired.
    func trustedKeySet(_ state: inout ClientState) async throws -> KeySet? {
        guard let start = try configuration.newestTrustedKeySet(state) else { return nil }
        let walk = await KeySetWalk(configuration: configuration, http: http).walk(from: start)
        if let bytes = walk.newestBytes {
            state.keySet = ClientState.VerifiedKeySet(version: walk.newest.version, document: bytes.base64EncodedString())
            if let reset = walk.floorReset {
                // Each manifest URL is one channel's stream: it takes that channel's floor.
                for key in state.sequences.keys { state.sequences[key] = reset.sequenceFloor(channel: ClientConfiguration.channelName(ofManifestURL: key)) }
                state.sequences[configuration.manifestURL.absoluteString] = reset.sequenceFloor(channel: configuration.channelName)
            }
            state.etags = [:]
            state.trusted = [:]
            try state.save(statePath)
        }
        if let failure = walk.failure { throw failure }
        do { try walk.newest.checkFresh(at: configuration.now()) } catch {
            throw ClientError.keySetRefused(path: walk.newest.path, version: walk.newest.version, reason: String(describing: error))
        }
        return walk.newest
    }

    /// A digest of what, besides the manifest, decides the models and variants a call
    /// takes: the device profile, the app's policies, models and device id. A 304 stands
    /// for "nothing to do" only while it is the same.
    var coverageContext: String {
        let device = configuration.device
        let policies = configuration.downloadPolicies
        var parts: [String] = []
        parts.append(device.physicalMemory.map { String($0) } ?? "-")
        parts.append(device.platform?.rawValue ?? "-")
        parts.append(device.osVersion ?? "-")
        parts.append(device.architecture ?? "-")
        parts.append(device.accelerators.map(\.rawValue).sorted().joined(separator: ","))
        parts.append(device.capabilities.sorted().joined(separator: ","))
        parts.append(policies.keys.sorted().map { name in name + "=" + policies[name]!.rawValue }.joined(separator: ","))
        parts.append(configuration.models.map { $0.sorted().joined(separator: ",") } ?? "*")
        parts.append(configuration.deviceID)
        return hex(SHA256Small.hash(Array(parts.joined(separator: "\n").utf8)))
    }
}

/// `a + b`, refusing a total past what 64 bits hold (a manifest's sizes are each at
/// most 2^53, but thousands of them could add up past it).
func addSizes(_ a: Int64, _ b: Int64, of manifestURL: URL) throws -> Int64 {
    let (sum, overflow) = a.addingReportingOverflow(b)
    guard !overflow else {
        throw ClientError.invalidManifest(url: manifestURL.absoluteString, reason: "the sizes of its files add up to more than 2^63 bytes")
    }
    return sum
}
