import Foundation

/// True for a manifest's Content-Type: `application/json` or a `+json` type, with any parameters
/// (URL and bucket verify judge it alike).
func isJSONMediaType(_ contentType: String) -> Bool {
    let type = mediaType(contentType)
    return type == "application/json" || type.hasSuffix("+json")
}

/// `https://h/a/manifest.json` → `https://h/a/`.
func directory(of url: String) -> String {
    guard let slash = url.lastIndex(of: "/") else { return url }
    return String(url[...slash])
}

/// Where a manifest URL's target is served from: its directory, or for a channel's
/// manifest (`…/channels/beta/manifest.json`) the directory above `channels/beta/`, where
/// the artifacts every channel shares live.
/// The rule is the one devices follow (`TargetKeys.splitAtRoot`).
func targetRoot(ofManifestURL url: String) -> String {
    TargetKeys.splitAtRoot(manifestLocation: url)?.root ?? url
}

/// What the signed comment of the manifest at `key` names: `manifest.json` for stable,
/// `channels/NAME/manifest.json` for another channel's (`TrustedComment.fileField`).
func signedFileName(ofManifestKey key: String) -> String {
    let (channel, base) = Channels.split(manifestKey: key)
    return TrustedComment.fileField(channel: channel, manifestName: PathText.lastComponent(base))
}

/// A manifest URL's key in its target: the file name, under `channels/NAME/` for a channel's.
func targetKey(ofManifestURL url: String) -> String {
    let root = targetRoot(ofManifestURL: url)
    let relative = url.hasPrefix(root) ? String(url.dropFirst(root.count)) : String(url.split(separator: "/").last ?? "manifest.json")
    return (relative.split(separator: "?").first.map(String.init) ?? relative).removingPercentEncoding ?? "manifest.json"
}

/// The object key a URL names below `base` (a base URL without a trailing `/`): the rest
/// of its path, percent-decoded; nil when the URL lies outside `base` or the rest is no
/// plain key (empty, `.`/`..` or empty segments). What the directory and store fetchers
/// read for a URL.
func keyOfURL(_ url: String, under base: String) -> String? {
    guard url.hasPrefix(base + "/"), let key = String(url.dropFirst(base.count + 1)).removingPercentEncoding,
          (try? validateKey(key)) != nil else { return nil }
    return key
}
