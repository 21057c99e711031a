import Logging
import QuickActions
import QuickActionsProtocol

/// Settings loaded at start-up or by a reload, and what replacing them sets off.
extension DaemonCore {
    /// A reload: new settings replace the old ones whole; settings that failed to load
    /// (a malformed value, a broken static-items file) leave every old one in place.
    func reload(_ loaded: Result<DaemonSettings, DaemonStartupError>) throws(QuickActionsCallError) {
        let newSettings: DaemonSettings
        switch loaded {
        case .success(let loaded): newSettings = loaded
        case .failure(let error):
            logger.error("Reload failed, keeping the previous configuration: \(error.description)")
            throw .invalidConfiguration(error.description)
        }
        if newSettings.configuration.socketPath != settings.configuration.socketPath {
            logger.warning("Socket changed to '\(newSettings.configuration.socketPath)'; it takes effect at the next start.")
        }
        replaceSettings(newSettings)
    }

    func replaceSettings(_ newSettings: DaemonSettings) {
        settings = newSettings
        // A reload also retries an export that failed (a foreign file moved away, a folder made writable).
        launchers.forgetLastPublication()
        launcherPublicationKey = nil
        state.replaceStaticItems(newSettings.staticItems.items)
        if let declared = newSettings.declaredAppVersion { state.appVersion = declared }
        dropPinsWithoutApp()
        refreshPins()
        persist()
    }
}
