import Foundation

/// The Cache-Control values modelcast publishes with.
package enum CachePolicy {
    /// The manifest must always be revalidated, or devices miss updates and rollbacks.
    package static let manifestDefault = "no-cache, no-store"
    /// Artifacts and history records never change under their key.
    package static let immutable = "public, max-age=31536000, immutable"
    /// The longest freshness modelcast accepts for a manifest, in seconds.
    package static let manifestMaxAge = 60

    /// Accepts a manifest Cache-Control only if caches must revalidate it or may
    /// keep it at most `manifestMaxAge` seconds. Anything longer-lived would let
    /// CDNs and devices keep serving an old manifest after a release or rollback.
    package static func validateManifest(_ value: String) throws {
        let directives = parse(value)
        func refuse(_ why: String) -> ModelCastError {
            .usage("manifest Cache-Control '\(value)' is refused: \(why). Use '\(manifestDefault)' or max-age of at most \(manifestMaxAge)")
        }
        guard !directives.isEmpty else { throw refuse("it is empty") }
        var bounded = false
        for directive in directives {
            switch directive.name {
            case "immutable":
                throw refuse("a manifest changes with every release and must never be immutable")
            case "no-cache", "no-store":
                bounded = true
            case "max-age", "s-maxage":
                guard let seconds = directive.seconds else { throw refuse("\(directive.name) needs a number of seconds") }
                if seconds > manifestMaxAge { throw refuse("\(directive.name)=\(seconds) is longer than \(manifestMaxAge) seconds") }
                bounded = true
            case "stale-while-revalidate", "stale-if-error":
                if let seconds = directive.seconds, seconds > manifestMaxAge {
                    throw refuse("\(directive.name)=\(seconds) lets caches serve a stale manifest for longer than \(manifestMaxAge) seconds")
                }
            default:
                continue
            }
        }
        guard bounded else { throw refuse("without no-cache, no-store or a short max-age, CDNs cache it heuristically") }
    }

    /// The shortest freshness accepted for an artifact, in seconds (a day).
    package static let artifactMinimumMaxAge = 86_400

    /// How an artifact's Cache-Control is judged.
    package enum ArtifactVerdict: Equatable, Sendable {
        /// Long-lived and immutable.
        case ok
        /// Long-lived, but without `immutable`: caches revalidate an object that never changes.
        case lacksImmutable
        /// Not long-lived (or not cacheable at all), with the reason.
        case refused(String)
    }

    /// Judges the Cache-Control an artifact (or history record) is served with: it never
    /// changes under its URL, so devices and CDNs must keep it at least
    /// `artifactMinimumMaxAge` seconds (`max-age`, and `s-maxage` when given, which CDNs
    /// obey instead), and should be told it is `immutable`. Directives are read as
    /// `validateManifest` reads them (case-insensitive, quoted values).
    package static func validateArtifact(_ value: String) -> ArtifactVerdict {
        let directives = parse(value)
        guard !directives.isEmpty else { return .refused("it is missing or empty") }
        if let uncached = directives.first(where: { ["no-store", "no-cache", "private"].contains($0.name) }) {
            return .refused("\(uncached.name) keeps \(uncached.name == "private" ? "CDNs" : "caches") from keeping it")
        }
        for name in ["max-age", "s-maxage"] {
            guard let directive = directives.first(where: { $0.name == name }) else {
                if name == "max-age" { return .refused("it has no max-age, so caches keep it only heuristically") }
                continue
            }
            guard let seconds = directive.seconds else { return .refused("\(name) needs a number of seconds") }
            if seconds < artifactMinimumMaxAge { return .refused("\(name)=\(seconds) is shorter than a day (\(artifactMinimumMaxAge) seconds)") }
        }
        return directives.contains { $0.name == "immutable" } ? .ok : .lacksImmutable
    }

    /// Cache-Control directives: names lower-cased, values unquoted.
    private static func parse(_ value: String) -> [(name: String, value: String?, seconds: Int?)] {
        value.split(separator: ",").compactMap { raw in
            let parts = raw.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = parts.first?.lowercased(), !name.isEmpty else { return nil }
            let value = parts.count == 2 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
            let seconds = value.flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
            return (name, value, seconds)
        }
    }
}
