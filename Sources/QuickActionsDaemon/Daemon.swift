import CLinux
import Contacts
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NIOCore
import NIOPosix
import QuickActions
import QuickActionsProtocol
import ServiceLifecycle
import UnixSignals
import Varlink
import VarlinkNIOServer

#if canImport(Glibc)
import Glibc
#endif

/// What the `qactd` executable hands over after parsing its arguments.
public struct DaemonOptions: Sendable {
    public var configPath: String?
    public var logLevel: Logger.Level
    public var environment: [String: String]

    public init(configPath: String?, logLevel: Logger.Level, environment: [String: String]) {
        self.configPath = configPath
        self.logLevel = logLevel
        self.environment = environment
    }
}

/// A reason the daemon refuses to start; printed as one sentence naming what is wrong.
struct DaemonStartupError: Error, CustomStringConvertible {
    let description: String
    /// sysexits-style status: 78 (EX_CONFIG) for configuration and static items, 1 otherwise.
    let exitStatus: Int32

    init(_ description: String, exitStatus: Int32 = 1) {
        self.description = description
        self.exitStatus = exitStatus
    }
}

/// Reads configuration and static items from disk into `DaemonSettings`.
/// Used at start-up (failure refuses to start) and on reload (failure keeps the old settings).
struct SettingsLoader: Sendable {
    let environment: [String: String]
    let explicitConfigPath: String?
    let systemCandidates: [String]
    let logger: Logger

    func load() throws(DaemonStartupError) -> DaemonSettings {
        let loaded: LoadedConfiguration
        do {
            loaded = try ConfigurationLoader.load(
                explicitPath: explicitConfigPath, environment: environment, systemCandidates: systemCandidates)
        } catch {
            throw DaemonStartupError(error.description, exitStatus: 78)
        }
        for warning in loaded.warnings {
            logger.warning("\(warning), ignoring.", metadata: ["QACTD_PATH": "\(warning.file)"])
        }
        let configuration = loaded.configuration
        let staticItems = try readStaticItems(at: configuration.staticItemsPath)
            .expandingBuildSettings(bundleIdentifier: configuration.bundleIdentifier)
        for (index, setting) in staticItems.unexpandedBuildSettings {
            logger.warning(
                "\(configuration.staticItemsPath): item \(index + 1): the type holds '\(setting)', which BundleIdentifier= does not expand; using the type as written.",
                metadata: ["QACTD_PATH": "\(configuration.staticItemsPath)"])
        }
        let tables = try readStringsTables(besides: configuration.staticItemsPath)
        let language = LanguagePreference(environment: environment)
        if !tables.isEmpty {
            logger.debug(
                "Static titles translated into \(tables.keys.sorted().joined(separator: ", ")); the daemon's language: \(language.languages.isEmpty ? "none" : language.languages.joined(separator: ", ")).")
        }
        return DaemonSettings(
            configuration: configuration, staticItems: staticItems,
            localization: Localization(tables: tables, developmentRegion: staticItems.developmentRegion),
            language: language)
    }

    /// Every `<lang>.lproj/InfoPlist.strings` in the static-items file's folder, by language.
    /// A folder without the file is skipped; a file that does not parse refuses the settings,
    /// like a broken static-items file.
    private func readStringsTables(besides staticItemsPath: String) throws(DaemonStartupError) -> [String: [String: String]] {
        let folder = URL(fileURLWithPath: staticItemsPath).deletingLastPathComponent().path
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            // No folder means no static-items file either, which already means "no static items".
            return [:]
        }
        var tables: [String: [String: String]] = [:]
        for name in names.sorted() {
            guard let language = Localization.language(ofFolder: name) else { continue }
            let path = "\(folder == "/" ? "" : folder)/\(name)/\(Localization.stringsFileName)"
            let bytes: [UInt8]
            do {
                guard let read = try FileIO.readFileIfPresent(path) else { continue }
                bytes = read
            } catch where error.errno == ENOTDIR {
                continue  // a file that merely ends in .lproj holds no translations
            } catch {
                throw DaemonStartupError("Cannot read the strings file: \(error)", exitStatus: 78)
            }
            do {
                tables[language] = try StringsFile.parse(bytes: bytes, fileName: path)
            } catch {
                throw DaemonStartupError(error.description, exitStatus: 78)
            }
        }
        return tables
    }

    private func readStaticItems(at path: String) throws(DaemonStartupError) -> StaticItemsFile {
        let bytes: [UInt8]
        do {
            guard let read = try FileIO.readFileIfPresent(path) else {
                // The daemon must start with no configuration at all, so the default
                // static-items file may be missing: that means "no static items".
                logger.notice("No static items file at '\(path)': serving no static items.", metadata: ["QACTD_PATH": "\(path)"])
                return StaticItemsFile(items: [], appVersion: nil)
            }
            bytes = read
        } catch {
            throw DaemonStartupError("Cannot read the static items file: \(error)", exitStatus: 78)
        }
        do {
            return try StaticItemsFile.decode(bytes, fileName: path)
        } catch {
            throw DaemonStartupError(error.description, exitStatus: 78)
        }
    }

    /// System-wide defaults: next to the installed binary (`PREFIX/etc/qactd`), then `/etc/qactd`.
    static func systemCandidates() -> [String] {
        var candidates: [String] = []
        if let prefix = RunningExecutable.prefix {
            candidates.append("\(prefix)/etc/qactd/\(ConfigurationLoader.fileName)")
        }
        let etc = "/etc/qactd/\(ConfigurationLoader.fileName)"
        if !candidates.contains(etc) { candidates.append(etc) }
        return candidates
    }
}

/// The running daemon (SPEC §7): start-up in the order systemd expects (READY=1 only once
/// state is loaded, the first scan is done and the socket listens), then its long-lived parts
/// as the services of a `ServiceGroup`, which stops them one at a time, in reverse order.
public struct Daemon: Service {
    private let options: DaemonOptions
    private let logger: Logger
    private let notifier: any ServiceManagerNotifier
    private let hangups: UnixSignalsSequence
    private let group: any EventLoopGroup

    init(
        options: DaemonOptions, logger: Logger, notifier: any ServiceManagerNotifier, hangups: UnixSignalsSequence,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.options = options
        self.logger = logger
        self.notifier = notifier
        self.hangups = hangups
        self.group = group
    }

    /// Runs the daemon on the calling thread's behalf until SIGTERM or SIGINT and returns the
    /// process exit status. Every task of the daemon runs on the socket's event loops (see
    /// `EventLoopExecution`), so an idle daemon sleeps until something happens.
    public static func main(_ options: DaemonOptions) -> Int32 {
        EventLoopExecution.runBlocking { await run(options) }
    }

    /// Runs until SIGTERM or SIGINT; returns the process exit status.
    static func run(_ options: DaemonOptions) async -> Int32 {
        let logger = LogDestination.logger(level: options.logLevel, environment: options.environment)
        // Trapped before start-up, so a SIGHUP meanwhile is neither fatal nor lost: it reloads after READY=1.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let daemon = Daemon(options: options, logger: logger, notifier: SystemdNotifier(), hangups: hangups)
        // Start-up runs inside the group, whose trap of SIGTERM and SIGINT is then already set:
        // a stop asked for during start-up is neither fatal nor lost, it follows READY=1.
        let lifecycle = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: daemon, serviceName: "qactd")],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await lifecycle.run()
            return 0
        } catch let error as DaemonStartupError {
            logger.error("\(error.description)")
            return error.exitStatus
        } catch {
            logger.error("Stopped on an unexpected error: \(error)")
            return 1
        }
    }

    /// Starts, then runs the long-lived parts until the group shuts down gracefully.
    public func run() async throws {
        let parts = try await start()
        try await ServiceGroup(configuration: ServiceGroupConfiguration(services: parts, logger: logger)).run()
    }

    /// Configuration and static items, the saved state, the first scan, the socket; an error in
    /// any of them refuses to start. Returns the running parts in the order the group starts
    /// them; it stops them in reverse: STOPPING=1 first, then no more reloads, the watcher, the
    /// socket, the pending state write, and the watchdog last, so it pings all along.
    private func start() async throws(DaemonStartupError) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let loader = SettingsLoader(
            environment: options.environment, explicitConfigPath: options.configPath,
            systemCandidates: SettingsLoader.systemCandidates(), logger: logger)
        let settings = try loader.load()
        let configuration = settings.configuration
        logger.info("Using configuration from \(configuration.source).")

        let paths: StatePaths
        do {
            paths = try StatePaths.resolve(environment: options.environment)
        } catch {
            throw DaemonStartupError(error.description)
        }
        var store = StateStore<PersistedState>(paths: paths)
        for leftover in store.removeLeftoverTemporaryFiles() {
            logger.notice("Removed '\(leftover)', left behind by a write that a crash cut short.", metadata: ["QACTD_PATH": "\(leftover)"])
        }
        var restored: PersistedState?
        do {
            switch try store.load() {
            case .fresh:
                logger.info("No saved state at '\(paths.stateFile)', starting clean.", metadata: ["QACTD_PATH": "\(paths.stateFile)"])
            case .loaded(let payload):
                restored = payload
            case .corrupt(let movedTo, let reason):
                logger.error("The state file could not be loaded (\(reason)); moved it aside to '\(movedTo)', starting clean.",
                             metadata: ["QACTD_PATH": "\(paths.stateFile)"])
            }
        } catch {
            throw DaemonStartupError(error.description)
        }

        let launchers = LauncherExporters(
            environment: options.environment, qactlPath: LauncherExporters.qactlBesideDaemon(logger: logger), logger: logger)
        let core = DaemonCore(
            settings: settings, restored: restored, index: ContactIndex(), store: store,
            socketPath: configuration.socketPath, logger: logger, notifier: notifier,
            launchers: launchers)
        // The first scan is the watcher's own walk, which adds each folder's watch before
        // listing it: nothing changed between the scan and the watching is missed. Its
        // progress reaches `STATUS=` and the log only: the socket listens after it.
        let watcher = DirectoryWatcher(
            scanner: ContactsScan.scanner(for: configuration, notifier: notifier, logger: logger, replies: core.replies), logger: logger)
        do {
            let initial = watcher.attach()
            await core.applyWatcherUpdate(initial)
        }
        // The first scan's batch (every file read and parsed) is freed now that `initial` is
        // gone: its pages go back before READY=1, whatever the timing of the core's later trims.
        _ = CLinux_releaseFreeHeapMemory()
        // The launchers show the set restored from the state file before anything changes it.
        await core.publishToLaunchers()
        ContactsScan.logDuplicates(in: await core.index, logger: logger)

        // Before the socket listens, so a `Reload` call always finds the watcher running.
        watcher.run { update in await core.applyWatcherUpdate(update) }
        // With `Recompute=change` the set follows the index, including changes made while stopped.
        await core.scheduleRecomputeIfFollowingContacts()

        let reloader = DaemonReloader(loader: loader, core: core, watcher: watcher, notifier: notifier, logger: logger)
        let server = try await listen(configuration, core: core, reloader: reloader)

        var parts: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let watchdog = WatchdogSettings.fromEnvironment() {
            let loop = group.next()
            let pinger = WatchdogPinger(interval: watchdog.pingInterval, notifier: notifier) {
                _ = await core.statusLine()
                return (try? await loop.submit({}).get()) != nil
            }
            parts.append(.init(service: pinger, serviceName: "watchdog"))
        }
        parts += [
            // Stopped after the state's last write: the docks lose the menu only at the very end.
            .init(service: StartedPart { await launchers.quicklist.stop() }, serviceName: "quicklist"),
            // Timers and streams ending reach the core until its last write is done.
            .init(service: CoreEventService(core: core), serviceName: "core events"),
            // Every core method runs whole on the actor, so once this call returns any state
            // write that was under way has finished.
            .init(service: StartedPart { await core.finishPendingWork() }, serviceName: "state"),
            .init(service: StartedPart { await server.stop() }, serviceName: "socket"),
            .init(service: StartedPart { await watcher.stop() }, serviceName: "watcher"),
            .init(service: ReloadOnHangup(hangups: hangups) { _ = try? await reloader.reload() }, serviceName: "SIGHUP"),
            .init(service: ReadinessReporter(core: core, notifier: notifier, logger: logger), serviceName: "readiness"),
        ]
        return parts
    }

    private func listen(
        _ configuration: DaemonConfiguration, core: DaemonCore, reloader: DaemonReloader
    ) async throws(DaemonStartupError) -> VarlinkServer {
        // The connection-level errors (InvalidMessage, …) are declared in io.qactd.QuickActions.
        var serverConfiguration = VarlinkServerConfiguration(errorInterface: QuickActionsInterface.name)
        serverConfiguration.maxConnections = configuration.maxConnections
        serverConfiguration.maxMessageBytes = configuration.maxMessageBytes
        let logger = self.logger
        let owner = serverConfiguration.ownerUID
        serverConfiguration.peerRefused = { peer in
            logger.notice("Refused a connection from uid \(peer.uid) (pid \(peer.pid)): qactd serves only \(owner == 0 ? "root" : "uid \(owner) and root").",
                          metadata: ["QACTD_PEER_UID": "\(peer.uid)", "QACTD_PEER_PID": "\(peer.pid)"])
        }
        let server = VarlinkServer(
            info: VarlinkServiceInfo(
                vendor: "qactd", product: "qactd", version: QactdVersion.string,
                url: "https://github.com/qactd/qactd",
                interfaces: [QuickActionsInterface.varlinkInterface]),
            handlers: [
                QuickActionsInterface.name: QuickActionsHandler(core: core, reload: { () async throws(QuickActionsCallError) -> ReloadReply in
                    try await reloader.reload()
                })
            ],
            configuration: serverConfiguration, group: group)
        let inherited: [CInt]
        do {
            inherited = try SocketActivation.listeningDescriptors()
        } catch {
            throw DaemonStartupError(error.description)
        }
        do {
            if let descriptor = inherited.first {
                try await server.listen(adoptingDescriptor: descriptor)
                logger.info("Listening on the socket passed by systemd.")
            } else {
                try await server.listen(unixSocketPath: configuration.socketPath)
                logger.info("Listening on '\(configuration.socketPath)'.", metadata: ["QACTD_PATH": "\(configuration.socketPath)"])
                if let problem = server.socketFolderProblem {
                    logger.warning("\(problem)", metadata: ["QACTD_PATH": "\(configuration.socketPath)"])
                }
            }
        } catch {
            throw DaemonStartupError(error.description)
        }
        return server
    }
}

/// `Reload` and SIGHUP: re-reads configuration, static items and the contacts directory
/// between RELOADING=1 and READY=1; on failure keeps everything as it was and reports the error.
struct DaemonReloader: Sendable {
    let loader: SettingsLoader
    let core: DaemonCore
    let watcher: DirectoryWatcher
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
        await watcher.reload(scanner: ContactsScan.scanner(
            for: settings.configuration, notifier: notifier, logger: logger, replies: core.replies))
        ContactsScan.logDuplicates(in: await core.index, logger: logger)
        let reply = ReloadReply(staticItems: settings.staticItems.items.count, configFile: settings.configuration.configFile)
        logger.notice("Reloaded \(settings.configuration.source): \(reply.staticItems) static items.")
        notifier.notify(.ready, .status(await core.statusLine()))
        return reply
    }
}

/// How the configuration turns into a contacts scanner, and the start-up report.
enum ContactsScan {
    /// The scanner; with a notifier, a long scan's progress goes to systemd's `STATUS=` and the
    /// log, and to `Status` replies through `replies` (which the core reads).
    static func scanner(
        for configuration: DaemonConfiguration, notifier: (any ServiceManagerNotifier)? = nil, logger: Logger? = nil,
        replies: PublishedReplies? = nil
    ) -> ContactsDirectoryScanner {
        var scanner = ContactsDirectoryScanner(
            root: configuration.contactsDirectory, maxFileBytes: configuration.maxFileBytes,
            options: ContactParsingOptions(favoriteCategories: Set(configuration.favoriteCategories)))
        if let notifier {
            scanner.progress = { progress in
                notifier.notify(.status(progress.description))
                logger?.notice("\(progress.description).", metadata: ["QACTD_PATH": "\(progress.tree)"])
                replies?.publish(scanProgress: progress)
            }
            scanner.progressEnded = { replies?.publish(scanProgress: nil) }
        }
        return scanner
    }

    static func logDuplicates(in index: ContactIndex, logger: Logger) {
        for duplicate in index.duplicates {
            logger.warning(
                "Contact identifier '\(duplicate.identifier)' in '\(duplicate.ignoredPath)' is already used by '\(duplicate.keptPath)', ignoring.",
                metadata: ["QACTD_CONTACT_ID": "\(duplicate.identifier)", "QACTD_PATH": "\(duplicate.ignoredPath)"])
        }
    }
}
