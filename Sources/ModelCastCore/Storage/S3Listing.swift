import Foundation
import NIOConcurrencyHelpers

/// The keys of an S3 target with their sizes, from ListObjectsV2 (a thousand a request).
struct S3Listing: Sendable {
    let client: S3Client
    let target: S3Location
    /// Set once a server refused a listing by prefix (see `sizes`): the listings after it
    /// go without one.
    let withoutPrefix = LockedFlag()

    /// Every key under `prefix` with its size.
    func sizes(prefix: String) async throws -> [String: Int64] {
        let fullPrefix = target.objectKey(prefix)
        if !withoutPrefix.value {
            do {
                return try await listObjects(queryPrefix: fullPrefix, keep: fullPrefix)
            } catch let error as S3Error where error.code == "SignatureDoesNotMatch" && fullPrefix.contains("/") {
                // Some S3-compatible servers (moto among them) check signatures against the
                // decoded query, so a "/" in `prefix` never verifies. List without the
                // prefix and filter here instead; AWS itself never takes this path.
                withoutPrefix.value = true
            }
        }
        return try await listObjects(queryPrefix: nil, keep: fullPrefix)
    }

    /// The listing, page by page, of the keys starting with `keep` (relative to the target
    /// prefix), asking the store for `queryPrefix` only.
    func listObjects(queryPrefix: String?, keep: String) async throws -> [String: Int64] {
        var keys: [String: Int64] = [:]
        var token: String?
        repeat {
            var query = [("list-type", "2")]
            if let queryPrefix, !queryPrefix.isEmpty { query.append(("prefix", queryPrefix)) }
            if let token { query.append(("continuation-token", token)) }
            let response = try await client.send("GET", key: nil, query: query, operation: "LIST")
            guard response.status == 200 else { throw client.error(response, operation: "LIST", key: keep) }
            for block in XMLFields.blocks("Contents", in: response.body) {
                guard let key = XMLFields.first("Key", in: block), key.hasPrefix(keep) else { continue }
                keys[target.prefix.isEmpty ? key : String(key.dropFirst(target.prefix.count + 1))] = XMLFields.first("Size", in: block).flatMap { Int64($0) } ?? -1
            }
            token = XMLFields.first("IsTruncated", in: response.body) == "true" ? XMLFields.first("NextContinuationToken", in: response.body) : nil
        } while token != nil
        return keys
    }
}

/// A Boolean shared between tasks.
final class LockedFlag: Sendable {
    private let flag = NIOLockedValueBox(false)

    var value: Bool {
        get { flag.withLockedValue { $0 } }
        set { flag.withLockedValue { $0 = newValue } }
    }
}
