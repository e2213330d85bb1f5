#if os(Linux) || os(macOS)
import Foundation
#if canImport(Glibc)
import Glibc
#endif

#if canImport(Glibc)
private let streamSocket = Int32(SOCK_STREAM.rawValue)
#else
private let streamSocket = SOCK_STREAM
#endif

/// nginx on 127.0.0.1 serving a directory as plain static files (no gzip, Range support,
/// ETag), with `/slow/` held to a low rate, `/moved/PATH` redirected (302, with nginx's
/// small HTML body) to `/PATH`, `/loop/` redirected to itself, `/locked/` behind HTTP basic authentication (a 401 with
/// `WWW-Authenticate` to a request without credentials), `/gzipped/` answered with the
/// `.gz` file beside the one asked for (`Content-Encoding: gzip`, whatever the request
/// accepts), and an access log the tests read. This package's tests need nothing of the
/// main repository, so it has its own small launcher.
final class LocalNginx {
    let port: Int
    let work: URL
    private let process = Process()

    /// Where nginx lives: Debian's package, or Homebrew's on a macOS runner.
    static var binary: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx", "/opt/homebrew/bin/nginx", "/usr/local/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts nginx for `root`; returns once it accepts connections.
    init(root: URL, work: URL) throws {
        guard let binary = Self.binary else { throw TestFailure("nginx is not installed (apt-get install nginx, or brew install nginx)") }
        self.work = work
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        chmod(work.path, 0o755)  // nginx workers may run unprivileged
        port = try Self.freePort()
        let path = work.path
        let config = """
            daemon off;
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log;
            events { worker_connections 64; }
            http {
                access_log \(path)/access.log;
                client_body_temp_path \(path)/tmp-body;
                proxy_temp_path \(path)/tmp-proxy;
                fastcgi_temp_path \(path)/tmp-fastcgi;
                uwsgi_temp_path \(path)/tmp-uwsgi;
                scgi_temp_path \(path)/tmp-scgi;
                default_type application/octet-stream;
                server {
                    listen 127.0.0.1:\(port);
                    root \(root.path);
                    location /slow/ { limit_rate 64k; }
                    location /moved/ { rewrite ^/moved/(.*)$ /$1 redirect; }
                    location /loop/ { return 302 /loop/again; }
                    location /locked/ { auth_basic "models"; auth_basic_user_file \(path)/htpasswd; }
                    location /gzipped/ { gzip_static always; }
                }
            }
            """
        try config.write(to: work.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        try "nobody:{PLAIN}unguessable\n".write(to: work.appendingPathComponent("htpasswd"), atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", path, "-c", path + "/nginx.conf", "-e", path + "/error.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<200 {
            if Self.accepts(port) { return }
            usleep(25_000)
        }
        throw TestFailure("nginx did not start: \((try? String(contentsOf: work.appendingPathComponent("error.log"), encoding: .utf8)) ?? "")")
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// The request lines nginx logged so far ("GET /m.bin HTTP/1.1").
    func requests() -> [String] {
        let log = (try? String(contentsOf: work.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in line.split(separator: "\"", maxSplits: 2).dropFirst().first.map(String.init) }
    }

    /// The statuses nginx answered GETs of `path` with, in order.
    func statuses(_ path: String) -> [Int] {
        let log = (try? String(contentsOf: work.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            // 127.0.0.1 - - [date] "GET /path HTTP/1.1" 206 2097152 "-" "agent"
            let parts = line.split(separator: "\"", maxSplits: 2)
            guard parts.count == 3, parts[1].hasPrefix("GET \(path) ") else { return nil }
            return parts[2].split(separator: " ").first.flatMap { Int($0) }
        }
    }

    /// A port nothing listens on now (the kernel's pick for port 0).
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw TestFailure("bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
#endif
