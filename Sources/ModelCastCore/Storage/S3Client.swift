import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// A response from S3.
struct S3Response: Sendable {
    let status: Int
    /// Lower-cased header names.
    let headers: [String: String]
    let body: Data
}

/// The body of an S3 request: nothing, bytes in memory, or a byte range of a file
/// (streamed, so memory stays flat whatever the object's size). `sent`, for a file, is
/// told how many of the range's bytes have gone out so far (each attempt from zero).
enum S3Body: Sendable {
    case empty
    case data(Data)
    case file(path: String, offset: Int64, length: Int64, sent: (@Sendable (Int64) -> Void)? = nil)

    var length: Int64 {
        switch self {
        case .empty: return 0
        case .data(let data): return Int64(data.count)
        case .file(_, _, let length, _): return length
        }
    }
}

/// S3's REST API over async-http-client, signed with SigV4, with bounded retries
/// (exponential backoff and jitter) for 5xx, throttling, 409 ConditionalRequestConflict
/// and connection errors. Other 4xx answers are returned to the caller.
final class S3Client: Sendable {
    let endpoint: S3Endpoint
    let bucket: String
    private let signer: SigV4Signer
    private let http: HTTPClient
    let retries: Int
    /// Requests sent (each attempt counts), for tests and reports.
    private let counter = RequestCounter()
    /// Descriptors file bodies may still be sending from when their request ended.
    private let openFiles = OpenFiles()

    /// Requests carry S3's checksum headers (`--checksum sha256`): error messages then say
    /// how to do without them.
    let sendsChecksums: Bool

    /// File bodies go out by sendfile: on plain HTTP unless told otherwise (TLS encrypts
    /// in this process, so there every byte passes through a buffer).
    let sendsFilesWithSendfile: Bool

    init(endpoint: S3Endpoint, bucket: String, credentials: AWSCredentials, retries: Int = 4, sendsChecksums: Bool = true, sendfile: Bool? = nil) {
        self.sendsChecksums = sendsChecksums
        self.sendsFilesWithSendfile = sendfile ?? (endpoint.scheme == "http")
        self.endpoint = endpoint
        self.bucket = bucket
        self.signer = SigV4Signer(credentials: credentials, region: endpoint.region, service: "s3")
        self.retries = retries
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(60)),
            decompression: .disabled)
        // A failed connection fails its request at once (with its real cause: refused,
        // DNS, TLS) instead of being retried by the pool until the connect timeout;
        // `send` retries it with backoff, as it retries everything else.
        configuration.connectionPool.retryConnectionEstablishment = false
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async {
        // The client is done with either way; its only failure (already shut down) leaves nothing open.
        try? await http.shutdown()
        openFiles.closeAll()
    }

    /// Requests sent so far, by method.
    var requestCounts: [String: Int] { counter.snapshot }

    /// Sends one request, retrying what is worth retrying. `payloadSHA256` is the
    /// body's SHA-256 (hex) for the signature. `errorIn200`: the operation can answer
    /// 200 with an error document (CompleteMultipartUpload), so a 200 body is checked
    /// for a retryable error code too; other 200 bodies are the caller's data, never
    /// read as errors.
    ///
    /// Not retried: a local file that cannot be read or changes size (its error is
    /// thrown as it is), and a response larger than `responseLimit` (`S3ResponseTooLarge`).
    func send(
        _ method: String, key: String?, query: [(String, String)] = [], headers: [(String, String)] = [],
        body: S3Body = .empty, payloadSHA256: String? = nil, operation: String, responseLimit: Int = 16 << 20,
        errorIn200: Bool = false
    ) async throws -> S3Response {
        var attempt = 0
        let started = Date()
        while true {
            do {
                let response = try await sendOnce(
                    method, key: key, query: query, headers: headers, body: body, payloadSHA256: payloadSHA256,
                    operation: operation, responseLimit: responseLimit)
                if Self.isRetryable(response, errorIn200: errorIn200), attempt < retries {
                    attempt += 1
                    try await Backoff.wait(beforeRetry: attempt)
                    continue
                }
                return response
            } catch let error as S3TransportError where attempt < retries && (error.failure?.isTransient ?? true) {
                attempt += 1
                try await Backoff.wait(beforeRetry: attempt)
            } catch let error as S3TransportError {
                throw connectionError(error, operation: operation, key: key ?? bucket, attempts: attempt + 1, since: started)
            }
        }
    }

    /// The error for a request that never got an HTTP answer: what happened, how many
    /// attempts were made and how long they took.
    private func connectionError(_ error: S3TransportError, operation: String, key: String, attempts: Int, since started: Date) -> S3Error {
        let elapsed = formatSeconds(Date().timeIntervalSince(started))
        let tries = attempts == 1 ? "after \(elapsed) s" : "\(attempts) attempts in \(elapsed) s"
        return S3Error(operation: operation, key: key, status: 0, code: "ConnectionError", message: "\(error.message) (\(tries))",
                       bucket: bucket, endpoint: endpoint.url)
    }

    /// The host (and port) requests go to, for messages.
    private var endpointHost: String { endpoint.address(bucket: bucket, key: nil).host }



    /// 5xx, 429, 409 ConditionalRequestConflict, and SlowDown / RequestTimeout error
    /// documents. A 200 body is read for an error code only with `errorIn200`, where
    /// S3's own transient errors (InternalError and the like) are retried as their 5xx would be.
    static func isRetryable(_ response: S3Response, errorIn200: Bool = false) -> Bool {
        if response.status >= 500 || response.status == 429 { return true }
        if response.status == 200 {
            guard errorIn200, let code = errorCode(response.body) else { return false }
            return ["InternalError", "ServiceUnavailable", "SlowDown", "RequestTimeout"].contains(code)
        }
        guard response.status >= 400 else { return false }
        let code = errorCode(response.body)
        return (response.status == 409 && code == "ConditionalRequestConflict") || code == "SlowDown" || code == "RequestTimeout"
    }

    /// Time allowed for one request: 300 s, plus one second per 256 KiB of body, so a
    /// large upload over a slow link is not cut off (64 MiB: 556 s).
    static func timeout(forBodyLength length: Int64) -> TimeAmount {
        .seconds(300 + max(0, length) / (256 << 10))
    }

    /// The URL and signed headers of one attempt.
    private func signed(
        _ method: String, key: String?, query: [(String, String)], headers: [(String, String)],
        body: S3Body, payloadSHA256: String?
    ) throws -> (url: String, headers: HTTPHeaders) {
        let (host, path) = endpoint.address(bucket: bucket, key: key)
        var allHeaders = headers
        if body.length > 0 || method == "PUT" || method == "POST" { allHeaders.append(("Content-Length", String(body.length))) }
        let payload: String
        switch body {
        case .empty: payload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        case .data(let data): payload = try payloadSHA256 ?? SHA256Hasher.digest(data).hex
        case .file: payload = payloadSHA256 ?? "UNSIGNED-PAYLOAD"
        }
        let signingRequest = SigV4Request(method: method, host: host, path: path, query: query, headers: allHeaders, payloadSHA256: payload)
        let signature = try signer.sign(signingRequest, date: Date())
        var url = endpoint.scheme + "://" + host + path
        if !query.isEmpty {
            url += "?" + query.map { uriEncode($0.0[...], keepSlash: false) + "=" + uriEncode($0.1[...], keepSlash: false) }.joined(separator: "&")
        }
        var out = HTTPHeaders()
        for (name, value) in allHeaders + signature where name.lowercased() != "content-length" {
            out.add(name: name, value: value)
        }
        return (url, out)
    }

    /// The signed request for one attempt with an empty or in-memory body.
    private func makeRequest(
        _ method: String, key: String?, query: [(String, String)], headers: [(String, String)],
        body: S3Body, payloadSHA256: String?
    ) throws -> HTTPClientRequest {
        let (url, signedHeaders) = try signed(method, key: key, query: query, headers: headers, body: body, payloadSHA256: payloadSHA256)
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: method)
        request.headers = signedHeaders
        switch body {
        case .empty: break
        case .data(let data): request.body = .bytes(ByteBuffer(bytes: data))
        case .file: preconditionFailure("file bodies are sent by sendFileOnce")
        }
        return request
    }

    private func sendOnce(
        _ method: String, key: String?, query: [(String, String)], headers: [(String, String)],
        body: S3Body, payloadSHA256: String?, operation: String, responseLimit: Int
    ) async throws -> S3Response {
        if case .file(let path, let offset, let length, let sent) = body {
            let (url, signedHeaders) = try signed(method, key: key, query: query, headers: headers, body: body, payloadSHA256: payloadSHA256)
            let file = FileBody(path: path, offset: offset, length: length, sendfile: sendsFilesWithSendfile, sent: sent)
            counter.add(method)
            return try await sendFileOnce(method, url: url, headers: signedHeaders, file: file, operation: operation, key: key ?? bucket, responseLimit: responseLimit)
        }
        let request = try makeRequest(method, key: key, query: query, headers: headers, body: body, payloadSHA256: payloadSHA256)
        counter.add(method)
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: Self.timeout(forBodyLength: body.length))
        } catch {
            throw S3TransportError(error, host: endpointHost)
        }
        var headersOut: [String: String] = [:]
        for (name, value) in response.headers { headersOut[name.lowercased()] = value }
        let objectKey = key ?? bucket
        // (A HEAD's Content-Length is the object's size, with no body to read.)
        if method != "HEAD", let length = headersOut["content-length"].flatMap(Int64.init), length > responseLimit {
            throw S3ResponseTooLarge(operation: operation, key: objectKey, size: length, limit: responseLimit)
        }
        var data = Data()
        do {
            for try await buffer in response.body {
                if data.count + buffer.readableBytes > responseLimit {
                    throw S3ResponseTooLarge(operation: operation, key: objectKey, size: Int64(data.count + buffer.readableBytes), limit: responseLimit)
                }
                data.append(contentsOf: buffer.readableBytesView)
            }
        } catch let error as S3ResponseTooLarge {
            throw error
        } catch {
            throw S3TransportError(message: "reading the response failed after \(data.count) bytes: \(NetworkFailure(error, host: endpointHost))")
        }
        return S3Response(status: Int(response.status.code), headers: headersOut, body: data)
    }

    /// One attempt of a request whose body is a range of a file, written by `FileBody`
    /// through the HTTP client's stream writer (sendfile on plain HTTP). A local file that
    /// cannot be read, or that changes size, is thrown as it is.
    private func sendFileOnce(
        _ method: String, url: String, headers: HTTPHeaders, file: FileBody, operation: String, key: String, responseLimit: Int
    ) async throws -> S3Response {
        let request = try HTTPClient.Request(url: url, method: HTTPMethod(rawValue: method), headers: headers, body: file.body())
        let delegate = FileBodyResponse(body: file, limit: responseLimit)
        let response: FileBodyResponse.Response
        do {
            defer { file.release(into: openFiles) }
            response = try await http.execute(request: request, delegate: delegate, deadline: .now() + Self.timeout(forBodyLength: file.length)).get()
        } catch let error as FileBodyResponseTooLarge {
            throw S3ResponseTooLarge(operation: operation, key: key, size: Int64(error.size), limit: responseLimit)
        } catch {
            if let local = file.failure.error { throw local }
            throw S3TransportError(error, host: endpointHost)
        }
        if let local = file.failure.error { throw local }
        var headersOut: [String: String] = [:]
        for (name, value) in response.head.headers { headersOut[name.lowercased()] = value }
        return S3Response(status: Int(response.head.status.code), headers: headersOut, body: Data(response.body.readableBytesView))
    }

    /// GETs `key` and hands its body to `consume` block by block, so memory stays flat
    /// whatever the object's size. Retried as `send` retries, each attempt from the first
    /// byte (`restart` is called before an attempt's first block). A non-200 answer is
    /// returned with its (small) body and nothing consumed; a 200 answer with an empty body.
    /// An error thrown by `consume` ends the download and is thrown as it is.
    func download(
        key: String, headers: [(String, String)] = [], operation: String, expectedLength: Int64,
        restart: () throws -> Void, consume: (ByteBuffer) throws -> Void
    ) async throws -> S3Response {
        var attempt = 0
        let started = Date()
        while true {
            do {
                let request = try makeRequest("GET", key: key, query: [], headers: headers, body: .empty, payloadSHA256: nil)
                counter.add("GET")
                let response: HTTPClientResponse
                do {
                    response = try await http.execute(request, timeout: Self.timeout(forBodyLength: expectedLength))
                } catch {
                    throw S3TransportError(error, host: endpointHost)
                }
                var headersOut: [String: String] = [:]
                for (name, value) in response.headers { headersOut[name.lowercased()] = value }
                if response.status.code != 200 {
                    var data = Data()
                    do {
                        for try await buffer in response.body where data.count < 64 << 10 {
                            data.append(contentsOf: buffer.readableBytesView)
                        }
                    } catch {
                        throw S3TransportError(message: "reading the response failed: \(NetworkFailure(error, host: endpointHost))")
                    }
                    let answer = S3Response(status: Int(response.status.code), headers: headersOut, body: data)
                    if Self.isRetryable(answer), attempt < retries {
                        attempt += 1
                        try await Backoff.wait(beforeRetry: attempt)
                        continue
                    }
                    return answer
                }
                try restart()
                var iterator = response.body.makeAsyncIterator()
                while true {
                    let buffer: ByteBuffer?
                    do {
                        buffer = try await iterator.next()
                    } catch {
                        throw S3TransportError(message: "reading the response failed: \(NetworkFailure(error, host: endpointHost))")
                    }
                    guard let buffer else { break }
                    try consume(buffer)
                }
                return S3Response(status: 200, headers: headersOut, body: Data())
            } catch let error as S3TransportError where attempt < retries && (error.failure?.isTransient ?? true) {
                attempt += 1
                try await Backoff.wait(beforeRetry: attempt)
            } catch let error as S3TransportError {
                throw connectionError(error, operation: operation, key: key, attempts: attempt + 1, since: started)
            }
        }
    }

    /// Turns an error answer into an `S3Error` (code and message from its XML body). A 400
    /// that may be a store refusing S3's checksum headers (its message names a checksum, or a
    /// HEAD, which has no body to say why) says how to do without them; one that refuses the
    /// algorithm only (LocalStack 4.0 knows no CRC-64/NVME) points to SHA-256 checksums.
    func error(_ response: S3Response, operation: String, key: String) -> S3Error {
        var message = XMLFields.first("Message", in: response.body) ?? ""
        let lowered = message.lowercased()
        if sendsChecksums, response.status == 400, lowered.contains("checksum") || (operation.hasPrefix("HEAD") && response.body.isEmpty) {
            let hint = lowered.contains("algorithm")
                ? "(a store that knows SHA-256 checksums but not CRC-64/NVME ones takes --checksum sha256; one that refuses every checksum header, as Backblaze B2 does, needs --checksum none)"
                : "(a store that refuses S3's checksum headers, as Backblaze B2 does, needs --checksum none)"
            message += (message.isEmpty ? "" : " ") + hint
        }
        return S3Error(operation: operation, key: key, status: response.status, code: Self.errorCode(response.body) ?? "", message: message,
                       bucket: bucket, endpoint: endpoint.url)
    }

    static func errorCode(_ body: Data) -> String? { XMLFields.first("Code", in: body) }
}

/// A connection-level failure (reset, refused, timed out) worth retrying.
struct S3TransportError: Error {
    let message: String
    /// What happened, when the failure came from the HTTP client.
    var failure: NetworkFailure? = nil

    init(message: String, failure: NetworkFailure? = nil) {
        self.message = message
        self.failure = failure
    }

    /// A failed request, said in words (connection refused, DNS failure, TLS, …).
    init(_ error: Error, host: String) {
        let failure = NetworkFailure(error, host: host)
        self.init(message: failure.description, failure: failure)
    }
}

/// Requests sent, by HTTP method.
final class RequestCounter: Sendable {
    private let counts = NIOLockedValueBox<[String: Int]>([:])

    func add(_ method: String) {
        counts.withLockedValue { $0[method, default: 0] += 1 }
    }

    var snapshot: [String: Int] { counts.withLockedValue { $0 } }
}

/// `1.25` → `"1.2"`: elapsed times in messages, to a tenth of a second.
func formatSeconds(_ seconds: Double) -> String {
    String(format: "%.1f", max(0, seconds))
}
