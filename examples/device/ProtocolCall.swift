import Foundation
import ModelCastClient

/// The conformance kit's client protocol (`conformance/CLIENT-CLI.md`, version 1): one call
/// per process, `init`, `update`, `state` or `revert`, everything kept under `--dir D`.
/// Each subcommand is in its own file (`ProtocolCall+Init.swift`, …).
enum ProtocolCall {
    /// The subcommands; `revert` is the protocol's only when no `--manifest` is given (with
    /// one, it is the one-shot form's `revert`).
    static let subcommands: Set<String> = ["init", "update", "state", "revert"]

    /// Runs `subcommand` with `words` and exits with the protocol's status: 0 done, 1
    /// refused, 2 usage, 3 network or I/O (a directory `init` never configured included).
    static func run(_ subcommand: String, _ words: ArraySlice<String>) async -> Never {
        do {
            switch subcommand {
            case "init": try initialize(words)
            case "update": try await update(words)
            case "state": try await state(words)
            default: try await revert(words)
            }
        } catch let error as UsageError {
            fail(.usage, error.description)
        } catch let error as DeviceSettings.LoadError {
            fail(.unavailable, error.description)
        } catch {
            fail(error)
        }
        exit(ExitStatus.success.rawValue)
    }

    /// The client of the directory `--dir` names, configured as `init` recorded.
    /// - Throws: `DeviceSettings.LoadError` when there is no usable configuration (exit 3).
    static func updater(directory: String) throws -> ModelUpdater {
        let url = URL(fileURLWithPath: directory, isDirectory: true)
        let configuration = try DeviceSettings.load(from: url).configuration(directory: url)
        // `init` checked every value; a file edited since is refused before anything is created.
        do { try configuration.validate() } catch {
            throw DeviceSettings.LoadError.unusable(path: url.appendingPathComponent(DeviceSettings.fileName).path, reason: String(describing: error))
        }
        return try ModelUpdater(configuration)
    }
}
