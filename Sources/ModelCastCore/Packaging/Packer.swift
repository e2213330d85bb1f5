import Foundation
import ModelCastFormat

/// Options for `Packer.pack`.
package struct PackOptions: Sendable {
    /// Where to write: an existing directory (or a path ending in `/`) receives the
    /// artifact under its own name; anything else is the artifact's file path.
    /// nil means the current directory.
    package var output: String?
    /// Force (`true`) or forbid (`false`) a zip; nil zips directories and keeps files as they are.
    package var zip: Bool?
    /// Zip entry compression.
    package var compression: ZipCompression
    /// Reports progress; nil reports nothing.
    package var progress: ProgressFactory?
    /// fsync the artifact before renaming it into place.
    package var durable: Bool

    package init(output: String? = nil, zip: Bool? = nil, compression: ZipCompression = .store, progress: ProgressFactory? = nil, durable: Bool = false) {
        self.output = output
        self.durable = durable
        self.zip = zip
        self.compression = compression
        self.progress = progress
    }
}

/// A packed artifact: what gets uploaded and named in a manifest.
package struct PackResult: Codable, Sendable, Equatable {
    /// Path of the artifact on disk.
    package let path: String
    /// The artifact's file name (`Model.mlpackage.zip`, `model.gguf`).
    package let name: String
    /// Artifact size in bytes.
    package let size: Int64
    /// SHA-256 of the artifact bytes.
    package let sha256: SHA256Digest
    /// Detected model format.
    package let kind: ModelKind
    /// Number of model files inside the artifact.
    package let files: Int
    /// `file` (published as-is) or `zip`.
    package let format: ArtifactFormat
    /// Zip entry compression (zip artifacts only).
    package let compression: ZipCompression?
    /// The Content-Type the artifact is served with.
    package let contentType: String
    /// For `digest` of a plain file (the artifact is the model file itself): that
    /// file as it was when it was hashed, so an upload from it in place can tell
    /// whether it changed since. Not part of the JSON form.
    package var source: FileSnapshot? = nil
    /// The SHA-256 of each part, when `stage` or `digest` was given a part size (for an
    /// S3 multipart upload), computed in the same read as `sha256`. Not part of the JSON form.
    package var parts: PartDigests? = nil
    /// The artifact's segments (`modelcast-segments-1`), when `stage` or `digest` was asked
    /// for them, cut and hashed in the same read as `sha256`. Not part of the JSON form.
    package var segments: [SegmentIndex.Segment]? = nil
    /// For a zip, when `stage` or `digest` was asked for them (model signing): each file's
    /// SHA-256 by its archive name, made in the read that zipped it. Not part of the JSON form.
    package var entryDigests: [String: SHA256Digest]? = nil

    enum CodingKeys: String, CodingKey {
        case path, name, size, sha256, kind, files, format, compression
        case contentType = "content_type"
    }
}


/// Turns a model on disk into a publishable artifact, computing its size and
/// SHA-256 while the bytes are written, so every input byte is read once.
package struct Packer: Sendable {
    package init() {}

    /// Packs `model` according to `options` and returns the artifact.
    package func pack(_ model: String, options: PackOptions) throws -> PackResult {
        let description = try ModelInspector.describe(model)
        let asZip = try decideZip(description, options.zip)
        let name = artifactName(for: description, zip: asZip)
        let destination = try resolveOutput(options.output, artifactName: name, model: description)
        let progress = options.progress?("packing \(name)", description.totalSize)
        defer { progress?.finish() }

        // Packing a file onto itself: nothing to copy, only to hash.
        // try?: a destination that cannot be looked at is not the source: it is packed as usual (and that reports it).
        if !asZip, let existing = try? linkStatus(destination), let source = statFollowing(model),
           existing.st_dev == source.st_dev, existing.st_ino == source.st_ino {
            let digest = try StreamDigester.digest(ofFileAt: model, progress: progress)
            return result(description, path: destination, name: name, digest: digest, zip: false, compression: options.compression)
        }

        let file = try AtomicFile(destination: destination)
        let digest: DigestResult
        do {
            digest = try produce(description, zip: asZip, compression: options.compression, into: file, progress: progress)
            try file.commit(durable: options.durable)
        } catch {
            file.discard()
            throw error
        }
        return result(description, path: destination, name: name, digest: digest, zip: asZip, compression: options.compression)
    }

    /// Packs a described model into a temporary file in `directory` (for publishing:
    /// the caller stores the file under its key, then it is gone). The result's
    /// `path` is the temporary file. With `parts`, each part of the artifact is
    /// checksummed too (`PackResult.parts`), in the same pass.
    package func stage(_ description: ModelDescription, in directory: String, zip: Bool? = nil, compression: ZipCompression = .store,
                      progress: ProgressFactory? = nil, parts: PartPlan? = nil, segments: Bool = false,
                      entryDigests: Bool = false) throws -> PackResult {
        let asZip = try decideZip(description, zip)
        let name = artifactName(for: description, zip: asZip)
        let progress = progress?("packing \(name)", description.totalSize)
        defer { progress?.finish() }
        let file = try AtomicFile(destination: directory + "/" + name)
        do {
            let digest = try produce(description, zip: asZip, compression: compression, into: file, progress: progress, parts: parts,
                                     segments: segments, entryDigests: entryDigests)
            let path = try file.keepTemporary()
            return result(description, path: path, name: name, digest: digest, zip: asZip, compression: compression)
        } catch {
            file.discard()
            throw error
        }
    }

    /// The artifact `pack` would write, hashed without writing anything. With `parts`,
    /// each part of the artifact is checksummed too (`PackResult.parts`), in the same read; with
    /// `entryDigests`, each file a zip holds (`PackResult.entryDigests`).
    package func digest(_ description: ModelDescription, zip: Bool? = nil, compression: ZipCompression = .store, progress: ProgressFactory? = nil,
                       parts: PartPlan? = nil, segments: Bool = false,
                       entryDigests: Bool = false) throws -> PackResult {
        let asZip = try decideZip(description, zip)
        let name = artifactName(for: description, zip: asZip)
        let progress = progress?("hashing \(name)", description.totalSize)
        defer { progress?.finish() }
        let digest = try produce(description, zip: asZip, compression: compression, into: nil, progress: progress, parts: parts, segments: segments,
                                 entryDigests: entryDigests)
        return result(description, path: description.path, name: name, digest: digest, zip: asZip, compression: compression,
                      source: asZip ? nil : digest.source)
    }

    /// `pack --no-zip DIR`: hashes every file of the directory model where it is (no copy)
    /// and writes the listing, `NAME.files.json`, where `options.output` says.
    package func listTree(_ model: String, options: PackOptions) throws -> TreeListing {
        let description = try ModelInspector.describe(model)
        var listing = try TreeListing.make(description, progress: options.progress)
        let destination = try resolveOutput(options.output, artifactName: listing.listingFileName, model: description)
        listing.path = destination
        let file = try AtomicFile(destination: destination)
        do {
            try Data(JSONOutput.encode(listing).utf8).withUnsafeBytes { try file.descriptor.writeAll($0) }
            try file.commit(durable: options.durable)
        } catch {
            file.discard()
            throw error
        }
        return listing
    }

    private func result(_ d: ModelDescription, path: String, name: String, digest: DigestResult, zip: Bool, compression: ZipCompression,
                        source: FileSnapshot? = nil) -> PackResult {
        PackResult(
            path: path, name: name, size: digest.size, sha256: digest.sha256, kind: d.kind,
            files: d.fileCount, format: zip ? .zip : .file, compression: zip ? compression : nil,
            contentType: ContentType.forArtifact(named: name), source: source, parts: digest.parts, segments: digest.segments,
            entryDigests: digest.entryDigests)
    }

    private func decideZip(_ d: ModelDescription, _ requested: Bool?) throws -> Bool {
        if d.isDirectory {
            if requested == false {
                throw ModelCastError.usage("a directory model is one artifact only as a zip: \(d.path); --no-zip lists its files instead (Packer.listTree, `pack --no-zip`)")
            }
            return true
        }
        return requested ?? false
    }

    /// `Model.mlpackage` → `Model.mlpackage.zip`; a file keeps its name unless zipped.
    package func artifactName(for d: ModelDescription, zip: Bool) -> String {
        let trimmed = d.path.count > 1 && d.path.hasSuffix("/") ? String(d.path.dropLast()) : d.path
        let base = PathText.lastComponent(trimmed).precomposedStringWithCanonicalMapping
        return zip ? base + ".zip" : base
    }

    private func resolveOutput(_ output: String?, artifactName: String, model: ModelDescription) throws -> String {
        var destination: String
        // `--out dist/` names a directory: made when missing (after the checks below).
        var directoryToMake: String?
        if let output, !output.isEmpty {
            var isDirectory: ObjCBool = false
            if output.hasSuffix("/") || (FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory) && isDirectory.boolValue) {
                var isDir: ObjCBool = false
                if !FileManager.default.fileExists(atPath: output, isDirectory: &isDir) {
                    directoryToMake = output
                } else if !isDir.boolValue {
                    throw ModelCastError.usage("--out \(output) ends in '/' but is a file, not a directory")
                }
                destination = (output.hasSuffix("/") ? output : output + "/") + artifactName
            } else {
                let parent = PathText.parent(output)
                var isDir: ObjCBool = false
                if !parent.isEmpty, !(FileManager.default.fileExists(atPath: parent, isDirectory: &isDir) && isDir.boolValue) {
                    throw ModelCastError.usage("output directory does not exist: \(parent)")
                }
                destination = output
            }
        } else {
            destination = artifactName
        }
        if model.isDirectory {
            let parent = PathText.parent(destination)
            let resolvedParent = realPath(parent.isEmpty ? "." : parent)
            let resolvedModel = realPath(model.path)
            if let resolvedParent, let resolvedModel,
               resolvedParent == resolvedModel || resolvedParent.hasPrefix(resolvedModel + "/") {
                throw ModelCastError.usage("output \(destination) is inside the model directory \(model.path)")
            }
        }
        if let directoryToMake { try makeDirectories(directoryToMake) }
        if destination.hasPrefix("./") { destination.removeFirst(2) }
        return destination
    }

    /// Streams the artifact bytes (the file itself, or the zip) through the hasher (and
    /// the part hasher, with `parts`; the segment hasher, with `segments`), and into
    /// `output` when given. A file is cut by its structure (`SegmentPlan`) in the same read.
    /// A stored zip is laid out before it is written (`ZipLayoutImage`) and cut in the same
    /// read too. A deflated zip's layout is known only once it is written (its entries'
    /// sizes): with `segments` it is cut in a second read of the written zip, which a dry
    /// run (no `output`) writes to a temporary file. With `entryDigests`, a zip's files are
    /// hashed one by one as they are read into it (what model signing states).
    func produce(_ d: ModelDescription, zip: Bool, compression: ZipCompression, into output: AtomicFile?, progress: ProgressReporter?,
                 parts: PartPlan? = nil, segments: Bool = false,
                 entryDigests: Bool = false) throws -> DigestResult {
        if !zip {
            let regions = segments ? SegmentPlan.regions(path: d.path, size: statFollowing(d.path).map { Int64($0.st_size) } ?? d.totalSize) : nil
            return try StreamDigester.digestFile(at: d.path, copyingTo: output?.descriptor, progress: progress, parts: parts, regions: regions)
        }
        let entries = zipEntries(d)
        if !segments || compression == .store {
            let layout = segments ? try ZipLayoutImage(entries: entries, displayPath: d.path) : nil
            return try writeZip(d, entries: entries, compression: compression, into: output?.descriptor, progress: progress, parts: parts,
                                layout: layout, entryDigests: entryDigests)
        }
        let temporary = output == nil ? try AtomicFile(destination: (NSTemporaryDirectory() as NSString).appendingPathComponent(artifactName(for: d, zip: true))) : nil
        defer { temporary?.discard() }
        let file = output ?? temporary!
        var digest = try writeZip(d, entries: entries, compression: compression, into: file.descriptor, progress: progress, parts: parts,
                                  entryDigests: entryDigests)
        digest.segments = try cutWrittenZip(at: file.temporaryPath, digest: digest)
        return digest
    }

    /// The segments of the zip just written at `path` (`digest` its size and SHA-256), cut as
    /// `SegmentPlan` cuts it, in a second read that must see the same bytes.
    private func cutWrittenZip(at path: String, digest: DigestResult) throws -> [SegmentIndex.Segment]? {
        let cut = try StreamDigester.digestFile(at: path, regions: SegmentPlan.regions(path: path, size: digest.size))
        guard cut.size == digest.size, cut.sha256 == digest.sha256 else {
            throw ModelCastError.io(operation: "cut segments", path: path, reason: "the zip changed after it was written (\(digest.size) bytes written, \(cut.size) read back, or other bytes)")
        }
        return cut.segments
    }

    /// What the zip of `d` holds, in order: a directory's tree, or the one file.
    private func zipEntries(_ d: ModelDescription) -> [TreeEntry] {
        if let tree = d.tree { return tree.entries }
        let size = statFollowing(d.path).map { Int64($0.st_size) } ?? d.totalSize
        return [TreeEntry(archiveName: artifactName(for: d, zip: false), diskPath: d.path, isDirectory: false, size: size, isExecutable: false)]
    }

    /// Writes the zip of `entries` through the hasher (and the part hasher, with `parts`;
    /// with `layout`, the segment hasher cutting by its regions, each file checked to hold
    /// the bytes the layout's plan read) into `output` when given. With `entryDigests`,
    /// each file is hashed as it is read (on this thread: its bytes, not the zip's).
    private func writeZip(_ d: ModelDescription, entries: [TreeEntry], compression: ZipCompression, into output: FileDescriptor?,
                          progress: ProgressReporter?, parts: PartPlan?, layout: ZipLayoutImage? = nil,
                          entryDigests: Bool = false) throws -> DigestResult {
        let writer = try DigestingWriter(destination: output, progress: progress, parts: parts, regions: layout?.regions())
        let pipeline = writer.makePipeline()
        defer { pipeline.close() }
        let zipWriter = try ZipWriter(compression: compression, displayPath: d.path, sink: pipeline.append)
        let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { readBuffer.deallocate() }

        var digests: [String: SHA256Digest] = [:]
        for (index, entry) in entries.enumerated() {
            if entry.isDirectory {
                try zipWriter.addDirectory(name: entry.archiveName)
                continue
            }
            let input = try FileDescriptor.openForReading(entry.diskPath)
            Platform.adviseSequential(input.fd)
            let hasher = entryDigests ? try SHA256Hasher() : nil
            var position: Int64 = 0
            let written = try zipWriter.addFile(
                name: entry.archiveName, size: entry.size, executable: entry.isExecutable,
                read: { buffer in
                    let count = try input.read(into: buffer)
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                    try layout?.check(entry: index, at: position, bytes)
                    hasher?.update(bytes)
                    position += Int64(count)
                    return count
                }, buffer: readBuffer)
            guard written == entry.size else {
                throw ModelCastError.changedWhilePacking(path: entry.diskPath, expected: entry.size, actual: written)
            }
            if let hasher { digests[entry.archiveName] = hasher.finalize() }
        }
        try zipWriter.finish()
        try pipeline.finish()
        var result = try writer.result()
        if entryDigests { result.entryDigests = digests }
        return result
    }
}

/// `stat` following links; nil when the path does not exist.
func statFollowing(_ path: String) -> stat? {
    var info = stat()
    return stat(path, &info) == 0 ? info : nil
}


