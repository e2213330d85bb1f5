import Foundation
@_spi(ModelCastTooling) import ModelCastFormat

/// A zip the device may unpack into a model's folder: it breaks none of the device's rules
/// (`ZipScan`, the reader and rules verify applies too: names that leave the destination
/// or collide, links, bytes the entry list does not show, a second name in an extra field,
/// records that disagree…), every entry lies under the model's folder, and each entry's
/// place is a `RelativePath`. Nothing is written before this is known.
struct CheckedZip {
    /// What the scan found: the entries, in central directory order, and where the stored ones' data lies.
    let inspection: ZipInspection
    /// Where each entry unpacks, in the same order.
    let destinations: [URL]

    /// Checks the zip at `zip`, to be unpacked into `destination` as `expectedRoot/…`.
    /// Throws `ClientError.unsafeArchive` naming `model`, `file` and the first thing wrong.
    init(_ zip: URL, into destination: URL, expectedRoot: PathSegment, maxEntries: Int, model: String, file: String) throws {
        func refuse(_ reason: String) -> ClientError { .unsafeArchive(model: model, file: file, reason: reason) }
        let inspection = try Self.scan(zip, maxEntries: maxEntries, refuse: refuse)
        let root = expectedRoot.rawValue
        for entry in inspection.entries where !(entry.name == root + "/" || entry.name.hasPrefix(root + "/")) {
            throw refuse("entry \(quotedValue(entry.name)) is outside \(root)/")
        }
        if let problem = inspection.problems.first { throw refuse(Self.reason(for: problem)) }
        destinations = try inspection.entries.map { entry in
            let path = entry.name.hasSuffix("/") ? String(entry.name.dropLast()) : entry.name
            do { return try RelativePath(path).appended(to: destination) } catch let error as ManifestValueError {
                throw refuse("entry \(quotedValue(entry.name)) could leave the model's directory: it \(error.rule)")
            }
        }
        self.inspection = inspection
    }

    /// The scan of the file at `zip`, read in place.
    private static func scan(_ zip: URL, maxEntries: Int, refuse: (String) -> ClientError) throws -> ZipInspection {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: zip) } catch {
            throw refuse("not a readable zip (\(readableReason(error)))")
        }
        defer { try? handle.close() }
        do {
            let size = Int64(try handle.seekToEnd())
            return try ZipScan.inspect(size: size, limits: ZipScan.Limits(maxEntries: maxEntries)) { offset, count in
                try handle.seek(toOffset: UInt64(offset))
                return [UInt8](try handle.read(upToCount: count) ?? Data())
            }
        } catch let failure as ZipFailure {
            throw refuse(failure.reason)
        } catch {
            throw refuse("not a readable zip (\(readableReason(error)))")
        }
    }

    /// The reason `ClientError.unsafeArchive` gives for `problem`: its message, except where
    /// the client named a refusal in its own words before the rules were shared (a link, a
    /// name twice, a name leaving the model's folder, bytes no listed entry accounts for).
    static func reason(for problem: ZipProblem) -> String {
        let hidden = "that no listed entry accounts for (a local entry the central directory does not list, or a gap)"
        switch problem {
        case let .symbolicLink(entry, _, _):
            return "entry \(quotedValue(entry)) is a symbolic link"
        case let .duplicateName(entry, _, _):
            return "entry \(quotedValue(entry)) appears twice"
        case let .absolutePath(entry, _), let .backslashInName(entry, _), let .pathEscapes(entry, _), let .controlCharacter(entry, _, _):
            // The same words as a name no `RelativePath` can hold (an empty segment).
            let path = entry.hasSuffix("/") ? String(entry.dropLast()) : entry
            do {
                _ = try RelativePath(path)
                return problem.message
            } catch let error as ManifestValueError {
                return "entry \(quotedValue(entry)) could leave the model's directory: it \(error.rule)"
            } catch {
                return problem.message
            }
        case let .unsafeName(entry, _, rule):
            return "entry \(quotedValue(entry)) could leave the model's directory: it \(rule)"
        case let .bytesBeforeFirstHeader(offset, _):
            return "\(offset) bytes at offset 0 \(hidden)"
        case let .unaccountedBytes(_, _, dataEnd, next, _):
            return "\(next &- dataEnd) bytes at offset \(dataEnd) \(hidden)"
        default:
            return problem.message
        }
    }
}
