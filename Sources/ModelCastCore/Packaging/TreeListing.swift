import Foundation
import NIOConcurrencyHelpers

/// A directory model published as a tree (`--no-zip`): every regular file with its path
/// inside the model, size and SHA-256. The files are hashed where they are, several at a
/// time (one per core); for a target that stores copies, copied in the same read (`Copies`).
package struct TreeListing: Codable, Sendable, Equatable {
    /// One regular file of the tree.
    package struct File: Codable, Sendable, Equatable {
        /// The path inside the model directory: `/`-separated, NFC, no leading `./`
        /// (`Data/com.apple.CoreML/weights/weight.bin`).
        package let path: String
        package let size: Int64
        package let sha256: SHA256Digest
        /// Every file of a tree is served as `application/octet-stream`: its bytes are stored
        /// once under a content-addressed key, whatever path (and extension) names them.
        package let contentType: String
        /// Where the file is on disk. Not part of the JSON form.
        package var diskPath: String = ""
        /// The file as it was when it was hashed, so an upload from it in place can tell
        /// whether it changed since. Not part of the JSON form.
        package var source: FileSnapshot? = nil
        /// The SHA-256 of each part, when `make` was given a part size for a file of this
        /// size (an S3 multipart upload), hashed in the same read. Not part of the JSON form.
        package var parts: PartDigests? = nil
        /// A copy of the file's bytes exactly as hashed, when `make` was asked for one
        /// (`Copies`): a temporary file the caller stores or removes (`removeCopy`). Not part
        /// of the JSON form.
        package var copy: String? = nil

        enum CodingKeys: String, CodingKey {
            case path, size, sha256
            case contentType = "content_type"
        }

        package static func == (a: File, b: File) -> Bool {
            a.path == b.path && a.size == b.size && a.sha256 == b.sha256 && a.contentType == b.contentType
        }
    }

    /// Where the listing was written (`pack`), or the model directory (`publish`).
    package var path: String
    /// The directory's own name, NFC (`TinyClassifier.mlpackage`).
    package let name: String
    package let kind: ModelKind
    /// Always `tree`.
    package let format: ArtifactFormat
    /// Sum of the files' sizes.
    package let size: Int64
    /// Every regular file, sorted bytewise by path.
    package let files: [File]

    /// The Content-Type every tree file is stored and served with.
    package static let fileContentType = "application/octet-stream"

    /// How many files are hashed at once at most, whatever the core count: each worker
    /// holds a `pipelineBuffer` for small files, and a large file takes a reader and a
    /// hasher thread and `pipelineBuffer` × 4 bytes of buffers.
    static let maximumWorkers = 8
    /// Smaller than a single file's 4 MiB chunks, so eight at once stay within 32 MiB.
    static let pipelineBuffer = 1 << 20

    /// Where `make` copies the files it hashes, in the same read (a directory target's
    /// staging), so a file published from a copy is read once. `includes` picks the files
    /// by path and size: one the target most likely holds already is only hashed.
    package struct Copies: Sendable {
        /// Where the copies go (temporary files: the caller stores or removes each one).
        package let directory: String
        package let includes: @Sendable (_ path: String, _ size: Int64) -> Bool

        package init(directory: String, includes: @escaping @Sendable (_ path: String, _ size: Int64) -> Bool) {
            self.directory = directory
            self.includes = includes
        }
    }

    /// Hashes every regular file of a scanned directory model, up to one file per core at a
    /// time (at most `maximumWorkers`), largest first, so big files share the cores. A file
    /// whose size changed since the scan is refused, naming it. `parts` gives, for a
    /// file's size, the parts it will be uploaded in (nil: stored whole): those parts are
    /// checksummed in the same read (`File.parts`). With `copies`, the files it includes are
    /// copied as they are hashed (`File.copy`); if any file fails, no copy is left behind.
    package static func make(_ description: ModelDescription, progress: ProgressFactory? = nil,
                            parts: (@Sendable (Int64) -> PartPlan?)? = nil, copies: Copies? = nil) throws -> TreeListing {
        guard let tree = description.tree else {
            throw ModelCastError.usage("--no-zip lists the files of a directory model; \(description.path) is a file (it is published as it is)")
        }
        let top = tree.entries[0].archiveName
        let entries = tree.entries.filter { !$0.isDirectory }
        let reporter = progress?("hashing \(top.dropLast()) (\(counted(entries.count, "file")))", tree.totalSize)
        defer { reporter?.finish() }
        let paths = entries.map { String($0.archiveName.dropFirst(top.count)) }
        let order = entries.indices.sorted { entries[$0].size > entries[$1].size }
        let results = ResultBox<Hashed>(count: entries.count)
        let next = NIOLockedValueBox(0)
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, maximumWorkers, entries.count)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            // Each worker takes the next file until none is left, reading small ones
            // through its own buffer (no pipeline, threads or buffers made per file).
            let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: pipelineBuffer, alignment: 4096)
            defer { scratch.deallocate() }
            while true {
                let position = next.withLockedValue { value -> Int in
                    defer { value += 1 }
                    return value
                }
                guard position < order.count else { return }
                let index = order[position]
                let entry = entries[index]
                let copy = copies.flatMap { $0.includes(paths[index], entry.size) ? $0.directory + "/tree-\(index)" : nil }
                results.set(index, Result { try hashFile(entry, copyingTo: copy, progress: reporter, parts: parts?(entry.size), scratch: scratch) })
            }
        }
        let hashed = results.values
        var files: [File] = []
        do {
            for (index, entry) in entries.enumerated() {
                let result = try hashed[index]!.get()
                var file = File(path: paths[index], size: result.digest.size, sha256: result.digest.sha256,
                                contentType: fileContentType)
                file.diskPath = entry.diskPath
                file.source = result.digest.source
                file.parts = result.digest.parts
                file.copy = result.copy
                files.append(file)
            }
        } catch {
            for case .success(let result)? in hashed { result.copy.map(removeCopy) }
            throw error
        }
        return TreeListing(path: description.path, name: String(top.dropLast()), kind: description.kind, format: .tree,
                           size: files.reduce(0) { $0 + $1.size }, files: files)
    }

    /// What hashing one file gave, and where its copy is (if one was made).
    struct Hashed: Sendable {
        let digest: DigestResult
        let copy: String?
    }

    /// Hashes one file of the tree in one read, copying it to a new temporary file beside
    /// `copy` when given. A file whose size changed since the scan is refused.
    static func hashFile(_ entry: TreeEntry, copyingTo copy: String?, progress: (any ProgressReporter)?, parts: PartPlan?,
                         scratch: UnsafeMutableRawBufferPointer? = nil) throws -> Hashed {
        let file = try copy.map { try AtomicFile(destination: $0) }
        do {
            let digest = try StreamDigester.digestFile(at: entry.diskPath, copyingTo: file?.descriptor, progress: progress, parts: parts,
                                                       bufferSize: pipelineBuffer, scratch: scratch)
            guard digest.size == entry.size else {
                throw ModelCastError.changedWhilePacking(path: entry.diskPath, expected: entry.size, actual: digest.size)
            }
            return Hashed(digest: digest, copy: try file?.keepTemporary())
        } catch {
            file?.discard()
            throw error
        }
    }

    /// Removes a copy `make` made (one the caller does not store).
    package static func removeCopy(_ path: String) {
        unlink(path)
        Interrupts.shared.unregisterTemporary(path)
    }

    /// The listing as `pack --no-zip` writes it: `NAME.files.json`.
    package var listingFileName: String { name + ".files.json" }
}
