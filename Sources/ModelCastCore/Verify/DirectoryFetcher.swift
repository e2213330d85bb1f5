import Foundation

/// Serves objects from a published directory as if it were the host: URLs under
/// the base URL map to files, headers come from `_modelcast/objects.json` (what
/// the uploader will set). Lets `verify DIR` check a release before it is synced.
package struct DirectoryFetcher: ObjectFetcher {
    package let root: String
    package let baseURL: String
    /// Headers by key, from the object-metadata file.
    package let declared: [String: ObjectMetadata]

    /// Reads `_modelcast/objects.json` under `root` for the base URL and headers.
    package init(root: String, baseURL: String? = nil) throws {
        self.root = root
        let file = try HostedObjectsFile(root: root)
        let declared = file?.declared ?? [:]
        let base = baseURL ?? file?.baseURL
        guard let base else {
            throw ModelCastError.usage("\(root) has no _modelcast/objects.json to say which URL it is served from; pass --base-url")
        }
        self.baseURL = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.declared = declared
    }

    package func origin(of url: String) -> String {
        key(for: url).map { root + "/" + $0 } ?? url
    }

    package var reads: FetchedFrom { .files }

    /// The key a URL maps to, or nil when it lies outside the base URL (or is no plain key).
    package func key(for url: String) -> String? { keyOfURL(url, under: baseURL) }

    package func fetch(
        _ url: String, range: ClosedRange<Int64>?, limit: Int64, deadline: Date,
        consume: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> FetchResponse {
        guard let key = key(for: url),
              let info = try linkStatus(root + "/" + key), case .regular = FileType(mode: info.st_mode) else {
            return FetchResponse(status: 404, headers: [:], redirects: [], bytesRead: 0, exceededLimit: false)
        }
        let size = Int64(info.st_size)
        var headers: [String: String] = ["accept-ranges": "bytes"]
        if let metadata = declared[key] {
            headers["cache-control"] = metadata.cacheControl
            headers["content-type"] = metadata.contentType
        }
        let file = try FileDescriptor.openForReading(root + "/" + key)
        var start: Int64 = 0
        var end = size - 1
        var status = 200
        if let range {
            guard range.lowerBound < size else {
                return FetchResponse(status: 416, headers: headers, redirects: [], bytesRead: 0, exceededLimit: false)
            }
            start = range.lowerBound
            end = min(range.upperBound, size - 1)
            status = 206
            headers["content-range"] = "bytes \(start)-\(end)/\(size)"
        }
        headers["content-length"] = String(end - start + 1)
        var body = LimitedBody(limit: limit, consume: consume)
        var offset = start
        while offset <= end {
            let chunk = try file.read(at: offset, count: Int(min(1 << 20, end - offset + 1)))
            if chunk.isEmpty { break }
            offset += Int64(chunk.count)
            guard try body.pass(chunk) else { break }
        }
        return FetchResponse(status: status, headers: headers, redirects: [], bytesRead: body.read, exceededLimit: body.exceeded)
    }
}
