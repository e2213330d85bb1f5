import Foundation

/// Something that makes minisign signatures (a loaded secret key).
public protocol ManifestSigner: Sendable {
    /// The key id as minisign prints it (uppercase hex, no leading zeros).
    var keyIDHex: String { get }
    /// The text of a minisign signature file (`.minisig`) over `message`.
    func minisignSignature(of message: [UInt8], trustedComment: String, untrustedComment: String) throws -> String
}

/// A manifest with its signatures.
public struct SignedManifest: Sendable {
    /// Where minisign looks for a file's signature: `manifest.json.minisig` beside `manifest.json`.
    public static func signatureKey(for manifestKey: String) -> String { manifestKey + ".minisig" }
    /// The largest signature file read (a minisign signature is a few hundred bytes).
    static let maximumSignatureSize = 1 << 16
    /// How signature files are served.
    static let signatureContentType = "text/plain; charset=utf-8"

    /// The manifest bytes to publish (with the inline signature member, if asked for).
    public let manifest: Data
    /// `manifest.json.minisig`: minisign's signature over `manifest`.
    public let signatureFile: String
    public let trustedComment: String
}

/// What the signed trusted comment of a manifest says. The comment is covered by the
/// signature, so these values cannot be changed without the key.
public struct TrustedComment: Sendable, Equatable {
    public var timestamp: Int64
    public var file: String
    public var sequence: Int64
    /// The model version, or `name@version` pairs joined by `,` when the models differ.
    public var version: String
    /// RFC 3339; nil when the manifest never expires.
    public var expiresAt: String?

    public init(timestamp: Int64, file: String, sequence: Int64, version: String, expiresAt: String?) {
        self.timestamp = timestamp
        self.file = file
        self.sequence = sequence
        self.version = version
        self.expiresAt = expiresAt
    }

    /// `timestamp:… file:… sequence:… version:… expires:…`, tab-separated as minisign's own
    /// trusted comments are.
    public var text: String {
        "timestamp:\(timestamp)\tfile:\(file)\tsequence:\(sequence)\tversion:\(version)\texpires:\(expiresAt ?? "never")"
    }

    /// Parses a trusted comment modelcast wrote; nil for any other comment (e.g. minisign's default).
    public init?(parsing text: String) {
        var fields: [String: String] = [:]
        for part in text.split(separator: "\t") {
            guard let colon = part.firstIndex(of: ":") else { return nil }
            fields[String(part[..<colon])] = String(part[part.index(after: colon)...])
        }
        guard let timestamp = fields["timestamp"].flatMap({ Int64($0) }), let file = fields["file"],
              let sequence = fields["sequence"].flatMap({ Int64($0) }), let version = fields["version"],
              let expires = fields["expires"] else { return nil }
        self.init(timestamp: timestamp, file: file, sequence: sequence, version: version, expiresAt: expires == "never" ? nil : expires)
    }

    /// The version field for a release: one version, or `name@version,…` when they differ.
    public static func version(of release: Release) -> String {
        let versions = Set(release.models.values.map(\.version))
        if versions.count == 1, let only = versions.first { return only }
        return release.models.keys.sorted().map { "\($0)@\(release.models[$0]!.version)" }.joined(separator: ",")
    }
}

/// Signing and expiry for a publish, rollback or resign.
public struct SigningSettings: Sendable {
    /// The key to sign with; nil publishes unsigned (an expiry then needs the modelcast profile).
    public var signer: (any ManifestSigner)?
    /// How long the manifest stays valid, from its publish time.
    public var expiresIn: TimeInterval?
    /// Also carry the signature inside the manifest (modelcast profile only).
    public var inline: Bool

    public init(signer: (any ManifestSigner)? = nil, expiresIn: TimeInterval? = nil, inline: Bool = false) {
        self.signer = signer
        self.expiresIn = expiresIn
        self.inline = inline
    }

    /// Refuses combinations a profile cannot carry.
    public func validate(profile: ManifestProfile) throws {
        if inline, !profile.carriesSignatureAndExpiry {
            throw ModelCastError.usage("--inline-signature needs the modelcast profile; the \(profile.rawValue) manifest has no place for a signature (its clients read manifest.json.minisig)")
        }
        if inline, signer == nil {
            throw ModelCastError.usage("--inline-signature needs a signing key (--sign KEYFILE or $MODELCAST_SIGNING_KEY)")
        }
        if expiresIn != nil, signer == nil, !profile.carriesSignatureAndExpiry {
            throw ModelCastError.usage("--expires-in needs a signing key with the \(profile.rawValue) profile: its manifest has no expires_at field, so the expiry lives in the signature's trusted comment")
        }
    }

    /// The expiry instant for a manifest published at `date`.
    public func expiresAt(from date: Date) -> Date? {
        expiresIn.map { date.addingTimeInterval($0) }
    }

    /// Signs `unsigned` (the rendered manifest of `release`); nil when there is no key.
    func sign(_ unsigned: Data, release: Release, manifestKey: String, now: Date = Date()) throws -> SignedManifest? {
        guard let signer else { return nil }
        let comment = TrustedComment(
            timestamp: Int64(now.timeIntervalSince1970), file: (manifestKey as NSString).lastPathComponent,
            sequence: release.sequence, version: TrustedComment.version(of: release), expiresAt: release.expiresAt).text
        let untrusted = "signature from modelcast secret key \(signer.keyIDHex)"
        var manifest = unsigned
        if inline {
            let file = try signer.minisignSignature(of: [UInt8](unsigned), trustedComment: comment, untrustedComment: untrusted)
            manifest = try InlineSignature.attach(try InlineSignature.member(fromSignatureFile: file), to: unsigned)
        }
        let detached = try signer.minisignSignature(of: [UInt8](manifest), trustedComment: comment, untrustedComment: untrusted)
        return SignedManifest(manifest: manifest, signatureFile: detached, trustedComment: comment)
    }
}

extension MinisignSecretKey: ManifestSigner {
    public var keyIDHex: String { keyID.hex }

    public func minisignSignature(of message: [UInt8], trustedComment: String, untrustedComment: String) throws -> String {
        try sign(message: message, trustedComment: trustedComment, untrustedComment: untrustedComment)
    }
}
