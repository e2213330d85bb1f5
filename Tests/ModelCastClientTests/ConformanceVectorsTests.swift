import Foundation
import XCTest
@testable import ModelCastClient
import ModelCastCore
import ModelCastFormat

/// The conformance kit's shared test vectors (`conformance/vectors/`, written by its
/// `generate.py`): a client library in any language reads them in its unit tests, and the
/// Swift implementation must agree with every one. Each test reads one set and fails naming
/// the vector that disagrees.
final class ConformanceVectorsTests: XCTestCase {
    /// `conformance/vectors/` of this checkout, found from this file's place in it.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("conformance/vectors")

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: Self.root.appendingPathComponent(path)) }
    func load(_ path: String) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: bytes(path)) }

    // MARK: rollout/

    func testRolloutBucketsAndDecisions() throws {
        let vectors = try load("rollout/rollout.json")
        let buckets = vectors("buckets").items
        XCTAssertGreaterThan(buckets.count, 40)
        for vector in buckets {
            XCTAssertEqual(Rollout.bucket(salt: vector("salt").text, deviceID: vector("device_id").text), Int(vector("bucket").integer),
                           "bucket of \(vector.compact)")
        }
        let published = try XCTUnwrap(parseTimestamp("2026-06-01T00:00:00Z"))
        let decisions = vectors("decisions").items
        XCTAssertGreaterThan(decisions.count, 100)
        for vector in decisions {
            // The percentage as a manifest writes it (0.5, 99.99), read as a client reads it.
            let block = JSONValue.object([.init("percent", vector("percent")), .init("salt", vector("salt")), .init("started_at", .string("2026-01-01T00:00:00Z"))])
            let rollout = try JSONDecoder().decode(Rollout.self, from: Data(block.serialized().utf8))
            XCTAssertEqual(rollout.basisPoints, Int(vector("basis_points").integer), vector.compact)
            XCTAssertEqual(rollout.selects(deviceID: vector("device_id").text, at: published), vector("candidate").flag, vector.compact)
        }
        let schedule = vectors("schedule")
        let rollout = try JSONDecoder().decode(Rollout.self, from: Data(schedule("rollout").serialized().utf8))
        XCTAssertTrue(rollout.problems.isEmpty, "\(rollout.problems)")
        for vector in schedule("evaluations").items {
            let at = try XCTUnwrap(parseTimestamp(vector("at").text))
            XCTAssertEqual(rollout.basisPoints(at: at), Int(vector("basis_points").integer), vector.compact)
            XCTAssertEqual(rollout.selects(deviceID: vector("device_id").text, at: at), vector("candidate").flag, vector.compact)
        }
    }

    // MARK: variants/

    /// `base.json` of the manifest set with model `m` replaced by `model`.
    func release(model: JSONValue) throws -> Data {
        let base = try load("manifest/base.json")
        return Data(base.setting("models", .object([.init("m", model)])).serialized().utf8)
    }

    /// A model whose variants have these names and requirements, each with one file.
    func variantModel(_ variants: [JSONValue]) throws -> Data {
        let entries: [JSONValue] = variants.enumerated().map { index, variant in
            let name = variant("name").text
            let key = "models/m/variants/\(name)/1.0.0/m.bin"
            let file = JSONValue.object([
                .init("name", .string("m.bin")), .init("key", .string(key)), .init("url", .string("https://cdn.example.com/models/" + key)),
                .init("sha256", .string(String(repeating: "0", count: 62) + String(format: "%02x", index))), .init("size", .int(100)),
                .init("content_type", .string("application/octet-stream")),
            ])
            return .object([.init("name", .string(name)), .init("requires", variant("requires")), .init("version", .string("1.0.0")), .init("files", .array([file]))])
        }
        return try release(model: .object([.init("version", .string("1.0.0")), .init("files", entries[0]("files")),
                                           .init("variant", entries[0]("name")), .init("variants", .array(entries))]))
    }

    func testVariantChoices() throws {
        let vectors = try load("variants/variants.json")
        let choices = vectors("choices").items
        XCTAssertGreaterThan(choices.count, 25)
        for vector in choices {
            let label = vector("name").text
            let device = vector("device")
            let profile = DeviceProfile(
                physicalMemory: device("memory").optionalInteger, platform: device("platform").optionalText.flatMap(DevicePlatform.init(rawValue:)),
                osVersion: device("os_version").optionalText, architecture: device("architecture").optionalText,
                accelerators: Set(device("accelerators").items.compactMap { Accelerator(rawValue: $0.text) }),
                capabilities: Set(device("capabilities").items.map(\.text)))
            let model = try XCTUnwrap(try Release.decode(variantModel(vector("variants").items), source: label).checkedModels().first)
            let choice = model.choice(for: profile)
            XCTAssertEqual(choice.chosen?.variant?.rawValue, vector("chosen").optionalText, label)
            let skipped = vector("skipped").items
            XCTAssertEqual(choice.skipped.map(\.variant), skipped.map { $0("variant").text }, label)
            for (actual, expected) in zip(choice.skipped, skipped) {
                XCTAssertEqual(actual.unmet.map(\.requirement), expected("reasons").items.map { $0("requirement").text }, "\(label): requirements")
                XCTAssertEqual(actual.reasons, expected("reasons").items.map { $0("message").text }, "\(label): messages")
            }
        }
        for vector in vectors("invalid_requirements").items {
            let label = vector("name").text
            let variants: [JSONValue] = [.object([.init("name", .string("v")), .init("requires", vector("requires"))]),
                                         .object([.init("name", .string("any")), .init("requires", .object([]))])]
            XCTAssertThrowsError(try Release.decode(variantModel(variants), source: label), label) { error in
                XCTAssertTrue("\(error)".contains(vector("field").text), "\(label): \(error)")
            }
        }
    }

    // MARK: app-version/

    func testAppAndModelVersions() throws {
        let vectors = try load("app-version/app-version.json")
        let app = vectors("app_version")
        for vector in app("valid").items {
            let text = vector("text").text
            let version = try AppVersion(text)
            XCTAssertEqual(version.numbers, vector("numbers").items.map { UInt64($0.integer) }, text)
            XCTAssertEqual(version.prerelease, vector("prerelease").items.map(\.text), text)
        }
        for vector in app("invalid").items {
            XCTAssertThrowsError(try AppVersion(vector("text").text), vector("why").text)
        }
        for vector in app("comparisons").items {
            let a = try AppVersion(vector("a").text), b = try AppVersion(vector("b").text)
            XCTAssertEqual(order(a, b), vector("order").text, vector.compact)
            XCTAssertEqual(order(b, a), mirrored(vector("order").text), vector.compact)
        }
        let model = vectors("model_version")
        for vector in model("valid").items {
            let text = vector("text").text
            let version = try ModelVersion(text).semantic
            XCTAssertEqual([version.major, version.minor, version.patch], vector("core").items.map { UInt64($0.text) }, text)
            XCTAssertEqual(version.prerelease, vector("prerelease").items.map(\.text), text)
        }
        for vector in model("invalid").items {
            XCTAssertThrowsError(try ModelVersion(vector("text").text), vector("why").text)
        }
        for vector in model("comparisons").items {
            let a = try ModelVersion(vector("a").text).semantic, b = try ModelVersion(vector("b").text).semantic
            XCTAssertEqual(order(a, b), vector("order").text, vector.compact)
            XCTAssertEqual(order(b, a), mirrored(vector("order").text), vector.compact)
        }
    }

    func order<T: Comparable>(_ a: T, _ b: T) -> String { a < b ? "<" : b < a ? ">" : a == b ? "=" : "incomparable" }
    func mirrored(_ order: String) -> String { order == "<" ? ">" : order == ">" ? "<" : order }

    // MARK: segment-index/

    func testSegmentIndexes() throws {
        let indexes = try load("segment-index/segment-index.json")("indexes").items
        XCTAssertGreaterThan(indexes.count, 15)
        for vector in indexes {
            let file = vector("file").text
            let data = [UInt8](try bytes("segment-index/" + file))
            guard vector("valid").flag else {
                XCTAssertThrowsError(try SegmentIndex(decoding: data), file) { error in
                    XCTAssertTrue("\(error)".contains(vector("problem").text), "\(file): \(error)")
                }
                continue
            }
            let index = try SegmentIndex(decoding: data)
            XCTAssertEqual(index.encoded(), data, "\(file) re-encodes to its bytes")
            XCTAssertEqual(Int64(data.count), vector("index_size").integer, file)
            XCTAssertEqual(SHA256Small.hash(data).hexString, vector("index_sha256").text, file)
            XCTAssertEqual(Int(vector("format_version").integer), Int(SegmentIndex.formatVersion), file)
            XCTAssertEqual(index.scheme, vector("scheme").text, file)
            XCTAssertEqual(index.artifactSize, vector("artifact_size").integer, file)
            XCTAssertEqual(index.artifactSHA256.hexString, vector("artifact_sha256").text, file)
            let segments = vector("segments").items
            XCTAssertEqual(index.offsets, segments.map { $0("offset").integer }, file)
            XCTAssertEqual(index.segments.map { Int64($0.length) }, segments.map { $0("length").integer }, file)
            XCTAssertEqual(index.segments.map(\.sha256.hexString), segments.map { $0("sha256").text }, file)
            if let artifact = vector("artifact_file").optionalText {
                let bytes = [UInt8](try self.bytes("segment-index/" + artifact))
                XCTAssertEqual(SHA256Small.hash(bytes).hexString, index.artifactSHA256.hexString, file)
                for (offset, segment) in zip(index.offsets, index.segments) {
                    XCTAssertEqual(SHA256Small.hash(bytes[Int(offset)..<Int(offset) + Int(segment.length)]), segment.sha256, "\(file) at \(offset)")
                }
            }
        }
    }

    // MARK: minisign/

    func testMinisignSignatures() throws {
        let vectors = try load("minisign/minisign.json")
        var keys: [String: MinisignPublicKey] = [:]
        for member in vectors("keys").members {
            let file = member.value("file").text
            let key = try MinisignPublicKey(text: String(decoding: try bytes("minisign/" + file), as: UTF8.self), source: file)
            XCTAssertEqual(key.keyID.hex, member.value("key_id").text, file)
            XCTAssertEqual(key.base64, member.value("public_key").text, file)
            keys[file] = key
        }
        let signatures = vectors("signatures").items
        XCTAssertGreaterThan(signatures.count, 25)
        for vector in signatures {
            let label = vector("name").text
            let message = [UInt8](try bytes("minisign/" + vector("message").text))
            let text = String(decoding: try bytes("minisign/" + vector("signature").text), as: UTF8.self)
            let trusted = try vector("trusted_keys").items.map { try XCTUnwrap(keys[$0.text], label) }
            let outcome: String
            do {
                let signature = try MinisignSignature(fileContents: text, source: label)
                // As the client verifies a manifest: legacy signatures refused, swift-crypto's Ed25519.
                let verified = try signature.verify(message: message, publicKeys: trusted, source: label, allowLegacy: false, ed25519: ManifestFetcher.ed25519)
                outcome = "valid"
                XCTAssertEqual(verified.publicKey, keys[vector("signer").text], label)
                XCTAssertEqual(verified.trustedComment, vector("trusted_comment").text, label)
            } catch let error as FormatError {
                switch error {
                case .malformedSignature: outcome = "malformed"
                case .unsupportedSignatureAlgorithm(_, let algorithm): outcome = algorithm.hasPrefix("'Ed' ") ? "legacy-refused" : "unsupported-algorithm"
                case .untrustedSigningKey: outcome = "untrusted-key"
                case .signatureMismatch: outcome = "signature-mismatch"
                case .trustedCommentMismatch: outcome = "trusted-comment-mismatch"
                default: outcome = "\(error)"
                }
            }
            XCTAssertEqual(outcome, vector("outcome").text, label)
        }
    }

    func testTrustedComments() throws {
        let vectors = try load("minisign/trusted-comments.json")
        for vector in vectors("parse").items {
            let label = vector("why").text
            let comment = TrustedComment(parsing: vector("comment").text)
            let parsed = vector("parsed")
            guard parsed != .null else {
                XCTAssertNil(comment, label)
                continue
            }
            let fields = try XCTUnwrap(comment, label)
            XCTAssertEqual(fields.timestamp, parsed("timestamp").integer, label)
            XCTAssertEqual(fields.file, parsed("file").text, label)
            XCTAssertEqual(fields.sequence, parsed("sequence").integer, label)
            XCTAssertEqual(fields.version, parsed("version").text, label)
            XCTAssertEqual(fields.expiresAt, parsed("expires_at").optionalText, label)
        }
        for vector in vectors("bindings").items {
            let comment = try XCTUnwrap(TrustedComment(parsing: vector("comment").text))
            let manifest = vector("manifest")
            // The client's rule (ManifestFetcher.bind): the signed sequence and expiry, then the file naming the channel.
            var problems = comment.mismatches(sequence: manifest("sequence").integer, expiresAt: manifest("expires_at").optionalText).map {
                $0.hasPrefix("the manifest says sequence") ? "sequence" : $0.hasPrefix("the manifest says expires_at") ? "expires_at" : $0
            }
            if comment.file != TrustedComment.fileField(channel: manifest("channel").text, manifestName: manifest("manifest_name").text) {
                problems.append("file")
            }
            XCTAssertEqual(problems, vector("problems").items.map(\.text), vector.compact)
        }
    }

    // MARK: model-signature/

    func testModelSignatures() throws {
        let vectors = try load("model-signature/model-signature.json")
        let bundles = vectors("bundles").items
        XCTAssertGreaterThan(bundles.count, 20)
        for member in vectors("key_hints").members {
            let key = try ModelSigningPublicKey(pem: String(decoding: try bytes("model-signature/keys/\(member.key).pub"), as: UTF8.self))
            XCTAssertEqual(key.hint, member.value.text, member.key)
        }
        for vector in bundles {
            let label = vector("name").text
            let key = try ModelSigningPublicKey(pem: String(decoding: try bytes("model-signature/" + vector("public_key").text), as: UTF8.self))
            let data = try bytes("model-signature/" + vector("bundle").text)
            var outcome = ""
            var reason = ""
            // The client's order (ModelSignatureCheck.statement): parse, compare the hint, verify, then the statement.
            do {
                let bundle = try ModelSignatureBundle(parsing: data, source: label)
                if let hint = bundle.keyHint, hint != key.hint {
                    outcome = "untrusted-key"
                } else {
                    do {
                        let statement = try bundle.verifiedStatement(keyHint: key.hint, source: label) { key.isValidSignature($0, for: $1) }
                        let differences = ModelSignatureDifferences(signed: statement.files, actual: try files(of: vector("model").text, ignoring: statement.ignorePaths))
                        outcome = differences.isEmpty ? "valid" : "files-differ"
                        XCTAssertEqual(statement.resources.map(\.path.rawValue), vector("signed_files").items.map { $0("path").text }, label)
                        XCTAssertEqual(statement.resources.map(\.sha256.hex), vector("signed_files").items.map { $0("sha256").text }, label)
                        XCTAssertEqual(statement.ignorePaths.map(\.rawValue).sorted(), vector("ignore_paths").items.map(\.text), label)
                        let kinds = differences.changed.map { ["changed", $0.path.rawValue] } + differences.missing.map { ["missing", $0.rawValue] }
                            + differences.extra.map { ["extra", $0.rawValue] }
                        XCTAssertEqual(kinds, vector("differences").items.map { [$0("kind").text, $0("path").text] }, label)
                    } catch FormatError.invalidModelSignature(_, let why) {
                        outcome = why.contains("does not verify") ? "bad-signature" : "invalid-statement"
                        reason = why
                    }
                }
            } catch FormatError.invalidModelSignature(_, let why) {
                outcome = "malformed-bundle"
                reason = why
            }
            XCTAssertEqual(outcome, vector("outcome").text, "\(label): \(reason)")
            if let field = vector("field").optionalText { XCTAssertTrue(reason.contains(field), "\(label): '\(reason)' does not name \(field)") }
        }
    }

    /// The model's files as model signing names them (`.` for a single file), with their SHA-256.
    func files(of model: String, ignoring: [ModelFilePath]) throws -> [ModelFilePath: SHA256Hex] {
        let url = Self.root.appendingPathComponent("model-signature/" + model)
        var isDirectory: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), model)
        guard isDirectory.boolValue else { return [.wholeFile: try SHA256Hex(SHA256Small.hash(try Data(contentsOf: url)).hexString)] }
        var found: [ModelFilePath: SHA256Hex] = [:]
        for case let relative as String in FileManager.default.enumerator(atPath: url.path)! {
            let path = try ModelFilePath(relative)
            var directory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.appendingPathComponent(relative).path, isDirectory: &directory)
            guard !directory.boolValue, !ignoring.contains(where: { path.isWithin($0) }) else { continue }
            found[path] = try SHA256Hex(SHA256Small.hash(try Data(contentsOf: url.appendingPathComponent(relative))).hexString)
        }
        return found
    }

    // MARK: manifest/

    func testValidManifests() throws {
        for vector in try load("manifest/manifest.json")("valid").items {
            let file = vector("file").text
            let data = try bytes("manifest/" + file)
            guard vector("profile").text == "modelcast" else {
                let facts = try ManifestFacts.read(data, source: file)
                XCTAssertEqual(facts.profile.rawValue, vector("profile").text, file)
                let objects = facts.objects.map { Release.canonical(.object([.init("url", .string($0.url)), .init("sha256", $0.sha256.map(JSONValue.string) ?? .null),
                                                                             .init("size", $0.size.map(JSONValue.int) ?? .null)])) }
                XCTAssertEqual(objects, vector("objects").items, file)
                continue
            }
            let release = try Release.decode(data, source: file)
            let expected = vector("release")
            XCTAssertEqual(release.sequence, expected("sequence").integer, file)
            XCTAssertEqual(release.channel, expected("channel").text, file)
            XCTAssertEqual(release.expiresAt, expected("expires_at").optionalText, file)
            XCTAssertEqual(release.minAppVersion, expected("min_app_version").optionalText, file)
            XCTAssertEqual(try summary(release.checkedModels()), expected("models"), file)
            if expected("rollout") != .null {
                XCTAssertEqual(release.rollout?.salt, expected("rollout")("salt").text, file)
                XCTAssertEqual(release.rollback?.sequence, expected("rollout")("rollback_sequence").integer, file)
                XCTAssertEqual(try summary(release.checkedRollbackModels()), expected("rollout")("fallback"), file)
            } else {
                XCTAssertNil(release.rollout, file)
            }
        }
    }

    /// The checked models as the vectors summarise them.
    func summary(_ models: [CheckedModel]) -> JSONValue {
        .object(models.map { model in
            var members: [JSONValue.Member] = [
                .init("version", .string(model.version.rawValue)),
                .init("files", .array(model.files.map { file in
                    .object([.init("placement", .string(file.placement.rawValue)), .init("url", .string(file.url.rawValue)),
                             .init("sha256", .string(file.sha256.rawValue)), .init("size", .int(file.size)),
                             .init("segment_index", file.segments.map { .string($0.url.rawValue) } ?? .null)])
                })),
            ]
            if let tree = model.tree { members.append(.init("tree", .string(tree.rawValue))) }
            if !model.variants.isEmpty { members.append(.init("variants", .array(model.variants.map { .string($0.name.rawValue) }))) }
            if let policy = model.downloadPolicy { members.append(.init("download", .string(policy.rawValue))) }
            return .init(model.name.rawValue, Release.canonical(.object(members)))
        }).sortedMembers
    }

    func testHostileManifests() throws {
        let vectors = try load("manifest/manifest.json")
        let base = try load("manifest/" + vectors("base").text)
        let hostile = vectors("hostile").items
        XCTAssertGreaterThan(hostile.count, 150)
        for vector in hostile {
            let label = vector("name").text
            let manifest = try vector("patch").items.reduce(base) { try $0.applying($1) }
            let data = Data(manifest.serialized().utf8)
            if vector("valid").flag {
                XCTAssertNoThrow(try Release.decode(data, source: label), label)
            } else {
                XCTAssertThrowsError(try Release.decode(data, source: label), label) { error in
                    let mentions = vector("mentions").text
                    XCTAssertTrue(mentions.isEmpty || "\(error)".contains(mentions), "\(label): \(error)")
                }
            }
        }
        for vector in vectors("raw").items {
            let label = vector("name").text
            XCTAssertThrowsError(try Release.decode(try bytes("manifest/" + vector("file").text), source: label), label) { error in
                let mentions = vector("mentions").text
                XCTAssertTrue(mentions.isEmpty || "\(error)".contains(mentions), "\(label): \(error)")
            }
        }
    }

    // MARK: keyset/

    /// The refusal as the vectors name it: a code and the values a client must agree on.
    func keySetRefusal(_ error: Error) -> [String: String] {
        switch error {
        case let KeySetError.invalidDocument(path, detail): return ["code": "invalid_document", "at": path, "field": detail.field]
        case let KeySetError.versionGap(path, _, found): return ["code": "version_gap", "at": path, "found": String(found)]
        case let KeySetError.thresholdNotMet(path, role, version, _, _, _):
            return ["code": "threshold_not_met", "at": path, "role": role.rawValue, "key_set_version": String(version)]
        case let KeySetError.expired(path, _, _): return ["code": "expired", "at": path]
        case let FormatError.malformedSignature(source, _): return ["code": "malformed_signatures", "at": String(source.prefix { $0 != "," })]
        default: return ["code": "unexpected: \(error)"]
        }
    }

    func testKeySetChainsAndThresholdManifests() throws {
        let cases = try load("keyset/keyset.json")("cases").items
        XCTAssertGreaterThan(cases.count, 25)
        for vector in cases {
            let label = vector("name").text
            let folder = "keyset/cases/\(label)/"
            let now = try XCTUnwrap(parseTimestamp(vector("now").text), label)
            let pinned = try bytes("keyset/" + vector("trusted").text)
            var trusted = try KeySet(parsing: pinned)
            // Every document the generator wrote with its canonical writer is what this one writes.
            XCTAssertEqual(trusted.canonicalBytes, pinned, label)
            var floors: [JSONValue] = []
            var afterFirstCheck: Int64?
            var refusal: [String: String]?
            do {
                // As a client walks: the next version until the server has none (a 404 here: no file).
                while FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(folder + KeySet.path(version: trusted.version + 1)).path) {
                    let path = KeySet.path(version: trusted.version + 1)
                    let document = try bytes(folder + path)
                    let signatures = try MinisignSignatureList(data: try bytes(folder + path + ".sigs"), source: path + ".sigs").signatures
                    let next = try KeySetChain.step(trusted: trusted, nextBytes: document, nextSignatures: signatures, ed25519: ManifestFetcher.ed25519)
                    XCTAssertEqual(next.canonicalBytes, document, "\(label): \(path)")
                    // Per the vectors' README: the new floor of beta and stable, or null (kept).
                    let channels = [try ChannelName("beta"), ChannelName.stable]  // keyset.json's order
                    floors.append(KeySetChain.resetsSequenceFloors(after: trusted, next: next)
                                  ? .object(channels.map { .init($0.rawValue, .int(KeySetChain.sequenceFloor(after: trusted, next: next, channel: $0) ?? -1)) }) : .null)
                    trusted = next
                    if floors.count == KeySetChain.maxVersionsPerCheck { afterFirstCheck = trusted.version }
                }
                try trusted.checkFresh(at: now)
            } catch {
                refusal = keySetRefusal(error)
            }
            switch vector("outcome").text {
            case "accepted":
                XCTAssertNil(refusal, label)
                XCTAssertEqual(trusted.version, vector("final_version").integer, label)
                XCTAssertEqual(floors, vector("floors").items, label)
                if let expected = vector("version_after_first_check").optionalInteger {
                    XCTAssertEqual(Int64(KeySetChain.maxVersionsPerCheck), vector("max_versions_per_check").integer, label)
                    XCTAssertEqual(afterFirstCheck, expected, label)
                }
            case "refused":
                let expected = Dictionary(uniqueKeysWithValues: vector("error").members.map {
                    ($0.key, $0.value.optionalText ?? $0.value.optionalInteger.map(String.init) ?? "")
                })
                XCTAssertEqual(refusal, expected, label)
            default:
                XCTFail("\(label): outcome \(vector("outcome").compact)")
            }
            for check in vector("manifests").items {
                let name = "\(label)/\(check("label").text)"
                let signatures = try MinisignSignatureList(data: try bytes("keyset/" + check("signatures").text), source: name).signatures
                do {
                    let proof = try trusted.verifyManifest(
                        bytes: try bytes("keyset/" + check("bytes").text), signatures: signatures, file: check("file").text,
                        sequence: check("sequence").integer, expiresAt: check("expires_at").optionalText, ed25519: ManifestFetcher.ed25519)
                    XCTAssertEqual(check("outcome").text, "accepted", name)
                    XCTAssertEqual(proof.signers.map(\.keyID.hex), check("signers").items.map(\.text), name)
                } catch let KeySetError.thresholdNotMet(_, role, _, _, _, _) {
                    XCTAssertEqual(check("outcome").text, "refused", name)
                    XCTAssertEqual(role, .manifest, name)
                }
            }
        }
    }
}

/// Reading the vectors' JSON: a missing member or another type reads as an empty value, so a
/// vector of the wrong shape fails the comparison that uses it, naming the vector.
extension JSONValue {
    /// The member `key` of an object (`vector("salt")`), or null.
    fileprivate func callAsFunction(_ key: String) -> JSONValue {
        guard case .object(let members) = self else { return .null }
        return members.first { $0.key == key }?.value ?? .null
    }

    fileprivate var text: String { stringValue ?? "" }
    fileprivate var optionalText: String? { stringValue }
    fileprivate var integer: Int64 { optionalInteger ?? Int64.min }
    fileprivate var optionalInteger: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }
    fileprivate var flag: Bool {
        if case .bool(let value) = self { return value }
        return false
    }
    fileprivate var items: [JSONValue] {
        if case .array(let items) = self { return items }
        return []
    }
    fileprivate var members: [Member] {
        if case .object(let members) = self { return members }
        return []
    }
    fileprivate var compact: String { serialized().split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ") }
    fileprivate var sortedMembers: JSONValue { .object(members.sorted { $0.key < $1.key }) }

    /// The object with `key` set to `value` (replaced in place, or added last).
    fileprivate func setting(_ key: String, _ value: JSONValue) -> JSONValue {
        var members = self.members
        if let index = members.firstIndex(where: { $0.key == key }) { members[index] = .init(key, value) } else { members.append(.init(key, value)) }
        return .object(members)
    }

    /// One RFC 6902 operation (add, replace, remove, move), as the hostile table writes them.
    fileprivate func applying(_ operation: JSONValue) throws -> JSONValue {
        func tokens(_ pointer: String) -> [String] {
            pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
                $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            }
        }
        switch operation("op").text {
        case "move":
            let from = tokens(operation("from").text)
            let value = try XCTUnwrap(value(at: from), "move from \(from)")
            return try removing(at: from).adding(value, at: tokens(operation("path").text))
        case "remove": return try removing(at: tokens(operation("path").text))
        case "add", "replace": return try adding(operation("value"), at: tokens(operation("path").text))
        default: throw ModelCastError.usage("unknown patch operation \(operation.compact)")
        }
    }

    private func value(at path: [String]) -> JSONValue? {
        guard let first = path.first else { return self }
        switch self {
        case .object(let members): return members.first { $0.key == first }?.value.value(at: Array(path.dropFirst()))
        case .array(let items): return Int(first).flatMap { items.indices.contains($0) ? items[$0] : nil }?.value(at: Array(path.dropFirst()))
        default: return nil
        }
    }

    private func adding(_ value: JSONValue, at path: [String]) throws -> JSONValue {
        guard let first = path.first else { return value }
        let rest = Array(path.dropFirst())
        switch self {
        case .object(let members):
            let current = members.first { $0.key == first }?.value ?? .null
            return setting(first, rest.isEmpty ? value : try current.adding(value, at: rest))
        case .array(var items):
            if first == "-" && rest.isEmpty { items.append(value); return .array(items) }
            let index = try XCTUnwrap(Int(first), "array index \(first)")
            items[index] = rest.isEmpty ? value : try items[index].adding(value, at: rest)
            return .array(items)
        default: throw ModelCastError.usage("patch path through a scalar at \(first)")
        }
    }

    private func removing(at path: [String]) throws -> JSONValue {
        guard let first = path.first else { return self }
        let rest = Array(path.dropFirst())
        switch self {
        case .object(let members):
            if rest.isEmpty { return .object(members.filter { $0.key != first }) }
            return .object(try members.map { $0.key == first ? .init($0.key, try $0.value.removing(at: rest)) : $0 })
        case .array(var items):
            let index = try XCTUnwrap(Int(first), "array index \(first)")
            if rest.isEmpty { items.remove(at: index) } else { items[index] = try items[index].removing(at: rest) }
            return .array(items)
        default: throw ModelCastError.usage("patch path through a scalar at \(first)")
        }
    }
}

extension Collection where Element == UInt8 {
    fileprivate var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
