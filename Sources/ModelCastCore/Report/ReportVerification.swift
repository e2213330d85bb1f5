import Foundation

/// `report --verify`: one verify run per channel on the page, as `verify` itself runs it
/// on the same source; each channel shows its checks, and its signature panel the
/// signature check's outcome.
package struct ReportVerification: Sendable {
    package let options: VerifyOptions

    package init(options: VerifyOptions) {
        self.options = options
    }

    /// One verify run per channel of the page, on SOURCE as `scope` reads it (a directory:
    /// objects from disk, headers from its hosting files; a bucket: through the store's
    /// API); a manifest URL's one channel fetched as a device fetches it.
    package func verify(_ page: inout ReleasePage, in scope: SourceScope, baseManifestKey: String) async throws {
        if case .manifestURL = scope.source {
            guard !page.channels.isEmpty else { return }
            let run = VerifyRun(source: scope.source.text, manifestKey: "manifest.json", channel: nil, options: options)
            page.channels[0].attach(try await run.verify(in: scope))
            return
        }
        // A merged report names a store by its location (as the store spells it).
        var source = scope.source.text
        if case .bucket = scope.source { source = try scope.storage().location }
        for index in page.channels.indices {
            let run = VerifyRun(source: source, manifestKey: baseManifestKey, channel: page.channels[index].name, options: options)
            page.channels[index].attach(try await run.verify(in: scope))
        }
    }
}

extension ReleasePage {
    /// The exit status the channels' verify runs call for, as `verify` ends: 1 when any
    /// check failed, else 3 when hosts could not be reached, else 0; nil without `--verify`.
    package var verifyExitStatus: ExitStatus? {
        let statuses = channels.compactMap(\.verifyStatus)
        guard !statuses.isEmpty else { return nil }
        return statuses.contains(.refused) ? .refused : statuses.contains(.io) ? .io : .success
    }
}

extension ChannelReport {
    /// Adds a verify run's outcome: every check, and the signature check's worst status.
    mutating func attach(_ report: VerifyReport) {
        verify = VerifySummary(report)
        verifyStatus = report.exitStatus
        let signatureChecks = report.checks.filter { $0.check == VerifyCheckID.manifestSignature.rawValue || $0.check == VerifyCheckID.manifestInlineSignature.rawValue }
        if signatureChecks.contains(where: { $0.status == .fail }) { signature.checked = .fail }
        else if signatureChecks.contains(where: { $0.status == .warn }) { signature.checked = .warn }
        else if !signatureChecks.isEmpty { signature.checked = .pass }
    }
}
