import Foundation

/// Re-sign (and extend) the live manifest without changing what it names.
package struct ResignRequest: Sendable {
    package let manifestKey: String
    /// The key and the new validity period are `goLive.signing`. Without an expiry, the
    /// live manifest's period (expires_at − published_at) is kept.
    package let goLive: GoLive

    package init(manifestKey: String = "manifest.json", goLive: GoLive) {
        self.manifestKey = manifestKey
        self.goLive = goLive
    }

    /// The signing settings (none: the expiry alone moves, for the modelcast profile).
    package var signing: SigningSettings { goLive.signing ?? SigningSettings() }
}

/// `resign`: the live release again, freshly signed and with a new expiry.
package struct Resigner: TargetWriting {
    package let writer: TargetWriter

    package init(writer: TargetWriter) {
        self.writer = writer
    }

    /// Publishes the live release again with the next sequence, a fresh signature and a
    /// new expiry: what a scheduled job runs so a signed, expiring manifest never lapses
    /// (the freeze-attack defence) and devices see the sequence move on. No artifact changes.
    package func resign(_ request: ResignRequest) async throws -> PublishReport {
        let lock = try writer.lockTarget(dryRun: request.goLive.dryRun)
        defer { withExtendedLifetime(lock) {} }
        let state = try await writer.loadForWriting(manifestKey: request.manifestKey, dryRun: request.goLive.dryRun)
        guard state.manifestData != nil else {
            throw ModelCastError.targetState("nothing is published at \(storage.location)/\(request.manifestKey): there is nothing to re-sign")
        }
        guard let live = state.liveRecord else {
            throw ModelCastError.targetState("the live manifest at \(storage.location)/\(request.manifestKey) matches no history record (edited by hand?): publish it again instead of re-signing it")
        }
        guard let profile = ManifestProfile(rawValue: live.profile) else {
            throw ModelCastError.targetState("the live release at \(storage.location) has unknown profile '\(live.profile)'")
        }
        var signing = request.signing
        if profile.carriesSignatureAndExpiry, signing.signer != nil, let live = state.manifestData, InlineSignature.split(live) != nil {
            // The live manifest carries its signature inline: so does the re-signed one.
            signing.inline = true
        }
        try signing.validate(profile: profile)
        let expiresIn = signing.expiresIn ?? live.validityPeriod
        guard signing.signer != nil || expiresIn != nil else {
            throw ModelCastError.usage("resign needs a signing key (--sign KEYFILE or $MODELCAST_SIGNING_KEY) or, for the modelcast profile, --expires-in")
        }
        var release = live
        release.sequence = state.nextSequence
        release.publishedAt = formatTimestamp(request.goLive.publishedAt)
        release.expiresAt = expiresIn.map { formatTimestamp(request.goLive.publishedAt.addingTimeInterval($0)) }
        release.replaces = live.sequence
        guard let baseURL = state.baseURL else {
            throw ModelCastError.targetState("cannot tell the base URL the target is served from (no record names a file)")
        }
        let settings = CommitSettings(
            request, profile: profile, baseURL: baseURL,
            manifestCacheControl: writer.liveManifestCacheControl(state: state, manifestKey: request.manifestKey), signing: signing)
        return try await writer.committer.commit(release, state: state, settings: settings, artifacts: [:], warnings: writer.warningCollector())
    }
}
