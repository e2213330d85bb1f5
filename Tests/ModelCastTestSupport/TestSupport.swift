import Foundation
import ModelCastCore
import XCTest

/// A scratch directory removed when the value goes away.
package final class Scratch {
    package let path: String

    package init(_ label: String = "modelcast-test") throws {
        let template = (NSTemporaryDirectory() as NSString).appendingPathComponent("\(label)-XXXXXX")
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw NSError(domain: "Scratch", code: Int(errno)) }
        path = String(decoding: bytes.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `path/relative`.
    package func at(_ relative: String) -> String { path + "/" + relative }

    /// Writes `bytes` at `relative`, creating parent directories.
    @discardableResult
    package func write(_ relative: String, _ bytes: [UInt8]) throws -> String {
        let full = at(relative)
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: full, contents: Data(bytes)) else {
            throw NSError(domain: "Scratch.write", code: Int(errno), userInfo: [NSLocalizedDescriptionKey: full])
        }
        return full
    }

    /// Writes UTF-8 text at `relative`.
    @discardableResult
    package func write(_ relative: String, text: String) throws -> String {
        try write(relative, Array(text.utf8))
    }

    /// Creates a directory (and parents).
    @discardableResult
    package func mkdir(_ relative: String) throws -> String {
        try FileManager.default.createDirectory(atPath: at(relative), withIntermediateDirectories: true)
        return at(relative)
    }

    /// The path of `relative` with its parent directory made (publish refuses a target
    /// whose parent is missing, as a likely typo).
    package func atMadeParent(_ relative: String) throws -> String {
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: at(relative)).deletingLastPathComponent().path, withIntermediateDirectories: true)
        return at(relative)
    }

    /// Every file and directory under the scratch root, relative, sorted.
    package func listing() -> [String] {
        (FileManager.default.subpaths(atPath: path) ?? []).sorted()
    }
}

/// Deterministic pseudo-random bytes.
package func patternBytes(_ count: Int, seed: UInt32 = 1) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 1_103_515_245 &+ 12_345
        return UInt8(truncatingIfNeeded: state >> 16)
    }
}

/// The repository root (tests read `examples/` and golden files from it).
package let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// The result of running a program.
package struct ProcessOutput {
    package let status: Int32
    package let stdout: String
    package let stderr: String
}

/// Runs `executable` with `arguments`, capturing both streams.
@discardableResult
package func runProcess(
    _ executable: String, _ arguments: [String], cwd: String? = nil,
    environment: [String: String]? = nil, stdin: String? = nil
) throws -> ProcessOutput {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
    if let environment { process.environment = environment }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let input = stdin.map { _ in Pipe() }
    process.standardInput = input ?? FileHandle.nullDevice
    try process.run()
    if let input, let stdin {
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
    }
    // Read both pipes concurrently so neither fills up and blocks the child.
    let errorBox = DataBox()
    let reader = Thread { errorBox.data = err.fileHandleForReading.readDataToEndOfFile() }
    reader.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while !errorBox.isSet { usleep(1000) }
    return ProcessOutput(
        status: process.terminationStatus,
        stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errorBox.data ?? Data(), as: UTF8.self))
}

final class DataBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Data?
    var data: Data? {
        get { lock.lock(); defer { lock.unlock() }; return value }
        set { lock.lock(); value = newValue; lock.unlock() }
    }
    var isSet: Bool { data != nil }
}

/// Finds a program on PATH (or nil).
package func which(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let candidate = "\(dir)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// Runs a shell command line and returns its output; fails the test on non-zero exit.
@discardableResult
package func shell(_ command: String, cwd: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> String {
    let result = try runProcess("/bin/sh", ["-c", command], cwd: cwd)
    XCTAssertEqual(result.status, 0, "`\(command)` failed: \(result.stderr)", file: file, line: line)
    return result.stdout
}

/// Compares `actual` with the golden file `name` under `directory`; with
/// MODELCAST_UPDATE_GOLDEN=1 in the environment it rewrites a differing golden file and
/// still fails, so every update is a diff someone reviews (`git diff`) before it passes.
package func assertGolden(_ actual: String, named name: String, in directory: String, file: StaticString = #filePath, line: UInt = #line) throws {
    let path = directory + "/" + name
    let existing = try? String(contentsOfFile: path, encoding: .utf8)
    if ProcessInfo.processInfo.environment["MODELCAST_UPDATE_GOLDEN"] == "1" {
        guard existing != actual else { return }
        try actual.write(toFile: path, atomically: true, encoding: .utf8)
        XCTFail("rewrote golden file \(path): review the change with `git diff`, then run again without MODELCAST_UPDATE_GOLDEN", file: file, line: line)
        return
    }
    guard let expected = existing else {
        XCTFail("missing golden file \(path) (run with MODELCAST_UPDATE_GOLDEN=1 to create it)", file: file, line: line)
        return
    }
    XCTAssertEqual(actual, expected, "output differs from golden file \(path)", file: file, line: line)
}

/// Builds GGUF files for tests, field by field (little-endian, version 3 layout).
package struct GGUFBuilder {
    package var version: UInt32 = 3
    package var magic: [UInt8] = Array("GGUF".utf8)
    package var metadata: [[UInt8]] = []
    package var tensors: [(name: String, shape: [UInt64], type: UInt32, offset: UInt64)] = []
    package var tensorCountOverride: UInt64?
    package var metadataCountOverride: UInt64?
    package var dataBytes: Int = 0
    package var alignment: UInt64 = 32

    package init() {}

    package static func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
    package static func u64(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
    package static func string(_ s: String) -> [UInt8] { u64(UInt64(s.utf8.count)) + Array(s.utf8) }

    package mutating func addString(_ key: String, _ value: String) {
        metadata.append(Self.string(key) + Self.u32(8) + Self.string(value))
    }

    package mutating func addUInt32(_ key: String, _ value: UInt32) {
        metadata.append(Self.string(key) + Self.u32(4) + Self.u32(value))
    }

    package mutating func addRaw(_ bytes: [UInt8]) { metadata.append(bytes) }

    /// The file bytes: header, padding, then `dataBytes` of tensor data.
    package func build() -> [UInt8] {
        var out = magic + Self.u32(version)
        out += Self.u64(tensorCountOverride ?? UInt64(tensors.count))
        out += Self.u64(metadataCountOverride ?? UInt64(metadata.count))
        for kv in metadata { out += kv }
        for t in tensors {
            out += Self.string(t.name) + Self.u32(UInt32(t.shape.count))
            for d in t.shape { out += Self.u64(d) }
            out += Self.u32(t.type) + Self.u64(t.offset)
        }
        let padded = (UInt64(out.count) + alignment - 1) / alignment * alignment
        out += [UInt8](repeating: 0, count: Int(padded) - out.count)
        out += patternBytes(dataBytes, seed: 3)
        return out
    }
}

/// The built `modelcast` executable: `$MODELCAST_BIN`, or the one beside the test bundle.
package let modelcastBinary: String = {
    if let path = ProcessInfo.processInfo.environment["MODELCAST_BIN"] { return path }
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        return (bundle.bundlePath as NSString).deletingLastPathComponent + "/modelcast"
    }
    return repositoryRoot + "/.build/debug/modelcast"
}()

/// One `modelcast publish` as the tests run it: model files under one name and version,
/// a base URL and a target; `extra` adds flags, `environment` replaces this process's
/// (`pinnedEnvironment()` pins the clock). Tests build this instead of writing their own
/// publish helper.
package struct PublishRun {
    package var models: [String]
    /// `--name`; nil leaves the name to the file.
    package var name: String?
    package var version: String
    package var baseURL: String
    package var target: String
    package var extra: [String]
    package var environment: [String: String]?

    package init(_ models: [String], name: String? = "m", version: String, baseURL: String, to target: String, _ extra: [String] = [],
                environment: [String: String]? = nil) {
        self.models = models
        self.name = name
        self.version = version
        self.baseURL = baseURL
        self.target = target
        self.extra = extra
        self.environment = environment
    }

    /// The command line, without the program name.
    package var arguments: [String] {
        ["publish"] + models + (name.map { ["--name", $0] } ?? []) + ["--version", version, "--base-url", baseURL, "--to", target] + extra
    }

    /// Runs the publish.
    @discardableResult
    package func run(cwd: String? = repositoryRoot) throws -> ProcessOutput {
        try modelcast(arguments, cwd: cwd, environment: environment)
    }

    /// Runs the publish and fails the test unless it exits 0.
    @discardableResult
    package func succeeds(file: StaticString = #filePath, line: UInt = #line) throws -> ProcessOutput {
        let result = try run()
        XCTAssertEqual(result.status, 0, "\(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }
}

/// The environment tests run modelcast in: `base` (this process's by default) with the
/// clock pinned (`SOURCE_DATE_EPOCH`), so manifests, records and reports come out the
/// same on every run. Every test that pins the clock does it here.
package func pinnedEnvironment(_ base: [String: String] = ProcessInfo.processInfo.environment, epoch: Int = 1_790_000_000) -> [String: String] {
    var environment = base
    environment["SOURCE_DATE_EPOCH"] = String(epoch)
    return environment
}

/// Runs the built `modelcast` with `arguments`.
@discardableResult
package func modelcast(_ arguments: [String], cwd: String? = repositoryRoot, environment: [String: String]? = nil) throws -> ProcessOutput {
    try runProcess(modelcastBinary, arguments, cwd: cwd, environment: environment)
}

/// Runs `modelcast verify ARGUMENTS --json`: the process's output and the report it
/// printed (nil when stdout is not a report).
package func verifyJSON(_ arguments: [String], environment: [String: String]? = nil) throws -> (ProcessOutput, VerifyReport?) {
    let result = try modelcast(["verify"] + arguments + ["--json"], environment: environment)
    let report = try? JSONDecoder().decode(VerifyReport.self, from: Data(result.stdout.utf8))
    return (result, report)
}

/// The checks of `report` named `name` with `status`.
package func checks(_ report: VerifyReport?, _ name: String, _ status: VerifyCheck.Status) -> [VerifyCheck] {
    report?.checks.filter { $0.check == name && $0.status == status } ?? []
}

/// Every file under `root` (dot files included) with the SHA-256 of its content;
/// equal snapshots mean the directory was left exactly as it was.
package func snapshot(_ root: String) throws -> [String: String] {
    var result: [String: String] = [:]
    guard let enumerator = FileManager.default.enumerator(atPath: root) else { return result }
    while let relative = enumerator.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory)
        if exists && isDirectory.boolValue {
            result[relative + "/"] = "dir"
        } else {
            let data = try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative))
            result[relative] = try SHA256Hasher.digest(data).hex
        }
    }
    return result
}

/// A free TCP port on 127.0.0.1 (bound once to port 0, then released).
/// A loopback port in `range` that nothing listens on now (tried in random order):
/// for pages that show a port of a given width.
package func freeLoopbackPort(in range: Range<Int>) throws -> Int {
    for port in range.shuffled() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        if bound == 0 { return port }
    }
    throw NSError(domain: "freeLoopbackPort", code: Int(EADDRINUSE), userInfo: [NSLocalizedDescriptionKey: "no free loopback port in \(range)"])
}

package func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
            guard bind(fd, pointer, length) == 0 else { return -1 }
            return getsockname(fd, pointer, &length)
        }
    }
    guard bound == 0 else { throw NSError(domain: "freeLoopbackPort", code: Int(errno)) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A server started for a test: its first line of standard output is read (a URL
/// or "ready") before the test goes on; it is stopped when the value goes away.
package final class BackgroundProcess {
    package let process = Process()
    package let firstLine: String
    private let errorFile: String

    /// Starts `executable`; fails if it prints no line within `timeout` seconds.
    package init(_ executable: String, _ arguments: [String], cwd: String? = nil, timeout: TimeInterval = 20) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
        let out = Pipe()
        process.standardOutput = out
        errorFile = NSTemporaryDirectory() + "/modelcast-bg-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: errorFile, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: errorFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let box = DataBox()
        let reader = Thread {
            var line = Data()
            while true {
                let byte = out.fileHandleForReading.readData(ofLength: 1)
                if byte.isEmpty || byte == Data([0x0a]) { break }
                line.append(byte)
            }
            box.data = line
        }
        reader.start()
        let deadline = Date().addingTimeInterval(timeout)
        while !box.isSet && Date() < deadline { usleep(10_000) }
        guard let line = box.data else {
            process.terminate()
            throw NSError(domain: "BackgroundProcess", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(executable) printed nothing within \(timeout) s"])
        }
        firstLine = String(decoding: line, as: UTF8.self)
    }

    /// What the process wrote to standard error so far.
    package var standardError: String {
        (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
    }

    deinit {
        // Poll rather than waitUntilExit: that spins forever when called off the
        // main thread (an async test's deinit runs on a cooperative thread).
        // SIGKILL: children of the test runner may inherit a blocked SIGTERM, and a
        // test server needs no graceful exit.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            for _ in 0..<500 where process.isRunning { usleep(10_000) }
        }
        try? FileManager.default.removeItem(atPath: errorFile)
    }
}

/// moto's standalone S3 server on a free loopback port, with signature checking on:
/// the first four requests (creating an IAM user with an s3:* policy, its access key,
/// and the bucket) pass unsigned, and from then on every request must be signed with
/// that user's key, so a real server judges every signature modelcast computes.
package final class MotoS3 {
    package let port: Int
    package let endpoint: String
    package let bucket: String
    package let accessKeyID: String
    package let secretAccessKey: String
    private let server: BackgroundProcess
    /// Where moto logs every request it answers (werkzeug's access log).
    package let requestLogPath: String

    /// `checkSignatures: false` starts moto in its default mode, which skips signature
    /// checks but (unlike the checking mode) serves anonymous GETs a bucket policy allows.
    package init(bucket: String = "models", checkSignatures: Bool = true) throws {
        let serverPort = try freeLoopbackPort()
        port = serverPort
        endpoint = "http://127.0.0.1:\(serverPort)"
        self.bucket = bucket
        // moto prints its banner on stderr; a small wrapper waits until it answers, sets it
        // up (IAM user, policy, access key, bucket) with four plain HTTP requests — four
        // `aws` launches cost about 3 s per server, botocore's clients about 1 s — and
        // prints "ready KEY SECRET".
        let script = """
            import json, os, subprocess, sys, time, urllib.request
            import ctypes, signal
            port, mode, log_path, bucket = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
            env = dict(os.environ)
            if mode == "check":
                env["INITIAL_NO_AUTH_ACTION_COUNT"] = "4"
            def die_with_parent():
                # moto dies with this wrapper, however the wrapper ends (PR_SET_PDEATHSIG = 1).
                signal.pthread_sigmask(signal.SIG_SETMASK, set())
                ctypes.CDLL(None).prctl(1, signal.SIGKILL)
            log = open(log_path, "ab", buffering=0)  # moto's request log: one line per request
            p = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", port], env=env,
                                 stdout=subprocess.DEVNULL, stderr=log, preexec_fn=die_with_parent)
            def stop(*_):
                p.kill()  # a test server: no need to wait for a graceful exit
                p.wait()
                sys.exit(0)
            signal.signal(signal.SIGTERM, stop)
            for _ in range(300):
                try:
                    urllib.request.urlopen("http://127.0.0.1:%s/moto-api/" % port, timeout=1)
                    break
                except Exception:
                    time.sleep(0.1)
            # Plain requests rather than botocore clients: loading botocore's service models
            # costs about a second per server. The first four pass unchecked (see above).
            import re, urllib.parse
            endpoint = "http://127.0.0.1:" + port
            def authorization(key, service):
                return "AWS4-HMAC-SHA256 Credential=%s/20260101/us-east-1/%s/aws4_request, SignedHeaders=host, Signature=0" % (key, service)
            def iam(**params):
                params["Version"] = "2010-05-08"
                request = urllib.request.Request(endpoint + "/", data=urllib.parse.urlencode(params).encode(), headers={
                    "Authorization": authorization("bootstrap", "iam"), "Content-Type": "application/x-www-form-urlencoded"})
                return urllib.request.urlopen(request).read().decode()
            if mode == "check":
                iam(Action="CreateUser", UserName="modelcast")
                iam(Action="PutUserPolicy", UserName="modelcast", PolicyName="s3", PolicyDocument=json.dumps(
                    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:*", "iam:*"], "Resource": "*"}]}))
                access = iam(Action="CreateAccessKey", UserName="modelcast")
                key = re.search("<AccessKeyId>(.*?)</AccessKeyId>", access).group(1)
                secret = re.search("<SecretAccessKey>(.*?)</SecretAccessKey>", access).group(1)
            else:
                key, secret = "AKIAMODELCASTTEST", "modelcast-test-secret"
            urllib.request.urlopen(urllib.request.Request(endpoint + "/" + bucket, method="PUT", headers={"Authorization": authorization(key, "s3")}))
            print("ready", key, secret, flush=True)
            p.wait()
            """
        requestLogPath = NSTemporaryDirectory() + "/modelcast-moto-\(UUID().uuidString).log"
        let server = try BackgroundProcess("/usr/bin/env", ["python3", "-c", script, String(serverPort), checkSignatures ? "check" : "open", requestLogPath, bucket], timeout: 60)
        let words = server.firstLine.split(separator: " ").map(String.init)
        guard words.count == 3, words[0] == "ready" else {
            throw NSError(domain: "MotoS3", code: 1, userInfo: [NSLocalizedDescriptionKey: "moto did not start: \(server.firstLine) \(server.standardError)"])
        }
        accessKeyID = words[1]
        secretAccessKey = words[2]
        self.server = server
    }

    /// The environment a modelcast or aws process needs to reach this server.
    package var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["AWS_ACCESS_KEY_ID"] = accessKeyID
        environment["AWS_SECRET_ACCESS_KEY"] = secretAccessKey
        environment["AWS_REGION"] = "us-east-1"
        environment["AWS_DEFAULT_REGION"] = "us-east-1"
        environment["AWS_ENDPOINT_URL"] = endpoint
        environment["AWS_EC2_METADATA_DISABLED"] = "true"
        environment.removeValue(forKey: "AWS_PROFILE")
        return environment
    }

    /// Runs the aws cli (signed with the test user's key) against this server.
    @discardableResult
    package func awsCLI(_ arguments: [String]) throws -> String {
        let result = try runProcess("/usr/bin/env", ["aws", "--endpoint-url", endpoint] + arguments, environment: environment)
        guard result.status == 0 else {
            throw NSError(domain: "MotoS3", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: "aws \(arguments): \(result.stderr)"])
        }
        return result.stdout
    }

    /// Every object in the bucket: key → ETag and size (as the aws cli's JSON gives them,
    /// the ETag quoted), and with `lastModified` its LastModified (`ETag/Size/LastModified`).
    package func listing(lastModified: Bool = false) throws -> [String: String] {
        var result: [String: String] = [:]
        var token: String?
        repeat {
            let page = String(decoding: try signedGET("/\(bucket)", query: [("list-type", "2")] + (token.map { [("continuation-token", $0)] } ?? [])), as: UTF8.self)
            for block in page.components(separatedBy: "<Contents>").dropFirst() {
                result[Self.element("Key", in: block) ?? ""] = "\(Self.element("ETag", in: block) ?? "")/\(Self.element("Size", in: block) ?? "")"
                    + (lastModified ? "/\(Self.element("LastModified", in: block) ?? "")" : "")
            }
            token = Self.element("IsTruncated", in: page) == "true" ? Self.element("NextContinuationToken", in: page) : nil
        } while token != nil
        return result
    }

    /// An object's bytes (throws when it is missing).
    package func download(_ key: String) throws -> Data {
        try signedGET("/\(bucket)/" + s3EncodedPath(key))
    }

    /// Stores the bytes of `file` under `key` as another writer would (a plain PUT, no
    /// checksum), signed by Core's SigV4 signer and sent by curl: a few milliseconds, where an
    /// `aws s3api put-object` launch takes seconds on a loaded machine — longer than the
    /// windows the race tests hold a request open for.
    package func put(_ key: String, file: String) throws {
        let host = "127.0.0.1:\(port)", path = "/\(bucket)/" + s3EncodedPath(key)
        let signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey), region: "us-east-1")
        let payload = try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: file))).hex
        let headers = try signer.sign(SigV4Request(method: "PUT", host: host, path: path, payloadSHA256: payload), date: Date())
        let result = try runProcess("/usr/bin/env", ["curl", "-sS", "-f", "--path-as-is", "-o", "/dev/null", "-X", "PUT", "--data-binary", "@" + file]
                                    + headers.flatMap { ["-H", "\($0.0): \($0.1)"] } + ["-H", "Content-Type: binary/octet-stream", "http://\(host)\(path)"])
        guard result.status == 0 else {
            throw NSError(domain: "MotoS3", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: "PUT \(path): \(result.stderr)"])
        }
    }

    /// A GET of `path` (percent-encoded) signed with the test user's key (Core's SigV4
    /// signer) and sent by curl: a few milliseconds, where an `aws` launch costs a second of CPU.
    private func signedGET(_ path: String, query: [(String, String)] = []) throws -> Data {
        let host = "127.0.0.1:\(port)"
        let signer = SigV4Signer(credentials: AWSCredentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey), region: "us-east-1")
        let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        let headers = try signer.sign(SigV4Request(method: "GET", host: host, path: path, query: query, payloadSHA256: emptySHA256), date: Date())
        let encodedQuery = query.map { Self.encoded($0.0) + "=" + Self.encoded($0.1) }.joined(separator: "&")
        let file = NSTemporaryDirectory() + "/modelcast-dl-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try runProcess("/usr/bin/env", ["curl", "-sS", "-f", "--path-as-is", "-o", file] + headers.flatMap { ["-H", "\($0.0): \($0.1)"] }
                                    + ["http://\(host)\(path)" + (encodedQuery.isEmpty ? "" : "?" + encodedQuery)])
        guard result.status == 0 else {
            throw NSError(domain: "MotoS3", code: Int(result.status), userInfo: [NSLocalizedDescriptionKey: "GET \(path): \(result.stderr)"])
        }
        return try Data(contentsOf: URL(fileURLWithPath: file))
    }

    /// `text` percent-encoded as SigV4 encodes a query name or value (unreserved characters kept).
    private static func encoded(_ text: String) -> String {
        s3EncodedPath(text).replacingOccurrences(of: "/", with: "%2F")
    }

    /// The text of the first `<name>` element in `xml`, entities decoded.
    private static func element(_ name: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(name)>"), let close = xml.range(of: "</\(name)>", range: open.upperBound..<xml.endIndex) else { return nil }
        return String(xml[open.upperBound..<close.lowerBound]).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The requests moto logged so far, in order: method and path (`PUT`, `/models/ml/x`),
    /// as the server saw them — an independent count of what a client sent.
    package func loggedRequests() -> [(method: String, path: String)] {
        let text = (try? String(contentsOfFile: requestLogPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let open = line.firstIndex(of: "\""), let close = line[line.index(after: open)...].firstIndex(of: "\"") else { return nil }
            let parts = line[line.index(after: open)..<close].split(separator: " ")
            guard parts.count == 3 else { return nil }
            return (String(parts[0]), String(parts[1]))
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: requestLogPath) }

    /// Starts `Tests/Fixtures/fault_proxy.py` in front of this server with `json` as its
    /// rules (written to `rules`); returns the proxy and its endpoint.
    package func startFaultProxy(rules: String, json: String) throws -> (BackgroundProcess, String) {
        try json.write(toFile: rules, atomically: true, encoding: .utf8)
        let proxyPort = try freeLoopbackPort()
        let proxy = try BackgroundProcess("/usr/bin/env", ["python3", repositoryRoot + "/Tests/Fixtures/fault_proxy.py", String(proxyPort), String(port), rules])
        XCTAssertEqual(proxy.firstLine, "ready")
        return (proxy, "http://127.0.0.1:\(proxyPort)")
    }

    /// Lets anyone GET objects (so `verify` can go through the public URL).
    package func allowPublicReads() throws {
        let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::\#(bucket)/*"}]}"#
        try awsCLI(["s3api", "put-bucket-policy", "--bucket", bucket, "--policy", policy])
    }
}

/// nginx on 127.0.0.1 serving a published directory with the snippet publish wrote
/// (`_modelcast/nginx.conf`), with gzip on (unless `gzip` is false) for everything the
/// snippet lets it compress.
package final class NginxServer {
    package let process = Process()
    package let port: Int

    /// nil (the test is skipped) when nginx is not installed.
    package static var binary: String? {
        ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts nginx for `site` (published with a base URL on `port`); `work` holds its
    /// configuration, logs and temporary files. Returns once it answers `probe`.
    package init(binary: String, site: String, port: Int, work: Scratch, probe: String, gzip: Bool = true) throws {
        self.port = port
        chmod(work.path, 0o755)  // nginx workers run unprivileged
        let config = """
            daemon off;
            worker_processes 1;
            pid \(work.at("nginx.pid"));
            error_log \(work.at("error.log"));
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(work.at("tmp-body"));
                proxy_temp_path \(work.at("tmp-proxy"));
                fastcgi_temp_path \(work.at("tmp-fastcgi"));
                uwsgi_temp_path \(work.at("tmp-uwsgi"));
                scgi_temp_path \(work.at("tmp-scgi"));
                \(gzip ? "gzip on; gzip_types *; gzip_min_length 1;" : "")
                server {
                    listen 127.0.0.1:\(port);
                    include "\((site + "/_modelcast/nginx.conf").replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))";
                }
            }
            """
        try config.write(toFile: work.at("nginx.conf"), atomically: true, encoding: .utf8)
        let test = try runProcess(binary, ["-t", "-p", work.path, "-c", work.at("nginx.conf"), "-e", work.at("error.log")])
        guard test.status == 0 else {
            throw NSError(domain: "NginxServer", code: 1, userInfo: [NSLocalizedDescriptionKey: "nginx rejects the generated snippet: \(test.stderr)"])
        }
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", work.path, "-c", work.at("nginx.conf"), "-e", work.at("error.log")]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var ready = false
        for _ in 0..<200 where !ready {
            usleep(25_000)
            ready = (try? runProcess("/usr/bin/env", ["curl", "-s", "-o", "/dev/null", probe]).status) == 0
        }
        guard ready else {
            throw NSError(domain: "NginxServer", code: 2, userInfo: [NSLocalizedDescriptionKey: "nginx did not start: \((try? String(contentsOfFile: work.at("error.log"), encoding: .utf8)) ?? "")"])
        }
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

/// Checks `documents` (JSON text) against `schema/cli/NAME` (JSON Schema 2020-12, formats
/// checked); fails naming the first invalid one. Every test that checks a `--json` output
/// against its schema goes through this one validator.
package func validateAgainstSchema(_ documents: [String], _ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
    let script = """
        import json, sys, jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
        for index, text in enumerate(json.load(sys.stdin)):
            validator.validate(json.loads(text))
        print("valid")
        """
    let input = String(decoding: try JSONSerialization.data(withJSONObject: documents), as: UTF8.self)
    let result = try runProcess("/usr/bin/env", ["python3", "-c", script, repositoryRoot + "/schema/cli/" + name], stdin: input)
    XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)", file: file, line: line)
}
