import Foundation
import ModelCastFormat

extension ModelUpdater {
    /// Forwards `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// (or a scene's equivalent): when `identifier` is this updater's
    /// `BackgroundDownloads.identifier`, the completion handler is kept and called, on the
    /// main queue, once the session has delivered the transfers that finished while the app
    /// was suspended or not running (each file is moved into the client's downloads, to be
    /// proven by the next update); returns true. Returns false, and leaves the handler
    /// alone, for any other identifier. Create the updater before calling it: creating it
    /// reconnects to the session.
    @discardableResult
    public nonisolated func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping () -> Void) -> Bool {
        guard let session = downloader.background?.session, session.identifier == identifier else { return false }
        session.handleEvents(completionHandler: completionHandler)
        return true
    }
}
