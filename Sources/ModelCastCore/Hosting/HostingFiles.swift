import Foundation
import Mustache

/// One object as the hosting files describe it.
package struct HostedObject: Sendable, Equatable {
    /// What the object is, which decides its upload order and caching.
    package enum Role: String, Sendable {
        case artifact, history, signature, manifest
    }

    package let key: String
    package let role: Role
    package let metadata: ObjectMetadata

    package init(key: String, role: Role, metadata: ObjectMetadata) {
        self.key = key
        self.role = role
        self.metadata = metadata
    }
}

/// Renders the files a static host needs beside the published objects: `_headers`
/// (Cloudflare Pages, Netlify), the object-metadata JSON an S3/R2 uploader applies,
/// upload scripts (aws cli, rclone, wrangler) that upload the manifest last, and an
/// nginx snippet. Templates come from the top-level `templates/` folder (compiled
/// in), and any file of the same name in an override directory replaces its default.
package struct HostingFiles: Sendable {
    /// Rendered files: path relative to the target root → content.
    package let files: [(path: String, content: String)]
    /// Where these files and objects cross a host's documented limit (Cloudflare Pages,
    /// wrangler): one line each, naming the limit, the host and what crosses it.
    package var warnings: [String] { warnings(hosts: Set(HostLimits.Host.allCases), added: nil) }
    private let objects: [HostedObject]
    private let ownRules: Int

    /// The warnings for the hosts the user deploys to, about `added` objects only (what a
    /// publish stores; nil: every object) and the hosting files themselves.
    package func warnings(hosts: Set<HostLimits.Host>, added: Set<String>?) -> [String] {
        let checked = added.map { keys in objects.filter { keys.contains($0.key) } } ?? objects
        return HostLimits.warnings(objects: checked, files: files, ownRules: ownRules, hosts: hosts)
    }

    /// Where a rendered template goes: `_headers` at the root (hosts read it there),
    /// the rest under `_modelcast/`.
    static func outputPath(forTemplate name: String) -> String {
        name == "_headers" ? "_headers" : "_modelcast/" + name
    }

    /// The template texts: the built-in set, overridden or extended by `overrideDirectory`.
    package static func templates(overrideDirectory: String?) throws -> [String: String] {
        var templates = EmbeddedTemplates.all
        guard let overrideDirectory else { return templates }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: overrideDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ModelCastError.usage("templates directory does not exist: \(overrideDirectory)")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: overrideDirectory)
        } catch {
            // Publishing with the built-in templates instead would silently drop the user's.
            throw ModelCastError.unreadable(path: overrideDirectory, reason: "the templates directory cannot be listed (\((error as NSError).localizedDescription))")
        }
        for name in names.sorted() where name.hasSuffix(".mustache") {
            let path = overrideDirectory + "/" + name
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ModelCastError.unreadable(path: path, reason: "not readable UTF-8 text")
            }
            let template = String(name.dropLast(".mustache".count))
            // Checked here, before anything is stored: the rendered file is written under
            // this name, and a name that is no key (".mustache", "..mustache") would fail
            // only in the middle of a commit.
            guard isValidKey(outputPath(forTemplate: template)) else {
                throw ModelCastError.usage("--templates: \(quotedValue(path)) would be written to \(quotedValue(outputPath(forTemplate: template))), which is no file name inside the target: rename it")
            }
            templates[template] = text
        }
        return templates
    }

    /// Renders every template for `objects` (in upload order) published under `baseURL` from `root`.
    package init(objects: [HostedObject], baseURL: String, root: String, templates: [String: String]) throws {
        let rules = ContentTypeRules.make(objects: objects, basePath: URLParts.path(of: baseURL))
        let context = Self.context(objects: objects, baseURL: baseURL, root: root, contentTypeRules: rules)
        var rendered: [(String, String)] = []
        for name in templates.keys.sorted() {
            let template: MustacheTemplate
            do {
                template = try MustacheTemplate(string: templates[name]!)
            } catch {
                throw ModelCastError.usage("template \(name).mustache does not parse: \(error)")
            }
            rendered.append((Self.outputPath(forTemplate: name), template.render(context)))
        }
        files = rendered
        self.objects = objects
        ownRules = rules.filter { !$0.isPattern }.count
    }

    static func context(objects: [HostedObject], baseURL: String, root: String, contentTypeRules: [ContentTypeRule]) -> [String: Any] {
        let basePath = URLParts.path(of: baseURL)
        func entry(_ object: HostedObject, last: Bool) -> [String: Any] {
            let urlPath = basePath + "/" + URLParts.percentEncodedPath(object.key)
            return [
                "key": object.key,
                "key_sh": shellQuoted(object.key),
                "key_json": jsonQuoted(object.key),
                "url_path": urlPath,
                "url_path_nginx": nginxQuoted(urlPath),
                "alias_nginx": nginxQuoted(root + "/" + object.key),
                "role": object.role.rawValue,
                // Artifacts and history records never change under their key: upload
                // scripts upload them only where the key is absent.
                "immutable": object.role == .artifact || object.role == .history,
                "cache_control": object.metadata.cacheControl,
                "cache_control_sh": shellQuoted(object.metadata.cacheControl),
                "cache_control_json": jsonQuoted(object.metadata.cacheControl),
                "content_type": object.metadata.contentType,
                "content_type_sh": shellQuoted(object.metadata.contentType),
                "content_type_json": jsonQuoted(object.metadata.contentType),
                "size": String(object.metadata.size),
                "sha256": object.metadata.sha256.hex,
                "sha256_base64": object.metadata.sha256.base64,
                "last": last,
            ]
        }
        let all = objects.enumerated().map { entry($0.element, last: $0.offset == objects.count - 1) }
        // Every channel's manifest (stable's first), each with its detached signature.
        let signatures = Dictionary(objects.filter { $0.role == .signature }.map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        let manifests: [[String: Any]] = objects.filter { $0.role == .manifest }.map { object in
            var manifest = entry(object, last: false)
            // `false`, not absent: an unsigned channel's section must not find the enclosing context's signature.
            manifest["signature"] = signatures[SignedManifest.signatureKey(for: object.key)].map { entry($0, last: false) } ?? false
            // Several signers' list (`manifest.json.sigs`), served like the signature.
            manifest["signature_list"] = signatures[object.key + ".sigs"].map { entry($0, last: false) } ?? false
            return manifest
        }
        // `manifest` and `signature`: the first channel's, for templates written before channels.
        let manifest = manifests.first ?? [:]
        let signature = manifest["signature"] as? [String: Any]
        let generator = "modelcast \(ModelCastVersion.current)"
        var context: [String: Any] = [
            "generator": generator,
            "generator_json": jsonQuoted(generator),
            "base_url": baseURL,
            "base_url_json": jsonQuoted(baseURL),
            "base_path": basePath,
            "manifests_path_nginx": nginxQuoted(basePath + "/manifests/"),
            "models_path_nginx": nginxQuoted(basePath + "/models/"),
            "root": root,
            // The directory in nginx.conf: quoted (a path may hold a space, `;`, `{`…), and in
            // its comment with control characters shown as `?` so none ends the comment.
            "include_nginx": nginxQuoted(String(String.UnicodeScalarView((root + "/_modelcast/nginx.conf").unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))),
            "manifests_alias_nginx": nginxQuoted(root + "/manifests/"),
            "models_alias_nginx": nginxQuoted(root + "/models/"),
            // The key set chain (`keys/N.json`, `.minisig`, `.sigs`), when the target has one.
            "has_key_sets": objects.contains { $0.key.hasPrefix(KeySet.folder) },
            "keys_path_nginx": nginxQuoted(basePath + "/keys/"),
            "keys_alias_nginx": nginxQuoted(root + "/keys/"),
            // nginx reads `$` in a path as a variable, even quoted, and has no escape for it.
            "root_has_dollar": root.contains("$"),
            "immutable_cache_control": CachePolicy.immutable,
            "manifest": manifest,
            "manifests": manifests,
            "objects": all,
            "artifacts": all.filter { ($0["role"] as? String) == HostedObject.Role.artifact.rawValue },
            "content_type_rules": contentTypeRules.map { ["path": $0.path, "content_type": $0.contentType] },
            "history": all.filter { ($0["role"] as? String) == HostedObject.Role.history.rawValue },
        ]
        if let signature { context["signature"] = signature }
        return context
    }
}

/// `'text'` for POSIX shells, with embedded single quotes escaped.
func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
}

/// `"text"` for nginx.conf, with `\` and `"` escaped: a URL path may hold `;`, `'`, `{`…
/// (sub-delimiters RFC 3986 allows), which nginx reads as syntax in an unquoted word.
func nginxQuoted(_ text: String) -> String {
    "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

/// A JSON string literal.
func jsonQuoted(_ text: String) -> String {
    var out = ""
    JSONValue.appendQuoted(text, to: &out)
    return out
}

