import Logging
import QuickActionsProtocol

/// `Reload` and SIGHUP: re-reads configuration, static items and the contacts directory
/// between RELOADING=1 and READY=1; on failure keeps everything as it was and reports the error.
struct DaemonReloader: Sendable {
    let loader: SettingsLoader
    let core: DaemonCore
    let watcher: DirectoryWatcher
    let khard: KhardWatcher
    let evolution: EvolutionWatcher
    let mailApp: DefaultMailAppWatcher
    let notifier: any ServiceManagerNotifier
    let logger: Logger

    func reload() async throws(QuickActionsCallError) -> ReloadReply {
        notifier.notify(.reloading)
        let loaded = Result { () throws(DaemonStartupError) in try loader.load() }
        do {
            try await core.reload(loaded)
        } catch {
            notifier.notify(.ready, .status(await core.statusLine()))
            throw error
        }
        let settings = await core.settings
        // Through the watcher, so the rescan is ordered with the events around it.
        await watcher.reload(ContactsScan.scanner(
            for: settings.configuration, notifier: notifier, logger: logger, replies: core.replies))
        // After the folder: a khard book the new `Directory=` takes in is left to it, and one it
        // lets go of is read again after the folder forgot it.
        await khard.reload(KhardSettings(settings.configuration))
        await evolution.reload(EvolutionSettings(settings.configuration))
        await mailApp.reload(DefaultMailApp.isFollowed(settings.configuration, instance: loader.instance))
        ContactsScan.logDuplicates(in: await core.index, logger: logger)
        let reply = ReloadReply(staticItems: settings.staticItems.items.count, configFile: settings.configuration.configFile)
        logger.notice("Reloaded \(settings.configuration.source): \(reply.staticItems) static items.")
        notifier.notify(.ready, .status(await core.statusLine()))
        return reply
    }
}
