// A small command-line "device" built on ModelCastClient: what an app does at launch.
//
//   modelcast-device --manifest URL --dir DIR [--device-id ID] [--public-key KEY]...
//                    [--app-version V] [--keep N] [--check]
//
// It fetches the manifest, proves it (signature, expiry, sequence), downloads what is
// missing (resuming a partial download), installs it atomically and prints what it runs.
import Foundation
import ModelCastClient

func usage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("modelcast-device: \(message)\nusage: modelcast-device --manifest URL --dir DIR [--device-id ID] [--public-key KEY]... [--app-version V] [--keep N] [--check]\n".utf8))
    exit(2)
}

var options: [String: [String]] = [:]
var flags = Set<String>()
var arguments = Array(CommandLine.arguments.dropFirst())
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--check", "--help": flags.insert(argument)
    case "--manifest", "--dir", "--device-id", "--public-key", "--app-version", "--keep":
        guard let value = arguments.first else { usage("\(argument) needs a value") }
        arguments.removeFirst()
        options[argument, default: []].append(value)
    default: usage("unknown argument '\(argument)'")
    }
}
if flags.contains("--help") { usage("help") }
guard let manifest = options["--manifest"]?.last.flatMap(URL.init(string:)) else { usage("--manifest URL is required") }
guard let directory = options["--dir"]?.last else { usage("--dir DIR is required") }
let keys = try (options["--public-key"] ?? []).map { value in
    FileManager.default.fileExists(atPath: value) ? try String(contentsOfFile: value, encoding: .utf8) : value
}
let configuration = ClientConfiguration(
    manifestURL: manifest, directory: URL(fileURLWithPath: directory), deviceID: options["--device-id"]?.last ?? "device-0",
    publicKeys: keys, appVersion: options["--app-version"]?.last, keepPreviousVersions: Int(options["--keep"]?.last ?? "1") ?? 1)

let updater = try ModelUpdater(configuration)
let progress = Task {
    var lastPercent = -1
    for await step in updater.progress where step.totalBytes > 0 {
        let percent = Int(step.completedBytes * 100 / step.totalBytes)
        if percent / 25 != lastPercent / 25 {
            FileHandle.standardError.write(Data("downloading \(step.file) \(percent)%\n".utf8))
            lastPercent = percent
        }
    }
}
do {
    if flags.contains("--check") {
        if let plan = try await updater.check() {
            print("sequence \(plan.sequence): " + plan.versions.keys.sorted().map { "\($0) \(plan.versions[$0]!)" }.joined(separator: ", ")
                  + (plan.takesCandidate ? "" : " (the rollout's fallback)") + ", \(plan.bytesToDownload) bytes to download")
        } else {
            print("not modified")
        }
        exit(0)
    }
    switch try await updater.update() {
    case .notModified: print("not modified")
    case .upToDate(let sequence): print("up to date (sequence \(sequence))")
    case .updated(let sequence, let models):
        print("updated to sequence \(sequence): " + models.keys.sorted().map { "\($0) \(models[$0]!)" }.joined(separator: ", "))
    }
    // A file built from the installed version's segments: what it cost.
    for file in await updater.lastDownloads {
        guard let seed = file.seededFrom, let requests = file.rangeRequests else { continue }
        let share = file.size > 0 ? String(format: "%.2f", Double(file.fetchedBytes) * 100 / Double(file.size)) : "0.00"
        print("fetched \(file.fetchedBytes) of \(file.size) bytes of \(file.file) (\(share) %) in \(requests) range request\(requests == 1 ? "" : "s"); the rest copied from \(seed)")
    }
} catch {
    FileHandle.standardError.write(Data("modelcast-device: \(error)\n".utf8))
    exit(1)
}
progress.cancel()
let state = URL(fileURLWithPath: directory).appendingPathComponent("models")
for name in ((try? FileManager.default.contentsOfDirectory(atPath: state.path)) ?? []).sorted() {
    if let model = updater.installed(name) {
        // The path an app opens: through the `current` link, which an update swaps in one rename.
        print("running \(model.name) \(model.version): models/\(name)/current/\(model.mainFile.lastPathComponent)")
    }
}
