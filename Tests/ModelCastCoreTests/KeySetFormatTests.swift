import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastFormat

/// The key set document (`keys/N.json`) and the signature list (`.sigs`): what a reader
/// accepts, what it refuses (naming the JSON path and the escaped value), and the canonical
/// bytes the writer produces.
final class KeySetFormatTests: XCTestCase {
    let keys = (0..<20).map { _ in try! MinisignSecretKey.generate().publicKey }
    let expiry = parseTimestamp("2027-11-29T00:00:00Z")!

    func keySet(version: Int64 = 2, floors: [ChannelName: Int64] = [.stable: 41, try! ChannelName("beta"): 57]) throws -> KeySet {
        try KeySet(version: version, expiresAt: expiry, root: KeySetRole(keys: [keys[0], keys[1]], threshold: 2),
                   manifest: KeySetRole(keys: [keys[2]], threshold: 1), sequenceFloors: floors)
    }

    /// The canonical document as JSON text with `change` applied to its object.
    func document(_ change: (inout [String: Any]) -> Void) throws -> Data {
        var object = try JSONSerialization.jsonObject(with: keySet().canonicalBytes) as! [String: Any]
        change(&object)
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    func refusal(_ data: Data, file: StaticString = #filePath, line: UInt = #line) -> ManifestValueError? {
        do {
            _ = try KeySet(parsing: data)
            XCTFail("accepted: \(String(decoding: data.prefix(300), as: UTF8.self))", file: file, line: line)
            return nil
        } catch let error as ManifestValueError {
            return error
        } catch {
            XCTFail("not a ManifestValueError: \(error)", file: file, line: line)
            return nil
        }
    }

    func testTheCanonicalBytesAreSortedIndentedASCIIAndReadBack() throws {
        let set = try keySet()
        let text = String(decoding: set.canonicalBytes, as: UTF8.self)
        XCTAssertEqual(text, """
            {
              "expires_at": "2027-11-29T00:00:00Z",
              "format": "modelcast-keys",
              "format_version": 1,
              "manifest": {
                "keys": [
                  "\(keys[2].base64)"
                ],
                "threshold": 1
              },
              "root": {
                "keys": [
                  "\(keys[0].base64)",
                  "\(keys[1].base64)"
                ],
                "threshold": 2
              },
              "sequence_floors": {
                "beta": 57,
                "stable": 41
              },
              "version": 2
            }

            """)
        XCTAssertTrue(set.canonicalBytes.allSatisfy { $0 < 0x80 })
        XCTAssertEqual(try KeySet(parsing: set.canonicalBytes), set)
        XCTAssertEqual(try KeySet(parsing: keySet(floors: [:]).canonicalBytes).sequenceFloors, [:])
        XCTAssertFalse(String(decoding: try keySet(floors: [:]).canonicalBytes, as: UTF8.self).contains("sequence_floor"))
        // A channel the document names no floor for has floor 0.
        XCTAssertEqual(set.sequenceFloor(channel: try ChannelName("beta")), 57)
        XCTAssertEqual(set.sequenceFloor(channel: try ChannelName("nightly")), 0)
        // Any valid JSON spelling reads (readers verify the bytes as served, not a re-spelling).
        XCTAssertEqual(try KeySet(parsing: document { _ in }), set)
        XCTAssertEqual(set.path, "keys/2.json")
    }

    func testEachBadValueIsRefusedNamingItsPathAndValue() throws {
        let smallOrder = Data(Array("Ed".utf8) + [1, 2, 3, 4, 5, 6, 7, 8] + [UInt8](repeating: 0, count: 32)).base64EncodedString()
        let cases: [(String, (inout [String: Any]) -> Void, String, String?)] = [
            ("version 0", { $0["version"] = 0 }, "version", "0"),
            ("version above 2^53", { $0["version"] = (1 << 53) + 1 }, "version", "9007199254740993"),
            ("version as text", { $0["version"] = "2" }, "version", "'2'"),
            ("version with a fraction", { $0["version"] = 2.5 }, "version", "2.5"),
            ("format", { $0["format"] = "modelcast-keys\u{1b}[31m" }, "format", "'modelcast-keys\\u{1b}[31m'"),
            ("format_version 2", { $0["format_version"] = 2 }, "format_version", "2"),
            ("expires_at with a fraction", { $0["expires_at"] = "2027-11-29T00:00:00.5Z" }, "expires_at", "'2027-11-29T00:00:00.5Z'"),
            ("expires_at in another zone", { $0["expires_at"] = "2027-11-29T01:00:00+01:00" }, "expires_at", nil),
            ("expires_at missing", { $0["expires_at"] = nil }, "expires_at", "(missing)"),
            ("unknown field", { $0["mirrors"] = ["https://evil"] }, "mirrors", "'mirrors'"),
            ("unknown role field", { $0["root"] = ["keys": [self.keys[0].base64], "threshold": 1, "x": 1] }, "root.x", "'x'"),
            ("threshold 0", { $0["root"] = ["keys": [self.keys[0].base64], "threshold": 0] }, "root.threshold", "0"),
            ("threshold above the count", { $0["manifest"] = ["keys": [self.keys[2].base64], "threshold": 2] }, "manifest.threshold", "2"),
            ("no keys", { $0["manifest"] = ["keys": [String](), "threshold": 1] }, "manifest.keys", "0 keys"),
            ("17 keys", { $0["manifest"] = ["keys": self.keys[3..<20].map(\.base64), "threshold": 1] }, "manifest.keys", "17 keys"),
            ("a key twice", { $0["root"] = ["keys": [self.keys[0].base64, self.keys[0].base64], "threshold": 1] }, "root.keys[1]", nil),
            ("a small-order key", { $0["root"] = ["keys": [smallOrder], "threshold": 1] }, "root.keys[0]", "'\(smallOrder)'"),
            ("a key with a trailing space", { $0["root"] = ["keys": [self.keys[0].base64 + " "], "threshold": 1] }, "root.keys[0]", nil),
            ("a key that is no key", { $0["root"] = ["keys": ["RWQ\n\u{7}"], "threshold": 1] }, "root.keys[0]", "'RWQ\\u{a}\\u{7}'"),
            ("a manifest key that is a root key", { $0["manifest"] = ["keys": [self.keys[1].base64], "threshold": 1] }, "manifest.keys[0]", nil),
            ("a floor of -1", { $0["sequence_floors"] = ["stable": -1] }, "sequence_floors.stable", "-1"),
            ("a floor above 2^53", { $0["sequence_floors"] = ["beta": (1 << 53) + 1] }, "sequence_floors.beta", "9007199254740993"),
            ("a floor as text", { $0["sequence_floors"] = ["stable": "41"] }, "sequence_floors.stable", "'41'"),
            ("sequence_floors null", { $0["sequence_floors"] = NSNull() }, "sequence_floors", "null"),
            ("sequence_floors a number", { $0["sequence_floors"] = 41 }, "sequence_floors", "41"),
            ("a floor for no channel name", { $0["sequence_floors"] = ["Beta\u{1b}[2J": 1] }, "sequence_floors", "'Beta\\u{1b}[2J'"),
            ("65 channels' floors", { $0["sequence_floors"] = Dictionary(uniqueKeysWithValues: (0..<65).map { ("c\($0)", 1) }) }, "sequence_floors", "65 channels"),
        ]
        for (label, change, field, value) in cases {
            guard let error = refusal(try document(change)) else { continue }
            XCTAssertEqual(error.field, field, label)
            if let value { XCTAssertEqual(error.value, value, "\(label): \(error)") }
        }
    }

    func testKeysGivenTwiceUnderAnotherIDAreRefused() throws {
        // Same key bytes, another key id: one secret would count as two signers.
        let twin = try MinisignPublicKey(keyID: MinisignKeyID(bytes: [9, 9, 9, 9, 9, 9, 9, 9])!, key: keys[0].key)
        XCTAssertThrowsError(try KeySetRole(keys: [keys[0], twin], threshold: 2, field: "root")) { error in
            XCTAssertEqual((error as? ManifestValueError)?.field, "root.keys[1]")
        }
    }

    func testJSONEveryReaderWouldNotReadAlikeIsRefused() throws {
        let good = String(decoding: try keySet().canonicalBytes, as: UTF8.self)
        let cases: [(String, String, String)] = [
            ("a repeated field", good.replacingOccurrences(of: "\"version\": 2", with: "\"version\": 2, \"version\": 3"), "version"),
            ("an integer written as 2.0", good.replacingOccurrences(of: "\"version\": 2", with: "\"version\": 2.0"), "version"),
            ("an integer written as 2e0", good.replacingOccurrences(of: "\"version\": 2", with: "\"version\": 2e0"), "version"),
            ("a leading zero", good.replacingOccurrences(of: "\"version\": 2", with: "\"version\": 02"), "version"),
            ("a byte-order mark", "\u{FEFF}" + good, "(document)"),
            ("text after the document", good + "{}", "(document)"),
            ("an escaped field name", good.replacingOccurrences(of: "\"format\":", with: "\"form\\u0061t\": \"x\", \"format\":"), "format"),
            ("a raw tab in a string", good.replacingOccurrences(of: "modelcast-keys", with: "modelcast-keys\t"), "format"),
            ("a lone surrogate", good.replacingOccurrences(of: "modelcast-keys", with: "\\ud800"), "format"),
            ("nesting", good.replacingOccurrences(of: "\"version\": 2", with: "\"version\": " + String(repeating: "[", count: 20) + String(repeating: "]", count: 20)), "version" + String(repeating: "[0]", count: 7)),
        ]
        for (label, text, field) in cases {
            XCTAssertEqual(refusal(Data(text.utf8))?.field, field, label)
        }
        var invalid = Data(good.utf8)
        invalid[10] = 0xff
        XCTAssertEqual(refusal(invalid)?.rule, "is not UTF-8 text")
        let huge = Data(good.replacingOccurrences(of: "\"version\": 2", with: "\"version\": 2" + String(repeating: " ", count: KeySet.maxBytes)).utf8)
        XCTAssertEqual(refusal(huge)?.field, "(document)")
        XCTAssertTrue(refusal(huge)?.rule.contains("65536") ?? false)
    }

    func testAValueMadeInCodeObeysTheSameRules() throws {
        XCTAssertThrowsError(try KeySet(version: 0, expiresAt: expiry, root: KeySetRole(keys: [keys[0]], threshold: 1),
                                        manifest: KeySetRole(keys: [keys[1]], threshold: 1)))
        XCTAssertThrowsError(try KeySetRole(keys: [keys[0]], threshold: 2))
        XCTAssertThrowsError(try KeySetRole(keys: Array(keys[0..<17]), threshold: 1))
        let set = try KeySet(version: 1, expiresAt: expiry.addingTimeInterval(0.75), root: KeySetRole(keys: [keys[0]], threshold: 1),
                             manifest: KeySetRole(keys: [keys[1]], threshold: 1))
        XCTAssertEqual(set.expiresAtText, "2027-11-29T00:00:00Z")
        XCTAssertFalse(set.isExpired(at: expiry.addingTimeInterval(-1)))
        XCTAssertTrue(set.isExpired(at: expiry))
        XCTAssertThrowsError(try set.checkFresh(at: expiry)) { error in
            XCTAssertEqual(error as? KeySetError, .expired(path: "keys/1.json", expiresAt: "2027-11-29T00:00:00Z", now: "2027-11-29T00:00:00Z"))
        }
    }

    // MARK: signature lists

    func signatures(_ count: Int) throws -> String {
        let key = try MinisignSecretKey.generate()
        return try (0..<count).map { try key.sign(message: Array("m\($0)".utf8), trustedComment: "c\($0)") }.joined()
    }

    func testASignatureListReadsEachSignatureWithinBounds() throws {
        let two = try signatures(2)
        let list = try MinisignSignatureList(data: Data(two.utf8), source: "keys/2.json.sigs")
        XCTAssertEqual(list.signatures.map(\.trustedComment), ["c0", "c1"])
        XCTAssertEqual(list.fileContents, two)
        XCTAssertEqual(try MinisignSignatureList(data: Data(signatures(16).utf8), source: "s").signatures.count, 16)

        func refused(_ data: Data, _ expected: String, line: UInt = #line) {
            XCTAssertThrowsError(try MinisignSignatureList(data: data, source: "keys/2.json.sigs"), line: line) { error in
                guard case .malformedSignature(let source, let reason) = error as? FormatError else { return XCTFail("\(error)", line: line) }
                XCTAssertTrue((source + " " + reason).contains(expected), "\(source) \(reason)", line: line)
            }
        }
        refused(Data(try signatures(17).utf8), "17 signatures")
        refused(Data(), "no signature")
        refused(Data((two + "extra\n").utf8), "9 lines")
        refused(Data(repeating: 0x41, count: MinisignSignatureList.maxBytes + 1), "16385 bytes")
        var lines = two.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[5] = "not base64!"
        refused(Data(lines.joined(separator: "\n").utf8), "signature 2 (lines 5–8)")
        refused(Data([0xff]) + Data(two.utf8), "not UTF-8")
        XCTAssertThrowsError(try MinisignSignatureList([]))
    }
}
