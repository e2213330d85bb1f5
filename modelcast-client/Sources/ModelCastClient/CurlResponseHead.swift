#if os(Linux)
import Foundation
import FoundationNetworking

/// The head of the response libcurl is receiving, from its header lines: a status line
/// starts a new head (after an interim 1xx; redirects are followed by `CurlTransfer`,
/// each with a head of its own), so what is kept is the final response's.
struct CurlResponseHead {
    /// The status line's HTTP version ("HTTP/1.1", "HTTP/2").
    private(set) var version = "HTTP/1.1"
    /// Each field as it came, in order.
    private(set) var fields: [(name: String, value: String)] = []

    /// Takes one header line as libcurl hands it over (with its CRLF).
    mutating func add(_ line: UnsafeRawBufferPointer) {
        var text = String(decoding: line, as: UTF8.self)
        while text.last?.isNewline == true { text.removeLast() }  // "\r\n" is one Character
        if text.hasPrefix("HTTP/") {
            version = String(text.prefix { $0 != " " })
            fields = []
        } else if let first = text.first, first == " " || first == "\t", let previous = fields.popLast() {
            // An obsolete folded line continues the field before it.
            fields.append((previous.name, previous.value + " " + text.trimmingCharacters(in: .whitespaces)))
        } else if let colon = text.firstIndex(of: ":") {
            fields.append((String(text[..<colon]), text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
    }

    /// The response for `url` with `status`: its fields by name, a field that came more
    /// than once joined with ", " (as HTTP allows for a list); `HTTPURLResponse` looks
    /// names up in any case.
    func response(url: URL, status: Int) -> HTTPURLResponse? {
        var merged: [String: String] = [:]
        var names: [String: String] = [:]  // lowercased → the spelling first seen
        for (name, value) in fields {
            let key = names[name.lowercased(), default: name]
            names[name.lowercased()] = key
            merged[key] = merged[key].map { $0 + ", " + value } ?? value
        }
        return HTTPURLResponse(url: url, statusCode: status, httpVersion: version, headerFields: merged)
    }
}
#endif
