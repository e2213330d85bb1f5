import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

/// File request bodies (`FileBody`) against real servers on loopback: moto, and a server
/// that answers before it has read the body.
final class FileBodyTests: XCTestCase {
    func client(_ endpoint: String, bucket: String, sendfile: Bool, credentials: AWSCredentials) throws -> S3Client {
        S3Client(endpoint: try S3Endpoint(endpoint: endpoint, region: "us-east-1", pathStyle: true), bucket: bucket,
                 credentials: credentials, retries: 0, sendfile: sendfile)
    }

    /// Descriptors this process holds open on `path` (not a count of all descriptors:
    /// other tests in the same process open and close their own meanwhile).
    func openDescriptors(on path: String) -> Int {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == target }.count
    }

    /// Both ways of sending a file (sendfile on plain HTTP, buffers as over TLS) store
    /// exactly the range's bytes, report progress up to the range's length, and close the file.
    func testBothWaysStoreExactlyTheRange() async throws {
        let moto = try MotoS3()
        let scratch = try Scratch()
        let bytes = patternBytes(3 * FileBody.regionSize + 12_345, seed: 7)
        let path = try scratch.write("data.bin", bytes)
        let credentials = AWSCredentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey)
        // The first request starts the event loops, which hold descriptors of their own.
        let warm = try client(moto.endpoint, bucket: moto.bucket, sendfile: false, credentials: credentials)
        _ = try await warm.send("GET", key: "warm", operation: "GET")
        await warm.shutdown()
        for sendfile in [true, false] {
            let s3 = try client(moto.endpoint, bucket: moto.bucket, sendfile: sendfile, credentials: credentials)
            let progress = ProgressRecorder()
            let offset: Int64 = 1000
            let length = Int64(bytes.count) - offset - 5
            let key = "range-\(sendfile)"
            let put = try await s3.send("PUT", key: key, body: .file(path: path, offset: offset, length: length, sent: { progress.record($0) }), operation: "PUT")
            let get = try await s3.send("GET", key: key, operation: "GET", responseLimit: 8 << 20)
            await s3.shutdown()
            XCTAssertEqual(put.status, 200, "sendfile \(sendfile)")
            XCTAssertEqual(Array(get.body), Array(bytes[Int(offset)..<Int(offset + length)]), "sendfile \(sendfile)")
            XCTAssertEqual(progress.values.last, length, "sendfile \(sendfile)")
            XCTAssertEqual(progress.values, progress.values.sorted(), "progress only grows")
            XCTAssertEqual(openDescriptors(on: path), 0, "the file is closed (sendfile \(sendfile))")
        }
    }

    /// A server that answers 200 as soon as it has a request's head and then reads the
    /// body (the HTTP client keeps sending it after handing over the answer): the answer
    /// is returned, nothing crashes, the descriptor a queued region may still read stays
    /// open until the client shuts down (closing it at once sent bytes from whatever file
    /// reused its number), and then it is closed.
    func testAnAnswerBeforeTheBodyEndsIsReturnedAndTheFileClosedAtShutdown() async throws {
        let scratch = try Scratch()
        let path = try scratch.write("big.bin", patternBytes(24 << 20, seed: 3))
        let server = try BackgroundProcess("/usr/bin/env", ["python3", "-c", """
            import socket, sys, threading, time
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0)); s.listen(16)
            print(s.getsockname()[1], flush=True)
            body = b"<Error><Code>EarlyAnswer</Code><Message>answered before the body</Message></Error>"
            def serve(c):
                # Answers each request as soon as its head is in, then reads (and drops) its
                # body slowly and keeps the connection for the next request, as moto does.
                data = b""
                while True:
                    while b"\\r\\n\\r\\n" not in data:
                        chunk = c.recv(65536)
                        if not chunk: return
                        data += chunk
                    head, _, data = data.partition(b"\\r\\n\\r\\n")
                    length = 0
                    for line in head.split(b"\\r\\n"):
                        if line.lower().startswith(b"content-length:"): length = int(line.split(b":")[1])
                    c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body) + body)
                    while len(data) < length:
                        time.sleep(0.002)
                        chunk = c.recv(65536)
                        if not chunk: return
                        data += chunk
                    data = data[length:]
            while True:
                c, _ = s.accept()
                threading.Thread(target=serve, args=(c,), daemon=True).start()
            """])
        XCTAssertFalse(server.firstLine.isEmpty, server.standardError)
        let credentials = AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
        // The first request starts the event loops, which hold descriptors of their own.
        let warm = try client("http://127.0.0.1:\(server.firstLine)", bucket: "b", sendfile: false, credentials: credentials)
        _ = try? await warm.send("GET", key: "warm", operation: "GET")
        await warm.shutdown()
        for sendfile in [true, false] {
            let s3 = try client("http://127.0.0.1:\(server.firstLine)", bucket: "b", sendfile: sendfile, credentials: credentials)
            // Opened right after each answer: a descriptor closed too early would be reused by
            // these, and the channel would send from /dev/null (or fail) instead of the file.
            var squatters: [FileHandle] = []
            for round in 0..<4 {
                defer { squatters.append(FileHandle(forReadingAtPath: "/dev/null")!) }
                do {
                    let answer = try await s3.send("PUT", key: "k\(round)", body: .file(path: path, offset: 0, length: 24 << 20), operation: "PUT")
                    XCTAssertEqual(answer.status, 200, "sendfile \(sendfile) round \(round)")
                    XCTAssertEqual(S3Client.errorCode(answer.body), "EarlyAnswer")
                } catch {
                    XCTFail("sendfile \(sendfile) round \(round): \(error)")
                }
            }
            await s3.shutdown()
            for squatter in squatters { try squatter.close() }
            XCTAssertEqual(openDescriptors(on: path), 0, "every file is closed after shutdown (sendfile \(sendfile))")
        }
    }
}

private final class ProgressRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Int64] = []
    func record(_ value: Int64) { lock.lock(); recorded.append(value); lock.unlock() }
    var values: [Int64] { lock.lock(); defer { lock.unlock() }; return recorded }
}
