import Foundation
import XCTest
import ModelCastCore
import ModelCastTestSupport

/// `proveContent` and `putIfAbsent` against a real S3 API server (moto on loopback):
/// an object's bytes are proven by a checksum the store computed or by downloading
/// and hashing them, never by the `x-amz-meta-sha256` anyone can set.
final class S3ContentProofTests: XCTestCase {
    func makeStorage(_ moto: MotoS3, prefix: String, endpoint: String? = nil, policy: S3UploadPolicy = S3UploadPolicy()) throws -> S3Storage {
        try S3Storage(
            target: S3Location("s3://\(moto.bucket)/\(prefix)"),
            endpoint: S3Endpoint(endpoint: endpoint ?? moto.endpoint, region: "us-east-1", pathStyle: true),
            credentials: AWSCredentials(accessKeyID: moto.accessKeyID, secretAccessKey: moto.secretAccessKey), policy: policy)
    }

    /// Runs `body`, then shuts the storage's HTTP client down whatever happened.
    func using(_ storage: S3Storage, _ body: () async throws -> Void) async throws {
        var failure: Error?
        do { try await body() } catch { failure = error }
        await storage.shutdown()
        if let failure { throw failure }
    }

    /// The user's own file, as a publish stages it for an in-place upload.
    func staged(_ path: String) throws -> StagedObject {
        let digest = try StreamDigester.digest(ofFileAt: path)
        let metadata = ObjectMetadata(cacheControl: CachePolicy.immutable, contentType: "application/octet-stream", size: digest.size, sha256: digest.sha256)
        return StagedObject(path: path, metadata: metadata, isTemporary: false)
    }

    /// Overwrites `key` with the aws cli, claiming `claimedSHA256` in `x-amz-meta-sha256`
    /// and the headers modelcast sets, as a careless (or hostile) tool would.
    func overwrite(_ moto: MotoS3, key: String, with file: String, claimedSHA256: String) throws {
        try moto.awsCLI(["s3api", "put-object", "--bucket", moto.bucket, "--key", key, "--body", file,
                         "--metadata", "sha256=\(claimedSHA256)", "--cache-control", CachePolicy.immutable,
                         "--content-type", "application/octet-stream"])
    }

    func assertMismatch(
        _ body: () async throws -> ContentProof, key: String, actualSHA256: String, file: StaticString = #filePath, line: UInt = #line
    ) async {
        do {
            let proof = try await body()
            XCTFail("other bytes must not be proven, got \(proof)", file: file, line: line)
        } catch let error as StorageError {
            guard case .contentMismatch(let k, _, _, _, let actual, _) = error else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(k, key, file: file, line: line)
            XCTAssertEqual(actual, actualSHA256, error.description, file: file, line: line)
            XCTAssertTrue(error.description.contains(key) && error.description.contains(actualSHA256), error.description, file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    /// A single PUT stores a SHA-256 checksum the store keeps (`.storeChecksum`). An
    /// object overwritten by another tool with same-size bytes and a forged
    /// `x-amz-meta-sha256` equal to the original's is downloaded, hashed and refused:
    /// by proveContent, and by putIfAbsent, which must not call it `unchanged`.
    /// With `trustStored`, an object without a store checksum is `.trustedSize`, and
    /// only if its size matches.
    func testForgedMetadataIsNotProof() async throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let storage = try makeStorage(moto, prefix: "proof")
        try await using(storage) {
            let original = try work.write("original.bin", patternBytes(200_000, seed: 1))
            let other = try work.write("other.bin", patternBytes(200_000, seed: 2))
            let originalSHA = try SHA256Hasher.digest(patternBytes(200_000, seed: 1))
            let otherSHA = try SHA256Hasher.digest(patternBytes(200_000, seed: 2))

            let created = try await storage.putIfAbsent("a.bin", staged: try staged(original))
            XCTAssertEqual(created, .created)
            let getsBefore = storage.requestCounts?["GET"] ?? 0
            let proof = try await storage.proveContent("a.bin", size: 200_000, sha256: originalSHA, localFile: nil, trustStored: false)
            XCTAssertEqual(proof, .storeChecksum, "a single PUT must leave a SHA-256 checksum the store returns")
            XCTAssertEqual(storage.requestCounts?["GET"] ?? 0, getsBefore, "a store checksum needs no download")
            await assertMismatch({ try await storage.proveContent("a.bin", size: 200_000, sha256: otherSHA, localFile: nil, trustStored: true) },
                                 key: "a.bin", actualSHA256: originalSHA.hex)

            // Same size, other bytes, the original's SHA-256 forged into the metadata.
            try overwrite(moto, key: "proof/a.bin", with: other, claimedSHA256: originalSHA.hex)
            // HEAD never reports the claimed metadata as the object's SHA-256.
            let info = try await storage.head("a.bin")
            XCTAssertNotEqual(info?.sha256, originalSHA, "head took x-amz-meta-sha256 for the object's SHA-256")
            let getsBeforeForged = storage.requestCounts?["GET"] ?? 0
            await assertMismatch({ try await storage.proveContent("a.bin", size: 200_000, sha256: originalSHA, localFile: original, trustStored: false) },
                                 key: "a.bin", actualSHA256: otherSHA.hex)
            XCTAssertEqual(storage.requestCounts?["GET"] ?? 0, getsBeforeForged + 1, "with no store checksum the object is downloaded and hashed")
            do {
                let outcome = try await storage.putIfAbsent("a.bin", staged: try staged(original))
                XCTFail("other bytes under the key must not be \(outcome)")
            } catch let error as StorageError {
                guard case .conflict(let key, _, _, let existing, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(key, "a.bin")
                XCTAssertEqual(existing, otherSHA.hex)
            }
            XCTAssertEqual(try moto.download("proof/a.bin"), Data(patternBytes(200_000, seed: 2)), "nothing was overwritten")
            // The bytes that are there are proven by hashing them.
            let hashed = try await storage.proveContent("a.bin", size: 200_000, sha256: otherSHA, localFile: nil, trustStored: false)
            XCTAssertEqual(hashed, .hashed)

            // trustStored: no store checksum, so the size is all that is checked.
            try moto.awsCLI(["s3api", "put-object", "--bucket", moto.bucket, "--key", "proof/b.bin", "--body", original])
            let gets = storage.requestCounts?["GET"] ?? 0
            let trusted = try await storage.proveContent("b.bin", size: 200_000, sha256: originalSHA, localFile: nil, trustStored: true)
            XCTAssertEqual(trusted, .trustedSize)
            XCTAssertEqual(storage.requestCounts?["GET"] ?? 0, gets, "trustStored downloads nothing")
            do {
                _ = try await storage.proveContent("b.bin", size: 199_999, sha256: originalSHA, localFile: nil, trustStored: true)
                XCTFail("trustStored still checks the size")
            } catch let error as StorageError {
                guard case .contentMismatch("b.bin", 199_999, _, 200_000, nil, _) = error else { return XCTFail("\(error)") }
            }
            let proven = try await storage.proveContent("b.bin", size: 200_000, sha256: originalSHA, localFile: nil, trustStored: false)
            XCTAssertEqual(proven, .hashed)

            // Missing.
            do {
                _ = try await storage.proveContent("none.bin", size: 1, sha256: originalSHA, localFile: nil, trustStored: true)
                XCTFail("a missing key must not be proven")
            } catch let error as StorageError {
                XCTAssertEqual(error, .missing("none.bin"))
            }
        }
    }

    /// A multipart object carries a full-object CRC-64/NVME (the default: CRC parts) or a
    /// composite checksum (over its parts' SHA-256s, `--checksum sha256`): with the local
    /// file it is proven without a download (`.storeChecksum`); without one it is
    /// downloaded and hashed; a local file with other bytes proves nothing.
    func testMultipartObjectIsProvenByItsStoreChecksum() async throws {
        for mode in [S3ChecksumMode.crc64nvme, .sha256] {
            try await assertMultipartObjectIsProvenByItsStoreChecksum(mode)
        }
    }

    func assertMultipartObjectIsProvenByItsStoreChecksum(_ mode: S3ChecksumMode) async throws {
        let moto = try MotoS3()
        let work = try Scratch()
        var policy = S3UploadPolicy()
        policy.multipartThreshold = 5 << 20
        policy.partSize = 5 << 20
        policy.checksum = mode
        let storage = try makeStorage(moto, prefix: "mp", policy: policy)
        try await using(storage) {
            let size = 12 << 20
            let file = try work.write("big.bin", patternBytes(size, seed: 11))
            var otherBytes = patternBytes(size, seed: 11)
            otherBytes[(5 << 20) + 17] ^= 0x80  // one byte in the second part
            let other = try work.write("other.bin", otherBytes)
            let sha = try SHA256Hasher.digest(patternBytes(size, seed: 11))
            let otherSHA = try SHA256Hasher.digest(otherBytes)

            let created = try await storage.putIfAbsent("big.bin", staged: try staged(file))
            XCTAssertEqual(created, .created)
            XCTAssertEqual(storage.requestCounts?["POST"], 2, "a multipart upload: \(storage.requestCounts ?? [:])")
            let head = try moto.awsCLI(["s3api", "head-object", "--bucket", moto.bucket, "--key", "mp/big.bin", "--checksum-mode", "ENABLED"])
            if mode == .crc64nvme {
                // The store's own full-object CRC-64/NVME (awscrt, in moto) of the bytes it holds.
                let stored = CRC64NVME.checksum(patternBytes(size, seed: 11)).base64
                XCTAssertTrue(head.contains("\"ChecksumCRC64NVME\": \"\(stored)\"") && head.contains("FULL_OBJECT"), "moto keeps a full-object CRC: \(head)")
            } else {
                XCTAssertTrue(head.contains("ChecksumSHA256"), "moto keeps a composite checksum: \(head)")
            }

            for trust in [false, true] {
                let gets = storage.requestCounts?["GET"] ?? 0
                let proof = try await storage.proveContent("big.bin", size: Int64(size), sha256: sha, localFile: file, trustStored: trust)
                XCTAssertEqual(proof, .storeChecksum)
                XCTAssertEqual(storage.requestCounts?["GET"] ?? 0, gets, "the composite is checked without a download")
            }
            let gets = storage.requestCounts?["GET"] ?? 0
            let downloaded = try await storage.proveContent("big.bin", size: Int64(size), sha256: sha, localFile: nil, trustStored: false)
            XCTAssertEqual(downloaded, .hashed)
            XCTAssertEqual(storage.requestCounts?["GET"] ?? 0, gets + 1)
            let trusted = try await storage.proveContent("big.bin", size: Int64(size), sha256: sha, localFile: nil, trustStored: true)
            XCTAssertEqual(trusted, .trustedSize)
            // A local file that is not the bytes claimed is not used for the proof.
            let viaOther = try await storage.proveContent("big.bin", size: Int64(size), sha256: sha, localFile: other, trustStored: false)
            XCTAssertEqual(viaOther, .hashed)

            // Expecting other bytes (with them in a local file): the composite differs, so it is a mismatch.
            await assertMismatch({ try await storage.proveContent("big.bin", size: Int64(size), sha256: otherSHA, localFile: other, trustStored: true) },
                                 key: "big.bin", actualSHA256: sha.hex)
            // putIfAbsent of those other bytes is a conflict; of the same bytes, unchanged.
            do {
                let outcome = try await storage.putIfAbsent("big.bin", staged: try staged(other))
                XCTFail("other bytes under the key must not be \(outcome)")
            } catch let error as StorageError {
                guard case .conflict("big.bin", _, _, _, _) = error else { return XCTFail("\(error)") }
            }
            let again = try await storage.putIfAbsent("big.bin", staged: try staged(file))
            XCTAssertEqual(again, .unchanged)
            XCTAssertEqual(try moto.download("mp/big.bin"), Data(patternBytes(size, seed: 11)))
        }
    }

    /// Publish, then another tool overwrites the artifact with same-size bytes and the
    /// original's SHA-256 forged into its metadata. A publish asked to re-read what is
    /// stored (`--reverify-stored`), naming that artifact again (same model, version and
    /// bytes, plus a new model), must not call it unchanged: it fails naming the key, and
    /// the live manifest stays as it was. (By default the live record proves it, and
    /// `verify s3://` is what re-reads every object: see the next test.)
    func testRepublishOverAForgedArtifactFails() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let target = "s3://\(moto.bucket)/forged"
        var environment = pinnedEnvironment(moto.environment)
        let first = try modelcast(["publish", "m=examples/models/tiny-llm.gguf", "--version", "1.0.0", "--base-url", "https://cdn.example.com/f", "--to", target],
                                  environment: environment)
        XCTAssertEqual(first.status, 0, first.stderr)
        let key = "models/m/1.0.0/tiny-llm.gguf"
        let original = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/examples/models/tiny-llm.gguf"))
        var forged = original
        forged[forged.count - 1] ^= 0xff
        try forged.write(to: URL(fileURLWithPath: work.at("forged.gguf")))
        try overwrite(moto, key: "forged/" + key, with: work.at("forged.gguf"), claimedSHA256: try SHA256Hasher.digest(original).hex)
        let liveBefore = try moto.download("forged/manifest.json")

        environment["SOURCE_DATE_EPOCH"] = "1790003600"
        let again = try modelcast(["publish", "m=examples/models/tiny-llm.gguf", "n=examples/models/tiny-llm-mmproj.gguf", "--version", "1.0.0",
                                   "--base-url", "https://cdn.example.com/f", "--to", target, "--json", "--reverify-stored"], environment: environment)
        XCTAssertEqual(again.status, 1, "a forged artifact must not be named again: \(again.stdout)")
        XCTAssertFalse(again.stdout.contains("unchanged"), again.stdout)
        XCTAssertTrue(again.stderr.contains(key) && again.stderr.contains("already exists with different content"), again.stderr)
        XCTAssertTrue(again.stderr.contains(try SHA256Hasher.digest(forged).hex), "the error names the bytes found: \(again.stderr)")
        XCTAssertEqual(try moto.download("forged/manifest.json"), liveBefore)
        XCTAssertFalse(try moto.listing().keys.contains("forged/models/n/1.0.0/tiny-llm-mmproj.gguf"), "what the failed run created is removed")

        // verify s3:// is not fooled by the forged metadata either: the bytes are proven.
        let verify = try modelcast(["verify", target, "--json"], environment: moto.environment)
        XCTAssertEqual(verify.status, 1, verify.stdout)
        let report = try JSONDecoder().decode(VerifyReport.self, from: Data(verify.stdout.utf8))
        let sha = report.checks.filter { $0.check == "artifact.sha256" }
        XCTAssertTrue(sha.contains { $0.status == .fail && $0.subject.hasSuffix(key) && $0.detail.contains(try! SHA256Hasher.digest(forged).hex) }, "\(sha)")
    }

    /// By default, a publish that changes one model of a release does not re-read the
    /// other models' objects: the live record, checked against the store, proves their
    /// bytes (each is only checked present, with its size).
    /// The bucket verify still re-reads every one, and finds a forged one.
    func testUnchangedModelsAreProvenByTheLiveRecordAndVerifyStillReadsThem() throws {
        let moto = try MotoS3()
        let work = try Scratch()
        let target = "s3://\(moto.bucket)/asLive"
        var environment = pinnedEnvironment(moto.environment)
        let llm = repositoryRoot + "/examples/models/tiny-llm.gguf"
        let projector = repositoryRoot + "/examples/models/tiny-llm-mmproj.gguf"
        func config(_ nVersion: String, _ nFile: String) throws -> String {
            try work.write("modelcast-\(nVersion).yml", text: """
                base_url: https://cdn.example.com/f
                models:
                  m: {version: 1.0.0, files: [\(llm)]}
                  n: {version: \(nVersion), files: [\(nFile)]}
                """)
        }
        let first = try modelcast(["publish", "--config", try config("1.0.0", projector), "--to", target], environment: environment)
        XCTAssertEqual(first.status, 0, first.stderr)
        let key = "models/m/1.0.0/tiny-llm.gguf"
        let before = moto.loggedRequests().count
        let changed = try work.write("n.gguf", Array(try Data(contentsOf: URL(fileURLWithPath: projector))) + [0])
        environment["SOURCE_DATE_EPOCH"] = "1790003600"
        let second = try modelcast(["publish", "--config", try config("1.1.0", changed), "--to", target], environment: environment)
        XCTAssertEqual(second.status, 0, second.stderr)
        let touched = moto.loggedRequests().dropFirst(before).filter { $0.path.hasSuffix(key) }
        // Issue 44: checked present with its size (in the store's listing), never downloaded again.
        XCTAssertEqual(touched.filter { $0.method != "HEAD" }.map(\.method), [], "the unchanged model's object is not re-read")

        let original = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/examples/models/tiny-llm.gguf"))
        var forged = original
        forged[forged.count - 1] ^= 0xff
        try forged.write(to: URL(fileURLWithPath: work.at("forged.gguf")))
        try overwrite(moto, key: "asLive/" + key, with: work.at("forged.gguf"), claimedSHA256: try SHA256Hasher.digest(original).hex)
        let verify = try modelcast(["verify", target], environment: moto.environment)
        XCTAssertNotEqual(verify.status, 0, "verify re-reads every object: \(verify.stdout)")
        XCTAssertTrue(verify.stdout.contains(key), verify.stdout)
    }
}
