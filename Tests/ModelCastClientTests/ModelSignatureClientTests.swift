import Foundation
import XCTest
import ModelCastClient
import ModelCastCore
import ModelCastTestSupport

/// ModelCastClient with a pinned model-signing key (issue 29): every version it switches
/// to must carry an OpenSSF model signature that key verifies and whose statement lists
/// exactly the files on disk; anything else is refused by name with nothing switched.
/// Against `modelcast serve` on 127.0.0.1, releases published with the real CLI.
final class ModelSignatureClientTests: XCTestCase {
    /// The SHA-256 of a file, hex.
    func sha256(_ path: String) throws -> String {
        try SHA256Hasher.digest(Data(contentsOf: URL(fileURLWithPath: path))).hex
    }

    /// `hex` with its first digit changed.
    func flipped(_ hex: String) -> String {
        (hex.first == "0" ? "1" : "0") + hex.dropFirst()
    }

    /// What a several-file model's statement leaves out: model_signing's defaults and the
    /// client's records in the version directory.
    let versionDirectoryIgnores = [".git", ".gitattributes", ".github", ".gitignore", ".modelcast-version.json", ".modelcast-segments"]

    /// Runs an update that must be refused with an error `matches` accepts and whose text
    /// contains every `mentions`; the device's `current`, versions and state stay as they were.
    func assertRefused(_ updater: ModelUpdater, directory: String, mentions: [String], file: StaticString = #filePath, line: UInt = #line,
                       _ matches: (ClientError) -> Bool) async throws {
        let before = DeviceDisk(directory)
        do {
            let outcome = try await updater.update()
            XCTFail("the update was not refused: \(outcome)", file: file, line: line)
        } catch let error as ClientError {
            XCTAssertTrue(matches(error), "unexpected error: \(error)", file: file, line: line)
            for word in mentions { XCTAssertTrue(error.description.contains(word), "'\(word)' not in: \(error.description)", file: file, line: line) }
        }
        XCTAssertEqual(DeviceDisk(directory), before, "a refused update changed the device", file: file, line: line)
    }

    /// A single GGUF-like file, signed by the Core signer as `model_signing` signs a file
    /// (its one resource named `.`): a pinning device fetches the bundle and installs; a
    /// device without a key fetches no bundle.
    func testASignedSingleFileModelInstalls() async throws {
        let site = try ModelSignatureSite()
        let model = try site.work.write("v1/m.bin", patternBytes(200_000, seed: 1))
        try site.publish([model], version: "1.0.0")
        let signed = try ModelSigning.sign(model: model, key: site.key, signaturePath: nil)
        XCTAssertEqual(signed.statement.resources.map(\.path.rawValue), ["."])
        try site.attach(signed.bundle.json)
        try site.site.start()

        let updater = try ModelUpdater(try site.configuration(directory: "device"))
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        XCTAssertEqual(try sha256(try XCTUnwrap(updater.installed("m")).mainFile.path), try sha256(model))
        XCTAssertEqual(site.bundleRequests.count, 1, "the bundle is fetched once")

        let plain = try ModelUpdater(site.site.configuration(directory: "plain-device", keys: []))
        _ = try await plain.update()
        XCTAssertEqual(plain.installed("m")?.version, "1.0.0")
        XCTAssertEqual(site.bundleRequests.count, 1, "without a pinned key no bundle is fetched")
    }

    /// A zipped `.mlpackage` signed as its directory: installs (every unpacked entry is
    /// hashed). After an update, one unpacked file of the kept 1.0.0 is changed on disk;
    /// the rollback to it is refused naming that file (so entries are hashed from the disk,
    /// and a kept version is checked again), and the device stays on 2.0.0.
    func testASignedZippedPackageInstallsAndItsEntriesAreHashedFromDisk() async throws {
        let site = try ModelSignatureSite()
        let v1 = repositoryRoot + "/examples/models/TinyClassifier.mlpackage"
        let v2 = repositoryRoot + "/examples/models/retrained/TinyClassifier.mlpackage"
        try site.publish([v1], version: "1.0.0")
        let bundle1 = try ModelSigning.sign(model: v1, key: site.key, signaturePath: nil).bundle.json
        try site.attach(bundle1)
        try site.site.start()
        let updater = try ModelUpdater(try site.configuration(directory: "device"))
        let first = try await updater.update()
        XCTAssertEqual(first, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let installed = try XCTUnwrap(updater.installed("m"))
        XCTAssertEqual(installed.mainFile.lastPathComponent, "TinyClassifier.mlpackage")
        let weights = "Data/com.apple.CoreML/weights/weight.bin"
        XCTAssertEqual(try sha256(installed.mainFile.path + "/" + weights), try sha256(v1 + "/" + weights))

        try site.publish([v2], version: "2.0.0")
        try site.attach(try ModelSigning.sign(model: v2, key: site.key, signaturePath: nil).bundle.json)
        let second = try await updater.update()
        XCTAssertEqual(second, .updated(sequence: 2, models: ["m": "2.0.0"]))

        let kept = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: site.work.at("device/models/m/versions")).first { $0.hasPrefix("1.0.0-") })
        let keptWeights = site.work.at("device/models/m/versions/\(kept)/TinyClassifier.mlpackage/\(weights)")
        try Data(patternBytes(64, seed: 9)).write(to: URL(fileURLWithPath: keptWeights))
        try site.run(["rollback", site.site.root, "--version", "1.0.0"])
        try site.attach(bundle1)
        try await assertRefused(updater, directory: site.work.at("device"), mentions: ["'m'", "'\(weights)' changed", try sha256(keptWeights)]) {
            if case .modelSignatureMismatch("m", "1.0.0", let differences) = $0 { return differences.count == 1 }
            return false
        }
        XCTAssertEqual(updater.installed("m")?.version, "2.0.0")
    }

    /// A model and its companion: the signature covers the version directory, each file
    /// named by its placement, the client's records left out by the statement.
    func testASignedModelWithACompanionInstalls() async throws {
        let site = try ModelSignatureSite()
        let model = try site.work.write("v1/m.bin", patternBytes(150_000, seed: 3))
        let companion = try site.work.write("v1/m-extra.bin", patternBytes(20_000, seed: 4))
        try site.publish([model, companion], version: "1.0.0")
        let statement = try ModelSignatureSite.statement(["m.bin": try sha256(model), "m-extra.bin": try sha256(companion)],
                                                         ignorePaths: versionDirectoryIgnores)
        try site.attach(try site.bundle(statement))
        try site.site.start()
        let updater = try ModelUpdater(try site.configuration(directory: "device"))
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 1, models: ["m": "1.0.0"]))
        let installed = try XCTUnwrap(updater.installed("m"))
        XCTAssertEqual(try sha256(installed.directory.appendingPathComponent("m-extra.bin").path), try sha256(companion))
        XCTAssertTrue(FileManager.default.fileExists(atPath: installed.directory.appendingPathComponent(".modelcast-version.json").path),
                      "the client's record is in the signed directory, left out by the statement")
    }

    /// A device with a signed 1.0.0 (a model and its companion) installed, and the files of
    /// the next release, published as 2.0.1, 2.0.2, … one broken signature at a time.
    struct NextRelease {
        let site: ModelSignatureSite
        let updater: ModelUpdater
        let directory: String
        let paths: [String]
        /// The next release's files by name, with their SHA-256.
        let files: [String: String]
        /// Their statement, as it should be.
        let good: ModelSigningStatement
        var count = 0

        /// Publishes the files once more under the next 2.0.x; returns that version.
        @discardableResult
        mutating func publish() throws -> String {
            count += 1
            try site.publish(paths, version: "2.0.\(count)")
            return "2.0.\(count)"
        }
    }

    func installedCompanionModel() async throws -> NextRelease {
        let site = try ModelSignatureSite()
        let model = try site.work.write("v1/m.bin", patternBytes(120_000, seed: 5))
        let companion = try site.work.write("v1/m-extra.bin", patternBytes(10_000, seed: 6))
        try site.publish([model, companion], version: "1.0.0")
        try site.attach(try site.bundle(try ModelSignatureSite.statement(["m.bin": try sha256(model), "m-extra.bin": try sha256(companion)],
                                                                         ignorePaths: versionDirectoryIgnores)))
        try site.site.start()
        let updater = try ModelUpdater(try site.configuration(directory: "device"))
        _ = try await updater.update()
        XCTAssertEqual(updater.installed("m")?.version, "1.0.0")
        let paths = [try site.work.write("v2/m.bin", patternBytes(130_000, seed: 7)), try site.work.write("v2/m-extra.bin", patternBytes(11_000, seed: 8))]
        let files = ["m.bin": try sha256(paths[0]), "m-extra.bin": try sha256(paths[1])]
        return NextRelease(site: site, updater: updater, directory: site.work.at("device"), paths: paths, files: files,
                           good: try ModelSignatureSite.statement(files, ignorePaths: versionDirectoryIgnores))
    }

    /// Each bundle that cannot be trusted is refused by name before anything is built, and
    /// `current`, the versions kept and the state stay exactly as they were: none named,
    /// made by another key, an altered statement, bytes other than the manifest's.
    func testBundlesThatCannotBeTrustedAreRefusedAndNothingSwitches() async throws {
        var next = try await installedCompanionModel()
        let (site, updater, directory) = (next.site, next.updater, next.directory)
        try next.publish()
        try await assertRefused(updater, directory: directory, mentions: ["'m'", "'2.0.1'", "no model_signature"]) {
            $0 == .modelSignatureMissing(model: "m", version: "2.0.1")
        }

        try next.publish()
        let (other, _, otherHint) = try ModelSignatureSite.keygen(site.work, name: "other")
        try site.attach(try site.bundle(next.good, signer: other))
        try await assertRefused(updater, directory: directory, mentions: ["another key", otherHint, site.printedHint]) {
            $0 == .modelSignatureUntrustedKey(model: "m", keyHint: otherHint, pinnedHint: site.printedHint)
        }

        try next.publish()
        let signed = try ModelSignatureBundle.sign(next.good, with: site.key)
        var changed = next.files
        changed["m.bin"] = flipped(next.files["m.bin"]!)
        let payload = try ModelSignatureSite.statement(changed, ignorePaths: versionDirectoryIgnores).payload()
        let alteredURL = try site.attach(ModelSignatureBundle(keyHint: signed.keyHint, payload: payload, signature: signed.signature).json)
        try await assertRefused(updater, directory: directory, mentions: ["does not verify"]) {
            if case .badModelSignature("m", alteredURL, _) = $0 { return true }
            return false
        }

        try next.publish()
        let bytes = try site.bundle(next.good)
        let actual = try SHA256Hasher.digest(bytes).hex
        let claimed = flipped(actual)
        let url = try site.attach(bytes, claimedSHA256: claimed)
        try await assertRefused(updater, directory: directory, mentions: [claimed]) {
            $0 == .hashMismatch(model: "m", file: url, expected: claimed, actual: actual)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory + "/models/m/versions").count, 1, "the refusals built nothing")
    }

    /// Each statement that does not list exactly the files the staged version holds is
    /// refused naming the difference, the staged version is removed and nothing switches: a
    /// flipped digest, a file the model lacks, a file left out, the client's record not
    /// ignored. The good statement then installs.
    func testStatementsThatDoNotMatchTheFilesAreRefusedAndNothingSwitches() async throws {
        var next = try await installedCompanionModel()
        let (site, updater, directory, files) = (next.site, next.updater, next.directory, next.files)
        var changed = files
        changed["m.bin"] = flipped(files["m.bin"]!)
        let wrongStatements: [(files: [String: String], ignores: [String], difference: String)] = [
            (changed, versionDirectoryIgnores, "'m.bin' changed (signed sha256 \(changed["m.bin"]!), now \(files["m.bin"]!))"),
            (files.merging(["notes.txt": files["m.bin"]!]) { a, _ in a }, versionDirectoryIgnores, "missing 'notes.txt' (signed, not in the model)"),
            (["m.bin": files["m.bin"]!], versionDirectoryIgnores, "extra 'm-extra.bin' (in the model, not signed)"),
            (files, [".git"], "extra '.modelcast-version.json' (in the model, not signed)"),
        ]
        for wrong in wrongStatements {
            let version = try next.publish()
            try site.attach(try site.bundle(try ModelSignatureSite.statement(wrong.files, ignorePaths: wrong.ignores)))
            try await assertRefused(updater, directory: directory, mentions: ["'m'", "'\(version)'", wrong.difference]) {
                $0 == .modelSignatureMismatch(model: "m", version: version, differences: [wrong.difference])
            }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory + "/models/m/versions").count, 1, "no staged version is left")

        let version = try next.publish()
        try site.attach(try site.bundle(next.good))
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: Int64(next.count + 1), models: ["m": version]))
    }

    /// A rollback to the kept 1.0.0 checks its signature again: the rollback manifest the
    /// CLI writes names none, so it is refused; with 1.0.0's bundle it is switched to
    /// without downloading the model again.
    func testARollbackToAKeptVersionIsCheckedAgain() async throws {
        let site = try ModelSignatureSite()
        let v1 = try site.work.write("v1/m.bin", patternBytes(100_000, seed: 11))
        let v2 = try site.work.write("v2/m.bin", patternBytes(100_000, seed: 12))
        try site.publish([v1], version: "1.0.0")
        let bundle1 = try ModelSigning.sign(model: v1, key: site.key, signaturePath: nil).bundle.json
        try site.attach(bundle1)
        try site.site.start()
        let updater = try ModelUpdater(try site.configuration(directory: "device"))
        _ = try await updater.update()
        try site.publish([v2], version: "2.0.0")
        try site.attach(try ModelSigning.sign(model: v2, key: site.key, signaturePath: nil).bundle.json)
        _ = try await updater.update()
        XCTAssertEqual(updater.installed("m")?.version, "2.0.0")

        try site.run(["rollback", site.site.root, "--version", "1.0.0"])
        try site.removeSignature()
        try await assertRefused(updater, directory: site.work.at("device"), mentions: ["'1.0.0'", "no model_signature"]) {
            $0 == .modelSignatureMissing(model: "m", version: "1.0.0")
        }

        let downloads = site.site.requests.filter { $0.contains("/models/models/m/1.0.0/") }.count
        let bundles = site.bundleRequests.count
        try site.attach(bundle1)
        let outcome = try await updater.update()
        XCTAssertEqual(outcome, .updated(sequence: 3, models: ["m": "1.0.0"]))
        XCTAssertEqual(try sha256(try XCTUnwrap(updater.installed("m")).mainFile.path), try sha256(v1))
        XCTAssertEqual(site.site.requests.filter { $0.contains("/models/models/m/1.0.0/") }.count, downloads, "the kept 1.0.0 is reused")
        XCTAssertEqual(site.bundleRequests.count, bundles + 1, "its signature is fetched and checked again")
    }

    /// Bundles `model_signing sign key` (the reference implementation) writes, for a file
    /// and for an `.mlpackage` directory, install.
    func testModelSigningReferenceSignaturesInstall() async throws {
        guard let tool = which("model_signing") else {
            XCTFail("model_signing is not installed: run scripts/setup")
            return
        }
        let site = try ModelSignatureSite()
        let file = try site.work.write("v1/m.bin", patternBytes(50_000, seed: 13))
        let package = repositoryRoot + "/examples/models/TinyClassifier.mlpackage"
        for (index, model) in [file, package].enumerated() {
            try site.publish([model], version: "\(index + 1).0.0")
            try site.site.start()
            let signature = site.work.at("reference-\(index).sig")
            let signed = try runProcess(tool, ["sign", "key", model, "--private_key", site.work.at("signing.pem"), "--signature", signature])
            XCTAssertEqual(signed.status, 0, signed.stderr)
            try site.attach(try Data(contentsOf: URL(fileURLWithPath: signature)))
            let updater = try ModelUpdater(try site.configuration(directory: "device-\(index)"))
            let outcome = try await updater.update()
            XCTAssertEqual(outcome, .updated(sequence: Int64(index + 1), models: ["m": "\(index + 1).0.0"]))
        }
    }

    /// The hint of a key `modelcast keygen --model-signing` wrote is the one the CLI
    /// printed and computes (libcrypto's PEM), and the key's canonical PEM is the file
    /// byte for byte; the same key with a compressed point has the same hint.
    func testTheKeyHintIsTheCLIsAndACompressedPointGivesTheSame() throws {
        let work = try Scratch()
        let (_, path, printed) = try ModelSignatureSite.keygen(work, name: "k")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let key = try ModelSigningPublicKey(pem: text)
        XCTAssertEqual(printed.count, 64)
        XCTAssertEqual(key.hint, printed)
        XCTAssertEqual(key.hint, try P256PublicKey.load(path: path).hint)
        XCTAssertEqual(key.canonicalPEM, text)

        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = [UInt8](try XCTUnwrap(Data(base64Encoded: body)))
        XCTAssertEqual(der.count, 91)
        let point = Array(der.suffix(65))
        let compressed = [0x30, 0x39, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
                          0x03, 0x01, 0x07, 0x03, 0x22, 0x00, 0x02 | (point[64] & 1)] + point[1...32]
        let pem = "-----BEGIN PUBLIC KEY-----\r\n" + Data(compressed).base64EncodedString() + "\r\n-----END PUBLIC KEY-----\r\n"
        let fromCompressed = try ModelSigningPublicKey(pem: pem)
        XCTAssertEqual(fromCompressed.hint, printed)
        XCTAssertEqual(fromCompressed, key)
        let unixPEM = pem.replacingOccurrences(of: "\r\n", with: "\n")
        XCTAssertEqual(try P256PublicKey(pem: unixPEM, source: "compressed").hint, printed, "libcrypto agrees")
    }

    /// What is not a PEM P-256 public key is refused, saying what it is.
    func testKeysThatAreNotP256PublicKeysAreRefusedByName() throws {
        let work = try Scratch()
        _ = try ModelSignatureSite.keygen(work, name: "k")
        let p384 = """
            -----BEGIN PUBLIC KEY-----
            MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAEpibV5yyty6FK4UZ93Y6tRckyCurF5lVJ
            MA19guOzZ93XR3CUjeYrD1nt552FEPB5EgO3dRBFoDkV3xoMphCxOAWdtY+i52zN
            PIfbxzwlBpPIqyElNRghN/VfYl+6KjlF
            -----END PUBLIC KEY-----
            """
        let ed25519 = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAkgxpxbzzy6J4zoESEoTneR1wTDRjEU+Te9LWni/xfk0=\n-----END PUBLIC KEY-----\n"
        let offCurve = "-----BEGIN PUBLIC KEY-----\n" + Data([0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86,
                                                           0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04] + [UInt8](repeating: 1, count: 64))
            .base64EncodedString() + "\n-----END PUBLIC KEY-----\n"
        let cases: [(String, String)] = [
            (try String(contentsOfFile: work.at("k.pem"), encoding: .utf8), "model-signing public key: this is a private key ('PRIVATE KEY')"),
            (p384, "the key is an EC key on curve secp384r1; only P-256 (prime256v1) is supported"),
            (ed25519, "the key's algorithm is Ed25519"),
            (offCurve, "its point is not on the P-256 curve"),
            ("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "holds a PEM 'CERTIFICATE', not a PUBLIC KEY"),
            ("-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n", "body is not base64"),
            ("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "does not hold a DER SubjectPublicKeyInfo"),
            ("RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3", "not a PEM file"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try ModelSigningPublicKey(pem: text), expected) { error in
                guard case ClientError.invalidModelSigningKey = error else { return XCTFail("\(error)") }
                XCTAssertTrue("\(error)".contains(expected), "'\(expected)' not in: \(error)")
            }
        }
    }

    /// The example device's `--model-signing-public-key FILE`: the right key installs, another
    /// key is refused naming both hints, a private key file is a usage error.
    func testTheExampleDeviceChecksModelSignatures() throws {
        let site = try ModelSignatureSite()
        let model = try site.work.write("v1/m.bin", patternBytes(40_000, seed: 14))
        try site.publish([model], version: "1.0.0")
        try site.attach(try ModelSigning.sign(model: model, key: site.key, signaturePath: nil).bundle.json)
        try site.site.start()
        let device = modelcastBinary.replacingOccurrences(of: "/modelcast", with: "/modelcast-device")
        func run(_ key: String, _ directory: String) throws -> ProcessOutput {
            try runProcess(device, ["--manifest", site.site.base + "/manifest.json", "--dir", site.work.at(directory), "--model-signing-public-key", key])
        }
        let good = try run(site.publicKeyPath, "phone")
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertEqual(good.stdout, "updated to sequence 1: m 1.0.0\nrunning m 1.0.0: models/m/current/m.bin\n")
        let (_, otherKey, otherHint) = try ModelSignatureSite.keygen(site.work, name: "other")
        let wrong = try run(otherKey, "other-phone")
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stderr.contains("made with another key (key hint '\(site.printedHint)'), not the one this app pins (hint \(otherHint))"), wrong.stderr)
        let privateKey = try run(site.work.at("signing.pem"), "third-phone")
        XCTAssertEqual(privateKey.status, 2)
        XCTAssertTrue(privateKey.stderr.contains("this is a private key"), privateKey.stderr)
    }
}
