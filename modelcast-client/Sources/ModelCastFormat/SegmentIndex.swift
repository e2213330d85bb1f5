import Foundation

/// The segment index of one artifact: how the file is cut into segments and each
/// segment's length and SHA-256, so a device holding any older version can copy the
/// segments it already has and fetch only the others. Server and client read the same
/// bytes; the format is specified in `docs/segment-index.md` (version 1).
///
/// Binary, little-endian:
///
///     magic           4 bytes   "MCSX"
///     format version  u16       1
///     scheme length   u16       1...64
///     scheme          bytes     ASCII letters, digits, '.', '-', '_' (`modelcast-segments-1`)
///     artifact size   u64       the sum of the segment lengths
///     artifact sha256 32 bytes
///     segment count   u32       at most `maxSegments`
///     segments        count × (length u32 in 1...`maxSegmentLength`, sha256 32 bytes)
///
/// Nothing may follow the last segment. Decoding checks every field and the total, so a
/// hostile index can name no segment outside the artifact and no absurd allocation.
public struct SegmentIndex: Equatable, Sendable {
    public static let magic: [UInt8] = Array("MCSX".utf8)
    public static let formatVersion: UInt16 = 1
    /// No segment is longer than this (16 MiB).
    public static let maxSegmentLength: UInt32 = 16 << 20
    /// At most this many segments (an index of about 36 MiB; 4 TiB of artifact at 1 MiB).
    public static let maxSegments: UInt32 = 1 << 20
    static let maxSchemeLength = 64
    /// The largest index the format allows, in bytes: a bound to read no more than.
    public static let maxEncodedSize = Int64(4 + 2 + 2 + maxSchemeLength + 8 + 32 + 4) + Int64(maxSegments) * 36

    /// One segment: its length and the SHA-256 of its bytes.
    public struct Segment: Equatable, Sendable {
        public let length: UInt32
        public let sha256: [UInt8]

        public init(length: UInt32, sha256: [UInt8]) {
            self.length = length
            self.sha256 = sha256
        }
    }

    /// The cutting rules the boundaries follow (`modelcast-segments-1`).
    public let scheme: String
    public let artifactSize: Int64
    public let artifactSHA256: [UInt8]
    public let segments: [Segment]

    /// An index of `segments`, which must tile `artifactSize` bytes.
    public init(scheme: String, artifactSize: Int64, artifactSHA256: [UInt8], segments: [Segment]) throws {
        self.scheme = scheme
        self.artifactSize = artifactSize
        self.artifactSHA256 = artifactSHA256
        self.segments = segments
        try check()
    }

    /// Where each segment starts, in order (the first at 0).
    public var offsets: [Int64] {
        var offset: Int64 = 0
        return segments.map { segment in
            defer { offset += Int64(segment.length) }
            return offset
        }
    }

    /// The index's bytes.
    public func encoded() -> [UInt8] {
        var out = Self.magic
        out.reserveCapacity(4 + 4 + scheme.utf8.count + 8 + 32 + 4 + segments.count * 36)
        Self.append(Self.formatVersion, to: &out)
        Self.append(UInt16(scheme.utf8.count), to: &out)
        out += Array(scheme.utf8)
        Self.append(UInt64(artifactSize), to: &out)
        out += artifactSHA256
        Self.append(UInt32(segments.count), to: &out)
        for segment in segments {
            Self.append(segment.length, to: &out)
            out += segment.sha256
        }
        return out
    }

    /// Reads an index, refusing anything the format does not allow, naming the field.
    public init(decoding bytes: [UInt8]) throws {
        var reader = Reader(bytes: bytes)
        guard try reader.take(4, "magic") == Self.magic else { throw Problem("not a segment index (no MCSX magic)") }
        let version = try reader.u16("format version")
        guard version == Self.formatVersion else { throw Problem("segment index format version \(version) is not one this reader knows (1)") }
        let schemeLength = Int(try reader.u16("scheme length"))
        guard (1...Self.maxSchemeLength).contains(schemeLength) else { throw Problem("scheme length \(schemeLength) is not 1...\(Self.maxSchemeLength)") }
        let scheme = String(decoding: try reader.take(schemeLength, "scheme"), as: UTF8.self)
        let size = try reader.u64("artifact size")
        guard size <= UInt64(Int64.max) else { throw Problem("artifact size \(size) exceeds 2^63") }
        let sha256 = try reader.take(32, "artifact sha256")
        let count = try reader.u32("segment count")
        guard count <= Self.maxSegments else { throw Problem("\(count) segments (at most \(Self.maxSegments))") }
        guard UInt64(count) * 36 == UInt64(reader.remaining) else {
            throw Problem("\(count) segments need \(UInt64(count) * 36) bytes, but \(reader.remaining) follow the header")
        }
        var segments: [Segment] = []
        segments.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            let length = try reader.u32("length of segment \(index)")
            segments.append(Segment(length: length, sha256: try reader.take(32, "sha256 of segment \(index)")))
        }
        try self.init(scheme: scheme, artifactSize: Int64(size), artifactSHA256: sha256, segments: segments)
    }

    /// What is wrong with an index, in words naming the field.
    public struct Problem: Error, CustomStringConvertible, Equatable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    private func check() throws {
        guard (1...Self.maxSchemeLength).contains(scheme.utf8.count),
              scheme.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2E || $0 == 0x2D || $0 == 0x5F })
        else { throw Problem("scheme \(scheme.debugDescription) is not 1...64 ASCII letters, digits, '.', '-' or '_'") }
        guard artifactSize >= 0 else { throw Problem("artifact size \(artifactSize) is negative") }
        guard artifactSHA256.count == 32 else { throw Problem("artifact sha256 has \(artifactSHA256.count) bytes, not 32") }
        guard segments.count <= Int(Self.maxSegments) else { throw Problem("\(segments.count) segments (at most \(Self.maxSegments))") }
        var total: Int64 = 0
        for (index, segment) in segments.enumerated() {
            guard (1...Self.maxSegmentLength).contains(segment.length) else {
                throw Problem("segment \(index) has length \(segment.length) (1...\(Self.maxSegmentLength) allowed)")
            }
            guard segment.sha256.count == 32 else { throw Problem("segment \(index) sha256 has \(segment.sha256.count) bytes, not 32") }
            total += Int64(segment.length)
        }
        guard total == artifactSize else {
            throw Problem("the segments cover \(total) bytes, but the artifact has \(artifactSize)")
        }
    }

    private static func append<Integer: FixedWidthInteger>(_ value: Integer, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out += $0 }
    }

    /// Reads fields in order, each named in the error when the bytes run out.
    private struct Reader {
        let bytes: [UInt8]
        var position = 0
        var remaining: Int { bytes.count - position }

        mutating func take(_ count: Int, _ what: String) throws -> [UInt8] {
            guard count <= remaining else { throw Problem("the index ends inside its \(what)") }
            defer { position += count }
            return Array(bytes[position..<position + count])
        }

        mutating func integer<Integer: FixedWidthInteger>(_ what: String) throws -> Integer {
            try take(MemoryLayout<Integer>.size, what).reversed().reduce(0) { $0 << 8 | Integer($1) }
        }

        mutating func u16(_ what: String) throws -> UInt16 { try integer(what) }
        mutating func u32(_ what: String) throws -> UInt32 { try integer(what) }
        mutating func u64(_ what: String) throws -> UInt64 { try integer(what) }
    }
}
