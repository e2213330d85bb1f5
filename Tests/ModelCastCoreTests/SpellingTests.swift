import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

/// The did-you-mean helper every mistyped command, config key and requirement goes
/// through: two neighbouring letters swapped are one slip, not two, so a short word
/// with a swap (`iso`) still gets its suggestion (`ios`).
final class SpellingTests: XCTestCase {
    func testASwapOfNeighbouringLettersIsOneEdit() {
        XCTAssertEqual(Spelling.distance("iso", "ios"), 1)
        XCTAssertEqual(Spelling.distance("pubilsh", "publish"), 1)
        XCTAssertEqual(Spelling.distance("ab", "ba"), 1)
        // Still an edit distance: a swap and a substitution, letters that are not neighbours.
        XCTAssertEqual(Spelling.distance("abcd", "badc"), 2)
        XCTAssertEqual(Spelling.distance("abc", "cba"), 2)
        XCTAssertEqual(Spelling.distance("", "abc"), 3)
        XCTAssertEqual(Spelling.distance("kitten", "sitting"), 3)
    }

    func testShortWordsWithASwapGetTheirSuggestion() {
        XCTAssertEqual(Spelling.suggestion(for: "iso", among: ["ios", "macos", "tvos"]), "ios")
        XCTAssertEqual(Spelling.suggestion(for: "ot", among: ["to", "channel"]), "to")
        XCTAssertNil(Spelling.suggestion(for: "xyz", among: ["ios", "macos"]))
    }

    /// Through a config file: a swapped platform name is named with its fix.
    func testASwappedPlatformInAConfigFileGetsItsSuggestion() throws {
        let work = try Scratch()
        let path = try work.write("modelcast.yml", text: "models:\n  m:\n    version: 1.0.0\n    variants:\n      - {name: a, files: [a.bin], requires: {platforms: {iso: \"17.0\"}}}\n")
        XCTAssertThrowsError(try PublishConfigFile.load(path: path)) { error in
            XCTAssertTrue("\(error)".contains("'models.m.variants[0].requires.platforms.iso' (did you mean 'ios'?)"), "\(error)")
        }
    }
}
