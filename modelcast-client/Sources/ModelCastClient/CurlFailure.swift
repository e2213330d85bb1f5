#if os(Linux)
import CCurl
import Foundation
import FoundationNetworking

/// Why a libcurl transfer failed, in the words `networkFailureReason` gives the same
/// failure from `URLSession` ("cannot connect to host:443 (connection refused)"): the code
/// becomes the `NSURLError` code URLSession reports for it, and one with no counterpart
/// reads as libcurl's own message (`detail`, from its error buffer: "transfer closed with
/// outstanding read data remaining").
func curlFailureReason(_ code: CURLcode, detail: String, url: String, idleTimeout: TimeInterval) -> String {
    let urlCode: Int
    switch code {
    case CURLE_UNSUPPORTED_PROTOCOL: urlCode = NSURLErrorUnsupportedURL
    case CURLE_URL_MALFORMAT: urlCode = NSURLErrorBadURL
    case CURLE_COULDNT_RESOLVE_HOST: urlCode = NSURLErrorCannotFindHost
    case CURLE_COULDNT_CONNECT: urlCode = NSURLErrorCannotConnectToHost
    case CURLE_OPERATION_TIMEDOUT: urlCode = NSURLErrorTimedOut
    case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING: urlCode = NSURLErrorNetworkConnectionLost
    case CURLE_WEIRD_SERVER_REPLY: urlCode = NSURLErrorBadServerResponse
    case CURLE_TOO_MANY_REDIRECTS: urlCode = NSURLErrorHTTPTooManyRedirects
    case CURLE_SSL_CONNECT_ERROR: urlCode = NSURLErrorSecureConnectionFailed
    case CURLE_PEER_FAILED_VERIFICATION: urlCode = NSURLErrorServerCertificateUntrusted
    default: urlCode = NSURLErrorUnknown
    }
    let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    let error = NSError(domain: NSURLErrorDomain, code: urlCode, userInfo: [NSLocalizedDescriptionKey: message])
    return networkFailureReason(error, url: url, idleTimeout: idleTimeout)
}
#endif
