import Foundation
import ModelCastFormat
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A failed transfer's error as a person reads it ("the server sent nothing for 30 s
/// (timed out)", "cannot connect to cdn.example.com:443 (connection refused)"), rather than
/// a Foundation error domain and code. `url` names the host; `idleTimeout` is the session's.
func networkFailureReason(_ error: Error, url: String, idleTimeout: TimeInterval) -> String {
    let ns = error as NSError
    let components = URLComponents(string: url)
    let host = components?.host ?? url
    let port = components?.port ?? (components?.scheme?.lowercased() == "https" ? 443 : 80)
    guard ns.domain == NSURLErrorDomain else { return readableReason(error) }
    switch ns.code {
    case NSURLErrorTimedOut: return "the server sent nothing for \(formatSeconds(idleTimeout)) s (timed out)"
    case NSURLErrorCannotConnectToHost: return "cannot connect to \(host):\(port) (connection refused)"
    case NSURLErrorNetworkConnectionLost: return "the connection to \(host) was lost"
    case NSURLErrorNotConnectedToInternet: return "this device is not connected to the internet"
    case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: return "cannot find the host \(host) (name lookup failed)"
    case NSURLErrorBadServerResponse, NSURLErrorCannotParseResponse: return "the server's answer is not valid HTTP"
    case NSURLErrorZeroByteResource: return "the server sent an empty body"
    case NSURLErrorHTTPTooManyRedirects: return "too many redirects"
    case NSURLErrorRedirectToNonExistentLocation: return "a redirect to a location that does not exist"
    case NSURLErrorSecureConnectionFailed: return "the TLS connection to \(host) could not be made"
    case NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateNotYetValid:
        return "the certificate of \(host) is expired or not yet valid"
    case NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot:
        return "the certificate of \(host) is not trusted"
    case NSURLErrorClientCertificateRejected, NSURLErrorClientCertificateRequired: return "\(host) asks for a client certificate"
    case NSURLErrorDataNotAllowed: return "the network does not allow data now (cellular data off, or Low Data Mode)"
    case NSURLErrorInternationalRoamingOff: return "international roaming is off"
    case NSURLErrorCallIsActive: return "a call is active and the network cannot carry data meanwhile"
    case NSURLErrorBadURL: return "not a valid URL"
    case NSURLErrorUnsupportedURL: return "the URL's scheme is not supported"
    case NSURLErrorCancelled: return "the request was cancelled"
    default:
        // swift-corelibs-foundation carries libcurl's own words ("transfer closed with
        // outstanding read data remaining") for the codes it does not map.
        let text = ns.localizedDescription
        return text.contains(NSURLErrorDomain) || text.isEmpty ? "the transfer failed (URL error \(ns.code))" : text
    }
}
