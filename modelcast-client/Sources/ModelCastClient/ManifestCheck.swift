import Crypto
import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A manifest fetched and proven: signed by a trusted key (when keys are configured),
/// its signed comment matching it, not expired.
struct CheckedManifest: Sendable {
    let release: Release
    /// The manifest's ETag, for the next conditional GET.
    let etag: String?
    /// When it stops being fresh: the earlier of its `expires_at` and its signature's, as
    /// the manifest spells it; nil when it never does.
    let expiresAt: String?
}

/// Fetches the manifest the way a careful device does.
struct ManifestFetcher: Sendable {
    let configuration: ClientConfiguration
    let http: HTTPStream
    /// The key set the manifest is proven by (its manifest keys and threshold), instead of
    /// `configuration.publicKeys`; nil without one.
    var keySet: KeySet?

    /// nil when the server answers 304 (unchanged since `etag`): the caller judges it, as
    /// only a manifest it trusts and asked about can be unchanged.
    func fetch(ifNoneMatch etag: String?) async throws -> CheckedManifest? {
        let url = configuration.manifestURL
        var request = URLRequest(url: url)
        if let etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let (response, data) = try await http.small(request, object: .manifest, limit: configuration.maxManifestBytes)
        if response.statusCode == 304 { return nil }
        guard response.statusCode == 200 else { throw ClientError.http(url: url.absoluteString, status: response.statusCode) }
        let (release, comment) = try await proven(data)
        guard release.channel == configuration.channel else {
            throw ClientError.wrongChannel(url: url.absoluteString, expected: configuration.channel, actual: release.channel)
        }
        var earliest: (date: Date, text: String)?
        for expiresAt in [release.expiresAt, comment?.expiresAt].compactMap({ $0 }) {
            let expiry = try checkFresh(expiresAt)
            if expiry < earliest?.date ?? .distantFuture { earliest = (expiry, expiresAt) }
        }
        if let rollout = release.rollout, let problem = rollout.problems.first {
            throw ClientError.invalidManifest(url: url.absoluteString, reason: "rollout: \(problem)")
        }
        return CheckedManifest(release: release, etag: response.value(forHTTPHeaderField: "ETag"), expiresAt: earliest?.text)
    }

    /// Refuses a manifest whose expiry `expiresAt` has passed by the configured clock
    /// (`expired`, naming it and the time now); returns the expiry.
    @discardableResult
    func checkFresh(_ expiresAt: String) throws -> Date {
        let url = configuration.manifestURL.absoluteString
        guard let expiry = parseTimestamp(expiresAt) else {
            throw ClientError.invalidManifest(url: url, reason: "expires_at \(quotedValue(expiresAt)) is not an RFC 3339 time")
        }
        let now = configuration.now()
        if expiry <= now { throw ClientError.expired(url: url, expiresAt: expiresAt, now: formatTimestamp(now)) }
        return expiry
    }

    /// The release and, when keys are pinned, the trusted comment of the signature that
    /// proves it: the inline signature, else `MANIFEST.minisig`, else (when that one is
    /// another release's) the signature kept beside the history record of the sequence the
    /// manifest claims (`keptSignatureProof`). Without configured keys the manifest is
    /// taken as it is (its bytes minus any inline signature).
    private func proven(_ data: Data) async throws -> (Release, TrustedComment?) {
        if let keySet { return try await provenByThreshold(data, keySet: keySet) }
        guard !configuration.publicKeys.isEmpty else { return (try decodeRelease(InlineSignature.strip(data)), nil) }
        let url = configuration.manifestURL.absoluteString
        let keys = try pinnedKeys()
        if let (signed, member) = InlineSignature.split(data) {
            let file: String
            do { file = try InlineSignature.signatureFile(fromMember: member) } catch {
                throw ClientError.badSignature(url: url, reason: String(describing: error))
            }
            let comment = try verify(file, source: url, fileSource: url + ".minisig", message: signed, keys: keys)
            let release = try decodeRelease(signed)
            try bind(comment, to: release)
            return (release, comment)
        }
        let signatureURL = configuration.manifestURL.appendingPathExtension("minisig")
        guard let file = try await signatureFile(at: signatureURL) else { throw ClientError.unsigned(url: url) }
        do {
            let comment = try verify(file, source: url, fileSource: url + ".minisig", message: data, keys: keys)
            let release = try decodeRelease(data)
            try bind(comment, to: release)
            return (release, comment)
        } catch ClientError.badSignature(_, let reason) {
            return try await keptSignatureProof(data, liveFile: file, keys: keys, liveFailure: reason)
        }
    }

    /// The trusted keys, parsed; a configured key that is no minisign public key is named.
    private func pinnedKeys() throws -> [MinisignPublicKey] {
        do {
            return try configuration.publicKeys.enumerated().map { index, text in
                try MinisignPublicKey(text: text, source: "configured public key \(index + 1) ('\(text.prefix(60).replacingOccurrences(of: "\n", with: " "))')")
            }
        } catch {
            throw ClientError.badSignature(url: configuration.manifestURL.absoluteString, reason: String(describing: error))
        }
    }

    /// A detached signature's text, fetched with a metadata request's bounds (at most
    /// 16 KiB, the idle timeout, the minimum rate and the metadata deadline); nil when the
    /// server has none (404).
    func signatureFile(at signatureURL: URL) async throws -> String? {
        var request = URLRequest(url: signatureURL)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let (response, body) = try await http.small(request, object: .signature, limit: Self.maxSignatureBytes)
        if response.statusCode == 404 { return nil }
        guard response.statusCode == 200 else { throw ClientError.http(url: signatureURL.absoluteString, status: response.statusCode) }
        return String(decoding: body, as: UTF8.self)
    }

    /// Largest signature file read: a minisign signature is a few hundred bytes.
    static let maxSignatureBytes = 16 << 10

    /// The trusted comment of `file`, a minisign signature over `message` by one of `keys`.
    /// The errors name the signature as `source` (`file` as `fileSource` when it cannot be parsed).
    func verify(_ file: String, source: String, fileSource: String, message: Data, keys: [MinisignPublicKey]) throws -> TrustedComment {
        let url = configuration.manifestURL.absoluteString
        do {
            let signature = try MinisignSignature(fileContents: file, source: fileSource)
            let verified = try signature.verify(message: [UInt8](message), publicKeys: keys, source: source, allowLegacy: false, ed25519: Self.ed25519)
            guard let comment = TrustedComment(parsing: verified.trustedComment) else {
                throw ClientError.badSignature(url: url, reason: "the trusted comment is not modelcast's (it binds no sequence): \(quotedValue(verified.trustedComment))")
            }
            return comment
        } catch let error as ClientError {
            throw error
        } catch {
            throw ClientError.badSignature(url: url, reason: String(describing: error))
        }
    }

    /// Refuses a signed comment that does not name this manifest: its sequence and expiry,
    /// and its file, which names the channel (`channels/beta/manifest.json` for beta), so a
    /// signature moved to another channel's URL is refused even by a client that does not
    /// read the manifest's channel field.
    func bind(_ comment: TrustedComment, to release: Release) throws {
        let url = configuration.manifestURL
        if let problem = comment.mismatches(sequence: release.sequence, expiresAt: release.expiresAt).first {
            throw ClientError.badSignature(url: url.absoluteString, reason: problem)
        }
        let expected = TrustedComment.fileField(channel: configuration.channel, manifestName: url.lastPathComponent)
        if comment.file != expected {
            throw ClientError.badSignature(url: url.absoluteString, reason: "the signature is for \(quotedValue(comment.file)), not \(expected)")
        }
    }

    /// Release.decode parses every value into its type (ModelCastFormat's one validation):
    /// a name, version, key, path, digest, URL or size it refuses is named here.
    func decodeRelease(_ data: Data) throws -> Release {
        let url = configuration.manifestURL.absoluteString
        do {
            return try Release.decode(data, source: url)
        } catch let error as FormatError {
            if case .invalidRecord(_, let reason) = error { throw ClientError.invalidManifest(url: url, reason: reason) }
            throw ClientError.invalidManifest(url: url, reason: error.description)
        } catch {
            throw ClientError.invalidManifest(url: url, reason: String(describing: error))
        }
    }

    /// swift-crypto's Ed25519 (CryptoKit's API on Apple platforms).
    static func ed25519(_ signature: [UInt8], _ message: [UInt8], _ key: [UInt8]) throws -> Bool {
        try Curve25519.Signing.PublicKey(rawRepresentation: key).isValidSignature(signature, for: message)
    }
}
