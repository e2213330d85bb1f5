// What docs/client.md's client snippet (main.swift, compared with that page by a test)
// takes from the app around it. Here they come from the command line:
//
//   modelcast-app-example CDN_BASE_URL APP_SUPPORT_DIR PUBLIC_KEY_FILE
import Foundation

/// The CDN base URL the app was built with (https://cdn.example.com/models).
let cdn = URL(string: CommandLine.arguments[1])!
/// The app's Application Support directory.
let applicationSupport = URL(fileURLWithPath: CommandLine.arguments[2])
/// A random UUID the app stored at its first launch.
let storedDeviceUUID = "2B1E7C9A-5D64-4C1F-9A38-0E6F1D2C3B4A"
/// The publisher's minisign public key, shipped inside the app.
let modelcastPublicKeyText = try! String(contentsOfFile: CommandLine.arguments[3], encoding: .utf8)

/// The app's progress display.
func show(_ completed: Int64, of total: Int64) {}
