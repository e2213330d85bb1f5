import Foundation

/// `artifact.zip`: a zip is unpacked on the device, so its records must be safe to unpack
/// (`ZipSafetyCheck`), read with ranged reads of the object checked.
struct ZipCheck: ArtifactCheck {
    var ids: [VerifyCheckID] { [.artifactZip] }

    /// Each source reads ranges: a server's 206s, a file's bytes, a store's ranged GETs.
    func statement(for source: FetchedFrom) -> SourceStatement { .runs }

    /// A zip by its type or name, whose whole body was read (one cut at the limit fails its size).
    func concerns(_ read: ArtifactRead) -> Bool {
        ZipSafetyCheck.applies(contentType: read.expectedContentType, name: read.url) && read.hasWholeBody
    }

    func run(_ read: ArtifactRead, with verification: ArtifactVerification, log: CheckLog) async {
        let bytes = RangedHTTPBytes(verifier: verification.verifier, url: read.url, size: read.response.bytesRead, deadline: verification.deadline, rules: verification.rules)
        await ZipSafetyCheck.run(bytes, label: read.label, subject: read.url, maxEntries: verification.options.maxZipEntries, log: log)
    }
}
