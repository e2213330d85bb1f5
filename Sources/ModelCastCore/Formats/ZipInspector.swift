import Foundation
@_spi(ModelCastTooling) import ModelCastFormat

/// Verify's reading of a zip: the device's own reader and rules (`ZipScan`, shared with
/// the client through ModelCastFormat), fed by ranged reads of `source`, plus the limits
/// only verify applies on the server: an entry cap `verify --max-zip-entries` raises, and
/// a compression ratio that looks like a zip bomb.
///
/// Only the end records, the central directory and the fixed part plus name of each
/// local header are read, so the cost follows the central directory, not the archive
/// (which matters when `source` is a remote file read by ranges).
package enum ZipInspector {
    /// Total uncompressed size above this many times the archive size is reported as a zip bomb.
    static let maxCompressionRatio: Int64 = 1000
    /// The most entries an archive may have unless the caller says otherwise
    /// (`verify --max-zip-entries`): the device's own limit.
    package static let defaultMaxEntries = ZipScan.Limits().maxEntries

    /// Scans `source` (`ZipScan`): the end records, the central directory, every entry's
    /// local header and data descriptor, checked against each other and the device's rules;
    /// then the compression ratio.
    ///
    /// Throws `ModelCastError.invalidModel` (format "zip", naming `source`) when the
    /// archive cannot be parsed at all: no end record, end records that point
    /// outside the file, a central directory larger than `maxCentralDirectory`
    /// bytes or claiming more entries than it could hold, or more than `maxEntries`
    /// entries (refused from the end record's count before the central directory
    /// is read, and again while walking it if that count understates). Everything
    /// else is reported in the result's `problems`.
    package static func inspect(_ source: some RandomAccessBytes, maxCentralDirectory: Int = 64 << 20, maxEntries: Int = defaultMaxEntries) async throws -> ZipInspection {
        let limits = ZipScan.Limits(maxCentralDirectory: maxCentralDirectory, maxEntries: maxEntries, raisedBy: "verify --max-zip-entries")
        do {
            var scan = try ZipScan(size: source.size, limits: limits)
            while true {
                switch scan.step {
                case .read(let next): try scan.supply(try await source.read(offset: next.offset, count: next.count))
                case .finished(var inspection):
                    if let bomb = compressionRatioProblem(total: inspection.totalUncompressedSize, archiveSize: source.size) { inspection.problems.append(bomb) }
                    return inspection
                }
            }
        } catch let failure as ZipFailure {
            throw ModelCastError.invalidModel(path: source.name, format: "zip", reason: failure.reason)
        }
    }

    /// A possible zip bomb: the entries unpack (`total` bytes) to more than `maxCompressionRatio` times the archive's size.
    static func compressionRatioProblem(total: Int64, archiveSize: Int64) -> ZipProblem? {
        let limit = archiveSize.multipliedReportingOverflow(by: maxCompressionRatio)
        guard !limit.overflow, total > limit.partialValue else { return nil }
        return .compressionRatio(total: total, ratio: maxCompressionRatio, archiveSize: archiveSize)
    }
}
