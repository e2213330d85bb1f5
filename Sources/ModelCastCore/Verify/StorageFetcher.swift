import Foundation

/// Reads a target through its store's API (`verify s3://bucket/prefix`) as if it were
/// the host: URLs under the base URL the release was published for map to keys, the
/// headers are those the store keeps with each object (what it will serve), and an
/// artifact's bytes are proven by the store's own checksum where it has one, so a
/// bucket is checked without downloading every model.
package struct StorageFetcher: ObjectFetcher {
    package let storage: any Storage
    /// The base URL the manifest's object URLs were built from, without a trailing `/`.
    package let baseURL: String

    package init(storage: any Storage, baseURL: String) {
        self.storage = storage
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
    }

    package var reads: FetchedFrom { .storeAPI }

    package func origin(of url: String) -> String {
        key(for: url).map { "\(storage.location)/\($0)" } ?? url
    }

    /// The key a URL maps to, or nil when it lies outside the base URL (or is no plain key).
    package func key(for url: String) -> String? { keyOfURL(url, under: baseURL) }

    package func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        guard let key = key(for: url) else { return FetchResponse(status: 404, headers: [:], bytesRead: 0, exceededLimit: false) }
        guard let info = try await stored(url, { try await storage.head(key) }) else {
            return FetchResponse(status: 404, headers: [:], bytesRead: 0, exceededLimit: false)
        }
        var headers = Self.headers(info)
        var (start, end, status) = (Int64(0), info.size - 1, 200)
        if let range {
            guard range.lowerBound < info.size else { return FetchResponse(status: 416, headers: headers, bytesRead: 0, exceededLimit: false) }
            (start, end, status) = (range.lowerBound, min(range.upperBound, info.size - 1), 206)
            headers["content-range"] = "bytes \(start)-\(end)/\(info.size)"
            headers["content-length"] = String(end - start + 1)
        }
        // Ranged reads of at most `RangedRead.maximum` bytes: memory stays bounded, and
        // never more than one byte past the limit is asked for.
        var body = LimitedBody(limit: limit, consume: consume)
        var offset = start
        while offset <= end {
            let last = min(end, offset + Int64(RangedRead.maximum) - 1, start + limit)
            let chunk: Data
            do { chunk = try await stored(url) { try await storage.read(key, range: offset...last) } } catch let error as StorageError {
                throw FetchError.store(url: url, message: error.description, unreachable: false)  // gone since the HEAD
            }
            if chunk.isEmpty { break }
            offset += Int64(chunk.count)
            guard try body.pass(chunk) else { break }
        }
        return FetchResponse(status: status, headers: headers, bytesRead: body.read, exceededLimit: body.exceeded)
    }

    package func prove(_ url: String, size: Int64, sha256: SHA256Digest) async throws -> ProvenObject? {
        guard let key = key(for: url), let info = try await stored(url, { try await storage.head(key) }) else {
            return ProvenObject(status: 404, headers: [:], size: 0, content: .sizeDiffers)
        }
        // The size alone tells: nothing to download.
        guard info.size == size else { return ProvenObject(status: 200, headers: Self.headers(info), size: info.size, content: .sizeDiffers) }
        do {
            // The store's own checksum, or a download hashed here; never the metadata a writer set.
            let proof = try await stored(url) { try await storage.proveContent(key, size: size, sha256: sha256, localFile: nil, trustStored: false) }
            return ProvenObject(status: 200, headers: Self.headers(info), size: info.size, content: .proven(proof == .storeChecksum ? "the store's checksum" : "downloaded and hashed"))
        } catch StorageError.contentMismatch(_, _, _, _, let actual, let detail) {
            return ProvenObject(status: 200, headers: Self.headers(info), size: info.size, content: .differs(actualSHA256: actual, detail: detail))
        } catch let error as StorageError {
            return ProvenObject(status: 200, headers: Self.headers(info), size: info.size, content: .differs(actualSHA256: nil, detail: error.description))
        }
    }

    /// The headers a store keeps with an object, as the host will serve them.
    private static func headers(_ info: ObjectInfo) -> [String: String] {
        var headers = ["content-length": String(info.size), "accept-ranges": "bytes"]
        headers["cache-control"] = info.cacheControl
        headers["content-type"] = info.contentType
        headers["content-encoding"] = info.contentEncoding
        return headers
    }

    /// Runs a store request, turning what the store throws (unreachable, refused
    /// credentials, no such bucket) into a `FetchError` that keeps its exit status;
    /// a `StorageError` (an object's own state) is the caller's to judge.
    private func stored<T>(_ url: String, _ request: () async throws -> T) async throws -> T {
        do { return try await request() } catch let error as StorageError {
            throw error
        } catch let error as FetchError {
            throw error
        } catch {
            throw FetchError.store(url: url, message: String(describing: error), unreachable: ExitStatus(for: error) == .io)
        }
    }
}
