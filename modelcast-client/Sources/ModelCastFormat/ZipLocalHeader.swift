import Foundation

/// An entry's local header and data descriptor against its central directory header: the
/// records a streaming extractor reads must say what the central directory says.
enum ZipLocalHeader {
    /// What a local header records that is compared with the central directory.
    struct Values {
        var flags: UInt16
        var method: UInt16
        var crc: UInt32
        /// Nil when marked 0xFFFFFFFF but not read from the zip64 extra field: not compared.
        var compressed: UInt64?
        var uncompressed: UInt64?
        /// The sizes read from the zip64 extra field.
        var fromZip64: Set<ZipProblem.Field> = []
        /// Sizes marked 0xFFFFFFFF that the zip64 extra field does not supply.
        var missing: [ZipProblem.Field] = []

        /// Bit 3: the CRC-32 and sizes follow the data; the local header may hold zeros instead.
        var isDeferred: Bool { flags & ZipFormat.flagDataDescriptor != 0 }
    }

    /// The local header's flags, method, CRC-32 and sizes. In a local header the zip64 field
    /// (`wide`, its body) holds the uncompressed size, then the compressed size, each only
    /// when its classic field is the 0xFFFFFFFF marker. A marked size whose zip64 field
    /// overlaps what follows (`extraFits` false) is left to the layout check.
    static func values(_ header: ZipFields, zip64 wide: ZipFields?, extraFits: Bool) -> Values {
        var values = Values(
            flags: header.u16(6), method: header.u16(8), crc: header.u32(14),
            compressed: UInt64(header.u32(18)), uncompressed: UInt64(header.u32(22)))
        var cursor = 0
        func take(_ field: ZipProblem.Field) -> UInt64? {
            guard let wide, cursor + 8 <= wide.count else { values.missing.append(field); return nil }
            defer { cursor += 8 }
            values.fromZip64.insert(field)
            return wide.u64(cursor)
        }
        if values.uncompressed == 0xFFFF_FFFF {
            let value = extraFits ? take(.uncompressedSize) : nil
            values.uncompressed = value
        }
        if values.compressed == 0xFFFF_FFFF {
            let value = extraFits ? take(.compressedSize) : nil
            values.compressed = value
        }
        return values
    }

    /// The local header's values against the central directory's: general purpose flags,
    /// method, CRC-32 and both sizes (deferred ones may be zero).
    static func differences(_ local: Values, entry: ZipEntry, index: Int) -> [ZipProblem] {
        var problems: [ZipProblem] = []
        func differs(_ field: ZipProblem.Field, _ value: UInt64, _ central: UInt64) {
            problems.append(.localHeaderDiffers(
                entry: entry.name, index: index, offset: entry.localHeaderOffset, field: field,
                local: value, central: central, fromZip64: local.fromZip64.contains(field)))
        }
        let deferred = local.isDeferred
        if local.flags != entry.flags { differs(.flags, UInt64(local.flags), UInt64(entry.flags)) }
        if local.method != entry.method { differs(.method, UInt64(local.method), UInt64(entry.method)) }
        if local.crc != entry.crc32, !(deferred && local.crc == 0) { differs(.crc32, UInt64(local.crc), UInt64(entry.crc32)) }
        if let compressed = local.compressed, compressed != UInt64(entry.compressedSize), !(deferred && compressed == 0) {
            differs(.compressedSize, compressed, UInt64(entry.compressedSize))
        }
        if let uncompressed = local.uncompressed, uncompressed != UInt64(entry.uncompressedSize), !(deferred && uncompressed == 0) {
            differs(.uncompressedSize, uncompressed, UInt64(entry.uncompressedSize))
        }
        return problems
    }

    /// The entry's data descriptor against the central directory: CRC-32 and both
    /// sizes (eight bytes each when the local header has a zip64 field). The
    /// signature is optional, so a descriptor that matches read either way passes.
    static func descriptorProblems(_ parsed: ZipParsedEntry) -> [ZipProblem] {
        guard let descriptor = parsed.descriptor else { return [] }
        let entry = parsed.entry
        let fields = ZipFields(descriptor.bytes)
        let sizeWidth = descriptor.wide ? 8 : 4
        let starts = (fields.count >= 4 && fields.u32(0) == ZipFormat.descriptorSignature ? [4] : []) + [0]
        var readings: [(crc: UInt32, compressed: UInt64, uncompressed: UInt64)] = []
        for start in starts where start + 4 + 2 * sizeWidth <= fields.count {
            let size = { (at: Int) in descriptor.wide ? fields.u64(at) : UInt64(fields.u32(at)) }
            readings.append((fields.u32(start), size(start + 4), size(start + 4 + sizeWidth)))
        }
        let name = entry.name, index = parsed.index, offset = descriptor.offset
        guard let first = readings.first else {
            return [.descriptorTruncated(entry: name, index: index, offset: offset, available: fields.count)]
        }
        let central = (crc: entry.crc32, compressed: UInt64(entry.compressedSize), uncompressed: UInt64(entry.uncompressedSize))
        if readings.contains(where: { $0 == central }) { return [] }
        var problems: [ZipProblem] = []
        func differs(_ field: ZipProblem.Field, _ found: UInt64, _ expected: UInt64) {
            if found != expected { problems.append(.descriptorDiffers(entry: name, index: index, offset: offset, field: field, descriptor: found, central: expected)) }
        }
        differs(.crc32, UInt64(first.crc), UInt64(central.crc))
        differs(.compressedSize, first.compressed, central.compressed)
        differs(.uncompressedSize, first.uncompressed, central.uncompressed)
        return problems
    }
}
