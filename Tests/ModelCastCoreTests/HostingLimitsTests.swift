import Foundation
import XCTest
@testable import ModelCastCore

/// `_headers` at catalog size (issue 17): a few path patterns instead of one rule per
/// object, each object still getting exactly its own headers on Cloudflare Pages and on
/// Netlify; and the warnings when a directory crosses a host's documented limit.
final class HostingLimitsTests: XCTestCase {
    let base = "https://cdn.example.com/m"
    let zero = SHA256Digest(hex: String(repeating: "0", count: 64))!

    func artifact(_ key: String, size: Int64 = 100, contentType: String? = nil) -> HostedObject {
        HostedObject(key: key, role: .artifact, metadata: ObjectMetadata(
            cacheControl: CachePolicy.immutable, contentType: contentType ?? ContentType.forArtifact(named: key), size: size, sha256: zero))
    }

    /// The artifacts, then a history record, the signature and the manifest, as publish lists them.
    func target(_ artifacts: [HostedObject]) -> [HostedObject] {
        artifacts + [
            HostedObject(key: "manifests/00000001.json", role: .history, metadata: ObjectMetadata(
                cacheControl: CachePolicy.immutable, contentType: "application/json", size: 900, sha256: zero)),
            HostedObject(key: "manifest.json.minisig", role: .signature, metadata: ObjectMetadata(
                cacheControl: "no-cache", contentType: "text/plain", size: 300, sha256: zero)),
            HostedObject(key: "manifest.json", role: .manifest, metadata: ObjectMetadata(
                cacheControl: "no-cache", contentType: "application/json", size: 900, sha256: zero)),
        ]
    }

    func render(_ objects: [HostedObject]) throws -> HostingFiles {
        try HostingFiles(objects: objects, baseURL: base, root: "/srv/site", templates: try HostingFiles.templates(overrideDirectory: nil))
    }

    func headersFile(_ files: HostingFiles) throws -> String {
        try XCTUnwrap(files.files.first { $0.path == "_headers" }?.content)
    }

    /// A catalog of `count` models: single files with the extensions real models have,
    /// every tenth a zip, every seventh a JSON file, every fifth a tree of two blobs.
    func catalog(_ count: Int) -> [HostedObject] {
        let extensions = ["gguf", "tflite", "onnx", "mlmodel", "bin"]
        var objects: [HostedObject] = []
        for index in 0..<count {
            let name = String(format: "m%04d", index)
            if index % 10 == 0 {
                objects.append(artifact("models/\(name)/1.0.0/\(name).mlpackage.zip"))
            } else if index % 7 == 0 {
                objects.append(artifact("models/\(name)/1.0.0/\(name).json"))
            } else if index % 5 == 0 {
                objects.append(artifact("models/\(name)/blobs/" + String(format: "%064x", index * 2)))
                objects.append(artifact("models/\(name)/blobs/" + String(format: "%064x", index * 2 + 1)))
            } else {
                objects.append(artifact("models/\(name)/1.0.0/\(name).\(extensions[index % extensions.count])"))
            }
        }
        return objects.sorted { $0.key < $1.key }
    }

    // MARK: - _headers

    func testCatalogsOfAnySizeNeedAFewRulesAndEveryObjectKeepsItsHeaders() throws {
        for count in [1, 100, 1000] {
            let objects = target(catalog(count))
            let files = try render(objects)
            let text = try headersFile(files)
            let rules = HostLimits.headerRuleCount(text)
            // Manifest, signature, models/*, manifests/*, and one per kind of name.
            XCTAssertLessThanOrEqual(rules, 12, "\(count) models:\n\(text)")
            XCTAssertEqual(files.warnings, [], "\(count) models")
            try SimulatedHost.assertHeaders(text, objects: objects, basePath: "/m")
        }
    }

    func testTheRuleCountDoesNotGrowWithTheCatalog() throws {
        let small = HostLimits.headerRuleCount(try headersFile(try render(target(catalog(100)))))
        let large = HostLimits.headerRuleCount(try headersFile(try render(target(catalog(1000)))))
        XCTAssertEqual(small, large)
    }

    func testNamesNoPatternCanCoverGetRulesOfTheirOwn() throws {
        let objects = target([
            artifact("models/a/1.0.0/weights"),                  // no extension
            artifact("models/a/1.0.0/config.json"),
            artifact("models/b/1.0.0/B.JSON"),                   // Netlify matches *.json case-insensitively, Pages may not
            artifact("models/c/1.0.0/c.gguf"),
            artifact("models/c/1.1.0/c.gguf"),
            artifact("models/d/1.0.0/d_gguf"),                   // Netlify's *.gguf leaves its dot unescaped: it matches d_gguf
            artifact("models/e/1.0.0/e.tar-gz"),                 // not a plain extension
            artifact("models/f/1.0.0/f.bin", contentType: "application/x-custom"),
            artifact("models/f/1.1.0/f.bin"),
            artifact("models/g/1.0.0/g.onnx"),
            artifact("models/g/1.1.0/g.onnx"),
        ])
        let text = try headersFile(try render(objects))
        try SimulatedHost.assertHeaders(text, objects: objects, basePath: "/m")
        // Only the unambiguous group gets a pattern; the others are listed one by one.
        XCTAssertTrue(text.contains("\n/m/models/*.onnx\n  Content-Type: application/octet-stream\n"), text)
        for key in ["models/a/1.0.0/weights", "models/a/1.0.0/config.json", "models/b/1.0.0/B.JSON", "models/c/1.0.0/c.gguf",
                    "models/d/1.0.0/d_gguf", "models/e/1.0.0/e.tar-gz", "models/f/1.0.0/f.bin", "models/f/1.1.0/f.bin"] {
            XCTAssertTrue(text.contains("\n/m/" + key + "\n  Content-Type: "), "\(key) has no rule of its own:\n\(text)")
        }
    }

    func testTemplatesStillSeeEveryArtifact() throws {
        // A user's own _headers template written against `artifacts` keeps working.
        let template = "{{#artifacts}}{{url_path}} {{content_type}}\n{{/artifacts}}"
        let files = try HostingFiles(objects: target(catalog(3)), baseURL: base, root: "/srv/site", templates: ["_headers": template])
        XCTAssertEqual(try headersFile(files).split(separator: "\n").count, catalog(3).count)
    }

    // MARK: - Host limits

    func testNoWarningUpToTheLimits() throws {
        let objects = target([artifact("models/a/1.0.0/a.gguf", size: 25 << 20), artifact("models/b/1.0.0/b.gguf", size: 100)])
        XCTAssertEqual(try render(objects).warnings, [])
    }

    func testAFileOverTwentyFiveMebibytesWarnsForPages() throws {
        let objects = target([artifact("models/a/1.0.0/a.gguf", size: (25 << 20) + 1), artifact("models/b/1.0.0/b.gguf", size: 100)])
        let warnings = try render(objects).warnings
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        let warning = try XCTUnwrap(warnings.first)
        for part in ["models/a/1.0.0/a.gguf", "25 MiB", "Cloudflare Pages"] { XCTAssertTrue(warning.contains(part), warning) }
        XCTAssertFalse(warning.contains("b.gguf"), warning)
    }

    func testManyLargeFilesAreCountedInOneWarning() throws {
        let objects = target((0..<5).map { artifact("models/m\($0)/1.0.0/m\($0).gguf", size: 30 << 20) })
        let warnings = try render(objects).warnings
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        let warning = try XCTUnwrap(warnings.first)
        XCTAssertTrue(warning.hasPrefix("5 files (models/m0/1.0.0/m0.gguf (30.0 MiB), "), warning)
        XCTAssertTrue(warning.contains(" and 2 more) are over the 25 MiB Cloudflare Pages allows per file"), warning)
    }

    func testAFileOverThreeHundredMebibytesWarnsForWrangler() throws {
        let objects = target([artifact("models/a/1.0.0/a.gguf", size: (300 << 20) + 1)])
        let warnings = try render(objects).warnings
        XCTAssertEqual(warnings.count, 2, "\(warnings)")
        let wrangler = try XCTUnwrap(warnings.first { $0.contains("wrangler") }, "\(warnings)")
        for part in ["models/a/1.0.0/a.gguf", "300 MiB", "upload-wrangler.sh"] { XCTAssertTrue(wrangler.contains(part), wrangler) }
        XCTAssertEqual(try render(target([artifact("models/a/1.0.0/a.gguf", size: 300 << 20)])).warnings.filter { $0.contains("wrangler") }, [])
    }

    func testMoreThanAHundredRulesWarnForPages() throws {
        // Names without an extension cannot share a pattern: one rule each, beside the
        // manifest's, the signature's, models/* and manifests/*.
        let objects = target((0..<97).map { artifact(String(format: "models/m%03d/1.0.0/weights", $0)) })
        let files = try render(objects)
        let rules = HostLimits.headerRuleCount(try headersFile(files))
        XCTAssertEqual(rules, 101)
        XCTAssertEqual(files.warnings.count, 1, "\(files.warnings)")
        let warning = try XCTUnwrap(files.warnings.first)
        for part in ["101 header rules", "100", "Cloudflare Pages"] { XCTAssertTrue(warning.contains(part), warning) }
        let fewer = try render(target((0..<96).map { artifact(String(format: "models/m%03d/1.0.0/weights", $0)) }))
        XCTAssertEqual(HostLimits.headerRuleCount(try headersFile(fewer)), 100)
        XCTAssertEqual(fewer.warnings, [])
    }

    func testRuleCountReadsRuleLinesOnly() {
        XCTAssertEqual(HostLimits.headerRuleCount("# comment\n/a\n  X: 1\n\n/b/*\n  Y: 2\n  Z: 3\nhttps://x.pages.dev/*\n  W: 4\n"), 3)
    }
}

/// `_headers` as the two hosts document reading it, written here independently of
/// modelcast's own pattern checks, to prove what each object is served with.
/// - Cloudflare Pages (developers.cloudflare.com/pages/configuration/headers): a splat `*`
///   greedily matches any characters, `:name` one path segment, the rest is literal; every
///   matching rule applies, and a header two rules set gets both values.
/// - Netlify (netlify/build packages/headers-parser, `getForRegExp`): the path split at `/`,
///   `:name` one segment, a lone `*` anything, a `*` inside a segment leaves that segment's
///   other characters as regular-expression syntax; an optional trailing slash; case-insensitive.
enum SimulatedHost: CaseIterable {
    case pages, netlify

    struct Rule {
        let path: String
        var headers: [(name: String, value: String)] = []
    }

    static func rules(_ text: String) -> [Rule] {
        var rules: [Rule] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            if line.first == " " || line.first == "\t" {
                let pair = line.trimmingCharacters(in: .whitespaces).split(separator: ":", maxSplits: 1)
                rules[rules.count - 1].headers.append((pair[0].lowercased(), pair[1].trimmingCharacters(in: .whitespaces)))
            } else {
                rules.append(Rule(path: String(line)))
            }
        }
        return rules
    }

    func regex(_ path: String) -> NSRegularExpression {
        switch self {
        case .pages:
            var pattern = "^"
            var rest = Substring(path)
            while let first = rest.first {
                if first == "*" {
                    pattern += ".*"
                    rest = rest.dropFirst()
                } else if first == ":", let next = rest.dropFirst().first, next.isLetter {
                    pattern += "[^/]+"
                    rest = rest.dropFirst().drop { $0.isLetter || $0.isNumber || $0 == "_" }
                } else {
                    pattern += NSRegularExpression.escapedPattern(for: String(first))
                    rest = rest.dropFirst()
                }
            }
            return try! NSRegularExpression(pattern: pattern + "$")
        case .netlify:
            let parts = path.split(separator: "/").map { part -> String in
                if part.hasPrefix(":") { return "([^/]+)" }
                if part == "*" { return "?(.*)" }
                if part.contains("*") { return part.replacingOccurrences(of: "*", with: "(.*)") }
                return NSRegularExpression.escapedPattern(for: String(part))
            }
            return try! NSRegularExpression(pattern: "^/" + parts.joined(separator: "/") + "/?$", options: .caseInsensitive)
        }
    }

    /// Every header value the rules (with their expressions) give `path`, by lower-cased name.
    static func headers(for path: String, rules: [(Rule, NSRegularExpression)]) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for (rule, regex) in rules where regex.firstMatch(in: path, range: NSRange(path.startIndex..., in: path)) != nil {
            for header in rule.headers { result[header.name, default: []].append(header.value) }
        }
        return result
    }

    /// Each object, on each host, gets exactly one Content-Type and one Cache-Control: its own.
    static func assertHeaders(_ text: String, objects: [HostedObject], basePath: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for host in allCases {
            let rules = rules(text).map { ($0, host.regex($0.path)) }
            for object in objects {
                let path = basePath + "/" + URLParts.percentEncodedPath(object.key)
                let headers = headers(for: path, rules: rules)
                XCTAssertEqual(headers["content-type"], [object.metadata.contentType], "\(host) \(path)", file: file, line: line)
                XCTAssertEqual(headers["cache-control"], [object.metadata.cacheControl], "\(host) \(path)", file: file, line: line)
            }
        }
    }
}
