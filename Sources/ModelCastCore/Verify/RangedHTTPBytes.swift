import Foundation

/// An object read piecewise with Range requests (for the zip central directory),
/// retried like every other request. Each 206 must say, in its Content-Range, that it
/// is a slice of an object of exactly the size that was downloaded and hashed.
struct RangedHTTPBytes: RandomAccessBytes {
    let verifier: Verifier
    let url: String
    /// The size of the body that was hashed.
    let size: Int64
    let deadline: Date
    /// The rules a redirect must pass.
    let rules: URLRules
    var name: String { url }

    func read(offset: Int64, count: Int) async throws -> [UInt8] {
        guard count > 0, offset < size else { return [] }
        let end = min(size, offset + Int64(count)) - 1
        let body = ByteCollector()
        let response = try await verifier.fetchWithRetries(url, range: offset...end, limit: end - offset + 1, deadline: deadline, rules: rules, reset: { body.reset() }, consume: body.append)
        func failure(_ message: String) -> FetchError { .unexpectedAnswer(url: url, message: message) }
        switch response.status {
        case 206:
            guard let contentRange = response.headers["content-range"] else {
                throw failure("HTTP 206 for bytes \(offset)-\(end) without a Content-Range")
            }
            guard let range = Self.parseContentRange(contentRange) else {
                throw failure("HTTP 206 for bytes \(offset)-\(end) with an unreadable Content-Range '\(contentRange)'")
            }
            guard range.total == size else {
                throw failure("Content-Range '\(contentRange)' says the object has \(range.total.map(String.init) ?? "an unknown number of") bytes, but the body downloaded and hashed has \(size): the ranges read are not of the object checked")
            }
            guard range.first == offset, range.last == end, response.bytesRead == end - offset + 1, !response.exceededLimit else {
                throw failure("asked for bytes \(offset)-\(end), got Content-Range '\(contentRange)' and \(response.bytesRead)\(response.exceededLimit ? "+" : "") bytes")
            }
        case 200 where offset == 0:
            // The whole object (Range ignored): its first bytes, if it is the object hashed.
            if let length = response.headers["content-length"].flatMap({ Int64($0.trimmingCharacters(in: .whitespaces)) }), length != size {
                throw failure("HTTP 200 with Content-Length \(length) for bytes \(offset)-\(end), but the body downloaded and hashed has \(size) bytes")
            }
        default:
            throw failure("HTTP \(response.status) for bytes \(offset)-\(end)")
        }
        return Array(body.data)
    }

    /// `bytes 0-99/2000` → (0, 99, 2000); `bytes 0-99/*` → (0, 99, nil).
    static func parseContentRange(_ value: String) -> (first: Int64, last: Int64, total: Int64?)? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard spec.count == 2 else { return nil }
        let bounds = spec[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last else { return nil }
        if spec[1] == "*" { return (first, last, nil) }
        guard let total = Int64(spec[1]) else { return nil }
        return (first, last, total)
    }
}
