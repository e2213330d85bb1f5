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
}

/// Fetches the manifest the way a careful device does.
struct ManifestFetcher: Sendable {
    let configuration: ClientConfiguration
    let http: HTTPStream

    /// nil when the server says the manifest is unchanged since `etag` (HTTP 304).
    func fetch(ifNoneMatch etag: String?) async throws -> CheckedManifest? {
        let url = configuration.manifestURL
        var request = URLRequest(url: url)
        if let etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let (response, data) = try await http.small(request, limit: configuration.maxManifestBytes)
        if response.statusCode == 304 { return nil }
        guard response.statusCode == 200 else { throw ClientError.http(url: url.absoluteString, status: response.statusCode) }
        let signed = try await checkSignature(data)
        // Release.decode parses every value into its type (ModelCastFormat's one validation):
        // a name, version, key, path, digest, URL or size it refuses is named here.
        let release: Release
        do {
            release = try Release.decode(signed.unsigned, source: url.absoluteString)
        } catch let error as ModelCastError {
            if case .invalidRecord(_, let reason) = error { throw ClientError.invalidManifest(url: url.absoluteString, reason: reason) }
            throw ClientError.invalidManifest(url: url.absoluteString, reason: error.description)
        } catch {
            throw ClientError.invalidManifest(url: url.absoluteString, reason: String(describing: error))
        }
        if let comment = signed.comment {
            if let problem = comment.mismatches(sequence: release.sequence, expiresAt: release.expiresAt).first {
                throw ClientError.badSignature(url: url.absoluteString, reason: problem)
            }
            // The signed comment names the channel's manifest (`channels/beta/manifest.json`
            // for beta), so a signature moved to another channel's URL is refused even by a
            // client that does not read the manifest's channel field.
            let expected = TrustedComment.fileField(channel: configuration.channel, manifestName: url.lastPathComponent)
            if comment.file != expected {
                throw ClientError.badSignature(url: url.absoluteString, reason: "the signature is for \(quotedValue(comment.file)), not \(expected)")
            }
        }
        guard release.channel == configuration.channel else {
            throw ClientError.wrongChannel(url: url.absoluteString, expected: configuration.channel, actual: release.channel)
        }
        let now = configuration.now()
        for expiresAt in [release.expiresAt, signed.comment?.expiresAt].compactMap({ $0 }) {
            guard let expiry = parseTimestamp(expiresAt) else {
                throw ClientError.invalidManifest(url: url.absoluteString, reason: "expires_at \(quotedValue(expiresAt)) is not an RFC 3339 time")
            }
            if expiry <= now { throw ClientError.expired(url: url.absoluteString, expiresAt: expiresAt, now: formatTimestamp(now)) }
        }
        if let rollout = release.rollout, let problem = rollout.problems.first {
            throw ClientError.invalidManifest(url: url.absoluteString, reason: "rollout: \(problem)")
        }
        return CheckedManifest(release: release, etag: response.value(forHTTPHeaderField: "ETag"))
    }

    /// The signed bytes and trusted comment: the inline signature, else `MANIFEST.minisig`.
    /// Without configured keys the manifest is taken as it is (its bytes minus any inline signature).
    private func checkSignature(_ data: Data) async throws -> (unsigned: Data, comment: TrustedComment?) {
        let url = configuration.manifestURL.absoluteString
        guard !configuration.publicKeys.isEmpty else { return (InlineSignature.strip(data), nil) }
        let keys: [MinisignPublicKey]
        do {
            keys = try configuration.publicKeys.enumerated().map { index, text in
                try MinisignPublicKey(text: text, source: "configured public key \(index + 1) ('\(text.prefix(60).replacingOccurrences(of: "\n", with: " "))')")
            }
        } catch {
            throw ClientError.badSignature(url: url, reason: String(describing: error))
        }
        var signedBytes = data
        var signatureFile: String?
        if let (signed, member) = InlineSignature.split(data) {
            signedBytes = signed
            do { signatureFile = try InlineSignature.signatureFile(fromMember: member) } catch {
                throw ClientError.badSignature(url: url, reason: String(describing: error))
            }
        } else {
            var request = URLRequest(url: configuration.manifestURL.appendingPathExtension("minisig"))
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            let (response, body) = try await http.small(request, limit: 16 << 10)
            if response.statusCode == 404 { throw ClientError.unsigned(url: url) }
            guard response.statusCode == 200 else { throw ClientError.http(url: url + ".minisig", status: response.statusCode) }
            signatureFile = String(decoding: body, as: UTF8.self)
        }
        do {
            let signature = try MinisignSignature(fileContents: signatureFile!, source: url + ".minisig")
            let verified = try signature.verify(message: [UInt8](signedBytes), publicKeys: keys, source: url, allowLegacy: false, ed25519: Self.ed25519)
            guard let comment = TrustedComment(parsing: verified.trustedComment) else {
                throw ClientError.badSignature(url: url, reason: "the trusted comment is not modelcast's (it binds no sequence): \(quotedValue(verified.trustedComment))")
            }
            return (signedBytes, comment)
        } catch let error as ClientError {
            throw error
        } catch {
            throw ClientError.badSignature(url: url, reason: String(describing: error))
        }
    }

    /// swift-crypto's Ed25519 (CryptoKit's API on Apple platforms).
    static func ed25519(_ signature: [UInt8], _ message: [UInt8], _ key: [UInt8]) throws -> Bool {
        try Curve25519.Signing.PublicKey(rawRepresentation: key).isValidSignature(signature, for: message)
    }
}
