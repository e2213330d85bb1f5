import Foundation
import XCTest
@testable import ModelCastCore
import ModelCastTestSupport

final class SigningTests: XCTestCase {
    // MARK: Fixtures

    // A throwaway key pair made by `minisign -G -W` (0.11) for these tests, and two
    // signatures it made of the 6 bytes "hello\n": the default prehashed one
    // (`-t "my comment"`) and a legacy one (`-l`). The secret key protects nothing.
    static let fixturePublicKeyFile = """
        untrusted comment: minisign public key D278303F259DBD05
        RWQFvZ0lPzB40jjUo6G6KfP3q+inOF1K/XwPIec7tb086rCJBbTSbVe8

        """
    static let fixturePublicKeyBase64 = "RWQFvZ0lPzB40jjUo6G6KfP3q+inOF1K/XwPIec7tb086rCJBbTSbVe8"
    static let fixtureSecretKeyFile = """
        untrusted comment: minisign encrypted secret key
        RWQAAEIyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABb2dJT8weNJz8q0fkjj3QoQGBjhV6S8Pz7qZ1OPWv8OFTVzdD7wx8DjUo6G6KfP3q+inOF1K/XwPIec7tb086rCJBbTSbVe8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=

        """
    static let fixtureMessage = Array("hello\n".utf8)
    static let fixtureSignature = """
        untrusted comment: signature from minisign secret key
        RUQFvZ0lPzB40q64w0+gyhKEdVMunBw7khDfN1ZHVQxIzRo1kU8odU/sk79I4XhGI+GJOnYgawiwlQu3mciTBxfSvuy+05v1gA8=
        trusted comment: my comment
        m6Wm9t7Bj08sFoPcFcjUSC44cylELpCjbzPk+G5D5qrE5qfn70FacckeWXXEj0jYf4hMaBg0qFr5VXSeu6FyCg==

        """
    static let fixtureLegacySignature = """
        untrusted comment: signature from minisign secret key
        RWQFvZ0lPzB40llyONlKjt40LBnwrg2UShBmICDsDyU8DezgRreIiBCnNywKqRBx93vcW/KdsdFNTVqU3JCqSeK5IpKuwFOrKAY=
        trusted comment: timestamp:1795325337\tfile:msg
        qG7JWmz9pZa6bTFjyE3qi72zdfWmNwpyWvr99vzmsTF+F3ZXM1rgOA8TMb/yZZ5Xnqt4KPyBKIVpb83Y1Dl+BQ==

        """

    /// The stock minisign binary; the interop tests fail (not skip) without it,
    /// since scripts/apt-packages.txt installs it everywhere the tests run.
    var minisign: String {
        get throws {
            guard let path = which("minisign") ?? (FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign") ? "/usr/bin/minisign" : nil) else {
                XCTFail("minisign is not installed (scripts/apt-packages.txt lists it)")
                throw NSError(domain: "SigningTests", code: 1, userInfo: [NSLocalizedDescriptionKey: "minisign is not installed"])
            }
            return path
        }
    }

    /// Runs minisign with `arguments`; `input` goes to its standard input (how it
    /// reads passwords when stdin is not a terminal), else stdin is /dev/null.
    @discardableResult
    func runMinisign(_ arguments: [String], input: String? = nil, cwd: String? = nil) throws -> ProcessOutput {
        let binary = try minisign
        guard let input else { return try runProcess(binary, arguments, cwd: cwd) }
        // runProcess cannot feed stdin; the shell pipes the text from a variable so
        // it never appears on a command line.
        var environment = ProcessInfo.processInfo.environment
        environment["MINISIGN_TEST_INPUT"] = input
        let quoted = ([binary] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        return try runProcess("/bin/sh", ["-c", "printf '%s' \"$MINISIGN_TEST_INPUT\" | \(quoted)"], cwd: cwd, environment: environment)
    }

    func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    func assertThrows(
        _ expression: @autoclosure () throws -> Any, matching check: (ModelCastError) -> Bool,
        containing fragments: [String] = [], file: StaticString = #filePath, line: UInt = #line
    ) {
        assertThrowsError(try expression(), matching: check, message: \.message, containing: fragments, file: file, line: line)
    }

    /// The same, for what the shared format's readers refuse (keys, signatures, comments).
    func assertThrows(
        _ expression: @autoclosure () throws -> Any, matching check: (FormatError) -> Bool,
        containing fragments: [String] = [], file: StaticString = #filePath, line: UInt = #line
    ) {
        assertThrowsError(try expression(), matching: check, message: \.message, containing: fragments, file: file, line: line)
    }

    private func assertThrowsError<E: Error>(
        _ expression: @autoclosure () throws -> Any, matching check: (E) -> Bool, message: (E) -> String,
        containing fragments: [String], file: StaticString, line: UInt
    ) {
        do {
            _ = try expression()
            XCTFail("expected an error", file: file, line: line)
        } catch let error as E {
            XCTAssertTrue(check(error), "unexpected error: \(error)", file: file, line: line)
            for fragment in fragments {
                XCTAssertTrue(message(error).contains(fragment), "'\(message(error))' does not mention '\(fragment)'", file: file, line: line)
            }
        } catch {
            XCTFail("unexpected error type: \(error)", file: file, line: line)
        }
    }

    // MARK: BLAKE2b

    func testBLAKE2bKnownVectors() throws {
        // RFC 7693 Appendix A.
        XCTAssertEqual(
            hex(BLAKE2b.hash(Array("abc".utf8), outputLength: 64)),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
        XCTAssertEqual(
            hex(try BLAKE2b512Hasher.digest(Array("abc".utf8))),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
        // libsodium crypto_generichash(outlen 32) of "": not a truncated BLAKE2b-512.
        XCTAssertEqual(hex(BLAKE2b.hash([UInt8](), outputLength: 32)), "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8")
        XCTAssertEqual(hex(BLAKE2b.hash(Array("abc".utf8), outputLength: 32)), "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319")
        XCTAssertEqual(hex(BLAKE2b.hash([UInt8](), outputLength: 1)), "2e")
        // Lengths around the 128-byte block edge, bytes i & 0xff (Python's hashlib.blake2b).
        let vectors: [(Int, String, String)] = [
            (1, "03170a2e7597b7b7e3d84c05391d139a62b157e78786d8c082f29dcf4c111314", "082ad992fb76871c33a1b9993a082952feaca5e6"),
            (127, "f2fe67ff342e21b8f45e8f2e0bcd1d9243245d50ee6c78042e9c491388791c72", "535975c8d8c5dd9ed14a9204757b06783dd7b1fb"),
            (128, "c3582f71ebb2be66fa5dd750f80baae97554f3b015663c8be377cfcb2488c1d1", "e6992372ab022447b34f6d6032fbab707a11adef"),
            (129, "f7f3c46ba2564ff4c4c162da1f5b605f9f1c4aa6a20652a9f9a337c1a2f5b9c9", "a7bf25f1599102ab631e3052e8303a2c097d1a7e"),
            (255, "1d0850ee9bca0abc9601e9deabe1418fedec2fb6ac4150bd5302d2430f9be943", "db5a3ce0593548c3931b518da2f02c0550694841"),
            (256, "39a7eb9fedc19aabc83425c6755dd90e6f9d0c804964a1f4aaeea3b9fb599835", "2433af65183f411941345962733a8860df650139"),
            (257, "45f7f084c30bac7cbae2e1963bc6e6b0d8cb227a12927e97fb941d288fb1f9a3", "43dce65a753a287147934ed88c8972ff3061d351"),
            (1000, "c636324d47d89f2b2434dc2c994100663fbbaea880ff020fc5de89dd0f77a1ec", "bf2818c04dc2fa6dfb864eee4f8901b6a27b0d08"),
        ]
        for (length, digest32, digest20) in vectors {
            let input = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            XCTAssertEqual(hex(BLAKE2b.hash(input, outputLength: 32)), digest32, "BLAKE2b-256 of \(length) bytes")
            XCTAssertEqual(hex(BLAKE2b.hash(input, outputLength: 20)), digest20, "BLAKE2b-160 of \(length) bytes")
        }
    }

    func testBLAKE2bMatchesLibcryptoAndStreams() throws {
        // The Swift BLAKE2b at 64 bytes must equal libcrypto's BLAKE2B-512, fed in
        // one piece or in odd-sized pieces that straddle block edges.
        for length in [0, 1, 63, 128, 129, 384, 1025, 5000] {
            let input = patternBytes(length, seed: UInt32(length + 1))
            let reference = try BLAKE2b512Hasher.digest(input)
            XCTAssertEqual(BLAKE2b.hash(input, outputLength: 64), reference, "length \(length)")
            var swift = BLAKE2b(outputLength: 64)
            let streamed = try BLAKE2b512Hasher()
            var offset = 0, step = 1
            while offset < input.count {
                let end = min(input.count, offset + step)
                swift.update(input[offset..<end])
                streamed.update(input[offset..<end])
                offset = end
                step = step * 3 + 1
            }
            XCTAssertEqual(swift.finalize(), reference, "streamed Swift, length \(length)")
            XCTAssertEqual(streamed.finalize(), reference, "streamed EVP, length \(length)")
        }
    }

    // MARK: scrypt

    func testScryptParametersFollowLibsodium() {
        // minisign's defaults (libsodium's "sensitive" limits).
        XCTAssertEqual(ScryptParameters(opsLimit: 33_554_432, memLimit: 1_073_741_824), ScryptParameters(logN: 20, r: 8, p: 1))
        // libsodium's "interactive" limits.
        XCTAssertEqual(ScryptParameters(opsLimit: 524_288, memLimit: 16_777_216), ScryptParameters(logN: 14, r: 8, p: 1))
        // Operations-bound: a small opslimit with plenty of memory.
        XCTAssertEqual(ScryptParameters(opsLimit: 32_768, memLimit: 1_073_741_824), ScryptParameters(logN: 10, r: 8, p: 1))
        // Below the minimum opslimit, libsodium raises it to 32768.
        XCTAssertEqual(ScryptParameters(opsLimit: 1, memLimit: 1_073_741_824), ScryptParameters(logN: 10, r: 8, p: 1))
        // Memory-bound with spare operations: the rest goes into p.
        XCTAssertEqual(ScryptParameters(opsLimit: 1 << 30, memLimit: 16_777_216), ScryptParameters(logN: 14, r: 8, p: 2048))
        XCTAssertNotNil(ScryptParameters(opsLimit: 1 << 30, memLimit: 16_777_216).refusal, "p = 2048 is refused")
        XCTAssertNotNil(ScryptParameters(opsLimit: 1 << 40, memLimit: 1 << 40).refusal, "1 TiB is refused")
        XCTAssertNil(ScryptParameters(opsLimit: 33_554_432, memLimit: 1_073_741_824).refusal)
    }

    func testScryptKnownVector() throws {
        // RFC 7914 §12, third vector: N = 1024, r = 8, p = 16.
        let parameters = ScryptParameters(logN: 10, r: 8, p: 16)
        XCTAssertEqual(
            hex(try parameters.derive(password: Array("password".utf8), salt: Array("NaCl".utf8), length: 64)),
            "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
    }

    // MARK: Key ids and public keys

    func testKeyIDPrintsLikeMinisign() throws {
        let id = try XCTUnwrap(MinisignKeyID(bytes: [0x05, 0xbd, 0x9d, 0x25, 0x3f, 0x30, 0x78, 0xd2]))
        XCTAssertEqual(id.hex, "D278303F259DBD05")
        XCTAssertEqual(MinisignKeyID(hex: "D278303F259DBD05"), id)
        XCTAssertEqual(MinisignKeyID(hex: "d278303f259dbd05"), id)
        // Leading zeros are dropped, as minisign's `%lX` does.
        XCTAssertEqual(MinisignKeyID(bytes: [1, 0, 0, 0, 0, 0, 0, 0])?.hex, "1")
        XCTAssertEqual(MinisignKeyID(hex: "1"), MinisignKeyID(bytes: [1, 0, 0, 0, 0, 0, 0, 0]))
        XCTAssertEqual(MinisignKeyID(hex: "78303F259DBD05")?.bytes, [0x05, 0xbd, 0x9d, 0x25, 0x3f, 0x30, 0x78, 0])
        XCTAssertNil(MinisignKeyID(bytes: [1, 2, 3]))
        XCTAssertNil(MinisignKeyID(hex: ""))
        XCTAssertNil(MinisignKeyID(hex: "1D278303F259DBD05"))
        XCTAssertNil(MinisignKeyID(hex: "G278303F259DBD05"))
    }

    /// A key id whose top digit is 0 prints shorter; `minisign -R` rebuilds exactly our
    /// public key file from our secret key. (One id in sixteen: found by generating.)
    func testShortKeyIDsPrintLikeMinisign() throws {
        var pair = try MinisignKeyPair.generate()
        var attempts = 1
        while pair.publicKey.keyID.value >= 1 << 60, attempts < 1000 {
            pair = try MinisignKeyPair.generate()
            attempts += 1
        }
        XCTAssertLessThan(pair.publicKey.keyID.hex.count, 16)
        let scratch = try Scratch()
        try pair.secretKey.write(to: scratch.at("short.key"), passphrase: nil)
        let rebuilt = try runMinisign(["-R", "-s", scratch.at("short.key"), "-p", scratch.at("short.pub")])
        XCTAssertEqual(rebuilt.status, 0, rebuilt.stderr)
        XCTAssertEqual(try String(contentsOfFile: scratch.at("short.pub"), encoding: .utf8), pair.publicKey.fileContents)
    }

    func testPublicKeyParsesAndRendersMinisignForms() throws {
        let key = try MinisignPublicKey(fileContents: Self.fixturePublicKeyFile)
        XCTAssertEqual(key.keyID.hex, "D278303F259DBD05")
        XCTAssertEqual(key.base64, Self.fixturePublicKeyBase64)
        XCTAssertEqual(key.fileContents, Self.fixturePublicKeyFile, "rendered exactly as minisign -G writes it")
        XCTAssertEqual(try MinisignPublicKey(base64: Self.fixturePublicKeyBase64), key)
        XCTAssertEqual(try MinisignPublicKey(base64: "  \(Self.fixturePublicKeyBase64)\n"), key)
        XCTAssertEqual(try MinisignPublicKey(text: Self.fixturePublicKeyBase64, source: "x"), key)
        XCTAssertEqual(try MinisignPublicKey(text: Self.fixturePublicKeyFile.replacingOccurrences(of: "\n", with: "\r\n"), source: "x"), key)
        let scratch = try Scratch()
        let path = try scratch.write("key.pub", text: Self.fixturePublicKeyFile)
        XCTAssertEqual(try MinisignPublicKey.load(path: path), key)
    }

    func testMalformedPublicKeysAreNamed() throws {
        let lines = Self.fixturePublicKeyFile.split(separator: "\n").map(String.init)
        func isKeyError(_ error: FormatError) -> Bool { if case .signingKey = error { return true } else { return false } }
        assertThrows(try MinisignPublicKey(fileContents: lines[0] + "\n" + lines[1] + "\nextra\n", source: "keys/a.pub"),
                     matching: isKeyError, containing: ["keys/a.pub", "2 lines", "has 3"])
        assertThrows(try MinisignPublicKey(fileContents: lines[1] + "\n", source: "keys/a.pub"),
                     matching: isKeyError, containing: ["keys/a.pub", "has 1"])
        assertThrows(try MinisignPublicKey(fileContents: "comment\n" + lines[1] + "\n", source: "keys/a.pub"),
                     matching: isKeyError, containing: ["line 1", "untrusted comment: "])
        assertThrows(try MinisignPublicKey(base64: "RWQF!!!", source: "--public-key"),
                     matching: isKeyError, containing: ["--public-key", "base64"])
        // Truncated: a valid base64 string of the wrong length.
        assertThrows(try MinisignPublicKey(base64: String(Self.fixturePublicKeyBase64.dropLast(4)), source: "--public-key"),
                     matching: isKeyError, containing: ["42 bytes", "decodes to 39"])
        var bytes = [UInt8](Data(base64Encoded: Self.fixturePublicKeyBase64)!)
        bytes[0] = UInt8(ascii: "X")
        assertThrows(try MinisignPublicKey(base64: Data(bytes).base64EncodedString(), source: "--public-key"),
                     matching: isKeyError, containing: ["unsupported signature algorithm", "'Xd'"])
    }

    // MARK: Known answers from minisign's own files

    func testFixtureSecretKeySignsExactlyLikeMinisign() throws {
        let secret = try MinisignSecretKey(text: Self.fixtureSecretKeyFile, passphrase: nil, source: "fixture")
        XCTAssertEqual(secret.publicKey, try MinisignPublicKey(fileContents: Self.fixturePublicKeyFile))
        XCTAssertFalse(try MinisignSecretKey.isEncrypted(text: Self.fixtureSecretKeyFile, source: "fixture"))
        // Ed25519 is deterministic: the same key, message and comments give minisign's bytes.
        let text = try secret.sign(message: Self.fixtureMessage, trustedComment: "my comment")
        XCTAssertEqual(text, Self.fixtureSignature)
    }

    func testFixtureSignaturesVerify() throws {
        let key = try MinisignPublicKey(fileContents: Self.fixturePublicKeyFile)
        let verified = try MinisignSignature.verify(message: Self.fixtureMessage, signatureFile: Self.fixtureSignature, publicKeys: [key])
        XCTAssertEqual(verified.keyID.hex, "D278303F259DBD05")
        XCTAssertEqual(verified.trustedComment, "my comment")
        XCTAssertEqual(verified.untrustedComment, "signature from minisign secret key")
        XCTAssertEqual(verified.algorithm, .prehashed)

        let legacy = try MinisignSignature.verify(message: Self.fixtureMessage, signatureFile: Self.fixtureLegacySignature, publicKeys: [key])
        XCTAssertEqual(legacy.algorithm, .legacy)
        XCTAssertEqual(legacy.trustedComment, "timestamp:1795325337\tfile:msg")
        assertThrows(try MinisignSignature.verify(message: Self.fixtureMessage, signatureFile: Self.fixtureLegacySignature, publicKeys: [key], allowLegacy: false),
                     matching: { if case .unsupportedSignatureAlgorithm = $0 { return true } else { return false } }, containing: ["legacy"])
        // A parsed signature renders back to the same text.
        XCTAssertEqual(try MinisignSignature(fileContents: Self.fixtureSignature).fileContents, Self.fixtureSignature)
        // CRLF line ends (a file edited on Windows) still verify.
        XCTAssertNoThrow(try MinisignSignature.verify(
            message: Self.fixtureMessage, signatureFile: Self.fixtureSignature.replacingOccurrences(of: "\n", with: "\r\n"), publicKeys: [key]))
    }

    func testVerificationFailuresAreDistinct() throws {
        let key = try MinisignPublicKey(fileContents: Self.fixturePublicKeyFile)
        let other = try MinisignKeyPair.generate().publicKey
        // No trusted key has the signature's key id.
        assertThrows(try MinisignSignature.verify(message: Self.fixtureMessage, signatureFile: Self.fixtureSignature, publicKeys: [other], source: "m.json.minisig"),
                     matching: { if case .untrustedSigningKey = $0 { return true } else { return false } },
                     containing: ["m.json.minisig", "D278303F259DBD05", other.keyID.hex])
        assertThrows(try MinisignSignature.verify(message: Self.fixtureMessage, signatureFile: Self.fixtureSignature, publicKeys: []),
                     matching: { if case .untrustedSigningKey = $0 { return true } else { return false } }, containing: ["no public key"])
        // Same key id, different key: the signature does not verify.
        let impostor = try MinisignPublicKey(keyID: key.keyID, key: other.key)
        assertThrows(try MinisignSignature.verify(message: Self.fixtureMessage, signatureFile: Self.fixtureSignature, publicKeys: [impostor]),
                     matching: { if case .signatureMismatch = $0 { return true } else { return false } }, containing: ["D278303F259DBD05"])
        // ... but with the right key among several sharing the id, it does.
        XCTAssertNoThrow(try MinisignSignature.verify(message: Self.fixtureMessage, signatureFile: Self.fixtureSignature, publicKeys: [impostor, other, key]))
        // One flipped message bit.
        var altered = Self.fixtureMessage
        altered[0] ^= 1
        assertThrows(try MinisignSignature.verify(message: altered, signatureFile: Self.fixtureSignature, publicKeys: [key], source: "m.json.minisig"),
                     matching: { if case .signatureMismatch = $0 { return true } else { return false } }, containing: ["m.json.minisig", "altered"])
        // One changed character of the trusted comment.
        let forged = Self.fixtureSignature.replacingOccurrences(of: "trusted comment: my comment", with: "trusted comment: my commenT")
        assertThrows(try MinisignSignature.verify(message: Self.fixtureMessage, signatureFile: forged, publicKeys: [key]),
                     matching: { if case .trustedCommentMismatch = $0 { return true } else { return false } }, containing: ["trusted comment"])
    }

    func testMalformedSignatureFilesNameTheLine() throws {
        let lines = Self.fixtureSignature.split(separator: "\n").map(String.init)
        func isMalformed(_ error: FormatError) -> Bool { if case .malformedSignature = error { return true } else { return false } }
        func parse(_ lines: [String]) throws -> MinisignSignature {
            try MinisignSignature(fileContents: lines.joined(separator: "\n") + "\n", source: "v1/manifest.json.minisig")
        }
        // A missing line.
        assertThrows(try parse(Array(lines.prefix(3))), matching: isMalformed,
                     containing: ["v1/manifest.json.minisig", "line 4 (trusted comment signature) is missing"])
        assertThrows(try parse(Array(lines.prefix(2))), matching: isMalformed, containing: ["line 3 (trusted comment) is missing"])
        assertThrows(try MinisignSignature(fileContents: ""), matching: isMalformed, containing: ["empty"])
        assertThrows(try parse(lines + ["more"]), matching: isMalformed, containing: ["line 5"])
        // Truncated base64 on the signature line.
        assertThrows(try parse([lines[0], String(lines[1].dropLast(8)), lines[2], lines[3]]), matching: isMalformed,
                     containing: ["line 2 (signature)", "74"])
        assertThrows(try parse([lines[0], String(lines[1].dropLast(1)), lines[2], lines[3]]), matching: isMalformed,
                     containing: ["line 2 (signature)", "base64"])
        assertThrows(try parse([lines[0], lines[1], lines[2], "AAAA"]), matching: isMalformed,
                     containing: ["line 4 (trusted comment signature)", "64"])
        assertThrows(try parse(["comment", lines[1], lines[2], lines[3]]), matching: isMalformed, containing: ["line 1", "untrusted comment: "])
        assertThrows(try parse([lines[0], lines[1], "my comment", lines[3]]), matching: isMalformed, containing: ["line 3", "trusted comment: "])
        // An unknown algorithm.
        var structure = [UInt8](Data(base64Encoded: lines[1])!)
        structure[0] = UInt8(ascii: "X")
        structure[1] = UInt8(ascii: "Y")
        assertThrows(try parse([lines[0], Data(structure).base64EncodedString(), lines[2], lines[3]]),
                     matching: { if case .unsupportedSignatureAlgorithm = $0 { return true } else { return false } },
                     containing: ["v1/manifest.json.minisig", "'XY'"])
    }

    func testCommentsMustBeOneLine() throws {
        let secret = try MinisignKeyPair.generate().secretKey
        func isComment(_ error: FormatError) -> Bool { if case .invalidComment = error { return true } else { return false } }
        assertThrows(try secret.sign(message: [1], trustedComment: "release 1.0\nforged: yes"), matching: isComment,
                     containing: ["trusted comment", "line feed", "byte 11"])
        assertThrows(try secret.sign(message: [1], trustedComment: "a\rb"), matching: isComment, containing: ["trusted comment", "carriage return"])
        assertThrows(try secret.sign(message: [1], trustedComment: "ok", untrustedComment: "two\nlines"), matching: isComment,
                     containing: ["untrusted comment", "line feed"])
        assertThrows(try secret.sign(message: [1], trustedComment: String(repeating: "x", count: 8174)), matching: isComment,
                     containing: ["trusted comment", "8174 bytes", "8173"])
        assertThrows(try secret.sign(message: [1], trustedComment: "ok", untrustedComment: String(repeating: "x", count: 1004)), matching: isComment,
                     containing: ["untrusted comment", "1003"])
        // A comment starting with a combining mark survives parsing byte for byte
        // (as Characters it would merge with the prefix's space).
        let accented = "\u{301}accent first, then \u{1F600}"
        let signed = try secret.sign(message: [1], trustedComment: accented, untrustedComment: "\u{301}x")
        let parsed = try MinisignSignature(fileContents: signed)
        XCTAssertEqual(Array(parsed.trustedComment.utf8), Array(accented.utf8))
        XCTAssertEqual(try parsed.verify(message: [1], publicKeys: [secret.publicKey]).trustedComment, accented)
        // Empty comments are fine.
        let text = try secret.sign(message: [], trustedComment: "", untrustedComment: "")
        XCTAssertEqual(try MinisignSignature.verify(message: [], signatureFile: text, publicKeys: [secret.publicKey]).trustedComment, "")
    }

    // MARK: Secret keys

    func testSecretKeyRoundTripsAndIsChecked() throws {
        let pair = try MinisignKeyPair.generate()
        let text = try pair.secretKey.fileContents(passphrase: nil)
        XCTAssertTrue(text.hasPrefix("untrusted comment: minisign secret key \(pair.publicKey.keyID.hex) (UNENCRYPTED"), text)
        let loaded = try MinisignSecretKey(text: text, passphrase: nil, source: "k")
        XCTAssertEqual(loaded.publicKey, pair.publicKey)
        // A passphrase given for an unencrypted key is ignored.
        XCTAssertEqual(try MinisignSecretKey(text: text, passphrase: "unused", source: "k").publicKey, pair.publicKey)
        // The bare base64 line is accepted too (a CI secret holding one line).
        let base64Line = String(text.split(separator: "\n")[1])
        XCTAssertEqual(try MinisignSecretKey(text: base64Line, passphrase: nil, source: "k").publicKey, pair.publicKey)

        func isKeyError(_ error: FormatError) -> Bool { if case .signingKey = error { return true } else { return false } }
        var structure = [UInt8](Data(base64Encoded: base64Line)!)
        // Damaged seed: the checksum catches it.
        var damaged = structure
        damaged[70] ^= 0x40
        assertThrows(try MinisignSecretKey(text: Data(damaged).base64EncodedString(), passphrase: nil, source: "ci.key"),
                     matching: isKeyError, containing: ["ci.key", "checksum"])
        // Seed and stored public key disagree, with a consistent (zero) checksum.
        damaged = structure
        damaged[70] ^= 0x40
        for index in 126..<158 { damaged[index] = 0 }
        assertThrows(try MinisignSecretKey(text: Data(damaged).base64EncodedString(), passphrase: nil, source: "ci.key"),
                     matching: isKeyError, containing: ["stored public key does not match"])
        // Unknown algorithms, each named.
        structure[2] = UInt8(ascii: "A"); structure[3] = UInt8(ascii: "r")
        assertThrows(try MinisignSecretKey(text: Data(structure).base64EncodedString(), passphrase: nil, source: "ci.key"),
                     matching: isKeyError, containing: ["key derivation", "'Ar'"])
        assertThrows(try MinisignSecretKey(text: Self.fixturePublicKeyFile, passphrase: nil, source: "minisign.pub"),
                     matching: isKeyError, containing: ["minisign.pub", "158", "public key"])
        assertThrows(try MinisignSecretKey(text: "untrusted comment: x\n@@@\n", passphrase: nil, source: "ci.key"),
                     matching: isKeyError, containing: ["line 2", "base64"])
        assertThrows(try MinisignSecretKey(text: "a\nb\nc\n", passphrase: nil, source: "ci.key"),
                     matching: isKeyError, containing: ["2 lines", "has 3"])
        assertThrows(try pair.secretKey.fileContents(passphrase: ""), matching: { if case .usage = $0 { return true } else { return false } },
                     containing: ["empty passphrase"])
    }

    func testSecretKeyFromEnvironment() throws {
        let pair = try MinisignKeyPair.generate()
        let text = try pair.secretKey.fileContents(passphrase: nil)
        let loaded = try MinisignSecretKey.fromEnvironment(passphrase: nil, environment: ["MODELCAST_SIGNING_KEY": text])
        XCTAssertEqual(loaded?.publicKey, pair.publicKey)
        XCTAssertNil(try MinisignSecretKey.fromEnvironment(passphrase: nil, environment: [:]))
        XCTAssertNil(try MinisignSecretKey.fromEnvironment(passphrase: nil, environment: ["MODELCAST_SIGNING_KEY": " \n"]))
        assertThrows(try MinisignSecretKey.fromEnvironment(passphrase: nil, environment: ["MODELCAST_SIGNING_KEY": "nonsense"]) as Any,
                     matching: { if case .signingKey = $0 { return true } else { return false } },
                     containing: ["environment variable MODELCAST_SIGNING_KEY"])
    }

    func testKeyFilesAreWrittenSafely() throws {
        let scratch = try Scratch()
        let pair = try MinisignKeyPair.generate()
        let secretPath = scratch.at("minisign.key"), publicPath = scratch.at("minisign.pub")
        try pair.write(publicKeyPath: publicPath, secretKeyPath: secretPath, passphrase: nil)
        var info = stat()
        XCTAssertEqual(stat(secretPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, "secret key mode")
        XCTAssertEqual(stat(publicPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o644, "public key mode")
        XCTAssertEqual(try MinisignSecretKey.load(path: secretPath, passphrase: nil).publicKey, pair.publicKey)
        XCTAssertEqual(try MinisignPublicKey.load(path: publicPath), pair.publicKey)

        // Never overwritten without force: the old key stays byte for byte.
        let before = try String(contentsOfFile: secretPath, encoding: .utf8)
        let other = try MinisignKeyPair.generate()
        // A refusal (exit 1), not an I/O failure: running again changes nothing.
        assertThrows(try other.secretKey.write(to: secretPath, passphrase: nil), matching: { if case .usage = $0 { return true } else { return false } },
                     containing: [secretPath, "exists"])
        assertThrows(try other.write(publicKeyPath: scratch.at("new.pub"), secretKeyPath: secretPath, passphrase: nil),
                     matching: { if case .usage = $0 { return true } else { return false } }, containing: [secretPath])
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.at("new.pub")), "nothing written when one file exists")
        XCTAssertEqual(try String(contentsOfFile: secretPath, encoding: .utf8), before)
        // With force it is replaced, still 0600.
        try other.secretKey.write(to: secretPath, passphrase: nil, force: true)
        XCTAssertEqual(try MinisignSecretKey.load(path: secretPath, passphrase: nil).publicKey, other.publicKey)
        XCTAssertEqual(stat(secretPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(scratch.listing(), ["minisign.key", "minisign.pub"], "no temporary files left")
        assertThrows(try MinisignSecretKey.load(path: scratch.at("missing.key"), passphrase: nil),
                     matching: { if case .notFound = $0 { return true } else { return false } }, containing: ["missing.key"])
    }

    func testSecretsNeverAppearInDescriptions() throws {
        let secret = try MinisignSecretKey(text: Self.fixtureSecretKeyFile, passphrase: nil, source: "fixture")
        let base64Line = String(Self.fixtureSecretKeyFile.split(separator: "\n")[1])
        let seedHex = hex(Array([UInt8](Data(base64Encoded: base64Line)!)[62..<94]))
        var dumped = ""
        dump(secret, to: &dumped)
        for text in [String(describing: secret), String(reflecting: secret), "\(secret)", dumped] {
            XCTAssertTrue(text.contains("D278303F259DBD05"), text)
            XCTAssertFalse(text.lowercased().contains(seedHex), "seed leaked: \(text)")
            XCTAssertFalse(text.contains(base64Line), "key file leaked: \(text)")
        }
        // A damaged key's error shows neither the base64 line nor the seed.
        var structure = [UInt8](Data(base64Encoded: base64Line)!)
        structure[126] ^= 1
        do {
            _ = try MinisignSecretKey(text: Data(structure).base64EncodedString(), passphrase: nil, source: "ci.key")
            XCTFail("a damaged checksum must be refused")
        } catch {
            let message = "\(error) \(String(reflecting: error)) \(error.localizedDescription)"
            XCTAssertFalse(message.contains(Data(structure).base64EncodedString().prefix(40)), message)
            XCTAssertFalse(message.lowercased().contains(seedHex), message)
        }
    }

    // MARK: Interop with the minisign binary

    func testOurSignaturesVerifyWithMinisign() throws {
        let scratch = try Scratch()
        let pair = try MinisignKeyPair.generate()
        let message = Array(#"{"model":"tiny","version":"1.2.3"}"#.utf8) + patternBytes(3000)
        let messagePath = try scratch.write("manifest.json", message)
        let trusted = "timestamp:1700000000\tfile:manifest.json\tmodelcast 1.2.3"
        try scratch.write("manifest.json.minisig", text: try pair.secretKey.sign(message: message, trustedComment: trusted, untrustedComment: "signed by modelcast"))
        try pair.publicKey.write(to: scratch.at("minisign.pub"))

        let inline = try runMinisign(["-V", "-m", messagePath, "-P", pair.publicKey.base64])
        XCTAssertEqual(inline.status, 0, inline.stderr)
        XCTAssertTrue(inline.stdout.contains("Trusted comment: \(trusted)"), inline.stdout)
        let fromFile = try runMinisign(["-V", "-H", "-m", messagePath, "-p", scratch.at("minisign.pub")])
        XCTAssertEqual(fromFile.status, 0, "prehashed, so -H accepts it: \(fromFile.stderr)")

        // One flipped byte of the message.
        var altered = message
        altered[1500] ^= 0x01
        try scratch.write("manifest.json", altered)
        let tampered = try runMinisign(["-V", "-m", messagePath, "-P", pair.publicKey.base64])
        XCTAssertNotEqual(tampered.status, 0)
        XCTAssertTrue(tampered.stderr.contains("Signature verification failed"), tampered.stderr)
        try scratch.write("manifest.json", message)

        // One changed character of the trusted comment line.
        let original = try String(contentsOfFile: scratch.at("manifest.json.minisig"), encoding: .utf8)
        try scratch.write("manifest.json.minisig", text: original.replacingOccurrences(of: "modelcast 1.2.3", with: "modelcast 1.2.4"))
        let forged = try runMinisign(["-V", "-m", messagePath, "-P", pair.publicKey.base64])
        XCTAssertNotEqual(forged.status, 0)
        XCTAssertTrue(forged.stderr.contains("Comment signature verification failed"), forged.stderr)

        // The longest trusted comment this code allows is still one minisign reads.
        let longest = String(repeating: "c", count: MinisignSignature.maximumTrustedCommentBytes)
        try scratch.write("manifest.json.minisig", text: try pair.secretKey.sign(
            message: message, trustedComment: longest, untrustedComment: String(repeating: "u", count: MinisignSignature.maximumUntrustedCommentBytes)))
        let long = try runMinisign(["-V", "-m", messagePath, "-P", pair.publicKey.base64])
        XCTAssertEqual(long.status, 0, long.stderr)
    }

    func testMinisignSignaturesVerifyWithUs() throws {
        let scratch = try Scratch()
        let generated = try runMinisign(["-G", "-W", "-p", scratch.at("minisign.pub"), "-s", scratch.at("minisign.key")])
        XCTAssertEqual(generated.status, 0, generated.stderr)
        let message = patternBytes(70_000, seed: 9)
        let messagePath = try scratch.write("model.bin", message)
        let signed = try runMinisign(["-S", "-s", scratch.at("minisign.key"), "-m", messagePath, "-t", "release 7 of tiny-model"])
        XCTAssertEqual(signed.status, 0, signed.stderr)

        let publicKey = try MinisignPublicKey.load(path: scratch.at("minisign.pub"))
        let signature = try String(contentsOfFile: messagePath + ".minisig", encoding: .utf8)
        let verified = try MinisignSignature.load(path: messagePath + ".minisig").verify(message: message, publicKeys: [publicKey])
        XCTAssertEqual(verified.trustedComment, "release 7 of tiny-model")
        XCTAssertEqual(verified.keyID, publicKey.keyID)
        XCTAssertEqual(verified.algorithm, .prehashed)
        XCTAssertTrue(try String(contentsOfFile: scratch.at("minisign.pub"), encoding: .utf8).hasPrefix("untrusted comment: minisign public key \(publicKey.keyID.hex)\n"))

        // Rejected with a different key, after tampering with the data, and after
        // tampering with the trusted comment.
        let other = try MinisignKeyPair.generate().publicKey
        assertThrows(try MinisignSignature.verify(message: message, signatureFile: signature, publicKeys: [other]),
                     matching: { if case .untrustedSigningKey = $0 { return true } else { return false } }, containing: [publicKey.keyID.hex])
        var altered = message
        altered[69_999] ^= 0x80
        assertThrows(try MinisignSignature.verify(message: altered, signatureFile: signature, publicKeys: [publicKey]),
                     matching: { if case .signatureMismatch = $0 { return true } else { return false } })
        let forged = signature.replacingOccurrences(of: "release 7", with: "release 8")
        assertThrows(try MinisignSignature.verify(message: message, signatureFile: forged, publicKeys: [publicKey]),
                     matching: { if case .trustedCommentMismatch = $0 { return true } else { return false } })

        // minisign's unencrypted secret key (all-zero checksum) loads here and signs
        // what minisign verifies.
        let secret = try MinisignSecretKey.load(path: scratch.at("minisign.key"), passphrase: nil)
        XCTAssertEqual(secret.publicKey, publicKey)
        try scratch.write("model.bin.minisig", text: try secret.sign(message: message, trustedComment: "signed here"))
        let check = try runMinisign(["-V", "-m", messagePath, "-p", scratch.at("minisign.pub")])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("Trusted comment: signed here"), check.stdout)
    }

    func testLegacyMinisignSignaturesVerify() throws {
        let scratch = try Scratch()
        XCTAssertEqual(try runMinisign(["-G", "-W", "-p", scratch.at("k.pub"), "-s", scratch.at("k.key")]).status, 0)
        let message = Array("legacy format\n".utf8)
        let messagePath = try scratch.write("old.txt", message)
        let signed = try runMinisign(["-S", "-l", "-s", scratch.at("k.key"), "-m", messagePath, "-t", "legacy please"])
        XCTAssertEqual(signed.status, 0, signed.stderr)
        let text = try String(contentsOfFile: messagePath + ".minisig", encoding: .utf8)
        let parsed = try MinisignSignature(fileContents: text)
        XCTAssertEqual(parsed.algorithm, .legacy, "minisign -l writes 'Ed'")
        let key = try MinisignPublicKey.load(path: scratch.at("k.pub"))
        XCTAssertEqual(try parsed.verify(message: message, publicKeys: [key]).trustedComment, "legacy please")
        assertThrows(try parsed.verify(message: message + [0], publicKeys: [key]),
                     matching: { if case .signatureMismatch = $0 { return true } else { return false } })
    }

    func testOurUnencryptedSecretKeyWorksWithMinisign() throws {
        let scratch = try Scratch()
        let pair = try MinisignKeyPair.generate()
        try pair.write(publicKeyPath: scratch.at("ours.pub"), secretKeyPath: scratch.at("ours.key"), passphrase: nil)
        let messagePath = try scratch.write("data.bin", patternBytes(1234))
        // Standard input is /dev/null: minisign must not ask for a password.
        let signed = try runMinisign(["-S", "-s", scratch.at("ours.key"), "-m", messagePath, "-t", "by minisign with our key"])
        XCTAssertEqual(signed.status, 0, signed.stderr)
        let verified = try MinisignSignature.verify(
            message: patternBytes(1234), signatureFile: try String(contentsOfFile: messagePath + ".minisig", encoding: .utf8), publicKeys: [pair.publicKey])
        XCTAssertEqual(verified.trustedComment, "by minisign with our key")
        // minisign derives the same public key file from our secret key.
        let recreated = try runMinisign(["-R", "-s", scratch.at("ours.key"), "-p", scratch.at("recreated.pub")])
        XCTAssertEqual(recreated.status, 0, recreated.stderr)
        XCTAssertEqual(try String(contentsOfFile: scratch.at("recreated.pub"), encoding: .utf8), pair.publicKey.fileContents)
    }

    // The two tests below run scrypt with minisign's parameters (1 GiB, a few
    // seconds each time); they are the only ones that do.

    func testEncryptedKeyFromMinisignLoadsWithItsPassphrase() throws {
        let scratch = try Scratch()
        let passphrase = "correct horse battery staple"
        // minisign -G reads the password twice from standard input when it is not a terminal.
        let generated = try runMinisign(["-G", "-p", scratch.at("enc.pub"), "-s", scratch.at("enc.key")], input: "\(passphrase)\n\(passphrase)\n")
        XCTAssertEqual(generated.status, 0, generated.stderr)
        let publicKey = try MinisignPublicKey.load(path: scratch.at("enc.pub"))
        XCTAssertTrue(try MinisignSecretKey.isEncrypted(path: scratch.at("enc.key")))

        assertThrows(try MinisignSecretKey.load(path: scratch.at("enc.key"), passphrase: nil),
                     matching: { $0 == .passphraseRequired(source: scratch.at("enc.key")) }, containing: ["enc.key", "passphrase"])

        let secret = try MinisignSecretKey.load(path: scratch.at("enc.key"), passphrase: passphrase)
        XCTAssertEqual(secret.publicKey, publicKey)
        let message = Array("signed with a decrypted minisign key".utf8)
        XCTAssertNoThrow(try MinisignSignature.verify(
            message: message, signatureFile: try secret.sign(message: message, trustedComment: "t"), publicKeys: [publicKey]))

        let wrong = "correct horse battery stapler"
        do {
            _ = try MinisignSecretKey.load(path: scratch.at("enc.key"), passphrase: wrong)
            XCTFail("a wrong passphrase must be refused")
        } catch let error as ModelCastError {
            XCTAssertEqual(error, .wrongPassphrase(source: scratch.at("enc.key")))
            XCTAssertTrue(error.message.contains("wrong passphrase or corrupt key"), error.message)
            XCTAssertTrue(error.message.contains(scratch.at("enc.key")), error.message)
            // Neither passphrase, nor any part of them, appears anywhere in the error.
            let everything = "\(error) \(String(reflecting: error)) \(error.localizedDescription)"
            for secretText in [passphrase, wrong, "horse", "staple"] {
                XCTAssertFalse(everything.contains(secretText), "passphrase leaked: \(everything)")
            }
        }
    }

    func testOurEncryptedKeyWorksWithMinisign() throws {
        let scratch = try Scratch()
        let pair = try MinisignKeyPair.generate()
        let passphrase = "pass phrase with spaces & ünïcödé"
        try pair.write(publicKeyPath: scratch.at("enc.pub"), secretKeyPath: scratch.at("enc.key"), passphrase: passphrase)
        let text = try String(contentsOfFile: scratch.at("enc.key"), encoding: .utf8)
        XCTAssertTrue(text.hasPrefix("untrusted comment: minisign encrypted secret key \(pair.publicKey.keyID.hex)\n"), text)
        // Really encrypted: "Sc", minisign's limits, and no plain key id inside.
        let structure = [UInt8](Data(base64Encoded: String(text.split(separator: "\n")[1]))!)
        XCTAssertEqual(structure.count, 158)
        XCTAssertEqual(Array(structure[0..<6]), Array("EdScB2".utf8))
        XCTAssertEqual(littleEndianValue(structure[38..<46]), 33_554_432)
        XCTAssertEqual(littleEndianValue(structure[46..<54]), 1_073_741_824)
        XCTAssertNotEqual(Array(structure[54..<62]), pair.publicKey.keyID.bytes)
        XCTAssertTrue(try MinisignSecretKey.isEncrypted(text: text, source: "enc.key"))

        let messagePath = try scratch.write("data.bin", patternBytes(4321))
        // minisign -S reads the password once from standard input.
        let signed = try runMinisign(["-S", "-s", scratch.at("enc.key"), "-m", messagePath, "-t", "encrypted key"], input: passphrase + "\n")
        XCTAssertEqual(signed.status, 0, signed.stderr)
        let verified = try MinisignSignature.verify(
            message: patternBytes(4321), signatureFile: try String(contentsOfFile: messagePath + ".minisig", encoding: .utf8), publicKeys: [pair.publicKey])
        XCTAssertEqual(verified.trustedComment, "encrypted key")

        let refused = try runMinisign(["-S", "-s", scratch.at("enc.key"), "-m", messagePath, "-x", scratch.at("wrong.minisig")], input: "not it\n")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains("Wrong password"), refused.stderr)
    }

    /// A pinned key for which signatures can be forged without a secret — a point of small
    /// order, or a non-canonical encoding (y ≥ p) — is refused when it is read, with either
    /// sign bit; a genuine key is taken. (swift-crypto would verify forgeries against them.)
    func testWeakPublicKeysAreRefused() throws {
        let weak = [
            String(repeating: "00", count: 32),
            "01" + String(repeating: "00", count: 31),
            "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
            "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
            "ec" + String(repeating: "ff", count: 30) + "7f",
            "ed" + String(repeating: "ff", count: 30) + "7f",
            "ee" + String(repeating: "ff", count: 30) + "7f",
            "ff" + String(repeating: "ff", count: 30) + "7f",
        ]
        func line(_ hex: String, signBit: Bool) -> String {
            var key = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
            }
            if signBit { key[31] |= 0x80 }
            return Data(Array("Ed".utf8) + [1, 2, 3, 4, 5, 6, 7, 8] + key).base64EncodedString()
        }
        for hex in weak {
            for signBit in [false, true] {
                XCTAssertThrowsError(try MinisignPublicKey(base64: line(hex, signBit: signBit)), "\(hex) sign \(signBit)") { error in
                    let text = String(describing: error)
                    XCTAssertTrue(text.contains("not a key to trust"), text)
                }
            }
        }
        let genuine = try MinisignKeyPair.generate().publicKey
        XCTAssertNoThrow(try MinisignPublicKey(base64: Data(Array("Ed".utf8) + genuine.keyID.bytes + genuine.key).base64EncodedString()))
    }
}
