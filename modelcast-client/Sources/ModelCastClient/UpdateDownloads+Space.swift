import Foundation
import ModelCastFormat

extension UpdateDownloads {
    /// Refuses, before anything is fetched, a version whose plain files alone (their sizes
    /// are the manifest's) take more than `maxInstallBytes`. A zip's unpacked size is known
    /// once it is downloaded (`checkRoom`).
    func checkInstallCap(_ models: [CheckedModel]) throws {
        guard let cap = configuration.maxInstallBytes else { return }
        for model in models where installer.modelsDirectory.kept(model) == nil {
            let plain = model.files.filter { $0.packedDirectoryName == nil }.reduce(Int64(0)) { Installer.add($0, $1.size) }
            if plain > cap {
                throw ClientError.installTooLarge(model: model.name.rawValue, version: model.version.rawValue, bytes: plain, limit: cap)
            }
        }
    }

    /// Before anything is unpacked: refuses a version that takes more than
    /// `maxInstallBytes` installed, or whose zips (at the sizes their entries declare)
    /// would leave less than `Installer.reservedSpace` free. The refused version's
    /// downloads are deleted, so nothing of it stays on the volume.
    func checkRoom(_ models: [CheckedModel], downloads: [SHA256Hex: URL]) throws {
        var sizes: [(model: CheckedModel, size: InstallSize)] = []
        for model in models where installer.modelsDirectory.kept(model) == nil {
            sizes.append((model, try installer.installSize(of: model, downloads: downloads)))
        }
        let free = sizes.contains { $0.size.added > 0 } ? freeSpace(at: configuration.directory) : nil
        guard let (model, problem) = Installer.roomProblem(sizes, cap: configuration.maxInstallBytes, free: free) else { return }
        // The refusal is what the app is told; a download that cannot be deleted now is
        // deleted by a later update (this check again, or the tidy-up).
        for file in model.files {
            if let download = downloads[file.sha256] { try? FileManager.default.removeItem(at: download) }
        }
        throw problem
    }
}
