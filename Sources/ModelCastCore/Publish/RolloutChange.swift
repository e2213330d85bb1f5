import Foundation

/// The rules a staged rollout follows on the publishing side.
enum RolloutRules {
    /// Only the clients of a profile that stages rollouts (modelcast) know the cohort rule.
    static func checkProfile(_ profile: ManifestProfile, flag: String) throws {
        guard profile.stagesRollouts else {
            throw ModelCastError.usage("\(flag) needs the modelcast profile: \(profile.rawValue) clients have no cohort rule (\(profile.definition.clientRule)), so every device would take the release at once. Publish it to another channel (--channel beta, a second manifest URL in the app) instead")
        }
    }

    /// The release devices fall back to from one that replaces `live`: `live` itself, or,
    /// when `live` is a halted rollout, the fallback every device is running.
    static func fallback(replacing live: Release?, at now: Date) -> ReleaseRollback? {
        guard let live else { return nil }
        if let rollout = live.rollout, rollout.basisPoints(at: now) == 0, !rollout.isInProgress(at: now), let fallback = live.rollback {
            return fallback
        }
        return ReleaseRollback(sequence: live.sequence, models: live.models)
    }

    /// The checks a requested rollout passes before the target is read: the profile, one
    /// of a share (above 0 %, at most 100 %) or a schedule that parses.
    static func validateStart(percent: Int?, schedule: String?, profile: ManifestProfile, at start: Date) throws {
        guard percent != nil || schedule != nil else { return }
        try checkProfile(profile, flag: schedule != nil ? "--rollout-schedule" : "--rollout")
        guard percent == nil || schedule == nil else { throw ModelCastError.usage("give --rollout or --rollout-schedule, not both") }
        if let percent, !(1...10_000).contains(percent) {
            throw ModelCastError.usage("--rollout \(Rollout.percentText(percent))%: a rollout starts above 0% and at most 100%")
        }
        if let schedule { _ = try Rollout.parseSchedule(schedule, start: start) }
    }

    /// The rollout a release starts with: a fixed share (hundredths of a percent) or a
    /// schedule from its publish time, and its own salt.
    static func start(percent: Int?, schedule text: String?, for release: Release, at start: Date) throws -> Rollout {
        let schedule = try text.map { try Rollout.parseSchedule($0, start: start) }
        return Rollout(basisPoints: percent ?? schedule?.first?.basisPoints ?? 0, salt: Rollout.salt(for: release),
                       startedAt: release.publishedAt, schedule: schedule)
    }

    /// The refusal of a new release while `live`'s rollout is in progress.
    static func inProgress(_ rollout: Rollout, live: Release, at now: Date, storage: any Storage, manifestKey: String) -> ModelCastError {
        let (channel, base) = Channels.split(manifestKey: manifestKey)
        let command = "modelcast rollout \(storage.location)" + (channel == Channels.stable ? "" : " --channel \(channel)") + (base == "manifest.json" ? "" : " --manifest-key \(base)")
        return .liveReleaseConflict("a staged rollout of sequence \(live.sequence) is in progress at \(storage.location)/\(manifestKey) (\(Rollout.percentText(rollout.basisPoints(at: now)))% of devices\(rollout.schedule == nil ? "" : " now, on a schedule")): finish it with `\(command) --complete`, or stop it with `\(command) --halt`, before publishing another release")
    }
}

/// A change to the staged rollout in progress (`modelcast rollout TARGET …`).
package struct RolloutChangeRequest: Sendable {
    package enum Change: Sendable, Equatable {
        /// A new share, in hundredths of a percent (a schedule is replaced by it).
        case percent(Int)
        /// 0 %: every device runs the fallback, those that took the candidate included.
        case halt
        /// The candidate becomes the plain release for every device.
        case complete
    }

    package let change: Change
    package let manifestKey: String
    /// How the changed manifest goes live (its signing key: nil keeps it unsigned, which
    /// is refused when it is signed).
    package let goLive: GoLive

    package init(change: Change, manifestKey: String = "manifest.json", goLive: GoLive = GoLive()) {
        self.change = change
        self.manifestKey = manifestKey
        self.goLive = goLive
    }
}

extension RolloutChangeRequest: GoLiveRequest {}

/// `rollout --percent/--halt/--complete`: the staged rollout in progress, changed.
package struct RolloutChanger: TargetWriting {
    package let writer: TargetWriter

    package init(writer: TargetWriter) {
        self.writer = writer
    }

    /// Publishes the live release again with its rollout changed, as the next sequence
    /// (signed when the live manifest is): the salt and start stay, so devices already in
    /// the cohort stay in it. Refused when no rollout is in progress.
    package func changeRollout(_ request: RolloutChangeRequest) async throws -> PublishReport {
        let lock = try writer.lockTarget(dryRun: request.goLive.dryRun)
        defer { withExtendedLifetime(lock) {} }
        let state = try await writer.loadForWriting(manifestKey: request.manifestKey, dryRun: request.goLive.dryRun)
        let place = "\(storage.location)/\(request.manifestKey)"
        guard state.manifestData != nil else { throw ModelCastError.targetState("nothing is published at \(place): there is no rollout to change") }
        guard let live = state.liveRecord else {
            throw ModelCastError.targetState("the live manifest at \(place) matches no history record (edited by hand?): its rollout cannot be changed")
        }
        guard let rollout = live.rollout else {
            throw ModelCastError.liveReleaseConflict("no staged rollout is in progress at \(place): sequence \(live.sequence) is served to every device (start one with publish --rollout)")
        }
        let now = request.goLive.publishedAt
        let current = rollout.basisPoints(at: now)
        var release = live
        let warnings = writer.warningCollector()
        switch request.change {
        case .percent(let share):
            guard (0...10_000).contains(share) else { throw ModelCastError.usage("--percent \(Rollout.percentText(share)) is outside 0–100") }
            if share < current {
                warnings.add("lowering the rollout from \(Rollout.percentText(current))% to \(Rollout.percentText(share))%: devices between the two go back to the fallback")
            }
            release.rollout = Rollout(basisPoints: share, salt: rollout.salt, startedAt: rollout.startedAt)
        case .halt:
            if rollout.isHalted { throw ModelCastError.liveReleaseConflict("the rollout at \(place) is already halted (0%): every device runs the fallback") }
            release.rollout = Rollout(basisPoints: 0, salt: rollout.salt, startedAt: rollout.startedAt)
        case .complete:
            if rollout.isHalted {
                throw ModelCastError.liveReleaseConflict("the rollout at \(place) is halted (0%): completing it would send every device the candidate it was halted for. Raise it with --percent first, or publish a fix")
            }
            release.rollout = nil
        }
        var signing = request.goLive.signing
        if var settings = signing, settings.signer != nil, let data = state.manifestData, InlineSignature.split(data) != nil {
            settings.inline = true  // the live manifest carries its signature inline: so does this one
            signing = settings
        }
        let expiresIn = signing?.expiresIn ?? live.validityPeriod
        release.sequence = state.nextSequence
        release.publishedAt = formatTimestamp(now)
        release.expiresAt = expiresIn.map { formatTimestamp(now.addingTimeInterval($0)) }
        release.replaces = live.sequence
        guard let profile = ManifestProfile(rawValue: live.profile), let baseURL = state.baseURL else {
            throw ModelCastError.targetState("the live release at \(place) has unknown profile '\(live.profile)' or names no file")
        }
        try signing?.validate(profile: profile)
        let settings = CommitSettings(request, profile: profile, baseURL: baseURL,
                                      manifestCacheControl: writer.liveManifestCacheControl(state: state, manifestKey: request.manifestKey), signing: signing)
        return try await writer.committer.commit(release, state: state, settings: settings, artifacts: [:], warnings: warnings)
    }
}
