import Foundation

/// What `verify SOURCE` points at: a URL, a published directory, or a local manifest file.
package struct VerifyTarget: Sendable {
    /// The manifest's URL (for a directory, where it will be served).
    package let manifestURL: String
    /// Set for a published directory: objects are read from disk.
    package let directory: DirectoryFetcher?
    /// Set for a local manifest file: its bytes.
    package let localManifest: Data?
    /// For a local manifest file: its detached signature (`FILE.minisig`), when there is one.
    package var localSignature: Data?

    /// True when objects are fetched over HTTP.
    package var isHTTP: Bool { directory == nil }

    /// What verify reads of SOURCE (a bucket is read through its store's API instead).
    /// A local manifest file larger than `maxManifestBytes` is refused, as a fetched one is.
    package static func resolve(_ source: ReadSource, baseURLs: [String], manifestKey: String, maxManifestBytes: Int = VerifyOptions().maxManifestBytes) throws -> VerifyTarget {
        let path: String
        switch source {
        case .manifestURL(let url):
            return VerifyTarget(manifestURL: url, directory: nil, localManifest: nil)
        case .bucket(let text):
            throw ModelCastError.usage("\(text) is read through the store's API, not as a manifest or directory")
        case .directory(let root):
            try validateKey(manifestKey)
            let fetcher = try DirectoryFetcher(root: root, baseURL: baseURLs.first)
            return VerifyTarget(manifestURL: fetcher.baseURL + "/" + URLParts.percentEncodedPath(manifestKey), directory: fetcher, localManifest: nil)
        case .manifestFile(let file):
            path = file
        }
        guard let base = baseURLs.first else {
            throw ModelCastError.usage("verifying a local manifest file needs --base-url: the URL it will be served under")
        }
        try URLParts.validateBaseURL(base)
        let data = try readCapped(path, limit: maxManifestBytes, what: "a manifest")
        let signaturePath = SignedManifest.signatureKey(for: path)
        let signature = FileManager.default.fileExists(atPath: signaturePath)
            ? try readCapped(signaturePath, limit: SignedManifest.maximumSignatureSize, what: "a minisign signature") : nil
        let name = PathText.lastComponent(path)
        return VerifyTarget(
            manifestURL: (base.hasSuffix("/") ? base : base + "/") + URLParts.percentEncodedPath(name), directory: nil, localManifest: data,
            localSignature: signature)
    }
}
