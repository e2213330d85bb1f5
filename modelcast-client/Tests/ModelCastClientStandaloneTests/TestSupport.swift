import Crypto
import Foundation

/// A test's own failure, with the reason in its message.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A directory of its own for one test, removed when it is released.
final class Scratch {
    let url: URL

    init(_ name: String = "modelcast-client-test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func at(_ path: String) -> URL { url.appendingPathComponent(path) }
}

/// SHA-256 of `data`, lowercase hex.
func sha256Hex(_ data: Data) -> String {
    SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
}

/// Bytes that differ from file to file (a counter through SHA-256), `count` of them.
func testBytes(_ count: Int, seed: UInt8 = 1) -> Data {
    var out = Data(capacity: count + 32)
    var block = Data([seed])
    while out.count < count {
        block = Data(SHA256.hash(data: block))
        out.append(block)
    }
    return out.prefix(count)
}

/// Every file under `directory`, relative paths, sorted (empty when it does not exist).
func filesUnder(_ directory: URL) -> [String] {
    guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return [] }
    var files: [String] = []
    while let path = walker.nextObject() as? String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.appendingPathComponent(path).path, isDirectory: &isDirectory), !isDirectory.boolValue {
            files.append(path)
        }
    }
    return files.sorted()
}
