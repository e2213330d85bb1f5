import Foundation
import ModelCastFormat

extension ModelUpdater {
    /// Reports that the version of `model` in use does not work on this device (it
    /// crashes, or its results are wrong): switches the model back to the previous version
    /// kept (`ClientConfiguration.keepPreviousVersions`) at once, without the network, and
    /// refuses the reported version until the manifest names another one for the model.
    /// Until then, updates leave the model on the version switched to and say why
    /// (`UpdatePlan.refused`); a release with another version (or other files, or another
    /// variant) installs as usual. The refusal is kept in `state.json`.
    ///
    /// It does not wait for an update under way in this process: that update keeps the
    /// switch, and does not install the refused version. A call of another process on the
    /// same directory (an app extension) it waits for, as `update()` does
    /// (`ClientConfiguration.directoryLockTimeout`, then `ClientError.directoryBusy`).
    ///
    /// - Returns: the version now in use.
    /// - Throws: `ClientError.notInstalled` when no version of `model` is installed,
    ///   `.noPreviousVersion` when none is kept to go back to (nothing changes then), `.io`
    ///   when the link or the state cannot be written (the model is then left as it was),
    ///   `.directoryBusy` when another process kept the directory past the timeout.
    @discardableResult
    public func reportUnusable(model: String, reason: String) async throws -> InstalledModel {
        // An update of this process holds the lock and re-reads the state before its switch.
        let lock = DirectoryLock.isHeldInThisProcess(configuration.directory)
            ? nil : try await DirectoryLock.acquire(configuration.directory, timeout: configuration.directoryLockTimeout)
        defer { lock?.release() }
        return try switcher.revert(model, reason: reason)
    }
}
