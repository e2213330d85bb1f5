import Foundation
import ModelCastFormat

/// Downloads that go on while the app is suspended: files of at least `minimumFileSize`
/// bytes are fetched by a background `URLSession` download task (the system transfers
/// them out of the app's process), then checked from the file — its size, then its SHA-256
/// read back from the disk — before they get their place in the client's downloads; the
/// install that follows is the same as for a streamed file. Smaller files, delta segments
/// and the manifest keep the streaming data task, which hashes as it writes (one pass over
/// the bytes instead of two) and is held to `ClientConfiguration.minimumTransferRate`.
/// On Linux, which has no background sessions, the settings are checked and change nothing:
/// every file streams.
///
/// The app forwards `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
/// to `ModelUpdater.handleEventsForBackgroundURLSession(_:completionHandler:)`, after
/// creating its `ModelUpdater` (which reconnects to the session), as docs/client.md shows.
public struct BackgroundDownloads: Sendable, Equatable {
    /// The background session's identifier, the same at every launch (the system hands a
    /// relaunched app the transfers of the session with this identifier). One per
    /// client directory: two updaters with one identifier must share their directory.
    public var identifier: String
    /// Files of at least this many bytes go through the background session (default
    /// 64 MiB); smaller ones stream. 0 sends every file through it.
    public var minimumFileSize: Int64
    /// Lets the system wait for good conditions (Wi-Fi, power) before it transfers
    /// (`URLSessionConfiguration.isDiscretionary`; Apple platforms). Default false: the
    /// transfer starts now, as the app asked for it.
    public var isDiscretionary: Bool

    /// Tests: an ordinary in-process session instead of a background one (which needs an
    /// app for the system to transfer for; `swift test`'s runner is none), so the tests
    /// exercise the same tasks, checks and hand-over on every platform (on Linux, the only
    /// way to have the download tasks at all: see `hasSession`).
    var inProcess = false

    /// Whether these settings make a session here: on Apple platforms always; on Linux,
    /// which has no background sessions, only for the tests' in-process tasks. An app's
    /// download task there would go on only while the process runs, like a stream, and lose
    /// what streaming has: a resume after a dropped connection (swift-corelibs-foundation
    /// makes no resume data, so a large file starts over), the minimum rate, one read of
    /// the bytes, and its temporary file (left in the system's temporary directory when a
    /// transfer is refused or cancelled).
    var hasSession: Bool {
        #if canImport(FoundationNetworking)
        return inProcess
        #else
        return true
        #endif
    }

    /// Files this large or larger go to the background session unless the app says otherwise.
    public static let defaultMinimumFileSize: Int64 = 64 << 20

    /// `identifier`: the session's, the same at every launch (e.g. "com.example.app.models").
    public init(identifier: String, minimumFileSize: Int64 = Self.defaultMinimumFileSize, isDiscretionary: Bool = false) {
        self.identifier = identifier
        self.minimumFileSize = minimumFileSize
        self.isDiscretionary = isDiscretionary
    }

    /// The values the client refuses to start with, named (`ClientError.configuration`).
    func validate() throws {
        guard !identifier.isEmpty, identifier.utf8.count <= 255,
              !identifier.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format }) else {
            throw ClientError.configuration(reason: "backgroundDownloads.identifier \(quotedValue(identifier)) must be 1 to 255 bytes with no control or invisible characters")
        }
        guard minimumFileSize >= 0 else {
            throw ClientError.configuration(reason: "backgroundDownloads.minimumFileSize \(minimumFileSize) must not be negative")
        }
    }
}
