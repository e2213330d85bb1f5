import Foundation

extension SourceScope {
    /// Reads target-relative keys from SOURCE: a directory's or bucket's store, or beside a
    /// manifest URL (its target root, as `TargetKeys.splitAtRoot` lays it out); nil when absent.
    package func keySetFetch() throws -> KeySetChainReader.Fetch {
        switch source {
        case .bucket, .directory:
            let storage = try storage()
            return { try await storage.get($0, limit: $1) }
        case .manifestURL(let url):
            guard let root = TargetKeys.splitAtRoot(manifestLocation: url)?.root else {
                throw ModelCastError.usage("\(redactingURLCredentials(url)) has no path to find keys/ beside")
            }
            let http = http()
            return { key, limit in try await http.getSmallObject(root + key, limit: limit, absent: [403, 404]) }
        case .manifestFile(let path):
            throw ModelCastError.usage("--trusted-keys needs a target or a manifest URL, not the file \(path): key sets are read beside the manifest")
        }
    }
}
