import Foundation

/// `artifact.range`: devices resume interrupted downloads with Range requests, so the
/// first bytes must come back as a 206 holding the bytes downloaded.
struct RangeCheck: ArtifactCheck {
    var ids: [VerifyCheckID] { [.artifactRange] }

    /// A directory's files are read by range (what the web server will answer is for verify
    /// URL); a store's API always answers Range, and what devices get is the CDN's answer.
    func statement(for source: FetchedFrom) -> SourceStatement {
        switch source {
        case .server, .files: return .runs
        case .storeAPI: return .skipped("not checked through the store's API (whether the CDN answers Range requests is checked by verify URL)")
        }
    }

    func concerns(_ read: ArtifactRead) -> Bool { read.response.bytesRead > 0 }

    func run(_ read: ArtifactRead, with verification: ArtifactVerification, log: CheckLog) async {
        let (url, label) = (read.url, read.label)
        guard case .streamed(_, let sink) = read.content else {
            // A source that proves bytes without reading them has no first bytes to compare.
            log.add(.skip, .artifactRange, url, "\(label): not checked: the source proved the bytes without reading them")
            return
        }
        let end = min(read.response.bytesRead, 100) - 1
        let rangeBody = ByteCollector()
        let options = verification.options
        do {
            let ranged = try await verification.verifier.fetchWithRetries(
                url, range: 0...end, limit: end + 2, deadline: min(verification.deadline, Date().addingTimeInterval(options.requestTimeout)),
                rules: verification.rules, reset: { rangeBody.reset() }, consume: rangeBody.append)
            if ranged.status == 206 && ranged.bytesRead == end + 1 && Array(rangeBody.data) == sink.prefix(Int(end + 1)) {
                log.add(.pass, .artifactRange, url, read.source == .files
                        ? "\(label): bytes 0-\(end) read from the file match (whether the web server answers Range requests is checked by verify URL)"
                        : "\(label): 206 for bytes 0-\(end)")
            } else if ranged.status == 206 {
                log.add(.fail, .artifactRange, url, "\(label): 206 but \(ranged.bytesRead) bytes that differ from the object's first \(end + 1)")
            } else {
                log.add(.fail, .artifactRange, url, "\(label): HTTP \(ranged.status) for bytes 0-\(end), expected 206: interrupted downloads restart from zero")
            }
        } catch {
            log.add(.fail, .artifactRange, url, "\(label): \(error)")
        }
    }
}
