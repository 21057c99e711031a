import CLinux
import Contacts
import FoundationEssentials
import Logging
import NIOCore
import NIOPosix
import QuickActions
import QuickActionsProtocol
import ServiceLifecycle
import UnixSignals
import Varlink
import VarlinkNIOServer

import Glibc

/// What the `qactd` executable hands over after parsing its arguments.
public struct DaemonOptions: Sendable {
    public var configPath: String?
    public var logLevel: Logger.Level
    public var environment: [String: String]
    /// The plain daemon, or one app's (`--app NAME`): the name its configuration, state folder,
    /// socket and log entries follow.
    public var instance: InstanceName

    public init(configPath: String?, logLevel: Logger.Level, environment: [String: String], instance: InstanceName = .plain) {
        self.configPath = configPath
        self.logLevel = logLevel
        self.environment = environment
        self.instance = instance
    }
}

/// The running daemon: start-up in the order systemd expects (READY=1 only once
/// state is loaded, the first scan is done and the socket listens), then its long-lived parts
/// as the services of a `ServiceGroup`, which stops them one at a time, in reverse order.
public struct Daemon: Service {
    let options: DaemonOptions
    let logger: Logger
    let notifier: any ServiceManagerNotifier
    let hangups: UnixSignalsSequence

    /// Runs the daemon on the calling thread's behalf until SIGTERM or SIGINT and returns the
    /// process exit status. Every task of the daemon runs on the socket's event loops (see
    /// `EventLoopExecution`), so an idle daemon sleeps until something happens.
    public static func main(_ options: DaemonOptions) -> Int32 {
        EventLoopExecution.runBlocking { await run(options) }
    }

    /// Runs until SIGTERM or SIGINT; returns the process exit status.
    static func run(_ options: DaemonOptions) async -> Int32 {
        let logger = LogDestination.logger(level: options.logLevel, environment: options.environment, instance: options.instance)
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
            // The one line a person reads in `systemctl --user status`, so it names the app itself.
            logger.error("\(options.instance.app.map { "App \"\($0.name)\": " } ?? "")\(error.description)")
            return error.exitStatus
        } catch {
            logger.error("Stopped on an unexpected error: \(error)")
            return 1
        }
    }

    /// A daemon without a state takes back the pins its launchers say they are, instead of
    /// removing launchers it cannot prove stale.
    static func adoptPinnedLaunchers(into core: DaemonCore, configuration: DaemonConfiguration, environment: [String: String]) async {
        guard let app = configuration.launcherDesktopFileID else { return }
        await core.adoptPins(
            DesktopEntryExporter.pinnedLaunchers(environment: environment, appDesktopFileID: app, socketPath: configuration.socketPath))
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
            systemCandidates: SettingsLoader.systemCandidates(), logger: logger,
            desktopDefaults: Self.desktopDefaults, instance: options.instance)
        let settings: DaemonSettings
        do {
            settings = try loader.load()
        } catch {
            if case .configuration(.appFileMissing) = error {
                DesktopEntryExporter.removeLaunchers(ofAppWithoutConfiguration: options.instance, environment: options.environment, logger: logger)
            }
            throw error
        }
        let configuration = settings.configuration
        logger.info("\(options.instance.app.map { "App \"\($0.name)\": using" } ?? "Using") configuration from \(configuration.source).")

        let paths: StatePaths
        do {
            paths = try StatePaths.resolve(environment: options.environment, instance: options.instance)
            try StateMigration.run(paths: paths, environment: options.environment, instance: options.instance, logger: logger)
        } catch {
            throw .state(error)
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
            throw .state(error)
        }

        let launchers = LauncherExporters(
            environment: options.environment, qactlPath: LauncherExporters.qactlBesideDaemon(logger: logger), logger: logger)
        // Before the socket listens, so the first trigger (which may be what activated the
        // daemon) already starts its command in a unit of its own.
        let (userManager, noManager) = UserManagerCommands.connect(environment: options.environment, logger: logger)
        if let userManager {
            logger.info("Commands run in transient units of the user manager (\(userManager.address.text)).")
        } else {
            logger.info("Commands start as qactd's own children: \(noManager ?? "no user manager").")
        }
        let core = DaemonCore(
            settings: settings, restored: restored, index: ContactIndex(), store: store,
            socketPath: configuration.socketPath, logger: logger, notifier: notifier,
            launchers: launchers, instance: options.instance,
            commandStarter: CommandStarter(reaper: ChildReaper(logger: logger), userManager: userManager, directReason: noManager))
        // The first scan is the watcher's own walk, which adds each folder's watch before
        // listing it: nothing changed between the scan and the watching is missed. Its
        // progress reaches `STATUS=` and the log only: the socket listens after it.
        let watcher = DirectoryWatcher(
            scanner: ContactsScan.scanner(for: configuration, notifier: notifier, logger: logger, replies: core.replies), logger: logger)
        if restored == nil {
            await Self.adoptPinnedLaunchers(into: core, configuration: configuration, environment: options.environment)
        }
        await core.followContactsWithPins(false)
        do {
            let initial = watcher.attach()
            await core.applyWatcherUpdate(initial)
        }
        // khard's address books, read whole before READY=1 like the folder (nothing, and no
        // descriptor, with `Khard=none`).
        let khard = KhardWatcher(settings: KhardSettings(configuration), environment: options.environment, logger: logger)
        await core.applyKhardUpdate(khard.attach())
        // Evolution's address books, read before READY=1 like the folder, but only their
        // favorites and pinned contacts are parsed then: the rest cannot change the set and is
        // indexed by the watcher's thread once the daemon serves (nothing, and no descriptor,
        // with `Evolution=none`).
        let evolution = EvolutionWatcher(
            settings: EvolutionSettings(configuration), location: EvolutionLocation(environment: options.environment), logger: logger)
        await core.applyEvolutionUpdate(evolution.attach(wanted: await core.pinnedContactIdentifiers))
        await core.followContactsWithPins(true)
        // The first scan's batch (every file read and parsed) is freed now that `initial` is
        // gone: its pages go back before READY=1, whatever the timing of the core's later trims.
        _ = CLinux_releaseFreeHeapMemory()
        // The launchers show the set restored from the state file, or the one the contacts give
        // when the daemon follows them: never a set without the favorites it is about to show.
        await core.recomputeBeforeFirstPublication()
        await core.publishToLaunchers()
        ContactsScan.logDuplicates(in: await core.index, logger: logger)

        // Before the socket listens, so a `Reload` call always finds the watcher running.
        watcher.run { update in await core.applyWatcherUpdate(update) }
        khard.run { update in await core.applyKhardUpdate(update) }
        evolution.run { update in await core.applyEvolutionUpdate(update) }
        // With `Recompute=change` the set follows the index, including changes made while stopped.
        await core.scheduleRecomputeIfFollowingContacts()

        // The person's choice of mail app, followed as GNOME Settings or xdg-mime change it and
        // as apps are installed and removed (no descriptor and no thread unless DesktopFile=auto).
        let mailApp = DefaultMailAppWatcher(
            environment: options.environment, following: DefaultMailApp.isFollowed(configuration, instance: options.instance), logger: logger)
        let reloader = DaemonReloader(
            loader: loader, core: core, watcher: watcher, khard: khard, evolution: evolution, mailApp: mailApp, notifier: notifier,
            logger: logger)
        let (mailAppChanges, mailAppChanged) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        mailApp.run { _ in mailAppChanged.yield() }
        let server = try await listen(configuration, core: core, reloader: reloader)

        var parts: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let watchdog = WatchdogSettings.fromEnvironment() {
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            let pinger = WatchdogPinger(interval: watchdog.pingInterval, notifier: notifier) {
                _ = await core.statusLine()
                return (try? await loop.submit({}).get()) != nil
            }
            parts.append(.init(service: pinger, serviceName: "watchdog"))
        }
        parts += [
            // Stopped after everything else: the units thread hands the manager what it was
            // given and leaves; the units themselves go on.
            .init(service: StartedPart { userManager?.stop() }, serviceName: "commands"),
            // Stopped after the state's last write: the last change reaches the desktop entry, and
            // the docks lose the menu only at the very end.
            .init(service: StartedPart { await launchers.stop() }, serviceName: "launchers"),
            // Timers and streams ending reach the core until its last write is done.
            .init(service: CoreEventService(core: core), serviceName: "core events"),
            // Every core method runs whole on the actor, so once this call returns any state
            // write that was under way has finished.
            .init(service: StartedPart { await core.finishPendingWork() }, serviceName: "state"),
            .init(service: StartedPart { await server.stop() }, serviceName: "socket"),
            .init(service: StartedPart { await watcher.stop() }, serviceName: "watcher"),
            .init(service: StartedPart { await khard.stop() }, serviceName: "khard"),
            .init(service: StartedPart { await evolution.stop() }, serviceName: "evolution"),
            .init(service: StartedPart { await mailApp.stop() }, serviceName: "mail app"),
            .init(
                service: DefaultMailAppFollower(changes: mailAppChanges, loader: loader, core: core, reloader: reloader, logger: logger),
                serviceName: "mail app follower"),
            .init(service: ReloadOnHangup(hangups: hangups) { _ = try? await reloader.reload() }, serviceName: "SIGHUP"),
            .init(
                service: ReadinessReporter(core: core, notifier: notifier, logger: logger) { await evolution.indexTheRest() },
                serviceName: "readiness"),
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
        // Calls run on the event loops like the rest of the daemon, which then sleeps when idle.
        serverConfiguration.taskExecutor = EventLoopExecution.executor
        let logger = self.logger
        let owner = serverConfiguration.ownerUID
        // In the units' user namespace root shows as nobody and is refused like any other user.
        let served = owner == 0 ? "root"
            : UserNamespace.mapsRoot ? "uid \(owner) and root" : "uid \(owner) (in its user namespace root and other users show as nobody)"
        serverConfiguration.peerRefused = { peer in
            logger.notice("Refused a connection from uid \(peer.uid) (pid \(peer.pid)): qactd serves only \(served).",
                          metadata: ["QACTD_PEER_UID": "\(peer.uid)", "QACTD_PEER_PID": "\(peer.pid)"])
        }
        let server = VarlinkServer(
            info: VarlinkServiceInfo(
                vendor: "qactd", product: options.instance.app.map { "qactd@\($0.name)" } ?? "qactd", version: QactdVersion.string,
                url: "https://github.com/qactd/qactd",
                interfaces: [QuickActionsInterface.varlinkInterface]),
            handlers: [
                QuickActionsInterface.name: QuickActionsHandler(core: core, reload: { () async throws(QuickActionsCallError) -> ReloadReply in
                    try await reloader.reload()
                }, shellExtension: ShellExtensionProbe(environment: options.environment))
            ],
            configuration: serverConfiguration, group: MultiThreadedEventLoopGroup.singleton)
        let inherited: [CInt]
        do {
            inherited = try SocketActivation.listeningDescriptors()
        } catch {
            throw .socketActivation(error)
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
            throw .socket(error)
        }
        return server
    }
}

extension Daemon {
    /// How every settings loader completes `DesktopFile=auto`: the person's mail app, found
    /// among the launchers' desktop entries (`Launchers/DefaultMailApp`).
    static let desktopDefaults: SettingsLoader.DesktopDefaults = { configuration, environment, instance in
        DefaultMailApp.resolve(&configuration, environment: environment, instance: instance)
    }
}
