import Foundation
import XCTest
import ModelCastFormat
@testable import ModelCastCore

/// Issue 44, item 3: `Release.objects` is the one list of what a release names — every
/// variant's files, each file's segment index, each unit's model signature, the
/// prototypes, and the rollback section's — each key once, with what it is and where it
/// is named; `referencedKeys`, prune, the hosting files and verify read it.
final class ReleaseObjectsTests: XCTestCase {
    func hex(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    func file(_ key: String, _ n: Int, index: Bool = false) -> ReleaseFile {
        ReleaseFile(name: PathText.lastComponent(key), key: key, url: "https://cdn.example.com/" + key, sha256: hex(n), size: Int64(100 + n),
                    contentType: "application/octet-stream",
                    segments: index ? SegmentIndexObject(key: key + ".mcsx", url: "https://cdn.example.com/\(key).mcsx", sha256: hex(n + 50), size: 64) : nil)
    }

    func bundle(_ key: String, _ n: Int) -> ModelSignatureObject {
        ModelSignatureObject(key: key, url: "https://cdn.example.com/" + key, sha256: hex(n), size: 900)
    }

    func testEveryObjectOfEverySectionOnceWithItsKindAndSection() throws {
        let q4 = ReleaseModel(version: "2.0.0", files: [file("models/llm/variants/q4/2.0.0/q4.gguf", 1, index: true)],
                              modelSignature: bundle("models/llm/signatures/a.sigstore.json", 2))
        let q8 = ReleaseModel(version: "2.0.0", files: [file("models/llm/variants/q8/2.0.0/q8.gguf", 3, index: true)],
                              modelSignature: bundle("models/llm/signatures/b.sigstore.json", 4))
        // The top-level entry repeats the default variant's files and bundle.
        let llm = ReleaseModel(version: "2.0.0", files: q4.files, variant: "q4",
                               variants: [ReleaseVariant(name: "q4", model: q4), ReleaseVariant(name: "q8", requires: ["min_memory": .int(8)], model: q8)],
                               modelSignature: q4.modelSignature)
        let old = ReleaseModel(version: "1.0.0", files: [file("models/llm/1.0.0/llm.gguf", 5, index: true)],
                               modelSignature: bundle("models/llm/signatures/c.sigstore.json", 6))
        let prototypes = ReleaseModel(version: "1.0.0", files: [file("prototypes/p.json", 7)], modelSignature: bundle("prototypes/sig.json", 8))
        // The fallback names 2.0.0's q8 file too (a shared key is listed once, where first named).
        let release = Release(sequence: 3, publishedAt: "2026-11-29T00:00:00Z", channel: "stable", profile: "modelcast",
                              models: ["llm": llm], prototypes: prototypes,
                              rollback: ReleaseRollback(sequence: 2, models: ["llm": old, "shared": ReleaseModel(version: "2.0.0", files: q8.files)]))
        let objects = release.objects
        XCTAssertEqual(objects.count, Set(objects.map(\.key)).count, "each key once")
        func find(_ key: String) -> ReleaseObject? { objects.first { $0.key == key } }
        XCTAssertEqual(find("models/llm/variants/q4/2.0.0/q4.gguf")?.kind, .artifact)
        XCTAssertEqual(find("models/llm/variants/q4/2.0.0/q4.gguf")?.unit, "llm@q4")
        XCTAssertEqual(find("models/llm/variants/q8/2.0.0/q8.gguf.mcsx")?.kind, .segmentIndex)
        XCTAssertEqual(find("models/llm/variants/q8/2.0.0/q8.gguf.mcsx")?.section, .release, "named by the release before the fallback")
        XCTAssertEqual(find("models/llm/signatures/b.sigstore.json")?.kind, .modelSignature)
        XCTAssertEqual(find("prototypes/sig.json")?.unit, "prototypes")
        XCTAssertEqual(find("models/llm/1.0.0/llm.gguf")?.section, .fallback)
        XCTAssertEqual(find("models/llm/1.0.0/llm.gguf.mcsx")?.label, "segment index of llm 1.0.0 llm.gguf (rollback section)")
        XCTAssertEqual(find("models/llm/signatures/c.sigstore.json")?.label, "model signature of llm 1.0.0 (rollback section)")
        XCTAssertEqual(objects.count, 11)
        XCTAssertEqual(release.referencedKeys, Set(objects.map(\.key)))
        // Every object is served with the headers the hosting files give it.
        let headers = TargetWriter.artifactHeaders(of: [release])
        XCTAssertEqual(Set(headers.keys), release.referencedKeys)
        XCTAssertEqual(headers["models/llm/signatures/c.sigstore.json"]?.contentType, ModelSignatureObject.contentType)
        // Verify expects every one of them, the fallback's bundle included.
        let facts = try ManifestFacts.read(Data(release.jsonValue().serialized().utf8), source: "test")
        XCTAssertEqual(Set(facts.objects.map(\.url)), Set(objects.map(\.url)))
        XCTAssertEqual(facts.modelSignatures.filter(\.fallback).map(\.label), ["rollback llm 1.0.0"])
    }

    func testCommonFolder() {
        XCTAssertEqual(ObjectProofs.commonFolder(of: ["models/a/1.0.0/a.bin", "models/b/1.0.0/b.bin"]), "models/")
        XCTAssertEqual(ObjectProofs.commonFolder(of: ["models/a/blobs/x", "models/a/blobs/y"]), "models/a/blobs/")
        XCTAssertEqual(ObjectProofs.commonFolder(of: ["models/ab/1", "models/ac/1"]), "models/")
        XCTAssertEqual(ObjectProofs.commonFolder(of: ["a.bin", "models/b"]), "")
        XCTAssertEqual(ObjectProofs.commonFolder(of: []), "")
    }
}
