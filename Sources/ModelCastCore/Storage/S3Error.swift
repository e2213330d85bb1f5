import Foundation

/// An error answer from S3 (or an S3-compatible store), with its code and message.
/// Never carries request headers, so no credential or signature can leak into it.
package struct S3Error: Error, Sendable, Equatable, LocalizedError, CustomStringConvertible {
    package let operation: String
    package let key: String
    package let status: Int
    package let code: String
    package let message: String
    /// The bucket and the store's endpoint the request went to ("" when not known).
    package var bucket = ""
    package var endpoint = ""

    /// Codes with which a store says it does not accept the credentials themselves.
    static let credentialCodes: Set<String> = [
        "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken", "TokenRefreshRequired",
        "InvalidClientTokenId", "AuthorizationHeaderMalformed",
    ]

    /// The request and the store's answer, as sent and received.
    private var answer: String {
        // Status 0: no HTTP answer at all; the message says what happened instead.
        if status == 0 { return "\(operation) \(key): \(message)" }
        return "\(operation) \(key): HTTP \(status)\(code.isEmpty ? "" : " \(code)")\(message.isEmpty ? "" : ": \(message)")"
    }

    private var at: String { endpoint.isEmpty ? "" : " at \(endpoint)" }

    package var description: String {
        if code == "NoSuchBucket" {
            return "bucket \(quotedValue(bucket))\(at) does not exist (\(answer)): check the bucket name of the target, or create the bucket"
        }
        if Self.credentialCodes.contains(code) {
            return "the store\(at) refused the credentials (\(answer)): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE's entry in ~/.aws/credentials), and AWS_SESSION_TOKEN for temporary ones"
        }
        if code == "AccessDenied" || code == "AllAccessDisabled" {
            return "access denied to bucket \(quotedValue(bucket))\(at) (\(answer)): the credentials are valid but lack the permission; the bucket's or the user's policy must allow it"
        }
        return answer
    }

    package var errorDescription: String? { description }
}

/// A response body larger than the request allowed; never retried (the object
/// will not shrink). `size` is the Content-Length, or the bytes seen before stopping.
struct S3ResponseTooLarge: Error, LocalizedError, CustomStringConvertible {
    let operation: String
    let key: String
    let size: Int64
    let limit: Int

    var description: String {
        "\(operation) \(key): the response is \(size) bytes, more than the \(limit) allowed for it"
    }

    var errorDescription: String? { description }
}
