import Foundation

/// What reading one object gave the checks: an answer of 200 (a read that failed is
/// reported by the read and checked no further) and the evidence of its bytes.
struct ArtifactRead: Sendable {
    /// How the bytes are known to be the ones read.
    enum Content: Sendable {
        /// Downloaded: the SHA-256 of the body, and the sink that kept its first bytes.
        case streamed(SHA256Digest, HashingSink)
        /// Not downloaded: what the source's own proof (a store's checksum) found, and the
        /// SHA-256 it was asked to prove.
        case proven(ProvenObject.Content, expected: SHA256Digest)
    }

    let object: ExpectedObject
    /// What the object was read from.
    let source: FetchedFrom
    /// The answer (status 200), its headers, and how many body bytes there were.
    let response: FetchResponse
    let content: Content
    /// What watched the download for each check that asked (`ArtifactCheck.prepare`).
    var watchers: [VerifyCheckID: any BodyWatcher] = [:]

    var url: String { object.url }
    var label: String { object.label }

    /// True when the bytes read are the whole object: a download not cut at the limit, or
    /// a proof of an object of the promised size.
    var hasWholeBody: Bool {
        switch content {
        case .streamed: return !response.exceededLimit
        case .proven: return response.bytesRead == object.size
        }
    }

    /// The Content-Type the object must be served with: the manifest's, or the one its name calls for.
    var expectedContentType: String {
        object.contentType ?? ContentType.forArtifact(named: String(url.split(separator: "/").last ?? ""))
    }
}

/// Checks each object a manifest names, through every check in `ArtifactChecks.all`:
/// reads it once (a download hashed as it streams, or a store's proof), then runs each
/// check the object concerns, or reports it skipped where the source cannot make it.
struct ArtifactVerification: Sendable {
    let verifier: Verifier
    let profile: ManifestProfile
    /// The rules object URLs and their redirects must pass.
    let rules: URLRules
    /// The whole run's deadline.
    let deadline: Date

    var fetcher: any ObjectFetcher { verifier.fetcher }
    var options: VerifyOptions { verifier.options }

    /// Every object once (the same URL can be named twice: an unchanged model is also its
    /// own rollback target), checked concurrently; the checks come back in manifest order.
    func checkAll(_ objects: [ExpectedObject]) async -> [VerifyCheck] {
        var seen = Set<String>()
        let objects = objects.filter { seen.insert($0.url).inserted }
        let total = objects.reduce(Int64(0)) { $0 + ($1.size ?? $1.approximateSize?.bytes ?? 0) }
        let progress = options.progress?("verifying \(objects.count) object\(objects.count == 1 ? "" : "s")", total)
        defer { progress?.finish() }
        let results = await boundedMap(objects, concurrency: options.jobs, nonThrowing: { object -> [VerifyCheck] in
            let fetcher = self.fetcher
            let log = CheckLog(origin: { fetcher.origin(of: $0) })
            await self.check(object, progress: progress, log: log)
            return log.checks
        })
        return results.flatMap { $0 }
    }

    /// One object: read, then each check in order, run or reported skipped.
    func check(_ object: ExpectedObject, progress: (any ProgressReporter)?, log: CheckLog) async {
        guard let read = await read(object, progress: progress, log: log) else { return }
        for check in ArtifactChecks.all where check.concerns(read) {
            switch check.statement(for: read.source) {
            case .runs:
                await check.run(read, with: self, log: log)
            case .skipped(let reason):
                log.add(.skip, check.ids[0], read.url, "\(read.label): \(reason)")
            }
        }
    }

    /// The object's bytes proven by the source where it can (a store's checksum), else
    /// downloaded and hashed; nil when the read failed (reported here).
    private func read(_ object: ExpectedObject, progress: (any ProgressReporter)?, log: CheckLog) async -> ArtifactRead? {
        if let size = object.size, let expected = object.sha256.flatMap({ SHA256Digest(hex: $0) }) {
            let proven: ProvenObject?
            do {
                proven = try await fetcher.prove(object.url, size: size, sha256: expected)
            } catch {
                log.add(.fail, .artifactFetch, object.url, "\(object.label): \(error)", hostNotReached: (error as? FetchError)?.hostNotReached ?? false)
                return nil
            }
            if let proven {
                progress?.advance(by: Int(size))
                guard answered(proven.status, object, log: log) else { return nil }
                let response = FetchResponse(status: 200, headers: proven.headers, bytesRead: proven.size, exceededLimit: false)
                return ArtifactRead(object: object, source: fetcher.reads, response: response, content: .proven(proven.content, expected: expected))
            }
        }
        return await download(object, progress: progress, log: log)
    }

    /// GETs the object, never more than one byte past what the manifest promised, hashing
    /// it (and handing it to the checks that watch it) as it streams.
    private func download(_ object: ExpectedObject, progress: (any ProgressReporter)?, log: CheckLog) async -> ArtifactRead? {
        let (url, label) = (object.url, object.label)
        let promised = object.size ?? object.approximateSize.map { $0.bytes + $0.tolerance }
        let limit = promised.map { $0 + 1 } ?? (64 << 30)
        let objectDeadline = min(deadline, Date().addingTimeInterval(options.requestTimeout + Double(promised ?? 0) / options.minimumSpeed))
        var watchers: [VerifyCheckID: any BodyWatcher] = [:]
        for check in ArtifactChecks.all where check.statement(for: fetcher.reads) == .runs {
            if let watcher = await check.prepare(object, with: self, deadline: objectDeadline, log: log) { watchers[check.ids[0]] = watcher }
        }
        let sink = HashingSink(progress: progress)
        let watching = Array(watchers.values)
        let response: FetchResponse
        do {
            response = try await verifier.fetchWithRetries(
                url, range: nil, limit: limit, deadline: objectDeadline, rules: rules,
                reset: { sink.reset(); for watcher in watching { watcher.reset() } },
                consume: { chunk in
                    try sink.append(chunk)
                    for watcher in watching { try watcher.append(chunk) }
                })
        } catch let error as FetchError {
            log.add(.fail, error.isRedirectRefusal ? .artifactRedirect : .artifactFetch, url, "\(label): \(error)", hostNotReached: error.hostNotReached)
            return nil
        } catch {
            log.add(.fail, .artifactFetch, url, "\(label): \(error)")
            return nil
        }
        Verifier.checkRedirects(response, url: url, check: .artifactRedirect, log: log)
        guard answered(response.status, object, log: log) else { return nil }
        let digest: SHA256Digest
        do { digest = try sink.finish() } catch {
            log.add(.fail, .artifactFetch, url, "\(label): \(error)")
            return nil
        }
        return ArtifactRead(object: object, source: fetcher.reads, response: response, content: .streamed(digest, sink), watchers: watchers)
    }

    /// `artifact.status`: true for 200, the only answer worth checking further.
    private func answered(_ status: Int, _ object: ExpectedObject, log: CheckLog) -> Bool {
        guard status == 200 else {
            log.add(.fail, .artifactStatus, object.url, "\(object.label): \(fetcher.reads.statusProblem(status))")
            return false
        }
        log.add(.pass, .artifactStatus, object.url, "\(object.label): " + fetcher.reads.readDescription)
        return true
    }
}
