import Foundation
import ModelCastFormat

/// The licence acceptance words publish writes. The format keeps words it does not know
/// (a newer publisher's) so a device can hold the model back; publish writes only these.
package enum LicenceAcceptanceChoice: String, CaseIterable, Sendable {
    case required, none
}

/// The network words publish writes (`download_conditions.network`).
package enum NetworkChoice: String, CaseIterable, Sendable {
    case any, unmetered
}

/// The charging words publish writes (`download_conditions.charging`).
package enum ChargingChoice: String, CaseIterable, Sendable {
    case required, any
}

/// A model's licence, download conditions and storage as a publish takes them (flags or
/// a config file): each value parsed as it is set, so none can hold a value the manifest
/// format refuses; what needs two values at once (a licence that names nothing, an
/// unmetered network with a cellular cap) is checked when the release entry is made,
/// after the command line's values are merged over the file's.
package struct ModelPolicies: Sendable, Equatable {
    package private(set) var spdx: String?
    package private(set) var licenceURL: String?
    package var acceptance: LicenceAcceptanceChoice?
    package var network: NetworkChoice?
    package private(set) var cellularMax: Int64?
    package var charging: ChargingChoice?
    /// At least this many bytes installed: raises the size publish computes, never lowers it.
    package private(set) var installSize: Int64?
    package private(set) var priority: Int?

    package init() {}

    /// Nothing is set: the release entry carries none of the three keys but the computed storage.
    package var isEmpty: Bool { self == ModelPolicies() }

    /// True when something beyond the computed storage is asked for (what only a profile
    /// that carries the keys can write).
    package var asksForPolicies: Bool { !isEmpty }

    /// `other`'s values where it has them, else these.
    package func merging(_ other: ModelPolicies) -> ModelPolicies {
        var merged = self
        merged.spdx = other.spdx ?? spdx
        merged.licenceURL = other.licenceURL ?? licenceURL
        merged.acceptance = other.acceptance ?? acceptance
        merged.network = other.network ?? network
        merged.cellularMax = other.cellularMax ?? cellularMax
        merged.charging = other.charging ?? charging
        merged.installSize = other.installSize ?? installSize
        merged.priority = other.priority ?? priority
        return merged
    }

    // MARK: - Setting values (`context` names where each came from: a flag, a key path)

    /// An SPDX licence identifier or expression, as the format checks it.
    package mutating func setSPDX(_ text: String, context: String) throws {
        do {
            _ = try ReleaseLicence(spdx: text).checked()
        } catch let error as ManifestValueError {
            throw ConfigProblem(message: "\(context): \(error.value) \(error.rule)")
        }
        spdx = text
    }

    /// An http(s) URL without a user name or password. A URL that carries either is refused
    /// without printing it: the password would reach a terminal and a CI log.
    package mutating func setLicenceURL(_ text: String, context: String) throws {
        if let host = Self.hostIfUserInfo(text) {
            throw ConfigProblem(message: "\(context): a URL with a user name or password (host \(quotedValue(host)); the rest is not shown) is refused: the manifest is public; give the licence's public URL")
        }
        do {
            _ = try DownloadURL(text)
        } catch let error as ManifestValueError {
            throw ConfigProblem(message: "\(context): \(error.value) \(error.rule)")
        }
        licenceURL = text
    }

    /// Bytes 0…2^53, or a number with a unit (`500MB`, `1.5GiB`).
    package mutating func setCellularMax(_ text: String, context: String) throws {
        cellularMax = try Self.bytes(text, context: context)
    }

    package mutating func setInstallSize(_ text: String, context: String) throws {
        installSize = try Self.bytes(text, context: context)
    }

    /// 0…100; lower is evicted first.
    package mutating func setPriority(_ text: String, context: String) throws {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), (0...100).contains(value) else {
            throw ConfigProblem(message: "\(context): \(quotedValue(text)) is not a storage priority (an integer from 0 to 100; lower is evicted first)")
        }
        priority = value
    }

    /// A byte count as people write one: bytes, or a number with a unit (GB = 10^9, GiB = 2^30), at most 2^53.
    static func bytes(_ text: String, context: String) throws -> Int64 {
        do {
            return try VariantInput.memory(text, context: context)
        } catch is ConfigProblem {
            throw ConfigProblem(message: "\(context): \(quotedValue(text)) is not a byte count from 0 to 2^53 (bytes, or with a unit: 500MB, 7GiB)")
        }
    }

    /// The host of a URL whose authority carries a user name or password, nil for any
    /// other text. Read from the text itself, so nothing of the user info is kept.
    static func hostIfUserInfo(_ text: String) -> String? {
        guard let separator = text.range(of: "://") else { return nil }
        let authority = text[separator.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return nil }
        return String(authority[authority.index(after: at)...])
    }

    // MARK: - The release entry's values

    /// The licence the entry carries, nil when none is set; one that names neither an
    /// SPDX expression nor a URL is refused (acceptance of nothing cannot be recorded).
    func licence(model: String) throws -> ReleaseLicence? {
        guard spdx != nil || licenceURL != nil || acceptance != nil else { return nil }
        guard spdx != nil || licenceURL != nil else {
            throw ModelCastError.usage("model \(model): licence acceptance \(acceptance!.rawValue) names no licence: give its SPDX expression (--licence, licence.spdx), its URL (--licence-url, licence.url) or both")
        }
        return ReleaseLicence(spdx: spdx, url: licenceURL, acceptance: acceptance?.rawValue)
    }

    /// The download conditions the entry carries, nil when none is set. An unmetered-only
    /// model with a cellular cap is refused: the two contradict (a cap allows cellular).
    func conditions(model: String) throws -> ReleaseDownloadConditions? {
        guard network != nil || cellularMax != nil || charging != nil else { return nil }
        if network == .unmetered, let cellularMax {
            throw ModelCastError.usage("model \(model): network unmetered and cellular_max \(cellularMax) contradict (unmetered never downloads on a metered network; a cap allows it up to the cap): give one of them")
        }
        return ReleaseDownloadConditions(network: network?.rawValue, cellularMax: cellularMax, charging: charging?.rawValue)
    }

    /// The storage of a unit whose files take `computed` bytes installed: the stated size
    /// when it is larger (room beside the files), never smaller.
    func storage(computed: Int64, unit: String) throws -> ReleaseStorage {
        if let installSize, installSize < computed {
            throw ModelCastError.usage("\(unit): install_size \(installSize) is less than the \(computed) bytes its files take installed (computed by publish); give \(computed) or more, or leave it out")
        }
        return ReleaseStorage(installSize: max(installSize ?? computed, computed), priority: priority.map(Int64.init))
    }
}
