import Foundation

/// `report --verify`: one verify run per channel on the page, as `verify` itself runs it
/// on the same source; each channel shows its checks, and its signature panel the
/// signature check's outcome.
package struct ReportVerification: Sendable {
    package let options: VerifyOptions

    package init(options: VerifyOptions) {
        self.options = options
    }

    /// A published directory: objects read from disk, headers from its hosting files.
    package func verify(_ page: inout ReleasePage, directory: String, baseManifestKey: String, environment: [String: String]) async throws {
        let target = try VerifyTarget.resolve(directory, baseURLs: [], manifestKey: baseManifestKey, maxManifestBytes: options.maxManifestBytes)
        guard let fetcher = target.directory else { return }
        for index in page.channels.indices {
            let run = VerifyRun(source: directory, manifestKey: baseManifestKey, channel: page.channels[index].name, options: options)
            page.channels[index].attach(try await run.verify(directory: fetcher, environment: environment))
        }
    }

    /// An s3:// target, read through the store's API.
    package func verify(_ page: inout ReleasePage, store: any Storage, baseManifestKey: String) async throws {
        for index in page.channels.indices {
            let run = VerifyRun(source: store.location, manifestKey: baseManifestKey, channel: page.channels[index].name, options: options)
            page.channels[index].attach(try await run.verify(store: store))
        }
    }

    /// A manifest URL, fetched as a device fetches it.
    package func verify(_ page: inout ReleasePage, manifestURL: String) async throws {
        guard !page.channels.isEmpty else { return }
        let target = try VerifyTarget.resolve(manifestURL, baseURLs: [], manifestKey: "manifest.json")
        let run = VerifyRun(source: manifestURL, manifestKey: "manifest.json", channel: nil, options: options)
        let http = run.httpFetcher()
        let report = await run.verify(target, http: http, standInFor: nil, origin: nil)
        await http.shutdown()
        page.channels[0].attach(report)
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
