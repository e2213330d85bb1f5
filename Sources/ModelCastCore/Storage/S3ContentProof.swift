import Foundation

/// How an S3 target proves what a key holds: the store's own checksum (SHA-256 whole-object,
/// composite over parts compared with the local file, or CRC-64/NVME compared with the local
/// bytes'), else a download hashed here. `x-amz-meta-sha256` is never proof: anyone who can
/// write the key can set it.
struct S3ContentProver: Sendable {
    let objects: S3Objects

    var client: S3Client { objects.client }

    /// Proves the bytes under `key` by the store's own checksum where it gives a usable
    /// one (SHA-256; or CRC-64/NVME compared with the local bytes' — it proves them against
    /// accidents, not against a writer crafting a collision), else by downloading and
    /// hashing them (or, with `trustStored`, by size). `known`: the digests of the local
    /// bytes' parts where they are known (hashed with `sha256`), so a composite checksum of
    /// that part size is compared without reading `localFile`.
    func prove(_ key: String, size: Int64, sha256: SHA256Digest, localFile: String?, parts known: PartDigests?,
               trustStored: Bool) async throws -> ContentProof {
        try validateKey(key)
        let objectKey = objects.target.objectKey(key)
        let response = try await client.send("HEAD", key: objectKey, headers: objects.checksumModeHeaders, operation: "HEAD")
        if response.status == 404 { throw StorageError.missing(key) }
        guard response.status == 200 else { throw client.error(response, operation: "HEAD", key: objectKey) }
        func mismatch(_ actualSize: Int64, _ actualSHA256: SHA256Digest?, _ detail: String) -> StorageError {
            .contentMismatch(key: key, expectedSize: size, expectedSHA256: sha256.hex, actualSize: actualSize, actualSHA256: actualSHA256?.hex, detail: detail)
        }
        let storedSize = Int64(response.headers["content-length"] ?? "") ?? -1
        guard storedSize == size else { throw mismatch(storedSize, nil, "size the store reports") }

        /// The store's checksum disagrees without settling it: the bytes are downloaded whatever `trustStored` says.
        var checksumDiffers = false
        switch S3Storage.StoreChecksum(response.headers) {
        case .fullObject(let digest, let declared):
            if digest == sha256 { return .storeChecksum }
            // Declared a full-object checksum: other bytes. Otherwise it may be a composite
            // the store did not mark as one: only the bytes themselves can tell.
            if declared { throw mismatch(size, digest, "the store's SHA-256 checksum of the object") }
            checksumDiffers = true
        case .composite(let digest, let parts):
            if localFile != nil || known != nil,
               let matches = try await compositeMatches(objectKey, digest, parts: parts, localFile: localFile, known: known, size: size, sha256: sha256) {
                if matches { return .storeChecksum }
                // Other bytes, or the same bytes in parts of other sizes than part 1's:
                // only the bytes themselves can tell.
                checksumDiffers = true
            }
        case .crc64nvme(let stored):
            if let local = try localCRC(known: known, localFile: localFile, size: size, sha256: sha256) {
                if local == stored { return .storeChecksum }
                // Other bytes: downloaded, so the error can name them.
                checksumDiffers = true
            }
        case .none:
            break
        }
        if trustStored && !checksumDiffers { return .trustedSize }
        return try await downloadAndHash(key, objectKey: objectKey, size: size, sha256: sha256)
    }

    /// An existing object is `.unchanged` only when its bytes are proven to be these
    /// (the store's checksum, or downloaded and hashed; never the metadata it carries);
    /// other bytes are a conflict. nil: there is no object under `key`. `parts`: the local
    /// bytes' part digests, where known.
    func compare(_ key: String, metadata: ObjectMetadata, localFile: String?, parts: PartDigests? = nil) async throws -> PutOutcome? {
        do {
            _ = try await prove(key, size: metadata.size, sha256: metadata.sha256, localFile: localFile, parts: parts, trustStored: false)
            return .unchanged
        } catch StorageError.missing {
            return nil
        } catch StorageError.contentMismatch(_, _, _, let actualSize, let actualSHA256, _) {
            throw StorageError.conflict(key: key, existingSize: actualSize, newSize: metadata.size, existingSHA256: actualSHA256, newSHA256: metadata.sha256.hex)
        }
    }

    /// Compares a composite checksum with the one the local bytes give for the object's
    /// part size (part 1's length, from `HEAD ?partNumber=1`): from `known` when it has
    /// that part size (hashed in the read that gave `sha256`), else from `localFile`, which
    /// counts only if it holds exactly `size` bytes with SHA-256 `sha256` (checked in the
    /// same read). So a match proves the stored bytes are those. nil: the comparison
    /// cannot be made (no part information, another part count, a local file with other bytes).
    func compositeMatches(_ objectKey: String, _ composite: SHA256Digest, parts: Int?, localFile: String?, known: PartDigests?,
                          size: Int64, sha256: SHA256Digest) async throws -> Bool? {
        let response = try await client.send("HEAD", key: objectKey, query: [("partNumber", "1")], operation: "HEAD part 1")
        guard response.status == 200 || response.status == 206,
              let partSize = Int64(response.headers["content-length"] ?? ""), partSize > 0 else { return nil }
        let count = (size + partSize - 1) / partSize
        let storedCount = response.headers["x-amz-mp-parts-count"].flatMap(Int.init) ?? parts
        if let storedCount, Int64(storedCount) != count { return nil }
        if let known, known.fit(size: size, partSize: partSize, algorithm: .sha256) {
            return try known.composite() == composite
        }
        // A local file that cannot be read proves nothing either way: the caller downloads and hashes instead.
        guard let localFile, let local = try? StreamDigester.digestFile(at: localFile, parts: PartPlan(size: partSize, algorithm: .sha256)),
              local.size == size, local.sha256 == sha256, let localParts = local.parts,
              localParts.fit(size: size, partSize: partSize, algorithm: .sha256) else { return nil }
        return try localParts.composite() == composite
    }

    /// The CRC-64/NVME of the local bytes: combined from `known` CRC parts, else read
    /// from `localFile`, which counts only if it holds exactly `size` bytes with SHA-256
    /// `sha256` (checked in the same read). nil when neither gives it.
    func localCRC(known: PartDigests?, localFile: String?, size: Int64, sha256: SHA256Digest) throws -> CRC64NVME? {
        if let crc = known?.fullObjectCRC(size: size) { return crc }
        // A local file that cannot be read proves nothing either way: the caller downloads and hashes instead.
        guard let localFile,
              let local = try? StreamDigester.digestFile(at: localFile, parts: PartPlan(size: max(size, 1))),
              local.size == size, local.sha256 == sha256 else { return nil }
        return local.parts?.fullObjectCRC(size: size)
    }

    /// Downloads the object and hashes it as it streams in (flat memory).
    func downloadAndHash(_ key: String, objectKey: String, size: Int64, sha256: SHA256Digest) async throws -> ContentProof {
        final class Tally {
            var hasher: SHA256Hasher
            var count: Int64 = 0
            init() throws { hasher = try SHA256Hasher() }
        }
        var tally = try Tally()
        let response = try await client.download(
            key: objectKey, operation: "GET", expectedLength: size,
            restart: { tally = try Tally() },
            consume: { buffer in
                buffer.withUnsafeReadableBytes { tally.hasher.update($0) }
                tally.count += Int64(buffer.readableBytes)
            })
        if response.status == 404 { throw StorageError.missing(key) }
        guard response.status == 200 else { throw client.error(response, operation: "GET", key: objectKey) }
        let digest = tally.hasher.finalize()
        guard tally.count == size, digest == sha256 else {
            throw StorageError.contentMismatch(key: key, expectedSize: size, expectedSHA256: sha256.hex, actualSize: tally.count, actualSHA256: digest.hex,
                                               detail: "downloaded and hashed")
        }
        return .hashed
    }
}
