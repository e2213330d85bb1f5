import Foundation

/// `_modelcast/staged-objects.json`: the objects of a release that publish has stored and
/// proven but not yet made live, with the headers they are served with. `objects.json`
/// names a release's objects only once it is live, so `modelcast serve` would answer 404 to
/// every new one while `--verify-url` checks the staged release through it; publish writes
/// this list for the length of that check and removes it after. serve reads it only while a
/// publish holds the directory's lock, so a list a killed run left behind is never served.
package enum StagedObjectsFile {
    /// The file's place inside a published directory.
    package static let relativePath = "_modelcast/staged-objects.json"

    /// A staged object and the headers it is served with.
    package struct Entry: Codable, Equatable, Sendable {
        package let key: String
        package let cacheControl: String
        package let contentType: String

        package init(key: String, cacheControl: String, contentType: String) {
            self.key = key
            self.cacheControl = cacheControl
            self.contentType = contentType
        }

        enum CodingKeys: String, CodingKey {
            case key, cacheControl = "cache_control", contentType = "content_type"
        }
    }

    private struct File: Codable {
        let objects: [Entry]
    }

    /// Writes `entries` under `root`, replacing any list there. An interrupt (SIGINT,
    /// SIGTERM) removes it with what the run staged: the target is left as it was.
    package static func write(_ entries: [Entry], root: String) throws {
        let path = root + "/" + relativePath
        try makeDirectories(PathText.parent(path))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(File(objects: entries))
        let atomic = try AtomicFile(destination: path)
        try data.withUnsafeBytes { try atomic.descriptor.writeAll($0) }
        // Registered before it exists: an interrupt between the two unlinks nothing there.
        Interrupts.shared.registerTemporary(path)
        try atomic.commit(durable: false)
    }

    /// Removes the list under `root`, if there is one.
    package static func remove(root: String) {
        let path = root + "/" + relativePath
        unlink(path)
        Interrupts.shared.unregisterTemporary(path)
    }

    /// The staged objects under `root` by key, while a publish holds the directory's lock;
    /// nil when there is no list, no publish is running, or the list cannot be read (the
    /// objects are then not served, as before the list existed).
    static func read(root: String) -> [String: Entry]? {
        let path = root + "/" + relativePath
        guard FileManager.default.fileExists(atPath: path), DirectoryLock.isHeld(path: root),
              let data = FileManager.default.contents(atPath: path),
              // Unreadable: not served, and the `--verify-url` check the list is for fails on their 404s.
              let file = try? JSONDecoder().decode(File.self, from: data) else { return nil }
        return Dictionary(file.objects.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
    }
}
