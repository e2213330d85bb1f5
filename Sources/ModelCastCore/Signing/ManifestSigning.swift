import Foundation

/// Something that makes minisign signatures (a loaded secret key).
package protocol ManifestSigner: Sendable {
    /// The key id as minisign prints it (uppercase hex, no leading zeros).
    var keyIDHex: String { get }
    /// The text of a minisign signature file (`.minisig`) over `message`.
    func minisignSignature(of message: [UInt8], trustedComment: String, untrustedComment: String) throws -> String
}

/// A manifest with its signatures.
package struct SignedManifest: Sendable {
    /// Where minisign looks for a file's signature: `manifest.json.minisig` beside `manifest.json`.
    package static func signatureKey(for manifestKey: String) -> String { TargetKeys.signatureKey(forManifestKey: manifestKey) }
    /// The largest signature file read (a minisign signature is a few hundred bytes).
    static let maximumSignatureSize = 1 << 16
    /// How signature files are served.
    static let signatureContentType = "text/plain; charset=utf-8"

    /// The manifest bytes to publish (with the inline signature member, if asked for).
    package let manifest: Data
    /// `manifest.json.minisig`: minisign's signature over `manifest`.
    package let signatureFile: String
    package let trustedComment: String
    /// `manifest.json.sigs`: every signer's signature over `manifest` (the first is
    /// `signatureFile`'s), for a key set's manifest threshold; nil with one signer.
    package var signatureList: String?
}

/// Signing and expiry for a publish, rollback or resign.
package struct SigningSettings: Sendable {
    /// The key to sign with; nil publishes unsigned (an expiry then needs the modelcast profile).
    package var signer: (any ManifestSigner)?
    /// How long the manifest stays valid, from its publish time.
    package var expiresIn: TimeInterval?
    /// Also carry the signature inside the manifest (modelcast profile only).
    package var inline: Bool
    /// Signing with a key other than the live manifest's is intended (`--rotate-key`).
    package var rotatesKey = false
    /// The keys that sign after `signer` (`--sign` repeated): their signatures go in
    /// `manifest.json.sigs` with the first one's, for a key set's manifest threshold.
    package var coSigners: [any ManifestSigner] = []

    /// Every signing key, `signer` first.
    package var signers: [any ManifestSigner] { (signer.map { [$0] } ?? []) + coSigners }

    package init(signer: (any ManifestSigner)? = nil, expiresIn: TimeInterval? = nil, inline: Bool = false) {
        self.signer = signer
        self.expiresIn = expiresIn
        self.inline = inline
    }

    /// Refuses combinations a profile cannot carry.
    package func validate(profile: ManifestProfile) throws {
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
    package func expiresAt(from date: Date) -> Date? {
        expiresIn.map { date.addingTimeInterval($0) }
    }

    /// Signs `unsigned` (the rendered manifest of `release`); nil when there is no key.
    /// The trusted comment's timestamp is the release's `published_at` (the moment the run
    /// started, or SOURCE_DATE_EPOCH), not the clock: two runs publishing the same release
    /// write the same signature, so one adopting the other's kept signature meets the same
    /// bytes, as it does for every other object.
    func sign(_ unsigned: Data, release: Release, manifestKey: String) throws -> SignedManifest? {
        guard let signer else { return nil }
        let signedAt = parseTimestamp(release.publishedAt) ?? Date()
        let comment = TrustedComment(
            timestamp: Int64(signedAt.timeIntervalSince1970), file: TrustedComment.fileField(channel: release.channel, manifestName: PathText.lastComponent(manifestKey)),
            sequence: release.sequence, version: TrustedComment.version(of: release), expiresAt: release.expiresAt).text
        let untrusted = "signature from modelcast secret key \(signer.keyIDHex)"
        var manifest = unsigned
        if inline {
            let file = try signer.minisignSignature(of: [UInt8](unsigned), trustedComment: comment, untrustedComment: untrusted)
            manifest = try InlineSignature.attach(try InlineSignature.member(fromSignatureFile: file), to: unsigned)
        }
        let detached = try signer.minisignSignature(of: [UInt8](manifest), trustedComment: comment, untrustedComment: untrusted)
        var signed = SignedManifest(manifest: manifest, signatureFile: detached, trustedComment: comment)
        if !coSigners.isEmpty {
            signed.signatureList = try ([detached] + coSigners.map {
                try $0.minisignSignature(of: [UInt8](manifest), trustedComment: comment, untrustedComment: "signature from modelcast secret key \($0.keyIDHex)")
            }).joined()
        }
        return signed
    }
}

extension MinisignSecretKey: ManifestSigner {
    package var keyIDHex: String { keyID.hex }

    package func minisignSignature(of message: [UInt8], trustedComment: String, untrustedComment: String) throws -> String {
        try sign(message: message, trustedComment: trustedComment, untrustedComment: untrustedComment)
    }
}
