import Foundation

/// A model's licence as the manifest writes it (`models.NAME.licence`): what a device shows
/// before it downloads a gated model. `LicenceTerms` and `CheckedLicence` are the parsed forms.
public struct ReleaseLicence: Codable, Equatable, Sendable {
    /// An SPDX licence identifier or expression (`Apache-2.0`, `LicenseRef-Llama-3.2`).
    public var spdx: String?
    /// Where the licence's text is.
    public var url: String?
    /// `required`: a device downloads nothing of the model before the app records the user's
    /// acceptance of exactly this licence. `none` (or absent): no acceptance is asked.
    public var acceptance: String?

    public init(spdx: String? = nil, url: String? = nil, acceptance: String? = nil) {
        self.spdx = spdx
        self.url = url
        self.acceptance = acceptance
    }

    public func jsonValue() -> JSONValue {
        var members: [JSONValue.Member] = []
        if let spdx { members.append(.init("spdx", .string(spdx))) }
        if let url { members.append(.init("url", .string(url))) }
        if let acceptance { members.append(.init("acceptance", .string(acceptance))) }
        return .object(members)
    }

    /// Every value parsed. An acceptance value this version does not know (a newer
    /// publisher's) is kept as `.unknown`: the device holds the model back rather than
    /// refusing the whole manifest or skipping a gate it does not understand.
    public func checked() throws -> CheckedLicence {
        func at<T>(_ key: String, _ make: () throws -> T) throws -> T {
            do { return try make() } catch let error as ManifestValueError { throw error.at(key) }
        }
        let spdx = try at("spdx") { try self.spdx.map(LicenceTerms.checkSPDX) }
        let url = try at("url") { try self.url.map { try DownloadURL($0).rawValue } }
        guard spdx != nil || url != nil else {
            throw ManifestValueError(field: "", value: "{}", rule: "names no licence (give spdx, url or both)")
        }
        let acceptance = try at("acceptance") { try self.acceptance.map(LicenceAcceptance.init(parsing:)) ?? .none }
        return CheckedLicence(terms: LicenceTerms(checkedSPDX: spdx, url: url), acceptance: acceptance)
    }
}

/// Which licence an acceptance is for: its SPDX expression and its URL, exactly as the
/// manifest gives them. A release that changes either is another licence, and a device
/// asks for acceptance again.
public struct LicenceTerms: Hashable, Sendable, Codable, CustomStringConvertible {
    public let spdx: String?
    public let url: String?

    /// Terms as an app names them (to record an acceptance): each value parsed as the
    /// manifest's are; at least one is given.
    public init(spdx: String?, url: String?) throws {
        let spdx = try spdx.map(Self.checkSPDX)
        let url = try url.map { try DownloadURL($0).rawValue }
        guard spdx != nil || url != nil else { throw ManifestValueError(field: "licence", value: "{}", rule: "names no licence (give spdx, url or both)") }
        self.init(checkedSPDX: spdx, url: url)
    }

    init(checkedSPDX spdx: String?, url: String?) {
        self.spdx = spdx
        self.url = url
    }

    public init(from decoder: Decoder) throws {
        enum Keys: String, CodingKey { case spdx, url }
        let c = try decoder.container(keyedBy: Keys.self)
        do {
            try self.init(spdx: c.decodeIfPresent(String.self, forKey: .spdx), url: c.decodeIfPresent(String.self, forKey: .url))
        } catch let error as ManifestValueError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    /// `SPDX (URL)`, `SPDX` or `URL`: how a message names the licence (its values are
    /// printable ASCII, so the text is safe to print).
    public var description: String {
        switch (spdx, url) {
        case let (spdx?, url?): return "\(spdx) (\(url))"
        case let (spdx?, nil): return spdx
        case let (nil, url?): return url
        case (nil, nil): return "(none)"
        }
    }

    /// An SPDX licence expression as far as a device needs to check one: 1 to 128
    /// characters of letters, digits and `.-+:()`, words separated by single spaces
    /// (`Apache-2.0`, `MIT OR Apache-2.0`, `LicenseRef-Llama-3.2-Community`).
    static func checkSPDX(_ text: String) throws -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-+:() ".unicodeScalars)
        guard (1...128).contains(text.unicodeScalars.count), text.unicodeScalars.allSatisfy(allowed.contains),
              !text.hasPrefix(" "), !text.hasSuffix(" "), !text.contains("  ") else {
            throw ManifestText.refuse(text, "is not an SPDX licence identifier or expression (1 to 128 letters, digits, '.-+:()' and single spaces)")
        }
        return text
    }
}

/// Whether a device must record the user's acceptance before it downloads the model.
public enum LicenceAcceptance: OpenWord {
    case none
    case required
    /// A value this version does not know (printable ASCII, at most 32 characters): the
    /// model is held back, never downloaded on a guess.
    case unknown(String)

    public static let known: KeyValuePairs<String, Self> = ["none": .none, "required": .required]
    public static let what = "a licence acceptance (required or none)"
    public var unknownWord: String? { if case .unknown(let word) = self { return word } else { return nil } }
}

/// A model's licence, parsed.
public struct CheckedLicence: Hashable, Sendable {
    public let terms: LicenceTerms
    public let acceptance: LicenceAcceptance

    public init(terms: LicenceTerms, acceptance: LicenceAcceptance) {
        self.terms = terms
        self.acceptance = acceptance
    }
}
