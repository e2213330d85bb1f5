import Foundation

/// The end of central directory record and its zip64 forms: where the central directory
/// is. Each function reads one record `ZipScan` fetched, in the order the scan reads them.
struct ZipEndRecords {
    var entryCount: UInt64
    var directorySize: UInt64
    var directoryOffset: UInt64
    /// Where the central directory should end: the zip64 end record if there is one, else the end record.
    var directoryEndExpected: Int64
    var isZip64: Bool
    /// Entries on this disk, by the record in use (compared with `entryCount` at the end).
    var entriesOnDisk: UInt64

    /// The classic end record: its offset and bytes, and what it says.
    struct Classic {
        var offset: Int64
        var record: ZipFields
        var records: ZipEndRecords
    }

    /// How many of the archive's last bytes are searched for the end record (it and the longest comment).
    static func tailWindow(size: Int64) -> Int64 { min(size, Int64(ZipFormat.endRecordSize + ZipFormat.maxCommentLength)) }

    /// The end record in `tail` (the archive's last `tailWindow` bytes, from `tailStart`);
    /// reports bytes that follow it and its comment, and other disks.
    static func classic(tail bytes: [UInt8], tailStart: Int64, problems: inout [ZipProblem]) throws -> Classic {
        let tail = ZipFields(bytes)
        guard let located = endRecordPosition(in: tail) else { throw ZipFailure.noEndRecord(window: Int64(bytes.count)) }
        let found = located.position
        let endOffset = tailStart + Int64(found)
        let record = ZipFields(Array(bytes[found..<(found + ZipFormat.endRecordSize)]))
        if !located.exact {
            let trailing = tail.count - (found + ZipFormat.endRecordSize + Int(record.u16(20)))
            problems.append(.trailingBytes(count: trailing, endRecordOffset: endOffset))
        }
        let disk = record.u16(4), directoryDisk = record.u16(6)
        if disk != 0 { problems.append(.endRecordDisk(.classic, disk: UInt32(disk))) }
        if directoryDisk != 0 { problems.append(.directoryDisk(.classic, disk: UInt32(directoryDisk))) }
        let records = ZipEndRecords(
            entryCount: UInt64(record.u16(10)), directorySize: UInt64(record.u32(12)), directoryOffset: UInt64(record.u32(16)),
            directoryEndExpected: endOffset, isZip64: false, entriesOnDisk: UInt64(record.u16(8)))
        return Classic(offset: endOffset, record: record, records: records)
    }

    /// Where the end of central directory record starts in `tail` (the archive's last bytes),
    /// searching backwards: a record whose comment reaches exactly the end of the file wins
    /// (`exact`), else the last one whose comment fits. The signature can also occur inside
    /// a comment, so a candidate whose comment length does not fit is skipped.
    static func endRecordPosition(in tail: ZipFields) -> (position: Int, exact: Bool)? {
        var loose: Int?
        var position = tail.count - ZipFormat.endRecordSize
        while position >= 0 {
            if tail.u32(position) == ZipFormat.endSignature {
                let commentEnd = position + ZipFormat.endRecordSize + Int(tail.u16(position + 20))
                if commentEnd == tail.count { return (position, true) }
                if loose == nil, commentEnd < tail.count { loose = position }
            }
            position -= 1
        }
        return loose.map { ($0, false) }
    }

    /// Where the zip64 end record is, by the locator just before the end record (`locator`,
    /// read at `locatorOffset`); nil when those bytes are not a locator. Reports other disks.
    static func zip64RecordOffset(locator bytes: [UInt8], at locatorOffset: Int64, problems: inout [ZipProblem]) throws -> UInt64? {
        let locator = ZipFields(bytes)
        guard locator.u32(0) == ZipFormat.zip64LocatorSignature else { return nil }
        let recordDisk = locator.u32(4), recordOffset = locator.u64(8), diskCount = locator.u32(16)
        if recordDisk != 0 { problems.append(.locatorRecordDisk(recordDisk)) }
        if diskCount > 1 { problems.append(.locatorDiskCount(diskCount)) }
        guard recordOffset <= UInt64(locatorOffset), UInt64(locatorOffset) - recordOffset >= UInt64(ZipFormat.zip64EndRecordSize) else {
            throw ZipFailure.zip64LocatorOutside(recordOffset: recordOffset, locatorOffset: locatorOffset)
        }
        return recordOffset
    }

    /// The zip64 end record read at `recordOffset`: where the central directory is, and how
    /// many entries are on this disk. Reports a length that does not reach the locator,
    /// other disks, and values the classic record holds that it contradicts.
    static func zip64(_ bytes: [UInt8], at recordOffset: UInt64, classic: Classic, problems: inout [ZipProblem]) throws -> ZipEndRecords {
        let zip64 = ZipFields(bytes)
        guard zip64.u32(0) == ZipFormat.zip64EndSignature else {
            throw ZipFailure.noZip64Record(offset: recordOffset, signature: zip64.u32(0))
        }
        // The record's size field excludes its first 12 bytes; anything
        // between the record and the locator is unexplained.
        let locatorOffset = classic.offset - Int64(ZipFormat.zip64LocatorSize)
        let recordEnd = recordOffset.addingReportingOverflow(12).partialValue.addingReportingOverflow(zip64.u64(4))
        if recordEnd.overflow || recordEnd.partialValue != UInt64(locatorOffset) {
            problems.append(.zip64RecordLength(offset: recordOffset, declared: zip64.u64(4), locatorOffset: locatorOffset))
        }
        let disk64 = zip64.u32(16), directoryDisk64 = zip64.u32(20)
        if disk64 != 0 { problems.append(.endRecordDisk(.zip64, disk: disk64)) }
        if directoryDisk64 != 0 { problems.append(.directoryDisk(.zip64, disk: directoryDisk64)) }
        problems += disagreements(classic: classic.record, zip64: zip64)
        return ZipEndRecords(
            entryCount: zip64.u64(32), directorySize: zip64.u64(40), directoryOffset: zip64.u64(48),
            directoryEndExpected: Int64(recordOffset), isZip64: true, entriesOnDisk: zip64.u64(24))
    }

    /// Where the classic record holds a real value (not the 0xFFFF.. marker), both records
    /// must agree, or two unzip tools could see two archives.
    static func disagreements(classic record: ZipFields, zip64: ZipFields) -> [ZipProblem] {
        let pairs: [(ZipProblem.Field, UInt64, UInt64, UInt64)] = [
            (.entriesOnDisk, UInt64(record.u16(8)), 0xFFFF, zip64.u64(24)),
            (.totalEntries, UInt64(record.u16(10)), 0xFFFF, zip64.u64(32)),
            (.directorySize, UInt64(record.u32(12)), 0xFFFF_FFFF, zip64.u64(40)),
            (.directoryOffset, UInt64(record.u32(16)), 0xFFFF_FFFF, zip64.u64(48)),
        ]
        return pairs.filter { _, classic, marker, wide in classic != marker && classic != wide }
            .map { field, classic, _, wide in .endRecordsDisagree(field, classic: classic, zip64: wide) }
    }

    /// Refuses a central directory declared with more than `maxEntries` entries (unless
    /// `counts` is false), more than `maxCentralDirectory` bytes, more entries than its size
    /// can hold (unless `counts` is false) or running past the end records; reports bytes
    /// between it and the end records.
    func checkBounds(_ limits: ZipScan.Limits, counts: Bool, problems: inout [ZipProblem]) throws {
        if counts, entryCount > UInt64(max(limits.maxEntries, 0)) {
            throw ZipFailure.tooManyDeclared(declared: entryCount, limit: limits.maxEntries, raisedBy: limits.raisedBy)
        }
        guard directorySize <= UInt64(max(limits.maxCentralDirectory, 0)) else {
            throw ZipFailure.directoryTooLarge(size: directorySize, limit: limits.maxCentralDirectory)
        }
        let directoryEnd = directoryOffset.addingReportingOverflow(directorySize)
        guard !directoryEnd.overflow, directoryEnd.partialValue <= UInt64(directoryEndExpected) else {
            throw ZipFailure.directoryPastEndRecords(offset: directoryOffset, size: directorySize, recordsStart: directoryEndExpected)
        }
        if directoryEnd.partialValue != UInt64(directoryEndExpected) {
            problems.append(.directoryGap(offset: directoryOffset, size: directorySize, end: directoryEnd.partialValue, recordsStart: directoryEndExpected))
        }
        let capacity = directorySize / UInt64(ZipFormat.centralHeaderSize)
        if counts, entryCount > capacity {
            throw ZipFailure.directoryCannotHold(declared: entryCount, size: directorySize, capacity: capacity)
        }
    }
}
