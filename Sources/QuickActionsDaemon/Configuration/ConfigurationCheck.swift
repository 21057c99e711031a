import Logging
import QuickActionsProtocol

extension Daemon {
    /// `qactd --check-config FILE`: reads `FILE` exactly as the daemon reads its configuration at
    /// start-up (the file, its static items and their translations) without starting anything.
    /// Warnings go to stderr as the daemon logs them; returns the line to print and the status the
    /// daemon would exit with: 0 when it would start on this file, 78 when it would refuse it.
    public static func checkConfiguration(
        path: String, environment: [String: String], instance: InstanceName = .plain
    ) -> (status: Int32, message: String) {
        // Warnings only: the notices of a start-up (no static-items file, …) are not findings.
        let logger = LogDestination.logger(level: .warning, environment: environment, instance: instance)
        let loader = SettingsLoader(
            environment: environment, explicitConfigPath: path, systemCandidates: [], logger: logger,
            desktopDefaults: Daemon.desktopDefaults, instance: instance)
        do {
            let settings = try loader.load()
            return (0, "\(settings.configuration.source): valid.")
        } catch {
            return (error.exitStatus, error.description)
        }
    }
}
