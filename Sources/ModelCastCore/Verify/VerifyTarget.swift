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

    /// Works out the kind of SOURCE and checks what it needs. A local manifest file
    /// larger than `maxManifestBytes` is refused, as a fetched one is.
    package static func resolve(_ source: String, baseURLs: [String], manifestKey: String, maxManifestBytes: Int = VerifyOptions().maxManifestBytes) throws -> VerifyTarget {
        if TargetKind(of: source) == .served {
            return VerifyTarget(manifestURL: source, directory: nil, localManifest: nil)
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) else {
            throw ModelCastError.notFound(path: source)
        }
        if isDirectory.boolValue {
            try validateKey(manifestKey)
            let fetcher = try DirectoryFetcher(root: source, baseURL: baseURLs.first)
            return VerifyTarget(manifestURL: fetcher.baseURL + "/" + URLParts.percentEncodedPath(manifestKey), directory: fetcher, localManifest: nil)
        }
        guard let base = baseURLs.first else {
            throw ModelCastError.usage("verifying a local manifest file needs --base-url: the URL it will be served under")
        }
        try URLParts.validateBaseURL(base)
        let data = try readCapped(source, limit: maxManifestBytes, what: "a manifest")
        let signaturePath = SignedManifest.signatureKey(for: source)
        let signature = FileManager.default.fileExists(atPath: signaturePath)
            ? try readCapped(signaturePath, limit: SignedManifest.maximumSignatureSize, what: "a minisign signature") : nil
        let name = PathText.lastComponent(source)
        return VerifyTarget(
            manifestURL: (base.hasSuffix("/") ? base : base + "/") + URLParts.percentEncodedPath(name), directory: nil, localManifest: data,
            localSignature: signature)
    }
}
