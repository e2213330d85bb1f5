import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A small object a target may not have: the next key set, a signature list, a kept
/// signature under a key set. A private S3 bucket whose readers may not list it answers 403
/// for a key that is not there, not 404; both mean "not there" here, as `modelcast verify`
/// reads them (`absent: [403, 404]`). Answering 403 for an object that exists gains a
/// server nothing it could not get from answering 404.
struct OptionalObject: Sendable {
    /// The body, or nil when the object is not there.
    let body: Data?
    /// The response's status: 200, or the 404 or 403 that said it is not there.
    let status: Int

    /// The statuses that mean "not there".
    static let absentStatuses: Set<Int> = [403, 404]

    /// GETs `url` with a metadata request's bounds and `limit`; another status than 200,
    /// 403 or 404 is `ClientError.http`.
    static func fetch(_ url: URL, http: HTTPStream, object: HTTPStream.SmallObject, limit: Int) async throws -> OptionalObject {
        var request = URLRequest(url: url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let (response, body) = try await http.small(request, object: object, limit: limit)
        if absentStatuses.contains(response.statusCode) { return OptionalObject(body: nil, status: response.statusCode) }
        guard response.statusCode == 200 else { throw ClientError.http(url: url.absoluteString, status: response.statusCode) }
        return OptionalObject(body: body, status: 200)
    }
}
