import Foundation

/// `manifests/index.json` (beside the records of a manifest key): every history record's
/// exact bytes, with their size and SHA-256, in sequence order. Commands read this one
/// object instead of every record, so their cost does not grow with the history.
///
/// The index is a cache of the records, never an authority over them:
/// - it is written after a record and before the manifest, with the etag it was read
///   with (a concurrent writer makes the write fail, not vanish);
/// - each entry's bytes must hash to its SHA-256 and decode to a record of its sequence;
/// - a record newer than the index's newest (a publish stopped between its record and
///   the index, or an older modelcast that writes no index) is found by asking for the
///   next sequence's key, and read;
/// - the record that is live is read from the store and must be the index's bytes.
/// When any of these fails, or there is no index, the command reads every record (as
/// `history --rebuild-index` does) and the next write replaces the index.
struct HistoryIndex: Sendable {
    static let format = "modelcast-history-index/1"
    /// Largest index read back (about 30,000 typical records); past it, records are read one by one.
    static let sizeLimit = 32 << 20

    struct Entry: Sendable {
        let record: Release
        /// The record object as stored: size, SHA-256 and its headers.
        let metadata: ObjectMetadata
        let bytes: Data
    }

    /// Oldest first.
    var entries: [Entry]

    static func key(manifestKey: String) -> String {
        TargetLayout.indexKey(manifestKey: manifestKey)
    }

    /// How the index object is stored: revalidated on every read (it changes).
    static func metadata(of data: Data) throws -> ObjectMetadata {
        try ObjectMetadata(of: data, cacheControl: "no-cache", contentType: "application/json")
    }

    static func entry(record: Release, bytes: Data) throws -> Entry {
        Entry(record: record, metadata: try TargetLayout.recordMetadata(of: bytes), bytes: bytes)
    }

    /// The entry of a record read from the store (`source` names it in errors).
    static func entry(decoding bytes: Data, source: String) throws -> Entry {
        try entry(record: try Release.decode(bytes, source: source), bytes: bytes)
    }

    /// The entry of the record read from `sequence`'s key: it must be that sequence's
    /// record (a copied or hostile file must not give one sequence two records).
    static func entry(decoding bytes: Data, source: String, sequence: Int64) throws -> Entry {
        let entry = try entry(decoding: bytes, source: source)
        guard entry.record.sequence == sequence else {
            throw FormatError.invalidRecord(source: "release record \(source)", reason: "it holds the record of sequence \(entry.record.sequence), not of \(sequence) as its key says")
        }
        return entry
    }

    private struct File: Decodable {
        struct Record: Decodable {
            let sequence: Int64
            let size: Int64
            let sha256: String
            /// The record's bytes, as text.
            let record: String
        }
        let format: String
        let manifestKey: String
        let records: [Record]

        enum CodingKeys: String, CodingKey {
            case format, records
            case manifestKey = "manifest_key"
        }
    }

    /// The index as stored: one JSON object, keys sorted, each record's bytes as a string.
    /// Written by hand, not by JSONEncoder, so a large history costs no object tree.
    func encoded(manifestKey: String) -> Data {
        var out = "{\"format\":"
        JSONValue.appendQuoted(Self.format, to: &out)
        out += ",\"manifest_key\":"
        JSONValue.appendQuoted(manifestKey, to: &out)
        out += ",\"records\":["
        for (offset, entry) in entries.enumerated() {
            out += offset == 0 ? "{\"record\":" : ",{\"record\":"
            JSONValue.appendQuoted(String(decoding: entry.bytes, as: UTF8.self), to: &out)
            out += ",\"sequence\":\(entry.record.sequence),\"sha256\":\"\(entry.metadata.sha256.hex)\",\"size\":\(entry.metadata.size)}"
        }
        out += "]}\n"
        return Data(out.utf8)
    }

    /// Reads an index, checking every entry against its own SHA-256 and sequence.
    /// Throws a reason (a `String` error) when it cannot be trusted.
    static func decode(_ data: Data, manifestKey: String, source: String) throws -> HistoryIndex {
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: data) } catch {
            throw IndexProblem("it is not a history index (\(describe(decodingError: error)))")
        }
        guard file.format == format else { throw IndexProblem("its format is '\(file.format)', not '\(format)'") }
        guard file.manifestKey == manifestKey else { throw IndexProblem("it indexes '\(file.manifestKey)', not '\(manifestKey)'") }
        var entries: [Entry] = []
        for item in file.records {
            let bytes = Data(item.record.utf8)
            let record: Release
            do { record = try Release.decode(bytes, source: "\(source) (sequence \(item.sequence))") } catch {
                throw IndexProblem("its entry for sequence \(item.sequence) is not a record: \(error)")
            }
            let entry = try Self.entry(record: record, bytes: bytes)
            guard entry.metadata.sha256.hex == item.sha256, entry.metadata.size == item.size else {
                throw IndexProblem("its entry for sequence \(item.sequence) does not match its own SHA-256")
            }
            guard entry.record.sequence == item.sequence else {
                throw IndexProblem("its entry for sequence \(item.sequence) holds the record of sequence \(entry.record.sequence)")
            }
            if let last = entries.last, last.record.sequence >= item.sequence {
                throw IndexProblem("its sequences are not in increasing order (\(last.record.sequence), then \(item.sequence))")
            }
            entries.append(entry)
        }
        return HistoryIndex(entries: entries)
    }
}

/// Why an index was not used.
struct IndexProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
