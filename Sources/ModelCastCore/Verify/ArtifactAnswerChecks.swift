import Foundation

// The checks of an object's answer: its encoding, size, digest and headers. Every source
// answers them: a server with its response, a directory with the headers its hosting
// files declare, a store with the metadata it keeps and its checksum.

/// `artifact.content-encoding`: an artifact is served as stored; an encoded one would be
/// hashed encoded by devices, or lose Range resumption.
struct ContentEncodingCheck: ArtifactCheck {
    var ids: [VerifyCheckID] { [.artifactContentEncoding] }

    /// Each source's headers say it: a server's answer, a directory's declared headers (an
    /// encoding is never declared), the encoding a store keeps with the object.
    func statement(for source: FetchedFrom) -> SourceStatement { .runs }

    func run(_ read: ArtifactRead, with verification: ArtifactVerification, log: CheckLog) async {
        guard let encoding = read.response.headers["content-encoding"], encoding.lowercased() != "identity" else { return }
        log.add(.fail, .artifactContentEncoding, read.url, "\(read.label): \(encoding): devices would hash encoded bytes or lose Range resumption; serve it as stored")
    }
}

/// `artifact.size` and `artifact.content-length`: the body and its Content-Length against
/// the manifest's size (exact, or size_mb's approximate).
struct SizeCheck: ArtifactCheck {
    var ids: [VerifyCheckID] { [.artifactSize, .artifactContentLength] }

    /// A download counts the body; a store's proof gives the stored size.
    func statement(for source: FetchedFrom) -> SourceStatement { .runs }

    func run(_ read: ArtifactRead, with verification: ArtifactVerification, log: CheckLog) async {
        let (object, response) = (read.object, read.response)
        let (url, label) = (object.url, object.label)
        let contentLength = response.headers["content-length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        if let size = object.size {
            if response.exceededLimit || response.bytesRead > size {
                log.add(.fail, .artifactSize, url, "\(label): more than the \(size) bytes the manifest promises (stopped reading at \(response.bytesRead))")
            } else if response.bytesRead != size {
                log.add(.fail, .artifactSize, url, "\(label): \(response.bytesRead) bytes, manifest says \(size)")
            } else {
                log.add(.pass, .artifactSize, url, "\(label): \(size) bytes")
            }
            if let contentLength, contentLength != size {
                log.add(.fail, .artifactContentLength, url, "\(label): Content-Length \(contentLength), manifest says \(size)")
            } else if contentLength == nil {
                log.add(.warn, .artifactContentLength, url, "\(label): no Content-Length: devices cannot show progress")
            } else {
                log.add(.pass, .artifactContentLength, url, "\(label): \(size)")
            }
        } else if let approximate = object.approximateSize {
            if response.exceededLimit || abs(response.bytesRead - approximate.bytes) > approximate.tolerance {
                log.add(.fail, .artifactSize, url, "\(label): \(response.exceededLimit ? "more than \(approximate.bytes + approximate.tolerance)" : String(response.bytesRead)) bytes, the manifest's size_mb says about \(approximate.bytes)")
            } else {
                log.add(.pass, .artifactSize, url, "\(label): \(response.bytesRead) bytes, matches size_mb")
            }
            if contentLength == nil { log.add(.warn, .artifactContentLength, url, "\(label): no Content-Length: devices cannot show progress") }
            else if contentLength != response.bytesRead { log.add(.fail, .artifactContentLength, url, "\(label): Content-Length \(contentLength!), body \(response.bytesRead) bytes") }
        } else if contentLength == nil {
            log.add(.warn, .artifactContentLength, url, "\(label): no Content-Length: devices cannot show progress")
        }
    }
}

/// `artifact.sha256`: the bytes against the manifest's SHA-256 (or, for `latest`, the
/// content-derived file name).
struct DigestCheck: ArtifactCheck {
    var ids: [VerifyCheckID] { [.artifactSha256] }

    /// A download is hashed as it streams; a store proves the bytes by its own checksum
    /// (or downloads and hashes them where it keeps none).
    func statement(for source: FetchedFrom) -> SourceStatement { .runs }

    func run(_ read: ArtifactRead, with verification: ArtifactVerification, log: CheckLog) async {
        let (object, response) = (read.object, read.response)
        let (url, label) = (object.url, object.label)
        switch read.content {
        case .proven(let content, let expected):
            switch content {
            case .proven(let how): log.add(.pass, .artifactSha256, url, "\(label): \(expected.hex) (\(how))")
            // Worded as for a downloaded object: the same tampering reads the same through every source.
            case .differs(let actual?, _): log.add(.fail, .artifactSha256, url, "\(label): got \(actual), manifest says \(expected.hex)")
            case .differs(nil, let detail): log.add(.fail, .artifactSha256, url, "\(label): \(detail)")
            case .sizeDiffers: log.add(.fail, .artifactSha256, url, "\(label): not checked, the size differs from the manifest's")
            }
        case .streamed(let digest, _):
            let overlong = response.exceededLimit || object.size.map { response.bytesRead > $0 } ?? false
            if let expected = object.sha256 {
                if overlong {
                    log.add(.fail, .artifactSha256, url, "\(label): not checked, the body is longer than promised")
                } else if digest.hex == expected {
                    log.add(.pass, .artifactSha256, url, "\(label): \(expected)")
                } else {
                    log.add(.fail, .artifactSha256, url, "\(label): got \(digest.hex), manifest says \(expected)")
                }
            } else if verification.profile.urlNamesContent(url, sha256: digest) {
                log.add(.pass, .artifactSha256, url, "\(label): file name matches its content (\(digest.hex))")
            } else {
                log.add(.warn, .artifactSha256, url, "\(label): the manifest carries no hash for it; its integrity cannot be checked (sha256 \(digest.hex))")
            }
        }
    }
}

/// `artifact.cache-control` and `artifact.content-type`: artifacts never change under
/// their URL, and are served as the type the manifest (or their name) says.
struct HeadersCheck: ArtifactCheck {
    var ids: [VerifyCheckID] { [.artifactCacheControl, .artifactContentType] }

    /// A server's answer, a directory's declared headers, or the metadata a store keeps
    /// with the object: in each case what devices will be sent.
    func statement(for source: FetchedFrom) -> SourceStatement { .runs }

    func run(_ read: ArtifactRead, with verification: ArtifactVerification, log: CheckLog) async {
        let (url, label, headers) = (read.url, read.label, read.response.headers)
        let (status, detail) = Self.judgeCacheControl(headers["cache-control"])
        log.add(status, .artifactCacheControl, url, "\(label): \(detail)")
        let contentType = headers["content-type"] ?? ""
        let expectedType = read.expectedContentType
        if mediaType(contentType) == mediaType(expectedType) {
            log.add(.pass, .artifactContentType, url, "\(label): \(contentType)")
        } else if read.object.contentType == nil && mediaType(contentType) != "text/html" && !contentType.isEmpty {
            log.add(.warn, .artifactContentType, url, "\(label): '\(contentType)', expected \(expectedType)")
        } else {
            log.add(.fail, .artifactContentType, url, "\(label): '\(contentType)', expected \(expectedType)")
        }
    }

    /// An artifact's Cache-Control judged by `CachePolicy.validateArtifact`, as a status
    /// and a detail naming the value.
    static func judgeCacheControl(_ cacheControl: String?) -> (VerifyCheck.Status, String) {
        guard let cacheControl else {
            return (.fail, "no Cache-Control, expected '\(CachePolicy.immutable)': caches keep it only heuristically")
        }
        switch CachePolicy.validateArtifact(cacheControl) {
        case .ok:
            return (.pass, cacheControl)
        case .lacksImmutable:
            return (.warn, "'\(cacheControl)' lacks immutable: caches will revalidate an object that never changes")
        case .refused(let why):
            return (.fail, "'\(cacheControl)' is refused: \(why); expected long-lived ('\(CachePolicy.immutable)')")
        }
    }
}
