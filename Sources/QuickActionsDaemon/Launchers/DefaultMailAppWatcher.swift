import Glibc
import Logging
import QuickActions
import ServiceLifecycle
import SystemCalls

/// Follows the person's choice of mail app while `DesktopFile=auto` serves it: a thread of its
/// own (`qactd-mailapp`) sleeps on an inotify descriptor over the folders that choice is made
/// from (`DefaultMailAppInputs`), and after a quiet moment hands the core one update, upon which
/// the daemon chooses again and reloads if the choice changed (`DefaultMailAppFollower`).
typealias DefaultMailAppWatcher = WatcherThread<DefaultMailAppEngine>

extension WatcherThread where Engine == DefaultMailAppEngine {
    convenience init(environment: [String: String], following: Bool, logger: Logger) {
        self.init(
            DefaultMailAppEngine(inputs: DefaultMailAppInputs(environment: environment), following: following, logger: logger),
            named: "qactd-mailapp", for: "the mail app's watcher")
    }
}

/// The files the choice of `DesktopFile=auto` reads, as folders to watch and the names in them
/// that matter: every `mimeapps.list` the MIME Applications specification lists (GNOME Settings
/// and `xdg-mime` replace the file by a rename, so its folder is watched, not the file), and the
/// desktop entries of every applications folder (the chosen app installed or removed, another
/// one declaring `mailto:`). qactd's own exports folder is left out: its writes choose nothing.
struct DefaultMailAppInputs: Equatable, Sendable {
    /// Each folder and whether any desktop entry in it matters (an applications folder), beside
    /// the `mimeapps.list` names.
    let folders: [String: Bool]
    let mimeappsNames: Set<String>

    init(environment: [String: String]) {
        var folders: [String: Bool] = [:]
        var names: Set<String> = []
        for path in MimeAppsList.locations(environment: environment) {
            let slash = path.lastIndex(of: "/") ?? path.startIndex
            folders[String(path[..<slash]), default: false] = false
            names.insert(String(path[path.index(after: slash)...]))
        }
        let exports = ExportFolders(environment: environment)?.exports
        for folder in XDGFolders.applications(environment: environment) where folder != exports {
            folders[folder] = true
        }
        if let exports { folders[exports] = nil }
        self.folders = folders
        mimeappsNames = names
    }

    /// Whether a change of `name` in `folder` may change the choice.
    func matters(_ name: String, in folder: String) -> Bool {
        mimeappsNames.contains(name) || (folders[folder] == true && name.hasSuffix(".desktop"))
    }
}

/// The mail-app watcher's engine: which folders are watched, and a short quiet period after a
/// change so that a package manager writing many entries, or an editor's temporary file and
/// rename, makes one new choice, not dozens. Touched only under its `WatcherThread`'s lock.
final class DefaultMailAppEngine: WatchedSource {
    /// A change seen, the quiet period over: choose the mail app again.
    struct Update: Sendable {}

    /// How long the folders must stay quiet before the app is chosen again: well inside the
    /// 2 s in which a person expects the icon to follow, long enough for a burst of writes.
    static let quietPeriod: Duration = .milliseconds(150)

    let logger: Logger
    private(set) var inotify: Int32 = -1
    private let inputs: DefaultMailAppInputs
    /// `DesktopFile=auto` on the plain instance: only then is there a choice to follow.
    private var following: Bool
    private var watches: [Int32: String] = [:]
    private var due: ContinuousClock.Instant?
    private var changed = false
    private var buffer: [UInt8] = []

    /// An inotify watch on each folder in this mask: a file closed after writing, moved in or
    /// out, created (a link) or deleted; not the folder's own modifications.
    private static let mask: InotifyEventMask = [.closeWrite, .movedFrom, .movedTo, .create, .delete, .onlyDirectory, .excludeUnlinked]

    init(inputs: DefaultMailAppInputs, following: Bool, logger: Logger) {
        self.inputs = inputs
        self.following = following
        self.logger = logger
        watchFolders()
    }

    var isEnabled: Bool { following && inotify >= 0 }

    func pollTimeoutMilliseconds() -> Int32 { WakeUpSocket.milliseconds(until: due) }

    func handleEvents(ready: Bool) {
        if ready, inotify >= 0 {
            if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: 16 * 1024) }
            for event in Inotify.readQueued(from: inotify, buffer: &buffer, source: "the mail app's folders", logger: logger) where matters(event) {
                due = .now + Self.quietPeriod
            }
        }
        if let due, due <= .now {
            self.due = nil
            changed = true
        }
    }

    private func matters(_ event: InotifyEvent) -> Bool {
        if event.mask.contains(.queueOverflow) { return true }
        guard let folder = watches[event.watchDescriptor] else { return false }
        if event.mask.contains(.ignored) {
            watches[event.watchDescriptor] = nil
            return true
        }
        return event.name.map { inputs.matters($0, in: folder) } ?? false
    }

    func reload(_ following: Bool) {
        self.following = following
        watchFolders()
    }

    func takeUpdates(afterReload: Bool) -> [Update] {
        defer { changed = false }
        return changed && following ? [Update()] : []
    }

    func finishFirstReads() -> Bool { false }
    func abandonFirstReads() -> Bool { false }

    func closeInotify() {
        if inotify >= 0 { _ = Glibc.close(inotify) }
        inotify = -1
        watches = [:]
    }

    /// Watches every input folder that exists while following, none otherwise. A folder that
    /// does not exist yet is not followed until the next reload: the person's `~/.config` and the
    /// system's applications folders are there on every desktop.
    private func watchFolders() {
        guard following else {
            closeInotify()
            return
        }
        if inotify < 0 {
            guard case .success(let descriptor) = Inotify.open(
                logger: logger, failure: "Cannot watch mimeapps.list and the applications folders; the mail app is chosen again only at a reload:")
            else { return }
            inotify = descriptor
        }
        for (folder, _) in inputs.folders.sorted(by: { $0.key < $1.key }) where !watches.values.contains(folder) {
            let watch = inotify_add_watch(inotify, folder, Self.mask.rawValue)
            if watch >= 0 { watches[watch] = folder }
        }
    }
}

/// What the daemon does with the watcher's updates, as a part of the service group: the mail
/// app is chosen again from the files as they are now, and only when the choice differs
/// (another app, another `mimeapps.list` deciding, the app's entry or command changed) does the
/// daemon reload, which exports the new app's entry, removes qactd's copy of the old one and
/// answers `Status` with the new choice. The watcher's thread only signals `changes` (the newest
/// one kept): the reload asks that thread for its new settings, so it must not wait on it.
struct DefaultMailAppFollower: Service {
    let changes: AsyncStream<Void>
    let loader: SettingsLoader
    let core: DaemonCore
    let reloader: DaemonReloader
    let logger: Logger

    func run() async {
        await cancelWhenGracefulShutdown {
            for await _ in changes {
                await follow()
            }
        }
    }

    func follow() async {
        // A configuration that no longer loads is the reload's to report, at the person's reload.
        guard let chosen = try? loader.loadConfiguration() else { return }
        let current = await core.settings.configuration
        guard !Self.sameChoice(chosen, current) else { return }
        logger.notice(
            "The default mail app is now \(chosen.defaultApp?.choice?.desktopFileID ?? "none"), not \(current.defaultApp?.choice?.desktopFileID ?? "none"): reloading.")
        _ = try? await reloader.reload()
    }

    static func sameChoice(_ chosen: DaemonConfiguration, _ current: DaemonConfiguration) -> Bool {
        chosen.launcherDesktopFile == current.launcherDesktopFile && chosen.defaultApp == current.defaultApp
            && chosen.actions == current.actions && chosen.favoriteActionSource == current.favoriteActionSource
    }
}
