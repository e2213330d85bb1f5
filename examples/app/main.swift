import Foundation
import ModelCastClient

let session = URLSessionConfiguration.default
session.allowsCellularAccess = false                 // the app's own network policy (here: Wi-Fi only)
let updater = try ModelUpdater(ClientConfiguration(
    manifestURL: ClientConfiguration.manifestURL(base: cdn, channel: "stable"),
    directory: applicationSupport.appendingPathComponent("ModelCast"),  // models/, downloads/, state.json
    deviceID: storedDeviceUUID,                      // stable per device: decides rollout cohorts
    publicKeys: [modelcastPublicKeyText],            // pinned; two during a key rotation
    appVersion: "2.3.0"),                            // for min_app_version ("5.2", "1.0.0.123" too)
    sessionConfiguration: session)
Task { for await step in updater.progress { show(step.completedBytes, of: step.totalBytes) } }
let update = Task { try await updater.update() }     // update.cancel() stops it at once
do {
    switch try await update.value {
    case .updated(_, let models): print("now running", models)
    case .upToDate, .notModified: print("nothing new")
    case .deferred: print("not now")                 // shouldDownload said no (none is set here)
    }
} catch let error as ClientError {
    print("no update:", error.localizedDescription) // names the model, file or value
}
for model in updater.installedModels() {             // read from the disk: works offline
    print(model.name, model.version, model.mainFile.path)  // …/ModelCast/models/NAME/current/FILE
}
