import Foundation

/// The highest manifest sequence seen per URL, kept in a small JSON file.
enum SequenceState {
    struct Entry: Codable {
        var sequence: Int64
        var seen_at: String
    }

    static func load(_ path: String) throws -> [String: Entry] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        return try JSONDecoder().decode([String: Entry].self, from: data)
    }

    static func highest(for url: String, in path: String) throws -> Int64? {
        try load(path)[url]?.sequence
    }

    static func record(_ sequence: Int64, for url: String, in path: String, at date: Date) throws {
        var state = try load(path)
        if let existing = state[url], existing.sequence >= sequence { return }
        state[url] = Entry(sequence: sequence, seen_at: formatTimestamp(date))
        let file = try AtomicFile(destination: path)
        try Data(try JSONOutput.encode(state).utf8).withUnsafeBytes { try file.descriptor.writeAll($0) }
        try file.commit(durable: true)
    }
}
