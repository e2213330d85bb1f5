import Foundation
import NIOConcurrencyHelpers

/// The requests on single keys of an S3 target that its reads, proofs and uploads all
/// send: what a key holds (HEAD), the headers every object is written with, and the
/// removal of an object, conditional on the ETag this store created it with (`created`),
/// with the note for the user when what this run made cannot be removed.
struct S3Objects: Sendable {
    let client: S3Client
    let target: S3Location
    let policy: S3UploadPolicy
    /// The ETag of every object this store created (a conditional write that succeeded),
    /// so that `delete` removes it only while it still holds what was stored.
    let created: ETagTable
    /// Notes for the user (a resumed upload, what a failed upload left in the store).
    let log: @Sendable (String) -> Void

    /// `s3://bucket/prefix/key`, as messages name an object.
    func shown(_ key: String) -> String { "\(target.description)/\(key)" }

    /// `x-amz-checksum-mode: ENABLED` (the stored checksum in the answer), unless checksums are off.
    var checksumModeHeaders: [(String, String)] {
        policy.checksum.sendsChecksums ? [("x-amz-checksum-mode", "ENABLED")] : []
    }

    /// Cache-Control, Content-Type and the SHA-256 as user metadata (`x-amz-meta-sha256`, for
    /// other tools and reports; never proof of the bytes).
    func objectHeaders(_ metadata: ObjectMetadata) -> [(String, String)] {
        [("Cache-Control", metadata.cacheControl), ("Content-Type", metadata.contentType), ("x-amz-meta-sha256", metadata.sha256.hex)]
    }

    /// The SHA-256 checksum of a single PUT's body (none with `--checksum none`). S3
    /// checks it against the bytes and keeps it (returned by a HEAD with checksum mode);
    /// `x-amz-sdk-checksum-algorithm` names it, which some S3-compatible stores (moto)
    /// need to keep it.
    func checksumHeaders(_ metadata: ObjectMetadata) -> [(String, String)] {
        guard policy.checksum.sendsChecksums else { return [] }
        return [("x-amz-sdk-checksum-algorithm", "SHA256"), ("x-amz-checksum-sha256", metadata.sha256.base64)]
    }

    /// Metadata of `key`, or nil when it does not exist.
    func head(_ key: String) async throws -> ObjectInfo? {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        let response = try await client.send("HEAD", key: objectKey, headers: checksumModeHeaders, operation: "HEAD")
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw client.error(response, operation: "HEAD", key: objectKey) }
        let size = Int64(response.headers["content-length"] ?? "") ?? 0
        // Only a SHA-256 the store computed over the whole object is reported: the
        // x-amz-meta-sha256 metadata is what a writer claims, and a composite checksum
        // is not the object's SHA-256 (proveContent handles both).
        var digest: SHA256Digest?
        if case .fullObject(let sha, _) = S3Storage.StoreChecksum(response.headers) { digest = sha }
        return ObjectInfo(size: size, sha256: digest, contentType: response.headers["content-type"],
                          cacheControl: response.headers["cache-control"], etag: response.headers["etag"],
                          contentEncoding: response.headers["content-encoding"])
    }

    /// Deletes `key`. A key this store created is deleted only while it still holds the
    /// object stored (`If-Match` on its ETag): once another writer has replaced it, it is
    /// theirs and stays (a run deletes only what it created).
    func delete(_ key: String) async throws {
        try validateKey(key)
        let objectKey = target.objectKey(key)
        var headers: [(String, String)] = []
        let etag = created.get(key)
        if let etag { headers.append(("If-Match", etag)) }
        var response = try await client.send("DELETE", key: objectKey, headers: headers, operation: "DELETE")
        if let etag, response.status == 501 || (response.status == 400 && S3Client.errorCode(response.body) == "NotImplemented") {
            // A store without conditional deletes: compare the ETag first (not atomic, but
            // a replacement made before this point is still left alone).
            let current = try await head(key)?.etag
            guard current.map(Self.unquoted) == Self.unquoted(etag) else { return }
            response = try await client.send("DELETE", key: objectKey, operation: "DELETE")
        }
        if response.status == 412 { return }  // replaced by another writer: not ours to delete
        guard response.status == 204 || response.status == 200 || response.status == 404 else {
            throw client.error(response, operation: "DELETE", key: objectKey)
        }
        if etag != nil { created.set(key, nil) }
    }

    /// Removes an object this run stored but could not prove, while the failure that
    /// matters more is being reported (so this one is not thrown). When the removal fails,
    /// the object stays under its key and nothing else would say so: the user is told.
    func removeUnproven(_ key: String) async {
        do {
            try await delete(key)
        } catch {
            log("could not remove \(shown(key)), which this run stored but could not prove: \(error); it stays in the store until it is deleted (a publish of other bytes under that key is refused until then)")
        }
    }

    static func unquoted(_ etag: String) -> String {
        etag.replacingOccurrences(of: "\"", with: "")
    }
}

/// ETags by key, shared between tasks.
final class ETagTable: Sendable {
    private let etags = NIOLockedValueBox<[String: String]>([:])

    func get(_ key: String) -> String? {
        etags.withLockedValue { $0[key] }
    }

    /// Records `etag` for `key` (nil, or an empty ETag: forgets it).
    func set(_ key: String, _ etag: String?) {
        etags.withLockedValue { $0[key] = etag?.isEmpty == false ? etag : nil }
    }
}
