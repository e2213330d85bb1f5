import Foundation

/// The end of central directory record and its zip64 forms: where the central directory is.
extension ZipInspector {
    /// Where the central directory is, according to the end records.
    struct EndRecords {
        var entryCount: UInt64
        var directorySize: UInt64
        var directoryOffset: UInt64
        /// Where the central directory should end: the zip64 end record if there is one, else the end record.
        var directoryEndExpected: Int64
        var isZip64: Bool
    }

    static func readEndRecords(_ source: some RandomAccessBytes, problems: inout [ZipProblem]) async throws -> EndRecords {
        let (endOffset, record) = try await findEndRecord(source, problems: &problems)
        let disk = record.u16(4), directoryDisk = record.u16(6)
        if disk != 0 { problems.append(.endRecordDisk(.classic, disk: UInt32(disk))) }
        if directoryDisk != 0 { problems.append(.directoryDisk(.classic, disk: UInt32(directoryDisk))) }

        var result = EndRecords(
            entryCount: UInt64(record.u16(10)), directorySize: UInt64(record.u32(12)), directoryOffset: UInt64(record.u32(16)),
            directoryEndExpected: endOffset, isZip64: false)
        var onDisk = UInt64(record.u16(8))
        if let zip64 = try await readZip64EndRecord(source, endOffset: endOffset, classic: record, problems: &problems) {
            (result, onDisk) = zip64
        }
        if onDisk != result.entryCount {
            problems.append(.entriesOnDiskMismatch(onDisk: onDisk, total: result.entryCount))
        }
        return result
    }

    /// The end of central directory record and its offset, found by searching the last
    /// 65,557 bytes backwards; reports bytes that follow it and its comment.
    static func findEndRecord(_ source: some RandomAccessBytes, problems: inout [ZipProblem]) async throws -> (offset: Int64, record: Fields) {
        let size = source.size
        guard size >= Int64(endRecordSize) else {
            throw invalid(source, "\(size) bytes is too short for a zip archive (the end of central directory record alone is \(endRecordSize) bytes)")
        }
        let window = min(size, Int64(endRecordSize + maxCommentLength))
        let tailStart = size - window
        let tail = Fields(try await readExactly(source, offset: tailStart, count: Int(window), what: "end of archive"))
        guard let located = endRecordPosition(in: tail) else {
            throw invalid(source, "no end of central directory record in the last \(window) bytes (not a zip archive, or truncated)")
        }
        let found = located.position
        let endOffset = tailStart + Int64(found)
        let record = Fields(Array(tail.bytes[found..<(found + endRecordSize)]))
        if !located.exact {
            let trailing = tail.count - (found + endRecordSize + Int(record.u16(20)))
            problems.append(.trailingBytes(count: trailing, endRecordOffset: endOffset))
        }
        return (endOffset, record)
    }

    /// Where the end of central directory record starts in `tail` (the archive's last bytes),
    /// searching backwards: a record whose comment reaches exactly the end of the file wins
    /// (`exact`), else the last one whose comment fits. The signature can also occur inside
    /// a comment, so a candidate whose comment length does not fit is skipped.
    static func endRecordPosition(in tail: Fields) -> (position: Int, exact: Bool)? {
        var loose: Int?
        var position = tail.count - endRecordSize
        while position >= 0 {
            if tail.u32(position) == endSignature {
                let commentEnd = position + endRecordSize + Int(tail.u16(position + 20))
                if commentEnd == tail.count { return (position, true) }
                if loose == nil, commentEnd < tail.count { loose = position }
            }
            position -= 1
        }
        return loose.map { ($0, false) }
    }

    /// The zip64 end of central directory record, when its locator sits just before the end
    /// record at `endOffset`: where the central directory is, and how many entries are on
    /// this disk. Nil when there is no locator.
    static func readZip64EndRecord(_ source: some RandomAccessBytes, endOffset: Int64, classic record: Fields, problems: inout [ZipProblem]) async throws -> (records: EndRecords, onDisk: UInt64)? {
        let locatorOffset = endOffset - Int64(zip64LocatorSize)
        guard locatorOffset >= 0 else { return nil }
        let locator = Fields(try await readExactly(source, offset: locatorOffset, count: zip64LocatorSize, what: "zip64 end of central directory locator"))
        guard locator.u32(0) == zip64LocatorSignature else { return nil }
        let recordDisk = locator.u32(4), recordOffset = locator.u64(8), diskCount = locator.u32(16)
        if recordDisk != 0 { problems.append(.locatorRecordDisk(recordDisk)) }
        if diskCount > 1 { problems.append(.locatorDiskCount(diskCount)) }
        guard recordOffset <= UInt64(locatorOffset), UInt64(locatorOffset) - recordOffset >= UInt64(zip64EndRecordSize) else {
            throw invalid(source, "zip64 end of central directory locator points to offset \(recordOffset), which leaves no room for the \(zip64EndRecordSize)-byte record before the locator at \(locatorOffset)")
        }
        let zip64 = Fields(try await readExactly(source, offset: Int64(recordOffset), count: zip64EndRecordSize, what: "zip64 end of central directory record"))
        guard zip64.u32(0) == zip64EndSignature else {
            throw invalid(source, "no zip64 end of central directory record at offset \(recordOffset) (signature \(hex(zip64.u32(0))))")
        }
        // The record's size field excludes its first 12 bytes; anything
        // between the record and the locator is unexplained.
        let recordEnd = recordOffset.addingReportingOverflow(12).partialValue.addingReportingOverflow(zip64.u64(4))
        if recordEnd.overflow || recordEnd.partialValue != UInt64(locatorOffset) {
            problems.append(.zip64RecordLength(offset: recordOffset, declared: zip64.u64(4), locatorOffset: locatorOffset))
        }
        let disk64 = zip64.u32(16), directoryDisk64 = zip64.u32(20)
        if disk64 != 0 { problems.append(.endRecordDisk(.zip64, disk: disk64)) }
        if directoryDisk64 != 0 { problems.append(.directoryDisk(.zip64, disk: directoryDisk64)) }
        problems += endRecordDisagreements(classic: record, zip64: zip64)
        let records = EndRecords(
            entryCount: zip64.u64(32), directorySize: zip64.u64(40), directoryOffset: zip64.u64(48),
            directoryEndExpected: Int64(recordOffset), isZip64: true)
        return (records, zip64.u64(24))
    }

    /// Where the classic record holds a real value (not the 0xFFFF.. marker), both records
    /// must agree, or two unzip tools could see two archives.
    static func endRecordDisagreements(classic record: Fields, zip64: Fields) -> [ZipProblem] {
        let pairs: [(ZipProblem.Field, UInt64, UInt64, UInt64)] = [
            (.entriesOnDisk, UInt64(record.u16(8)), 0xFFFF, zip64.u64(24)),
            (.totalEntries, UInt64(record.u16(10)), 0xFFFF, zip64.u64(32)),
            (.directorySize, UInt64(record.u32(12)), 0xFFFF_FFFF, zip64.u64(40)),
            (.directoryOffset, UInt64(record.u32(16)), 0xFFFF_FFFF, zip64.u64(48)),
        ]
        return pairs.filter { _, classic, marker, wide in classic != marker && classic != wide }
            .map { field, classic, _, wide in .endRecordsDisagree(field, classic: classic, zip64: wide) }
    }
}
