import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// What went wrong below HTTP, in the words a user needs: the cause (connection
/// refused, DNS failure, TLS handshake failed, a stall), not the HTTP client's
/// internal error text. Shared by the S3 client and verify's fetcher.
package struct NetworkFailure: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable {
        /// Nothing listens on the port (ECONNREFUSED).
        case refused
        /// The host name does not resolve.
        case dns
        /// No connection within the connect timeout (a dropped SYN, a firewall).
        case connectTimeout
        /// No route to the host or network (EHOSTUNREACH, ENETUNREACH).
        case unreachable
        /// The TLS handshake failed (an untrusted certificate, a wrong host name, …).
        case tls
        /// The connection was reset or closed before a complete answer.
        case closed
        /// Silent for longer than the idle (read) timeout.
        case stalled
        /// Anything else.
        case other
    }

    package let kind: Kind
    package let description: String

    package init(kind: Kind, description: String) {
        self.kind = kind
        self.description = description
    }

    /// True when the host was never reached, so nothing can be said about what it
    /// serves: a network failure (exit status 3), not a failed check.
    package var hostNotReached: Bool { [.refused, .dns, .connectTimeout, .unreachable].contains(kind) }

    /// Worth another attempt: anything but a TLS failure (a certificate does not start
    /// being trusted by itself).
    package var isTransient: Bool { kind != .tls }

    /// Classifies an error thrown by async-http-client or SwiftNIO for a request to
    /// `host` (`host:port`, named in the description).
    package init(_ error: Error, host: String) {
        self = Self.classify(error, host: host)
    }

    private static func classify(_ error: Error, host: String) -> NetworkFailure {
        if let failure = error as? NetworkFailure { return failure }
        if let error = error as? HTTPClientError, let failure = classify(httpClient: error, host: host) { return failure }
        if case ChannelError.connectTimeout(let amount) = error {
            let seconds = Double(amount.nanoseconds) / 1e9
            return .init(kind: .connectTimeout, description: "cannot connect to \(host): no answer within \(formatSeconds(seconds)) s")
        }
        if let error = error as? IOError { return classify(errno: error.errnoCode, host: host) }
        if case SocketAddressError.unknown(let name, _) = error {
            return .init(kind: .dns, description: "DNS failure: cannot resolve \(name)")
        }
        // NIOPosix's NIOConnectionError, known by name: the errors it holds, read by reflection.
        if String(describing: type(of: error)) == "NIOConnectionError", let failure = classify(connectionError: error, host: host) {
            return failure
        }
        // TLS errors come from NIOSSL (not a dependency of this module either): known by name.
        let typeName = String(reflecting: type(of: error))
        let text = String(describing: error)
        if typeName.contains("NIOSSL") || typeName.contains("BoringSSL") || text.contains("handshakeFailed") {
            return classify(tlsErrorText: text, host: host)
        }
        return .init(kind: .other, description: "\(host): \(text)")
    }

    /// The async-http-client errors that name a cause; nil for the others.
    private static func classify(httpClient error: HTTPClientError, host: String) -> NetworkFailure? {
        switch error {
        case .connectTimeout:
            return .init(kind: .connectTimeout, description: "cannot connect to \(host): no answer within the connect timeout")
        case .tlsHandshakeTimeout:
            return .init(kind: .tls, description: "TLS handshake with \(host) failed: no answer within the timeout")
        case .readTimeout:
            return .init(kind: .stalled, description: "\(host) stalled: nothing received within the idle timeout")
        case .remoteConnectionClosed:
            return .init(kind: .closed, description: "\(host) closed the connection before a complete answer")
        default:
            return nil
        }
    }

    /// NIOPosix's NIOConnectionError (not a dependency of this module): its DNS errors
    /// and the error of each address it tried, read by reflection. The first refused
    /// attempt, else the first with a known cause, else the first; else a DNS failure;
    /// nil when it holds neither.
    private static func classify(connectionError error: Error, host: String) -> NetworkFailure? {
        var dnsError: Error?
        var attempts: [Error] = []
        for child in Mirror(reflecting: error).children {
            switch child.label {
            case "dnsAError", "dnsAAAAError":
                if let value = child.value as? Error { dnsError = dnsError ?? value }
                else if let value = Mirror(reflecting: child.value).children.first?.value as? Error { dnsError = dnsError ?? value }
            case "connectionErrors":
                for failure in Mirror(reflecting: child.value).children {
                    if let inner = Mirror(reflecting: failure.value).children.first(where: { $0.label == "error" })?.value as? Error {
                        attempts.append(inner)
                    }
                }
            default: break
            }
        }
        if let first = attempts.first {
            let classified = attempts.map { classify($0, host: host) }
            return classified.first { $0.kind == .refused } ?? classified.first { $0.kind != .other } ?? classify(first, host: host)
        }
        if dnsError != nil {
            return .init(kind: .dns, description: "DNS failure: cannot resolve \(host.split(separator: ":").first.map(String.init) ?? host)")
        }
        return nil
    }

    /// A TLS failure, by what its text names.
    private static func classify(tlsErrorText text: String, host: String) -> NetworkFailure {
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
            return .init(kind: .tls, description: "TLS handshake with \(host) failed: certificate untrusted")
        }
        if text.contains("failedToValidateHostname") || text.contains("unableToValidateCertificate") {
            return .init(kind: .tls, description: "TLS handshake with \(host) failed: the certificate does not match the host name")
        }
        return .init(kind: .tls, description: "TLS handshake with \(host) failed: \(text)")
    }

    private static func classify(errno code: Int32, host: String) -> NetworkFailure {
        switch code {
        case ECONNREFUSED: return .init(kind: .refused, description: "connection refused by \(host)")
        case ECONNRESET, EPIPE: return .init(kind: .closed, description: "\(host) reset the connection")
        case EHOSTUNREACH, ENETUNREACH: return .init(kind: .unreachable, description: "cannot reach \(host): no route (\(String(cString: strerror(code))))")
        case ETIMEDOUT: return .init(kind: .connectTimeout, description: "cannot connect to \(host): timed out")
        default: return .init(kind: .other, description: "\(host): \(String(cString: strerror(code)))")
        }
    }
}
