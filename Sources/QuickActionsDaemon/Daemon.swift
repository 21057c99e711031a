import Contacts
@preconcurrency import Dispatch
import NIOCore
import NIOPosix
import QuickActions
import QuickActionsProtocol
import Varlink
import VarlinkNIOServer

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// What the `qactd` executable hands over after parsing its arguments.
public struct DaemonOptions: Sendable {
    public var configPath: String?
    public var logLevel: LogLevel
    public var environment: [String: String]

    public init(configPath: String?, logLevel: LogLevel, environment: [String: String]) {
        self.configPath = configPath
        self.logLevel = logLevel
        self.environment = environment
    }
}

/// A reason the daemon refuses to start; printed as one sentence naming what is wrong.
public struct DaemonStartupError: Error, CustomStringConvertible {
    public let description: String
    /// sysexits-style status: 78 (EX_CONFIG) for configuration and static items, 1 otherwise.
    public let exitStatus: Int32

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
            logger.log(.warning, "\(warning), ignoring.", fields: ["QACTD_PATH": warning.file])
        }
        let configuration = loaded.configuration
        let staticItems = try readStaticItems(at: configuration.staticItemsPath)
        return DaemonSettings(
            configuration: configuration, staticItems: staticItems)
    }

    private func readStaticItems(at path: String) throws(DaemonStartupError) -> StaticItemsFile {
        let bytes: [UInt8]
        do {
            guard let read = try FileIO.readFileIfPresent(path) else {
                // The daemon must start with no configuration at all, so the default
                // static-items file may be missing: that means "no static items".
                logger.log(.notice, "No static items file at '\(path)': serving no static items.", fields: ["QACTD_PATH": path])
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
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let prefix = URL(fileURLWithPath: executable).deletingLastPathComponent().deletingLastPathComponent().path
            candidates.append("\(prefix == "/" ? "" : prefix)/etc/qactd/\(ConfigurationLoader.fileName)")
        }
        let etc = "/etc/qactd/\(ConfigurationLoader.fileName)"
        if !candidates.contains(etc) { candidates.append(etc) }
        return candidates
    }
}

/// The running daemon: wires configuration, state, contacts, the socket and
/// systemd together, in the order systemd expects (READY=1 only once state is
/// loaded, the first scan is done and the socket listens).
public actor Daemon {
    private let core: DaemonCore
    private var server: VarlinkServer?
    private let group: any EventLoopGroup
    private let notifier: any ServiceManagerNotifier
    private let logger: Logger
    private let loader: SettingsLoader
    private let watcher: DirectoryWatcher

    private init(
        core: DaemonCore, group: any EventLoopGroup, notifier: any ServiceManagerNotifier, logger: Logger, loader: SettingsLoader,
        watcher: DirectoryWatcher
    ) {
        self.watcher = watcher
        self.core = core
        self.group = group
        self.notifier = notifier
        self.logger = logger
        self.loader = loader
    }

    /// Runs until SIGTERM or SIGINT; returns the process exit status.
    public static func run(_ options: DaemonOptions) async -> Int32 {
        let logger = Logger(minimumLevel: options.logLevel, sink: LogDestination.sink(environment: options.environment))
        let notifier = SystemdNotifier()
        // Signals become events of the main loop; block their default action first
        // so a SIGTERM during start-up is not lost nor fatal.
        let signals = SignalEvents(watching: [SIGTERM, SIGINT, SIGHUP])
        let daemon: Daemon
        do {
            daemon = try await start(options, logger: logger, notifier: notifier)
        } catch let error as DaemonStartupError {
            logger.log(.error, error.description)
            return error.exitStatus
        } catch {
            logger.log(.error, "Cannot start: \(error)")
            return 1
        }
        return await daemon.serve(signals)
    }

    private static func start(_ options: DaemonOptions, logger: Logger, notifier: any ServiceManagerNotifier) async throws -> Daemon {
        let loader = SettingsLoader(
            environment: options.environment, explicitConfigPath: options.configPath,
            systemCandidates: SettingsLoader.systemCandidates(), logger: logger)
        let settings = try loader.load()
        let configuration = settings.configuration
        logger.log(.info, "Using configuration from \(configuration.source).")

        let paths: StatePaths
        do {
            paths = try StatePaths.resolve(environment: options.environment)
        } catch {
            throw DaemonStartupError(error.description)
        }
        var store = StateStore<PersistedState>(paths: paths)
        for leftover in store.removeLeftoverTemporaryFiles() {
            logger.log(.notice, "Removed '\(leftover)', left behind by a write that a crash cut short.", fields: ["QACTD_PATH": leftover])
        }
        var restored: PersistedState?
        do {
            switch try store.load() {
            case .fresh:
                logger.log(.info, "No saved state at '\(paths.stateFile)', starting clean.", fields: ["QACTD_PATH": paths.stateFile])
            case .loaded(let payload):
                restored = payload
            case .corrupt(let movedTo, let reason):
                logger.log(.error, "The state file could not be loaded (\(reason)); moved it aside to '\(movedTo)', starting clean.",
                           fields: ["QACTD_PATH": paths.stateFile])
            }
        } catch {
            throw DaemonStartupError(error.description)
        }

        // The first scan is the watcher's own walk, which adds each folder's watch before
        // listing it: nothing changed between the scan and the watching is missed.
        let watcher = DirectoryWatcher(scanner: ContactsScan.scanner(for: configuration), logger: logger)
        let initial = watcher.attach()
        let core = DaemonCore(
            settings: settings, restored: restored, index: ContactIndex(), store: store,
            socketPath: configuration.socketPath, logger: logger, notifier: notifier)
        await core.applyWatcherUpdate(initial)
        ContactsScan.logDuplicates(in: await core.index, logger: logger)

        let group = MultiThreadedEventLoopGroup.singleton
        let daemon = Daemon(core: core, group: group, notifier: notifier, logger: logger, loader: loader, watcher: watcher)
        // Before the socket listens, so a `Reload` call always finds the watcher running.
        await daemon.startWatching()
        try await daemon.listen(configuration)
        return daemon
    }

    private func listen(_ configuration: DaemonConfiguration) async throws {
        // The connection-level errors (InvalidMessage, …) are declared in io.qactd.QuickActions.
        var serverConfiguration = VarlinkServerConfiguration(errorInterface: QuickActionsInterface.name)
        serverConfiguration.maxConnections = configuration.maxConnections
        serverConfiguration.maxMessageBytes = configuration.maxMessageBytes
        let server = VarlinkServer(
            info: VarlinkServiceInfo(
                vendor: "qactd", product: "qactd", version: QactdVersion.string,
                url: "https://github.com/qactd/qactd",
                interfaces: [QuickActionsInterface.varlinkInterface]),
            handlers: [
                QuickActionsInterface.name: QuickActionsHandler(core: core, reload: { [weak self] () async throws(QuickActionsCallError) -> ReloadReply in
                    guard let self else { throw .invalidConfiguration("The daemon is stopping.") }
                    return try await self.reload()
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
                logger.log(.info, "Listening on the socket passed by systemd.")
            } else {
                try await server.listen(unixSocketPath: configuration.socketPath)
                logger.log(.info, "Listening on '\(configuration.socketPath)'.", fields: ["QACTD_PATH": configuration.socketPath])
            }
        } catch {
            throw DaemonStartupError(error.description)
        }
        self.server = server
    }

    /// The main loop: READY=1, then signals until a stop.
    private func startWatching() async {
        let core = self.core
        watcher.run { update in await core.applyWatcherUpdate(update) }
        await core.scheduleRecomputeIfFollowingContacts()
    }

    private func serve(_ signals: SignalEvents) async -> Int32 {
        let statusLine = await core.statusLine()
        notifier.notify(.ready, .status(statusLine))
        logger.log(.notice, "Started: \(statusLine).")
        let watchdog = startWatchdog()
        defer { watchdog?.cancel() }
        for await signal in signals.events {
            switch signal {
            case SIGHUP:
                _ = try? await reload()
            default:
                return await stop(signal: signal)
            }
        }
        return await stop(signal: SIGTERM)
    }

    private func stop(signal: CInt) async -> Int32 {
        notifier.notify(.stopping)
        logger.log(.notice, "Stopping on \(signal == SIGINT ? "SIGINT" : "SIGTERM").")
        await watcher.stop()
        await server?.stop()
        server = nil
        // Every core method runs whole on the actor, so once this call returns any
        // state write that was under way has finished.
        await core.finishPendingWork()
        return 0
    }

    /// Re-reads configuration, static items and the contacts directory; on failure keeps
    /// everything as it was and reports the error.
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
        await watcher.reload(scanner: ContactsScan.scanner(for: settings.configuration))
        ContactsScan.logDuplicates(in: await core.index, logger: logger)
        let reply = ReloadReply(staticItems: settings.staticItems.items.count, configFile: settings.configuration.configFile)
        logger.log(.notice, "Reloaded \(settings.configuration.source): \(reply.staticItems) static items.")
        notifier.notify(.ready, .status(await core.statusLine()))
        return reply
    }

    /// Pings WATCHDOG=1 at half the timeout, but only after the core actor and the
    /// socket event loop have both answered: a wedged daemon stops pinging and
    /// systemd restarts it.
    private func startWatchdog() -> Task<Void, Never>? {
        guard let settings = WatchdogSettings.fromEnvironment() else { return nil }
        let core = self.core
        let notifier = self.notifier
        let loop = group.next()
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: settings.pingInterval)
                _ = await core.statusLine()
                guard (try? await loop.submit({}).get()) != nil else { continue }
                notifier.notify(.watchdog)
            }
        }
    }
}

/// How the configuration turns into a contacts scanner, and the start-up report.
enum ContactsScan {
    static func scanner(for configuration: DaemonConfiguration) -> ContactsDirectoryScanner {
        ContactsDirectoryScanner(
            root: configuration.contactsDirectory, maxFileBytes: configuration.maxFileBytes,
            options: ContactParsingOptions(favoriteCategories: Set(configuration.favoriteCategories)))
    }

    static func logDuplicates(in index: ContactIndex, logger: Logger) {
        for duplicate in index.duplicates {
            logger.log(
                .warning,
                "Contact identifier '\(duplicate.identifier)' in '\(duplicate.ignoredPath)' is already used by '\(duplicate.keptPath)', ignoring.",
                fields: ["QACTD_CONTACT_ID": duplicate.identifier, "QACTD_PATH": duplicate.ignoredPath])
        }
    }
}

/// Delivers chosen signals as an async sequence instead of running handlers in
/// signal context.
final class SignalEvents: @unchecked Sendable {  // the sources are only kept alive, never touched again
    let events: AsyncStream<CInt>
    private let sources: [any DispatchSourceSignal]

    init(watching signals: [CInt]) {
        let (stream, continuation) = AsyncStream.makeStream(of: CInt.self)
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in signals {
            Glibc.signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield(signalNumber) }
            source.resume()
            sources.append(source)
        }
        self.events = stream
        self.sources = sources
    }
}
