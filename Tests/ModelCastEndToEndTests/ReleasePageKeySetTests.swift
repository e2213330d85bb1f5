import Foundation
import ModelCastCore
import ModelCastTestSupport
import XCTest

/// Issue 51 on the release page: a target with key sets shows the chain as published
/// (each version's thresholds, key ids, signers, expiry and days left) and, per channel,
/// which manifest keys of the newest set signed the live manifest and the threshold —
/// read from the target, a directory or a manifest URL; a broken link is named, not hidden.
final class ReleasePageKeySetTests: XCTestCase {
    struct Key { let secret: String; let pub: String; let id: String }

    func keygen(_ work: Scratch, _ name: String) throws -> Key {
        let result = try modelcast(["keygen", "--unencrypted", "--public-key", work.at(name + ".pub"), "--secret-key", work.at(name + ".key"), "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        return Key(secret: work.at(name + ".key"), pub: work.at(name + ".pub"), id: try XCTUnwrap(object["key_id"] as? String))
    }

    func succeed(_ arguments: [String], cwd: String, file: StaticString = #filePath, line: UInt = #line) throws -> ProcessOutput {
        let result = try modelcast(arguments, cwd: cwd)
        XCTAssertEqual(result.status, 0, "\(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    /// A site: stable published under key set 2 (K1 revoked for K2), beta left signed by K1
    /// under key set 1; roots R1 and R2, threshold 2.
    func site(_ work: Scratch) throws -> (r1: Key, r2: Key, k1: Key, k2: Key) {
        let r1 = try keygen(work, "r1"), r2 = try keygen(work, "r2"), k1 = try keygen(work, "k1"), k2 = try keygen(work, "k2")
        _ = try work.write("a.bin", Array("model one\n".utf8))
        _ = try work.write("b.bin", Array("model two\n".utf8))
        let base = "https://cdn.example.com/m"
        _ = try succeed(["publish", "m=a.bin", "--version", "1.0.0", "--base-url", base, "--to", "site", "--sign", k1.secret], cwd: work.path)
        _ = try succeed(["publish", "m=a.bin", "--version", "1.0.0", "--base-url", base, "--to", "site", "--channel", "beta", "--sign", k1.secret], cwd: work.path)
        _ = try succeed(["keys", "create", "site", "--root", r1.pub, "--root", r2.pub, "--root-threshold", "2", "--manifest-key", k1.pub,
                         "--sign-root", r1.secret, "--sign-root", r2.secret], cwd: work.path)
        _ = try succeed(["keys", "rotate", "site", "--manifest-key", k2.pub, "--revoke", k1.id, "--expires-in", "30d",
                         "--sign-root", r1.secret, "--sign-root", r2.secret], cwd: work.path)
        _ = try succeed(["publish", "m=b.bin", "--version", "1.1.0", "--base-url", base, "--to", "site", "--sign", k2.secret], cwd: work.path)
        return (r1, r2, k1, k2)
    }

    func testThePageShowsTheChainAsPublishedAndWhoSignedEachManifest() throws {
        let work = try Scratch()
        let (r1, r2, _, k2) = try site(work)
        let json = try succeed(["report", "site", "--json"], cwd: work.path).stdout
        try validateAgainstSchema([json], "report.schema.json")
        let page = try JSONDecoder().decode(ReleasePage.self, from: Data(json.utf8))
        let keySets = try XCTUnwrap(page.keySets, json)
        XCTAssertNil(keySets.problem)
        XCTAssertEqual(keySets.chain.map(\.version), [1, 2])
        XCTAssertEqual(keySets.chain.map(\.pinned), [false, false], "the page pins nothing: the app does")
        for version in keySets.chain {
            XCTAssertEqual(version.root.threshold, 2)
            XCTAssertEqual(version.root.keys, [r1.id, r2.id])
            XCTAssertEqual(Set(version.signedBy), [r1.id, r2.id])
        }
        XCTAssertEqual(keySets.chain[1].manifest.keys, [k2.id])
        XCTAssertEqual(keySets.chain[1].sequenceFloors, ["stable": 1, "beta": 1], "each channel's live sequence")
        XCTAssertTrue((29...30).contains(keySets.chain[1].daysLeft), "\(keySets.chain[1].daysLeft)")
        XCTAssertTrue((364...365).contains(keySets.chain[0].daysLeft), "\(keySets.chain[0].daysLeft)")

        let stable = try XCTUnwrap(page.channels.first { $0.name == "stable" }), beta = try XCTUnwrap(page.channels.first { $0.name == "beta" })
        XCTAssertEqual(stable.signature.keySet, .init(version: 2, threshold: 1, signers: [k2.id], problem: nil))
        XCTAssertEqual(beta.signature.keySet?.signers, [], "K1, revoked by key set 2, counts for nothing")
        XCTAssertEqual(beta.signature.keySet?.threshold, 1)
        XCTAssertTrue(beta.signature.keySet?.problem?.contains("needs 1") ?? false, "\(String(describing: beta.signature.keySet))")

        let html = try succeed(["report", "site", "-o", "-"], cwd: work.path).stdout
        for text in ["Key sets", "as published", "pinned in the app", "key set 2", r1.id, r2.id, k2.id,
                     "signed by 1 of key set 2&#39;s manifest keys", "signed by 0 of key set 2&#39;s manifest keys"] {
            XCTAssertTrue(html.contains(text), "the page does not show \(text)")
        }
    }

    /// Over HTTP (a manifest URL), the chain is read beside the manifest as a device reads it.
    func testAManifestURLShowsTheChainItsHostServes() throws {
        let work = try Scratch()
        let (_, _, _, k2) = try site(work)
        let port = try freeLoopbackPort()
        let server = try BackgroundProcess(modelcastBinary, ["serve", "site", "--port", String(port)], cwd: work.path)
        XCTAssertEqual(server.firstLine, "http://127.0.0.1:\(port)/m")
        let json = try succeed(["report", "http://127.0.0.1:\(port)/m/manifest.json", "--json"], cwd: work.path).stdout
        let page = try JSONDecoder().decode(ReleasePage.self, from: Data(json.utf8))
        XCTAssertEqual(page.keySets?.chain.map(\.version), [1, 2])
        XCTAssertEqual(page.channels.first?.signature.keySet?.signers, [k2.id])
    }

    /// A link that does not verify stops the chain there, and the page says why; a target
    /// without key sets shows none (and its page is as before).
    func testABrokenLinkIsNamedAndNoKeySetShowsNothing() throws {
        let work = try Scratch()
        _ = try site(work)
        // Key set 2's signature list cut to one root signature of the two it needs.
        try FileManager.default.removeItem(atPath: work.at("site/keys/2.json.sigs"))
        try FileManager.default.copyItem(atPath: work.at("site/keys/2.json.minisig"), toPath: work.at("site/keys/2.json.sigs"))
        let page = try JSONDecoder().decode(ReleasePage.self, from: Data(try succeed(["report", "site", "--json"], cwd: work.path).stdout.utf8))
        XCTAssertEqual(page.keySets?.chain.map(\.version), [1])
        XCTAssertTrue(page.keySets?.problem?.contains("keys/2.json is signed by 1 of key set 1's root keys") ?? false, "\(String(describing: page.keySets))")
        let html = try succeed(["report", "site", "-o", "-"], cwd: work.path).stdout
        XCTAssertTrue(html.contains("keys/2.json is signed by 1 of key set 1&#39;s root keys"), "the page names the broken link")

        try FileManager.default.removeItem(atPath: work.at("site/keys"))
        let plain = try succeed(["report", "site", "--json"], cwd: work.path).stdout
        XCTAssertNil(try JSONDecoder().decode(ReleasePage.self, from: Data(plain.utf8)).keySets)
        XCTAssertFalse(plain.contains("key_set"), plain)
        XCTAssertFalse(try succeed(["report", "site", "-o", "-"], cwd: work.path).stdout.contains("Key sets"))
    }
}
