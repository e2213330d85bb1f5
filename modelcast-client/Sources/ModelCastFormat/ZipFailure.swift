import Foundation

/// Why `ZipScan` could not read an archive at all (a `ZipProblem` is something it read and
/// found unsafe): no end record, end records that point outside the file, a central
/// directory past a limit, bytes cut short. `reason` is the sentence both sides show
/// (verify as `ModelCastError.invalidModel`, a device as `ClientError.unsafeArchive`).
@_spi(ModelCastTooling) public enum ZipFailure: Error, Equatable, Sendable {
    case tooShort(size: Int64)
    /// No end of central directory record in the last `window` bytes.
    case noEndRecord(window: Int64)
    /// A record read that came back with fewer bytes than the archive's size promised.
    case cutShort(Record, offset: Int64, got: Int, wanted: Int)
    /// The zip64 locator points where its record cannot fit.
    case zip64LocatorOutside(recordOffset: UInt64, locatorOffset: Int64)
    case noZip64Record(offset: UInt64, signature: UInt32)
    /// The end record declares more entries than `limit`; `raisedBy` names what raises it.
    case tooManyDeclared(declared: UInt64, limit: Int, raisedBy: String?)
    /// The central directory holds more headers than `limit` (the end record understated them).
    case tooManyListed(limit: Int, declared: UInt64, raisedBy: String?)
    case directoryTooLarge(size: UInt64, limit: Int)
    case directoryPastEndRecords(offset: UInt64, size: UInt64, recordsStart: Int64)
    case directoryCannotHold(declared: UInt64, size: UInt64, capacity: UInt64)

    /// The records a read can be cut short in, by the words the reason names them with.
    public enum Record: String, Sendable {
        case endOfArchive = "end of archive"
        case zip64Locator = "zip64 end of central directory locator"
        case zip64EndRecord = "zip64 end of central directory record"
        case centralDirectory = "central directory"
    }

    /// What went wrong, naming the offsets and sizes involved.
    public var reason: String {
        switch self {
        case let .tooShort(size):
            "\(size) bytes is too short for a zip archive (the end of central directory record alone is \(ZipFormat.endRecordSize) bytes)"
        case let .noEndRecord(window):
            "no end of central directory record in the last \(window) bytes (not a zip archive, or truncated)"
        case let .cutShort(record, offset, got, wanted):
            "\(record.rawValue) at offset \(offset) is cut short: \(got) of \(wanted) bytes (the archive is truncated or changed while being read)"
        case let .zip64LocatorOutside(recordOffset, locatorOffset):
            "zip64 end of central directory locator points to offset \(recordOffset), which leaves no room for the \(ZipFormat.zip64EndRecordSize)-byte record before the locator at \(locatorOffset)"
        case let .noZip64Record(offset, signature):
            "no zip64 end of central directory record at offset \(offset) (signature \(ZipText.hex(signature)))"
        case let .tooManyDeclared(declared, limit, raisedBy):
            "end of central directory declares \(declared) entries, more than the limit of \(limit)" + (raisedBy.map { " (\($0) raises it)" } ?? "")
        case let .tooManyListed(limit, declared, raisedBy):
            "central directory holds more than the limit of \(limit) entries (the end of central directory declares \(declared))" + (raisedBy.map { "; \($0) raises the limit" } ?? "")
        case let .directoryTooLarge(size, limit):
            "central directory is \(size) bytes, more than the limit of \(limit) bytes"
        case let .directoryPastEndRecords(offset, size, recordsStart):
            "central directory (offset \(offset), size \(size)) runs past the end of central directory record at offset \(recordsStart)"
        case let .directoryCannotHold(declared, size, capacity):
            "end of central directory claims \(declared) entries, more than a \(size)-byte central directory can hold (at most \(capacity))"
        }
    }
}
