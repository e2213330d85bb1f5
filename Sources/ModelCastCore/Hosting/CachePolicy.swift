import Foundation

/// The Cache-Control values modelcast publishes with.
public enum CachePolicy {
    /// The manifest must always be revalidated, or devices miss updates and rollbacks.
    public static let manifestDefault = "no-cache, no-store"
    /// Artifacts and history records never change under their key.
    public static let immutable = "public, max-age=31536000, immutable"
    /// The longest freshness modelcast accepts for a manifest, in seconds.
    public static let manifestMaxAge = 60

    /// Accepts a manifest Cache-Control only if caches must revalidate it or may
    /// keep it at most `manifestMaxAge` seconds. Anything longer-lived would let
    /// CDNs and devices keep serving an old manifest after a release or rollback.
    public static func validateManifest(_ value: String) throws {
        let directives = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        func refuse(_ why: String) -> ModelCastError {
            .usage("manifest Cache-Control '\(value)' is refused: \(why). Use '\(manifestDefault)' or max-age of at most \(manifestMaxAge)")
        }
        guard !directives.isEmpty else { throw refuse("it is empty") }
        var bounded = false
        for directive in directives {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            switch parts[0] {
            case "immutable":
                throw refuse("a manifest changes with every release and must never be immutable")
            case "no-cache", "no-store":
                bounded = true
            case "max-age", "s-maxage":
                guard parts.count == 2, let seconds = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))), seconds >= 0 else {
                    throw refuse("\(parts[0]) needs a number of seconds")
                }
                if seconds > manifestMaxAge { throw refuse("\(parts[0])=\(seconds) is longer than \(manifestMaxAge) seconds") }
                bounded = true
            case "stale-while-revalidate", "stale-if-error":
                if parts.count == 2, let seconds = Int(parts[1]), seconds > manifestMaxAge {
                    throw refuse("\(parts[0])=\(seconds) lets caches serve a stale manifest for longer than \(manifestMaxAge) seconds")
                }
            default:
                continue
            }
        }
        guard bounded else { throw refuse("without no-cache, no-store or a short max-age, CDNs cache it heuristically") }
    }
}
