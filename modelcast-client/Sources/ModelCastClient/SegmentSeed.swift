import Foundation
@_spi(ModelCastTooling) import ModelCastFormat

/// Bytes of an installed older version, read at offsets of the artifact it was installed
/// from: the artifact itself for a plain file, or the unpacked files of a zipped
/// directory, which hold its stored entries' bytes.
protocol SeedBytes: Sendable {
    /// What error messages name.
    var path: String { get }
    /// `count` bytes at `offset` of the old artifact (fewer when they are not all there).
    func read(count: Int, at offset: Int64) throws -> Data
}

extension PositionalFile: SeedBytes {}

/// What a segmented download copies from: the installed version's bytes, the index its
/// artifact had, and where each of that index's segments can be read.
struct SegmentSeed: Sendable {
    let bytes: any SeedBytes
    let index: SegmentIndex
    /// The installed version.
    let version: String
    /// A segment's SHA-256 → its offset in the old artifact, for the segments `bytes`
    /// can give (each proven again by hashing when copied).
    let have: [[UInt8]: Int64]
}

extension SegmentSeed {
    /// One seed from several kept versions, the first preferred: a segment the new index
    /// (`new`) names is copied from the first version that has it. nil when none has one.
    /// A single seed is returned as it is.
    static func combining(_ seeds: [SegmentSeed], for new: SegmentIndex) -> SegmentSeed? {
        guard seeds.count > 1 else { return seeds.first }
        let needed = Set(new.segments.map(\.sha256))
        var have: [[UInt8]: Int64] = [:]
        var parts: [(base: Int64, bytes: any SeedBytes, size: Int64)] = []
        var contributing: [SegmentSeed] = []
        var base: Int64 = 0
        for seed in seeds {
            var added = false
            for (sha, offset) in seed.have where needed.contains(sha) && have[sha] == nil {
                have[sha] = base + offset
                added = true
            }
            if added {
                parts.append((base, seed.bytes, seed.index.artifactSize))
                contributing.append(seed)
            }
            base += seed.index.artifactSize
        }
        guard let first = contributing.first else { return nil }
        if contributing.count == 1 { return first }
        let versions = contributing.map(\.version)
        return SegmentSeed(bytes: CombinedSeedBytes(parts: parts), index: first.index, version: versions.joined(separator: ", "), have: have)
    }
}

/// Several kept versions' bytes one after the other: the offsets of the second start where
/// the first's artifact ends, and so on (`SegmentSeed.combining`).
struct CombinedSeedBytes: SeedBytes {
    let parts: [(base: Int64, bytes: any SeedBytes, size: Int64)]

    var path: String { parts.map(\.bytes.path).joined(separator: ", ") }

    func read(count: Int, at offset: Int64) throws -> Data {
        guard let part = parts.last(where: { $0.base <= offset }), offset + Int64(count) <= part.base + part.size else { return Data() }
        return try part.bytes.read(count: count, at: offset - part.base)
    }
}

/// A zipped directory as it was installed: the zip is gone, but each stored entry's
/// bytes are its unpacked file's bytes, so a segment lying inside one entry's data can
/// be read from that file.
// @unchecked: the open files' table is touched only under `lock`; the entries never change.
final class UnpackedZip: SeedBytes, @unchecked Sendable {
    let path: String
    /// The stored entries, by offset, each with its unpacked file.
    private let entries: [(data: ZipStoredData, file: URL)]
    private let lock = NSLock()
    private var open: [Int: PositionalFile] = [:]

    init(path: String, entries: [(data: ZipStoredData, file: URL)]) {
        self.path = path
        self.entries = entries.sorted { $0.data.offset < $1.data.offset }
    }

    /// The entry whose data holds `offset..<offset+count` whole.
    func entry(holding offset: Int64, count: Int64) -> Int? {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].data.offset <= offset { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let data = entries[low - 1].data
        return offset + count <= data.offset + data.size ? low - 1 : nil
    }

    func read(count: Int, at offset: Int64) throws -> Data {
        guard let number = entry(holding: offset, count: Int64(count)) else { return Data() }
        let file: PositionalFile = try lock.withLock {
            if let file = open[number] { return file }
            let file = try PositionalFile(readingFrom: entries[number].file)
            open[number] = file
            return file
        }
        return try file.read(count: count, at: offset - entries[number].data.offset)
    }
}

// A seed only saves bytes: reading one, any failure (a file missing, unreadable, too large,
// not parsed) means no seed and a whole download, never a failed update.
extension Installer {
    /// Where a version directory keeps what seeds the next version's segmented download:
    /// `NAME.mcsx`, the index of the artifact `NAME` was installed from, and for a zipped
    /// directory `NAME.stored.json`, where its stored entries lay in the zip.
    static let segmentsFolder = ".modelcast-segments"
    /// The largest stored-entry map read back (far more than `maxZipEntries` entries need).
    static let maxStoredMap = 32 << 20

    /// Keeps `index` (and the zip's stored entries) in the version being built at `staging`.
    func keepSeed(_ index: Data, stored: [ZipStoredData]?, for file: CheckedFile, in staging: URL) throws {
        let folder = staging.appendingPathComponent(Self.segmentsFolder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try index.write(to: folder.appendingPathComponent(file.name.rawValue + ".mcsx"))
        if let stored {
            try JSONEncoder().encode(stored).write(to: folder.appendingPathComponent(file.name.rawValue + ".stored.json"))
        }
    }

    /// What seeds the segmented download of `file` (whose proven index is `new`): every
    /// kept version (the one in use first, then those kept for a rollback) gives its best
    /// seed, and a segment is copied from the first that has it, so an update that brings
    /// back what an older kept version held (a revert, a fix on the older weights) fetches
    /// only what no kept version holds. nil when none was kept. Nothing read here is
    /// trusted: every copied segment is hashed again.
    func seed(for file: CheckedFile, of model: CheckedModel, index new: SegmentIndex) -> SegmentSeed? {
        guard model.tree == nil else { return nil }
        let seeds = modelsDirectory.keptVersions(model.name).compactMap { directory -> SegmentSeed? in
            guard let version = ModelsDirectory.record(in: directory)?.version else { return nil }
            return bestSeed(for: file, in: directory, version: version, index: new)
        }
        return SegmentSeed.combining(seeds, for: new)
    }

    /// The seed the version at `directory` gives `file`: its file of the same name, else,
    /// whatever their names (a file renamed between versions, `m-1.0.bin` → `m-1.1.bin`),
    /// its file of the same kind (plain, or a zipped directory) with a kept index that
    /// leaves the least to fetch.
    private func bestSeed(for file: CheckedFile, in directory: URL, version: String, index new: SegmentIndex) -> SegmentSeed? {
        let zipped = file.packedDirectoryName != nil
        if let same = seed(named: file.name, zipped: zipped, in: directory, version: version) { return same }
        var best: (seed: SegmentSeed, copied: Int64)?
        for name in seedNames(in: directory) where name != file.name {
            guard let seed = seed(named: name, zipped: zipped, in: directory, version: version) else { continue }
            let copied = DeltaPlan(new: new, have: seed.have).copiedBytes
            if copied > best?.copied ?? 0 { best = (seed, copied) }
        }
        return best?.seed
    }

    /// The names of the files of the version at `current` whose index was kept.
    private func seedNames(in current: URL) -> [PathSegment] {
        let folder = current.appendingPathComponent(Self.segmentsFolder)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return entries.filter { $0.hasSuffix(".mcsx") }.sorted().compactMap { try? PathSegment(String($0.dropLast(".mcsx".count))) }
    }

    /// The seed the file `name` of the version at `current` gives, when its index was kept
    /// and it is of the kind asked for: a plain file of the index's size, or a zipped
    /// directory's unpacked stored entries.
    private func seed(named name: PathSegment, zipped: Bool, in current: URL, version: String) -> SegmentSeed? {
        let folder = current.appendingPathComponent(Self.segmentsFolder)
        // Read only what an index can be (its own format bounds it), never a file of any size.
        let indexFile = folder.appendingPathComponent(name.rawValue + ".mcsx")
        guard let size = fileSize(indexFile), size <= SegmentIndex.maxEncodedSize,
              let data = try? Data(contentsOf: indexFile), let index = try? SegmentIndex(decoding: [UInt8](data)) else { return nil }
        let all = DeltaPlan.offsets(of: index)
        let storedMap = folder.appendingPathComponent(name.rawValue + ".stored.json")
        guard zipped else {
            let bytes = current.appendingPathComponent(name.rawValue)
            // try?: a seed is an optimisation: a file that cannot be opened is no seed (the bytes are fetched).
            guard fileSize(storedMap) == nil, fileSize(bytes) == index.artifactSize, let file = try? PositionalFile(readingFrom: bytes) else { return nil }
            return SegmentSeed(bytes: file, index: index, version: version, have: all)
        }
        guard let zip = unpackedZip(name, in: current) else { return nil }
        let lengths = Dictionary(index.segments.map { ($0.sha256, Int64($0.length)) }, uniquingKeysWith: { first, _ in first })
        let have = all.filter { sha, offset in zip.entry(holding: offset, count: lengths[sha] ?? 0) != nil }
        return SegmentSeed(bytes: zip, index: index, version: version, have: have)
    }

    /// The unpacked stored entries of the zip `name` was, in the version at `current`: each
    /// a relative path inside it naming a regular file of the entry's size.
    private func unpackedZip(_ name: PathSegment, in current: URL) -> UnpackedZip? {
        let map = current.appendingPathComponent(Self.segmentsFolder).appendingPathComponent(name.rawValue + ".stored.json")
        guard let size = fileSize(map), size <= Int64(Self.maxStoredMap), let data = try? Data(contentsOf: map),
              let stored = try? JSONDecoder().decode([ZipStoredData].self, from: data) else { return nil }
        var entries: [(data: ZipStoredData, file: URL)] = []
        for entry in stored {
            // try?: an entry whose name is no relative path, or whose file cannot be looked at,
            // is not used as a seed (its bytes are fetched); the map is this client's own file.
            guard entry.offset >= 0, entry.size > 0, let relative = try? RelativePath(entry.name) else { continue }
            let path = relative.appended(to: current)
            let attributes = try? FileManager.default.attributesOfItem(atPath: path.path)
            guard attributes?[.type] as? FileAttributeType == .typeRegular, fileSize(path) == entry.size else { continue }
            entries.append((entry, path))
        }
        return UnpackedZip(path: current.path, entries: entries)
    }
}
