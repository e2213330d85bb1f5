import Foundation
import NIOConcurrencyHelpers

/// Re-downloads what a manifest names, exactly as a device would, and checks
/// every byte and header.
package struct Verifier: Sendable {
    package let fetcher: any ObjectFetcher
    package let options: VerifyOptions

    package init(fetcher: any ObjectFetcher, options: VerifyOptions) {
        self.fetcher = fetcher
        self.options = options
    }

    /// Verifies the manifest at `manifestURL` (fetched), or `localManifest` when
    /// given (its own headers are then not checked; the objects are still fetched).
    /// `localSignature` is the detached signature of a local manifest (its `.minisig` file).
    package func verify(manifestURL: String, localManifest: Data? = nil, localSignature: Data? = nil) async -> VerifyReport {
        let fetcher = self.fetcher
        let log = CheckLog(origin: { fetcher.origin(of: $0) })
        let deadline = options.now.addingTimeInterval(options.timeout)
        var facts: ManifestFacts?
        do {
            facts = try await checkManifest(manifestURL, local: localManifest, localSignature: localSignature, deadline: deadline, log: log)
        } catch let error as FetchError {
            log.add(.fail, error.isRedirectRefusal ? .manifestRedirect : .manifestFetch, manifestURL, error.description, hostNotReached: error.hostNotReached)
        } catch {
            log.add(.fail, .manifestFetch, manifestURL, String(describing: error))
        }
        if let facts {
            let rules = objectRules(manifestURL: manifestURL)
            log.append(await ArtifactVerification(verifier: self, profile: facts.profile, rules: rules, deadline: deadline).checkAll(facts.objects))
            await checkModelSignatures(facts, rules: rules, deadline: deadline, log: log)
            if let statePath = options.statePath, let sequence = facts.sequence, log.failures == 0 {
                do { try SequenceState.record(sequence, for: manifestURL, in: statePath, at: options.now) } catch {
                    log.add(.fail, .manifestSequence, manifestURL, "cannot update state file \(statePath): \(error)")
                }
            }
        }
        var report = VerifyReport(source: fetcher.origin(of: manifestURL), profile: facts?.profile.rawValue, sequence: facts?.sequence, checks: log.checks, strict: options.strict)
        if report.source != manifestURL { report.servedAs = manifestURL }
        return report
    }

    /// Verifies the manifest at `manifestKey` of a target read through its store's API
    /// (`verify s3://bucket/prefix`): the same checks as for its URL, with the headers the
    /// store keeps and the bytes proven by the store's checksums, plus what its history
    /// says. Object URLs map to keys under the base URL the history records were made for.
    package static func verify(store storage: any Storage, manifestKey: String, options: VerifyOptions) async -> VerifyReport {
        var options = options
        options.historyStorage = storage
        options.historyManifestKey = manifestKey
        let base: String
        do {
            let state = try await TargetState.load(from: storage, manifestKey: manifestKey)
            options.historyState = state
            // Without a record the base URL is unknown: the manifest's URLs are then outside the target.
            base = state.baseURL ?? storage.location
        } catch {
            // A store that cannot be reached (or refuses the credentials) is a network failure, not a failed check.
            let log = CheckLog()
            let source = "\(storage.location)/\(manifestKey)"
            log.add(.fail, .storage, source, String(describing: error), hostNotReached: ExitStatus(for: error) == .io)
            return VerifyReport(source: source, profile: nil, sequence: nil, checks: log.checks, strict: options.strict)
        }
        if options.expectedPrefixes.isEmpty { options.expectedPrefixes = [base] }
        let fetcher = StorageFetcher(storage: storage, baseURL: base)
        return await Verifier(fetcher: fetcher, options: options).verify(manifestURL: URLParts.url(base: base, key: manifestKey))
    }

    // MARK: - The manifest

    /// Every check of the manifest itself, in the order that makes each worth doing: its
    /// bytes and headers, its signature, its parse, what the target says of it, the URLs it
    /// names, its expiry and sequence. Returns the objects worth fetching, or nil when the
    /// manifest cannot be trusted or read.
    private func checkManifest(_ url: String, local: Data?, localSignature: Data?, deadline: Date, log: CheckLog) async throws -> ManifestFacts? {
        let data: Data
        if let local {
            data = local
            // Not made, and not a warning: --strict must be able to pass a local file.
            log.add(.skip, .manifestHeaders, url, "not checked: read from a local file (verify its URL once it is served)")
        } else {
            guard let served = try await fetchManifest(url, deadline: deadline, log: log) else { return nil }
            data = served
        }
        // The signature first: nothing else a tampered manifest says is worth checking.
        guard case .trusted(let comment) = await checkSignature(data, url: url, localSignature: local == nil ? nil : .some(localSignature), deadline: deadline, log: log) else {
            return nil
        }
        let facts: ManifestFacts
        do {
            facts = try ManifestFacts.read(data, profile: options.profile, source: url)
        } catch {
            log.add(.fail, .manifestParse, url, String(describing: error))
            return nil
        }
        log.add(.pass, .manifestParse, url, "profile \(facts.profile.rawValue), \(counted(facts.objects.count, "object"))")
        if let comment { signatureCheck().crossCheck(comment, facts: facts, source: url, log: log) }
        // A signed manifest of any profile has a sequence: the one in its trusted comment.
        let sequence = facts.sequence ?? comment?.sequence
        // The objects a rollback would restore, where the manifest does not name them itself.
        let rollback = await checkAgainstTarget(data, sequence: sequence, url: url, local: local != nil, log: log)
            .filter { object in !facts.objects.contains { $0.url == object.url } }
        let accepted = acceptedObjects(facts.objects + rollback, manifestURL: url, log: log)
        if let expiresAt = facts.expiresAt {
            checkExpiry(expiresAt, source: url, log: log, now: options.now, warning: options.expiryWarning)
        }
        checkSequence(sequence, profile: facts.profile, url: url, log: log)
        Self.checkRollout(facts, subject: url, log: log)
        var checked = ManifestFacts(profile: facts.profile, sequence: sequence, expiresAt: facts.expiresAt, objects: accepted)
        // A signature whose URL was refused is not fetched (manifest.urls says why).
        let acceptedURLs = Set(accepted.map(\.url))
        checked.modelSignatures = facts.modelSignatures.filter { $0.model.modelSignature.map { acceptedURLs.contains($0.url) } ?? false }
        return checked
    }

    /// The rollout block, when there is one: share within 0–100 %, a salt, a start time, a
    /// schedule increasing in time and share, and a fallback (the candidate's and the
    /// fallback's objects are both among the objects checked).
    static func checkRollout(_ facts: ManifestFacts, subject: String, log: CheckLog) {
        guard let problems = facts.rolloutProblems else { return }
        if problems.isEmpty {
            log.add(.pass, .manifestRollout, subject, "staged rollout: percent, salt, started_at and schedule valid; the fallback's objects are checked with the candidate's")
        }
        for problem in problems { log.add(.fail, .manifestRollout, subject, problem) }
    }

    /// Fetches the manifest and checks how it is served (status, size, Content-Type,
    /// Cache-Control, encoding); returns its bytes, or nil when they cannot be parsed.
    private func fetchManifest(_ url: String, deadline: Date, log: CheckLog) async throws -> Data? {
        let body = ByteCollector()
        let response = try await fetchWithRetries(url, range: nil, limit: Int64(options.maxManifestBytes), deadline: min(deadline, Date().addingTimeInterval(options.requestTimeout)), rules: manifestRules(manifestURL: url), reset: { body.reset() }, consume: body.append)
        Self.checkRedirects(response, url: url, check: .manifestRedirect, log: log)
        guard response.status == 200 else {
            log.add(.fail, .manifestStatus, url, fetcher.reads.statusProblem(response.status))
            return nil
        }
        log.add(.pass, .manifestStatus, url, fetcher.reads.readDescription)
        guard !response.exceededLimit else {
            log.add(.fail, .manifestSize, url, "larger than \(options.maxManifestBytes) bytes; refusing to parse it")
            return nil
        }
        log.add(.pass, .manifestSize, url, "\(response.bytesRead) bytes")
        let contentType = response.headers["content-type"] ?? ""
        if isJSONMediaType(contentType) {
            log.add(.pass, .manifestContentType, url, contentType)
        } else {
            log.add(.fail, .manifestContentType, url, "'\(contentType)', expected application/json")
        }
        if let cacheControl = response.headers["cache-control"] {
            do {
                try CachePolicy.validateManifest(cacheControl)
                log.add(.pass, .manifestCacheControl, url, cacheControl)
            } catch {
                log.add(.fail, .manifestCacheControl, url, String(describing: error))
            }
        } else {
            log.add(.fail, .manifestCacheControl, url, "missing: CDNs and devices may cache the manifest heuristically and miss releases and rollbacks")
        }
        guard let encoding = response.headers["content-encoding"], encoding.lowercased() != "identity" else { return body.data }
        // Devices' HTTP stacks decode gzip transparently, so the manifest still arrives intact.
        do {
            let data = try ContentDecoding.decode(body.data, encoding: encoding, url: url, limit: options.maxManifestBytes)
            log.add(.warn, .manifestContentEncoding, url, "\(encoding): devices decode it, but a CDN that re-encodes may also rewrite it; serve the manifest as stored")
            return data
        } catch {
            // Not parsed: an undecoded body would only fail as bad JSON.
            log.add(.fail, .manifestContentEncoding, url, String(describing: error))
            return nil
        }
    }

    /// Whether the rest of the manifest is worth checking after its signature check.
    private enum ManifestTrust {
        /// The signature failed: nothing the manifest names is fetched.
        case untrusted
        /// Trusted (or no signature check asked for), with the trusted comment when signed.
        case trusted(TrustedComment?)
    }

    private func signatureCheck() -> SignatureCheck {
        var signatures = SignatureCheck(publicKeys: options.publicKeys, requireSignature: options.requireSignature, expiryWarning: options.expiryWarning, now: options.now)
        signatures.allowLegacy = options.allowLegacySignature
        return signatures
    }

    /// Checks the manifest's signature, inline or detached (fetched beside the URL, or for a
    /// local manifest the `localSignature` given: `.some(nil)` when there is none).
    private func checkSignature(_ data: Data, url: String, localSignature: Data??, deadline: Date, log: CheckLog) async -> ManifestTrust {
        let signatures = signatureCheck()
        guard signatures.isEnabled else { return .trusted(nil) }
        // Counted before the detached signature is fetched: a failed fetch (5xx, oversize)
        // is a signature failure even when an inline signature verifies.
        let failuresBefore = log.failures
        let detached: DetachedSignature
        if let localSignature {
            detached = localSignature.map { .found($0) } ?? .absent
        } else {
            detached = await fetchSignature(SignedManifest.signatureKey(for: url), deadline: deadline, rules: manifestRules(manifestURL: url), log: log)
        }
        let manifestName = signedFileName(ofManifestKey: targetKey(ofManifestURL: url))
        let fetcher = self.fetcher
        let checked = CheckLog(origin: { fetcher.origin(of: $0) })
        var comment = signatures.run(manifest: data, detached: detached, manifestName: manifestName, source: url, log: checked)
        var keptProblem: String?
        if localSignature == nil, case .found(let liveFile) = detached, KeptSignatureCheck.applies(to: checked.checks) {
            switch await KeptSignatureCheck(verifier: self, signatures: signatures).run(manifest: data, liveFile: liveFile, url: url, manifestName: manifestName, live: checked.checks, deadline: deadline) {
            case .proves(let keptComment, let checks):
                log.append(checked.checks.filter { $0.check != VerifyCheckID.manifestSignature.rawValue })
                log.append(checks)
                comment = keptComment
            case .fails(let problem):
                log.append(checked.checks)
                keptProblem = problem
            case .notLookedUp:
                log.append(checked.checks)
            }
        } else {
            log.append(checked.checks)
        }
        guard log.failures == failuresBefore else {
            var reason = "the signature check failed: nothing this manifest names is fetched"
            if let keptProblem { reason += ". " + keptProblem }
            // A target's own pair left mismatched by a stopped run heals: say how.
            if let storage = options.historyStorage,
               // try?: only a hint added to a failure already reported: without it the failure stands as is.
               let state = try? await targetState(storage),
               let repair = try? await SignaturePair.repair(for: state, manifestKey: options.historyManifestKey, storage: storage) {
                reason += ". " + SignaturePair.describe(repair, location: storage.location, manifestKey: options.historyManifestKey)
            }
            log.add(.fail, .manifestTrust, url, reason)
            return .untrusted
        }
        return .trusted(comment)
    }

    /// The history target's state: as already read, else read now.
    private func targetState(_ storage: any Storage) async throws -> TargetState {
        if let state = options.historyState { return state }
        return try await TargetState.load(from: storage, manifestKey: options.historyManifestKey)
    }

    /// What the target says of the served manifest: a published directory's or bucket's
    /// history (the release it renders, and it must not be older than what went live), and
    /// the origin's own copy (`--origin`). Returns the objects of the release a rollback
    /// would restore that the manifest does not name: they must be there too.
    private func checkAgainstTarget(_ data: Data, sequence: Int64?, url: String, local: Bool, log: CheckLog) async -> [ExpectedObject] {
        var rollback: [ExpectedObject] = []
        if let storage = options.historyStorage {
            do {
                let state = try await targetState(storage)
                rollback = TargetHistoryCheck(state: state, manifestKey: options.historyManifestKey).check(source: url, log: log)
            } catch {
                log.add(.fail, .manifestFreshness, url, "cannot read the history of \(storage.location): \(error)", hostNotReached: ExitStatus(for: error) == .io)
            }
        }
        if !local, let storage = options.origin {
            let key = options.originManifestKey ?? targetKey(ofManifestURL: url)
            do {
                try await OriginManifest.load(from: storage, manifestKey: key).compare(served: data, servedSequence: sequence, source: url, log: log)
            } catch {
                log.add(.fail, .manifestOrigin, url, "cannot read the origin \(storage.location): \(error)", hostNotReached: ExitStatus(for: error) == .io)
            }
        }
        return rollback
    }

    /// URLs: absolute, https, under the expected prefix. Objects whose URL fails are not
    /// fetched: verify never downloads from where it was not told to.
    private func acceptedObjects(_ objects: [ExpectedObject], manifestURL url: String, log: CheckLog) -> [ExpectedObject] {
        let rules = objectRules(manifestURL: url)
        var accepted: [ExpectedObject] = []
        for object in objects {
            switch rules.verdict(object.url) {
            case .accepted:
                accepted.append(object)
            case .external(let detail):
                log.add(.warn, .manifestUrls, object.url, "\(object.label): \(detail)")
                accepted.append(object)
            case .refused(let reason):
                log.add(.fail, .manifestUrls, object.url, "\(object.label): \(reason); not fetched")
            }
        }
        if accepted.count == objects.count {
            log.add(.pass, .manifestUrls, url, "\(counted(objects.count, "URL")) under \(rules.prefixes.joined(separator: ", "))")
        }
        return accepted
    }

    /// With `--state`: the sequence must not be lower than one seen before.
    private func checkSequence(_ sequence: Int64?, profile: ManifestProfile, url: String, log: CheckLog) {
        guard let statePath = options.statePath else { return }
        guard let sequence else {
            log.add(.warn, .manifestSequence, url, "profile \(profile.rawValue) has no sequence to check (sign it, and the signature carries one)")
            return
        }
        do {
            if let seen = try SequenceState.highest(for: url, in: statePath), sequence < seen {
                log.add(.fail, .manifestSequence, url, "sequence \(sequence) is lower than \(seen), seen before: an old manifest is being served (rollback attack or stale cache)")
            } else {
                log.add(.pass, .manifestSequence, url, "sequence \(sequence)")
            }
        } catch {
            log.add(.fail, .manifestSequence, url, "cannot read state file \(statePath): \(error)")
        }
    }

    /// The detached signature beside the manifest: found, absent (404/403), or
    /// unavailable (any other answer or a failed fetch, logged here as a failure).
    func fetchSignature(_ url: String, deadline: Date, rules: URLRules, log: CheckLog) async -> DetachedSignature {
        let body = ByteCollector()
        let response: FetchResponse
        do {
            response = try await fetchWithRetries(url, range: nil, limit: Int64(SignedManifest.maximumSignatureSize), deadline: min(deadline, Date().addingTimeInterval(options.requestTimeout)), rules: rules, reset: { body.reset() }, consume: body.append)
        } catch {
            log.add(.fail, .manifestSignature, url, "cannot fetch the signature: \(error)", hostNotReached: (error as? FetchError)?.hostNotReached ?? false)
            return .unavailable
        }
        switch response.status {
        case 200:
            guard !response.exceededLimit else {
                log.add(.fail, .manifestSignature, url, "larger than \(SignedManifest.maximumSignatureSize) bytes: not a minisign signature")
                return .unavailable
            }
            return .found(body.data)
        case 403, 404: return .absent
        default:
            log.add(.fail, .manifestSignature, url, "HTTP \(response.status) fetching the signature")
            return .unavailable
        }
    }

    /// Redirects followed: a warning, or a failure when one led from https to http.
    static func checkRedirects(_ response: FetchResponse, url: String, check: VerifyCheckID, log: CheckLog) {
        guard !response.redirects.isEmpty else { return }
        let downgrade = response.redirects.contains { hop in
            let parts = hop.components(separatedBy: " -> ")
            return parts.count == 2 && parts[0].lowercased().contains("https://") && parts[1].lowercased().hasPrefix("http://")
        }
        if downgrade {
            log.add(.fail, check, url, "redirected from https to http: \(response.redirects.joined(separator: "; "))")
        } else {
            log.add(.warn, check, url, "redirected (\(response.redirects.count)): \(response.redirects.joined(separator: "; "))")
        }
    }

    /// The rules object URLs (and their redirects) must pass.
    func objectRules(manifestURL: String) -> URLRules {
        let prefixes = options.expectedPrefixes.isEmpty ? [targetRoot(ofManifestURL: manifestURL)] : options.expectedPrefixes.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
        return URLRules(prefixes: prefixes, allowHTTP: options.allowHTTP, allowExternalURLs: options.allowExternalURLs)
    }

    /// The rules the manifest's and its signature's redirects must pass: the objects'
    /// prefixes, or the manifest's own directory.
    func manifestRules(manifestURL: String) -> URLRules {
        let objects = objectRules(manifestURL: manifestURL)
        let own = directory(of: manifestURL)
        return URLRules(prefixes: objects.prefixes.contains(own) ? objects.prefixes : objects.prefixes + [own], allowHTTP: options.allowHTTP, allowExternalURLs: options.allowExternalURLs)
    }

    /// GETs `url` as `fetchHop` does, following redirects: each hop must pass `rules`
    /// (as a URL in the manifest must) before it is requested, and at most
    /// `HTTPFetcher.maxRedirects` are followed. A refused hop is never requested.
    func fetchWithRetries(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date, rules: URLRules,
        reset: @escaping @Sendable () -> Void,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        var current = url
        var redirects: [String] = []
        while true {
            var response = try await fetchHop(current, range: range, limit: limit, deadline: deadline, reset: reset, consume: consume)
            guard response.isRedirect, let location = response.headers["location"] else {
                response.redirects = redirects
                return response
            }
            let next = URLRules.resolve(location, against: current)
            let hop = "\(response.status) \(current) -> \(next)"
            guard redirects.count < HTTPFetcher.maxRedirects else {
                throw FetchError.tooManyRedirects(url: url, limit: HTTPFetcher.maxRedirects, chain: redirects + [hop])
            }
            if let reason = rules.hopProblem(from: current, to: next) {
                throw FetchError.redirectRefused(url: url, status: response.status, from: current, to: next, reason: reason)
            }
            redirects.append(hop)
            current = next
        }
    }

    /// One GET (no redirects followed), retrying 5xx answers and failed connections
    /// (`FetchError.isTransient`) with exponential backoff and jitter, within
    /// `deadline`; a request past it is not retried. The error thrown at the end says
    /// how many attempts took how long.
    private func fetchHop(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        reset: @escaping @Sendable () -> Void,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        var attempt = 0
        let started = Date()
        var earlier: FetchError?
        while true {
            reset()
            do {
                let response = try await fetcher.fetch(url, range: range, limit: limit, deadline: deadline, consume: consume)
                if response.status >= 500 && attempt < options.retries && Date() < deadline {
                    attempt += 1
                    try await Backoff.wait(beforeRetry: attempt, deadline: deadline)
                    continue
                }
                return response
            } catch let error as FetchError where error.isTransient && attempt < options.retries && Date() < deadline {
                earlier = error
                attempt += 1
                try await Backoff.wait(beforeRetry: attempt, deadline: deadline)
            } catch let error as FetchError {
                throw FetchError.gaveUp(error, attempts: attempt + 1, seconds: Date().timeIntervalSince(started), earlier: earlier)
            }
        }
    }
}
