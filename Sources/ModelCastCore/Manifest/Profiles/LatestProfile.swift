import Foundation

/// `{"url": …}` whose file name, derived from the content, is the version: the client
/// downloads when that file is not on the device.
struct LatestProfile: ProfileDefinition {
    var summary: String { "{\"url\": …} with a content-derived file name" }
    var clientRule: String { "downloads when the file name in url is not on the device" }
    var rollbackForm: RollbackForm { .anyDifferentVersion }
    var rollbackRule: String { "the url names the old content-derived file, which clients do not have" }
    var modelFields: [ProfileField] { [] }
    var computedFields: [String] { ["url"] }
    var capabilities: ProfileCapabilities { [] }

    func checkShape(_ release: Release) throws {
        try requireOneModelWithOneFile(release, profile: .latest)
    }

    func render(_ release: Release) -> JSONValue {
        let model = release.models.first!.value
        return .object([.init("url", .string(model.files[0].url))])
    }

    func claims(_ json: JSONValue) -> Bool {
        json["url"] != nil
    }

    func read(_ manifest: ManifestReader) throws -> ManifestFacts {
        let url = try manifest.string(manifest.json["url"], "url")
        return ManifestFacts(profile: .latest, sequence: nil, expiresAt: nil, objects: [
            ExpectedObject(label: "latest", url: url, sha256: nil, size: nil, approximateSize: nil, contentType: nil),
        ])
    }

    /// The file name is the version: derived from the content, UUID-shaped like the seed's.
    func artifactKey(model: String, version: String, fileName: String, sha256: SHA256Digest) -> String {
        "models/\(model)/\(Self.uuidName(sha256))\(Self.fileExtension(of: fileName))"
    }

    func urlNamesContent(_ url: String, sha256: SHA256Digest) -> Bool {
        guard let name = url.split(separator: "/").last else { return false }
        return String(name.prefix(36)) == Self.uuidName(sha256)
    }

    /// The first 128 bits of the SHA-256 as a UUID-shaped name (`8-4-4-4-12` hex digits).
    static func uuidName(_ sha256: SHA256Digest) -> String {
        let hex = Array(sha256.hex.prefix(32))
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }

    /// `.mlpackage.zip` for `X.mlpackage.zip`, `.gguf` for `a.b.gguf` (known double extensions kept whole).
    private static func fileExtension(of name: String) -> String {
        let lower = name.lowercased()
        for double in [".mlpackage.zip", ".mlmodelc.zip", ".tar.gz"] where lower.hasSuffix(double) {
            return String(name.suffix(double.count))
        }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[dot...])
    }
}
