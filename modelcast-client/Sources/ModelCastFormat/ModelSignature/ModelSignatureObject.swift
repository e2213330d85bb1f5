import Foundation

/// Where a model version's OpenSSF model signature (a Sigstore bundle, see
/// `ModelSignatureBundle`) is stored, and the bytes it must be: `model_signature` of a
/// model or variant in the modelcast profile. The bundle signs the files a device
/// installs (`ModelSignatureSubject`), so anyone holding them — a device, a model hub, an
/// auditor with `model_signing verify key` — can check who published them.
public struct ModelSignatureObject: Codable, Equatable, Sendable {
    /// The storage key (`models/NAME/signatures/SHA256.sigstore.json`, Sigstore's name for a bundle): immutable, named by its bytes.
    public var key: String
    public var url: String
    /// SHA-256 of the bundle's bytes, lowercase hex.
    public var sha256: String
    public var size: Int64

    /// The Content-Type a bundle is served with (it is JSON).
    public static let contentType = "application/json"

    public init(key: String, url: String, sha256: String, size: Int64) {
        self.key = key
        self.url = url
        self.sha256 = sha256
        self.size = size
    }

    func jsonValue() -> JSONValue {
        .object([.init("key", .string(key)), .init("url", .string(url)), .init("sha256", .string(sha256)), .init("size", .int(size))])
    }

    /// Every field parsed; a bad one is named by `field` + its key.
    public func checked(at field: String) throws -> CheckedModelSignature {
        func at<T>(_ name: String, _ make: () throws -> T) throws -> T {
            do { return try make() } catch let error as ManifestValueError { throw error.at(field + "." + name) }
        }
        return CheckedModelSignature(
            key: try at("key") { try RelativePath(key) }, url: try at("url") { try DownloadURL(url) },
            sha256: try at("sha256") { try SHA256Hex(sha256) },
            size: try at("size") {
                let size = try ByteCount(size).value
                guard size >= 1, size <= Int64(ModelSignatureBundle.maximumSize) else {
                    throw ManifestValueError(field: "", value: String(size), rule: "is not the size of a model signature (1 to \(ModelSignatureBundle.maximumSize) bytes)")
                }
                return size
            })
    }
}

/// A model's signature object, parsed.
public struct CheckedModelSignature: Sendable, Equatable {
    public let key: RelativePath
    public let url: DownloadURL
    public let sha256: SHA256Hex
    /// 1…`ModelSignatureBundle.maximumSize`.
    public let size: Int64
}
