import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastFormat

/// The pure rules of a key set chain: a link needs a threshold of the old and of the new
/// root keys, each key counted once, each signature bound to its version; a manifest needs
/// a threshold of the current manifest keys; the sequence floor resets only when a
/// manifest key goes.
final class KeySetChainTests: XCTestCase {
    let r1 = try! MinisignSecretKey.generate(), r2 = try! MinisignSecretKey.generate(), r3 = try! MinisignSecretKey.generate()
    let k1 = try! MinisignSecretKey.generate(), k2 = try! MinisignSecretKey.generate(), k3 = try! MinisignSecretKey.generate()
    let expiry = parseTimestamp("2027-11-29T00:00:00Z")!

    static func ed25519(_ signature: [UInt8], _ message: [UInt8], _ key: [UInt8]) throws -> Bool {
        try Ed25519PublicKey(bytes: key).isValidSignature(signature, for: message)
    }

    func set(_ version: Int64, roots: [MinisignSecretKey], rootThreshold: Int, manifest: [MinisignSecretKey], manifestThreshold: Int = 1,
             floor: Int64? = nil) throws -> KeySet {
        // `floor` is stable's; beta's is always 5 more, to tell the channels apart.
        try KeySet(version: version, expiresAt: expiry, root: KeySetRole(keys: roots.map(\.publicKey), threshold: rootThreshold),
                   manifest: KeySetRole(keys: manifest.map(\.publicKey), threshold: manifestThreshold),
                   sequenceFloors: floor.map { [.stable: $0, try! ChannelName("beta"): $0 + 5] } ?? [:])
    }

    func sign(_ set: KeySet, by keys: [MinisignSecretKey], comment: String? = nil) throws -> [MinisignSignature] {
        try keys.map { try $0.signature(for: [UInt8](set.canonicalBytes), trustedComment: comment ?? KeySetComment.text(for: set)) }
    }

    func step(_ trusted: KeySet, _ next: KeySet, _ signatures: [MinisignSignature]) throws -> KeySet {
        try KeySetChain.step(trusted: trusted, nextBytes: next.canonicalBytes, nextSignatures: signatures, ed25519: Self.ed25519)
    }

    func assertThresholdNotMet(_ body: @autoclosure () throws -> Any, role: KeySetRoleName, version: Int64, signers: Int,
                               problem: ((KeySetSignatureProblem.Reason) -> Bool)? = nil, line: UInt = #line) {
        XCTAssertThrowsError(try body(), line: line) { error in
            guard case let .thresholdNotMet(_, gotRole, gotVersion, _, gotSigners, problems) = error as? KeySetError else {
                return XCTFail("\(error)", line: line)
            }
            XCTAssertEqual(gotRole, role, line: line)
            XCTAssertEqual(gotVersion, version, line: line)
            XCTAssertEqual(gotSigners.count, signers, line: line)
            if let problem { XCTAssertTrue(problems.contains { problem($0.reason) }, "\(problems)", line: line) }
        }
    }

    func testARotationSignedByBothRootsIsFollowed() throws {
        let one = try set(1, roots: [r1, r2], rootThreshold: 2, manifest: [k1])
        let two = try set(2, roots: [r1, r2], rootThreshold: 2, manifest: [k2], floor: 7)
        XCTAssertEqual(try step(one, two, sign(two, by: [r1, r2])), two)
        // Signatures that do not count (a stranger's, a repeat) fail nothing once the threshold is met.
        XCTAssertEqual(try step(one, two, sign(two, by: [k1, r2, r2, r1])), two)
    }

    func testALinkNeedsTheOldRootsThresholdEachKeyOnce() throws {
        let one = try set(1, roots: [r1, r2], rootThreshold: 2, manifest: [k1])
        let two = try set(2, roots: [r1, r2], rootThreshold: 2, manifest: [k2])
        assertThresholdNotMet(try step(one, two, sign(two, by: [k1])), role: .root, version: 1, signers: 0) { $0 == .notARoleKey }
        assertThresholdNotMet(try step(one, two, sign(two, by: [r1])), role: .root, version: 1, signers: 1)
        assertThresholdNotMet(try step(one, two, sign(two, by: [r1, r1])), role: .root, version: 1, signers: 1) { $0 == .repeatedKey }
        assertThresholdNotMet(try step(one, two, []), role: .root, version: 1, signers: 0)
    }

    func testALinkNeedsTheNewRootsThresholdToo() throws {
        let one = try set(1, roots: [r1, r2], rootThreshold: 1, manifest: [k1])
        // R3 joins and R2 leaves: R2's signature meets version 1's threshold, not version 2's.
        let two = try set(2, roots: [r1, r3], rootThreshold: 2, manifest: [k1])
        assertThresholdNotMet(try step(one, two, sign(two, by: [r2, r3])), role: .root, version: 2, signers: 1) { $0 == .notARoleKey }
        XCTAssertEqual(try step(one, two, sign(two, by: [r1, r3])), two)
    }

    func testASignatureBindsItsVersionAndExpiry() throws {
        let one = try set(1, roots: [r1], rootThreshold: 1, manifest: [k1])
        let two = try set(2, roots: [r1], rootThreshold: 1, manifest: [k2])
        let moved = "file:keys/3.json\tkeyset:3\texpires:2027-11-29T00:00:00Z"
        assertThresholdNotMet(try step(one, two, sign(two, by: [r1], comment: moved)), role: .root, version: 1, signers: 0) {
            if case .commentMismatch = $0 { return true } else { return false }
        }
        for comment in ["file:keys/2.json\tkeyset:2\texpires:2028-11-29T00:00:00Z", "file:keys/2.json\tkeyset:2", "timestamp:1\tfile:keys/2.json",
                        "file:keys/2.json\tkeyset:2\tkeyset:2\texpires:2027-11-29T00:00:00Z", "keyset:02\tfile:keys/2.json\texpires:2027-11-29T00:00:00Z"] {
            XCTAssertNotNil(KeySetComment.mismatch(comment, keySet: two), comment)
        }
        XCTAssertNil(KeySetComment.mismatch("timestamp:1767225600\tfile:keys/2.json\tkeyset:2\texpires:2027-11-29T00:00:00Z", keySet: two))
        // The bytes are the served bytes: a re-spelling the roots did not sign is refused.
        let respelled = Data(String(decoding: two.canonicalBytes, as: UTF8.self).replacingOccurrences(of: "\n", with: "\r\n").utf8)
        assertThresholdNotMet(try KeySetChain.step(trusted: one, nextBytes: respelled, nextSignatures: sign(two, by: [r1]), ed25519: Self.ed25519),
                              role: .root, version: 1, signers: 0) { if case .invalid(.signatureMismatch) = $0 { return true } else { return false } }
    }

    func testAVersionGapAndABadDocumentAreRefused() throws {
        let one = try set(1, roots: [r1], rootThreshold: 1, manifest: [k1])
        let three = try set(3, roots: [r1], rootThreshold: 1, manifest: [k2])
        XCTAssertThrowsError(try step(one, three, sign(three, by: [r1]))) { error in
            XCTAssertEqual(error as? KeySetError, .versionGap(path: "keys/2.json", trusted: 1, found: 3))
        }
        XCTAssertThrowsError(try KeySetChain.step(trusted: one, nextBytes: Data("{}".utf8), nextSignatures: [], ed25519: Self.ed25519)) { error in
            guard case .invalidDocument(let path, let detail) = error as? KeySetError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "keys/2.json")
            XCTAssertEqual(detail.field, "format")
        }
    }

    // MARK: manifests

    let manifestBytes = Data("{\"sequence\": 12}\n".utf8)

    func manifestSignature(_ key: MinisignSecretKey, sequence: Int64 = 12, file: String = "manifest.json") throws -> MinisignSignature {
        let comment = TrustedComment(timestamp: 1_767_225_600, file: file, sequence: sequence, version: "1.0.0", expiresAt: nil)
        return try key.signature(for: [UInt8](manifestBytes), trustedComment: comment.text)
    }

    func verify(_ keySet: KeySet, _ signatures: [MinisignSignature]) throws -> ManifestThresholdProof {
        try keySet.verifyManifest(bytes: manifestBytes, signatures: signatures, file: "manifest.json", sequence: 12, expiresAt: nil, ed25519: Self.ed25519)
    }

    func testTwoOfThreeManifestKeysAreNeeded() throws {
        let keys = try set(1, roots: [r1], rootThreshold: 1, manifest: [k1, k2, k3], manifestThreshold: 2)
        let proof = try verify(keys, [manifestSignature(k3), manifestSignature(k1)])
        XCTAssertEqual(proof.signers.map(\.keyID), [k3.keyID, k1.keyID])
        XCTAssertEqual(proof.comments.map(\.sequence), [12, 12])
        assertThresholdNotMet(try verify(keys, [manifestSignature(k1)]), role: .manifest, version: 1, signers: 1)
        assertThresholdNotMet(try verify(keys, [manifestSignature(k1), manifestSignature(k1)]), role: .manifest, version: 1, signers: 1) { $0 == .repeatedKey }
        // Each signature binds the manifest as the single-key check does: sequence and file.
        assertThresholdNotMet(try verify(keys, [manifestSignature(k1), manifestSignature(k2, sequence: 13)]), role: .manifest, version: 1, signers: 1) {
            if case .commentMismatch(let detail) = $0 { return detail.contains("its signature says 13") } else { return false }
        }
        assertThresholdNotMet(try verify(keys, [manifestSignature(k1), manifestSignature(k2, file: "channels/beta/manifest.json")]),
                              role: .manifest, version: 1, signers: 1)
    }

    func testARevokedManifestKeyNoLongerCounts() throws {
        let two = try set(2, roots: [r1], rootThreshold: 1, manifest: [k2])
        assertThresholdNotMet(try verify(two, [manifestSignature(k1)]), role: .manifest, version: 2, signers: 0) { $0 == .notARoleKey }
        XCTAssertEqual(try verify(two, [manifestSignature(k1), manifestSignature(k2)]).signers.map(\.keyID), [k2.keyID])
    }

    // MARK: the sequence floor

    func testTheFloorResetsExactlyWhenAManifestKeyGoes() throws {
        let one = try set(1, roots: [r1], rootThreshold: 1, manifest: [k1, k2], floor: 3)
        let beta = try ChannelName("beta"), nightly = try ChannelName("nightly")
        let rotated = try set(2, roots: [r1], rootThreshold: 1, manifest: [k2], floor: 41)
        XCTAssertEqual(KeySetChain.sequenceFloor(after: one, next: rotated, channel: .stable), 41)
        // Each channel its own floor; a channel the key set names none for: 0.
        XCTAssertEqual(KeySetChain.sequenceFloor(after: one, next: rotated, channel: beta), 46)
        XCTAssertEqual(KeySetChain.sequenceFloor(after: one, next: rotated, channel: nightly), 0)
        XCTAssertEqual(KeySetChain.sequenceFloor(after: one, next: try set(2, roots: [r1], rootThreshold: 1, manifest: [k2, k3]), channel: .stable), 0)
        // Adding a key, a new threshold, new roots: the floor stays.
        XCTAssertNil(KeySetChain.sequenceFloor(after: one, next: try set(2, roots: [r1], rootThreshold: 1, manifest: [k1, k2, k3], floor: 99), channel: .stable))
        XCTAssertNil(KeySetChain.sequenceFloor(after: one, next: try set(2, roots: [r2, r3], rootThreshold: 2, manifest: [k2, k1], manifestThreshold: 2), channel: beta))
    }
}
