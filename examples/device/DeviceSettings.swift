import Foundation
import ModelCastClient
import ModelCastFormat

/// The configuration `init` records in `D/device.json` and every later call reads back.
///
/// The file keeps each value as the text `init` was given, under the option's name
/// (`"min-rate": "512"`), except the keys: `--public-key`, `--trusted-keys` and
/// `--model-signing-public-key` name files, whose text is read at `init` and kept, so later calls need nothing outside
/// `D` and a key file moved or changed afterwards changes nothing. Reading the file parses
/// every value again with the parser `init` used, so a damaged file is refused, never half-used.
struct DeviceSettings {
    /// The file's name in the client's directory.
    static let fileName = "device.json"
    /// The layout this code writes and reads.
    static let format = 1

    /// `device.json` as written: texts only.
    struct Stored: Codable, Equatable {
        var format: Int
        var manifestURL: String
        /// nil when no key is pinned.
        var publicKeys: [String]?
        /// The key set the app ships (`keys/N.json`'s text), nil without one.
        var trustedKeys: String?
        var modelSigningPublicKey: String?
        var appVersion: String?
        var deviceID: String?
        var device: String?
        var minRate: String?
        var rateWindow: String?
        var deadline: String?
        var maxInstall: String?
        var storageBudget: String?

        enum CodingKeys: String, CodingKey {
            case format
            case manifestURL = "manifest-url", publicKeys = "public-key", trustedKeys = "trusted-keys", modelSigningPublicKey = "model-signing-public-key"
            case appVersion = "app-version", deviceID = "device-id", device, minRate = "min-rate", rateWindow = "rate-window"
            case deadline, maxInstall = "max-install", storageBudget = "storage-budget"
        }
    }

    let stored: Stored
    /// What the values configure: a `ClientConfiguration` once given the directory.
    private let manifestURL: URL
    private let device: DeviceOverrides
    private let minimumTransferRate: Int?
    private let transferRateWindow: TimeInterval?
    private let metadataDeadline: TimeInterval?
    private let maxInstallBytes: Int64?
    private let storageBudget: Int64?
    private let modelSigningPublicKey: ModelSigningPublicKey?

    /// Parses every value of `stored`; `label(option)` names an option in messages (`--min-rate`
    /// at `init`, `device.json: min-rate` when reading the file back).
    init(_ stored: Stored, label: (Stored.CodingKeys) -> String) throws {
        self.stored = stored
        guard stored.format == Self.format else { throw UsageError("\(label(.format)) \(stored.format) is not \(Self.format)") }
        manifestURL = try StrictValue.manifestURL(stored.manifestURL, label(.manifestURL))
        for (index, text) in (stored.publicKeys ?? []).enumerated() {
            do { _ = try MinisignPublicKey(text: text, source: "\(label(.publicKeys)) \(index + 1)") } catch {
                throw UsageError("\(label(.publicKeys)) \(index + 1) is not a minisign public key: \(error)")
            }
        }
        if let text = stored.trustedKeys {
            guard stored.publicKeys == nil else { throw UsageError("\(label(.trustedKeys)) and \(label(.publicKeys)) are both given: a key set names the manifest keys itself") }
            do { _ = try KeySet(parsing: Data(text.utf8)) } catch {
                throw UsageError("\(label(.trustedKeys)) is not a key set: \(error)")
            }
        }
        do { modelSigningPublicKey = try stored.modelSigningPublicKey.map(ModelSigningPublicKey.init(pem:)) } catch {
            throw UsageError("\(label(.modelSigningPublicKey)) is not a PEM P-256 public key: \(error)")
        }
        if let version = stored.appVersion { _ = try StrictValue.version(version, label(.appVersion)) }
        if let id = stored.deviceID { _ = try StrictValue.name(id, label(.deviceID)) }
        device = try DeviceOverrides(stored.device.map { [$0] } ?? [], label: label(.device))
        minimumTransferRate = try stored.minRate.map { text in
            let rate = try StrictValue.count(text, label(.minRate), positive: false, unit: "bytes per second")
            guard let value = Int(exactly: rate) else { throw UsageError("\(label(.minRate)) \(quotedValue(text)) is too large") }
            return value
        }
        transferRateWindow = try stored.rateWindow.map { try StrictValue.seconds($0, label(.rateWindow)) }
        metadataDeadline = try stored.deadline.map { try StrictValue.seconds($0, label(.deadline)) }
        maxInstallBytes = try stored.maxInstall.map { try StrictValue.count($0, label(.maxInstall), positive: true, unit: "bytes") }
        storageBudget = try stored.storageBudget.map { try StrictValue.count($0, label(.storageBudget), positive: false, unit: "bytes") }
    }

    /// The client's configuration for the directory `directory`; the options not given keep
    /// `ClientConfiguration`'s defaults, the device keys not given this machine's.
    func configuration(directory: URL) -> ClientConfiguration {
        var configuration = ClientConfiguration(
            manifestURL: manifestURL, directory: directory, deviceID: stored.deviceID ?? "device-0", publicKeys: stored.publicKeys ?? [],
            trustedKeySet: stored.trustedKeys.map { Data($0.utf8) }, modelSigningPublicKey: modelSigningPublicKey, appVersion: stored.appVersion, device: device.applied(to: .current))
        if let minimumTransferRate { configuration.minimumTransferRate = minimumTransferRate }
        if let transferRateWindow { configuration.transferRateWindow = transferRateWindow }
        if let metadataDeadline { configuration.metadataDeadline = metadataDeadline }
        if let maxInstallBytes { configuration.maxInstallBytes = maxInstallBytes }
        configuration.storageBudget = storageBudget
        return configuration
    }

    /// Why `load` found no configuration it can use.
    enum LoadError: Error, CustomStringConvertible {
        case missing(path: String)
        case unusable(path: String, reason: String)

        var description: String {
            switch self {
            case .missing(let path): return "\(path): no configuration (run init --dir first)"
            case .unusable(let path, let reason): return "\(path): not a configuration this client reads: \(reason)"
            }
        }
    }

    /// Largest `device.json` read: keys and a few values, far below it.
    static let maxFileBytes = 1 << 20

    /// The configuration `init` recorded in `directory`.
    static func load(from directory: URL) throws -> DeviceSettings {
        let path = directory.appendingPathComponent(fileName)
        guard let handle = FileHandle(forReadingAtPath: path.path) else { throw LoadError.missing(path: path.path) }
        defer { try? handle.close() }
        let data: Data
        do { data = try handle.read(upToCount: maxFileBytes + 1) ?? Data() } catch {
            throw LoadError.unusable(path: path.path, reason: String(describing: error))
        }
        guard data.count <= maxFileBytes else { throw LoadError.unusable(path: path.path, reason: "larger than \(maxFileBytes) bytes") }
        do {
            let stored = try JSONDecoder().decode(Stored.self, from: data)
            return try DeviceSettings(stored) { "\(fileName): \($0.rawValue)" }
        } catch let error as UsageError {
            throw LoadError.unusable(path: path.path, reason: error.description)
        } catch {
            throw LoadError.unusable(path: path.path, reason: "not the JSON init writes")
        }
    }

    /// Writes `device.json` in `directory` (created if needed) with one rename, so a call
    /// killed half-way leaves the old file or the new one.
    func save(in directory: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(stored) + Data("\n".utf8)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try data.write(to: directory.appendingPathComponent(Self.fileName), options: .atomic)
        } catch {
            throw ClientError.io(path: directory.appendingPathComponent(Self.fileName).path, reason: error.localizedDescription)
        }
    }
}
