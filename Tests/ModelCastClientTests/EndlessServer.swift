import Foundation
import XCTest
import ModelCastTestSupport

/// `Tests/Fixtures/endless_server.py` serving a published site: its rules shape the answers
/// for one kind of object (an endless body, a trickle, silence), and it counts the body
/// bytes it managed to send on each such connection.
final class EndlessServer: @unchecked Sendable {
    /// One shaped answer, as the server's status file has it.
    struct Connection: Decodable {
        let target: String
        let body: String
        let path: String
        /// Body bytes the server's kernel accepted.
        let sent: Int64
        /// False once the client went away (or the answer ended).
        let open: Bool
        /// 0 for the first shaped answer, 1 for the next…
        let order: Int
        let seconds: Double
    }

    let port: Int
    private let process: BackgroundProcess
    private let rulesPath: String
    private let statusPath: String

    /// Serves `root` (published with base URL `http://127.0.0.1:PORT/models`) on `port`.
    init(root: String, port: Int, work: Scratch) throws {
        self.port = port
        rulesPath = work.at("endless-rules.json")
        statusPath = work.at("endless-status.json")
        try Data("[]".utf8).write(to: URL(fileURLWithPath: rulesPath))
        process = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/endless_server.py", root, String(port), rulesPath, statusPath])
        XCTAssertEqual(process.firstLine, "ready")
    }

    /// Replaces the rules (read on the next request).
    func rules(_ rules: [[String: Any]]) throws {
        try JSONSerialization.data(withJSONObject: rules).write(to: URL(fileURLWithPath: rulesPath))
    }

    /// The shaped answers so far, by the client's port.
    func connections() -> [Int: Connection] {
        guard let data = FileManager.default.contents(atPath: statusPath),
              let status = try? JSONDecoder().decode([String: Connection].self, from: data) else { return [:] }
        return Dictionary(uniqueKeysWithValues: status.compactMap { key, value in Int(key).map { ($0, value) } })
    }

    /// The last shaped answer for `target` and the client's port it went to.
    func last(_ target: String) -> (port: Int, connection: Connection)? {
        connections().filter { $0.value.target == target }.max { $0.value.order < $1.value.order }.map { ($0.key, $0.value) }
    }

    /// The request lines it logged ("GET PATH RANGE").
    var requests: [String] { process.standardError.split(separator: "\n").map(String.init).filter { $0.hasPrefix("GET ") } }

    /// Stops the server at once: what ends a transfer the client did not stop itself.
    func kill() {
        if process.process.isRunning { Foundation.kill(process.process.processIdentifier, SIGKILL) }
    }

    /// The body bytes the client's process took off the connection on client port
    /// `clientPort`: what the server sent, less what still waits in the server's send queue
    /// and in the client's receive queue (both ends are in /proc/net/tcp on loopback). nil
    /// when the connection is gone (then only `sent` bounds it).
    func bytesRead(clientPort: Int, sent: Int64) -> Int64? {
        let queues = loopbackTCPQueues()
        guard let server = queues[LoopbackPair(local: port, remote: clientPort)],
              let client = queues[LoopbackPair(local: clientPort, remote: port)] else { return nil }
        return sent - server.send - client.receive
    }
}

/// A TCP connection's two ports, from one end.
struct LoopbackPair: Hashable {
    let local: Int
    let remote: Int
}

/// Each IPv4 TCP socket's queues from /proc/net/tcp: bytes written and not yet acknowledged
/// by the peer, and bytes received and not yet read by the application.
func loopbackTCPQueues() -> [LoopbackPair: (send: Int64, receive: Int64)] {
    // Read to the end: procfs gives no size, and a one-shot read gets the first page only.
    guard let data = FileHandle(forReadingAtPath: "/proc/net/tcp")?.readDataToEndOfFile() else { return [:] }
    let text = String(decoding: data, as: UTF8.self)
    var queues: [LoopbackPair: (send: Int64, receive: Int64)] = [:]
    for line in text.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 4 else { continue }
        func port(_ address: Substring) -> Int? { address.split(separator: ":").last.flatMap { Int($0, radix: 16) } }
        let counts = fields[4].split(separator: ":")
        guard let local = port(fields[1]), let remote = port(fields[2]), counts.count == 2,
              let send = Int64(counts[0], radix: 16), let receive = Int64(counts[1], radix: 16) else { continue }
        queues[LoopbackPair(local: local, remote: remote)] = (send, receive)
    }
    return queues
}

/// This process's resident memory, in bytes (VmRSS).
func residentBytes() -> Int64 {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Int64(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kilobytes * 1024
}

/// The watchdog's findings, shared with the call that waits for them.
private final class MemoryWatch: @unchecked Sendable {
    let lock = NSLock()
    var done = false
    var peak: Int64 = 0

    /// Stops the watchdog; the peak growth it saw.
    func finish() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        done = true
        return peak
    }
}

/// How a bounded call went: its result (nil when it did not return in time), how long it
/// took, and the most this process's memory grew meanwhile.
struct BoundedCall<T> {
    let result: Result<T, Error>?
    let seconds: Double
    let memoryGrowth: Int64
}

/// Runs `body` while a watchdog samples this process's memory; past `seconds`, or past
/// `memoryLimit` bytes of growth, the watchdog kills `server` (which ends any transfer,
/// stopped by the client or not), so a client that does not stop fails the test instead
/// of hanging it or filling the machine's memory.
func bounded<T: Sendable>(seconds: Double, memoryLimit: Int64 = 1 << 30, server: EndlessServer,
                          _ body: @escaping @Sendable () async throws -> T) async -> BoundedCall<T> {
    let watch = MemoryWatch()
    let baseline = residentBytes()
    let start = Date()
    let watchdog = Thread {
        while true {
            let growth = residentBytes() - baseline
            watch.lock.lock()
            watch.peak = max(watch.peak, growth)
            let done = watch.done
            watch.lock.unlock()
            if done { return }
            if Date().timeIntervalSince(start) > seconds || growth > memoryLimit {
                server.kill()
                return
            }
            usleep(20_000)
        }
    }
    watchdog.start()
    let result: Result<T, Error>
    do { result = .success(try await body()) } catch { result = .failure(error) }
    let elapsed = Date().timeIntervalSince(start)
    let peak = watch.finish()
    return BoundedCall(result: elapsed > seconds ? nil : result, seconds: elapsed, memoryGrowth: peak)
}
