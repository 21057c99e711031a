import Contacts
import Dispatch
import Foundation
import QuickActions
import Varlink

#if canImport(Glibc)
import Glibc
#endif

/// What the `qactd` executable hands over after parsing its arguments.
public struct DaemonOptions: Sendable {
    public var configPath: String?
    public var logLevel: LogLevel
    public var environment: [String: String]

    public init(configPath: String?, logLevel: LogLevel, environment: [String: String] = ProcessInfo.processInfo.environment) {
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
}

/// Reads configuration and static items from disk into `DaemonSettings`.
/// Used at start-up (failure refuses to start) and on reload (failure keeps the old settings).
struct SettingsLoader: Sendable {
    let environment: [String: String]
    let explicitConfigPath: String?
    let logger: Logger

    func load() throws(DaemonStartupError) -> DaemonSettings {
        let loaded: LoadedConfiguration
        do {
            loaded = try ConfigurationLoader(environment: environment).load(explicitPath: explicitConfigPath)
        } catch {
            throw DaemonStartupError(description: String(describing: error), exitStatus: 78)
        }
        for warning in loaded.warnings {
            logger.log(.warning, "\(warning), ignoring.", fields: ["QACTD_PATH": loaded.configuration.configFile ?? ""])
        }
        let configuration = loaded.configuration
        let favoriteIcon: ShortcutIcon
        do {
            favoriteIcon = try ShortcutIcon(configurationValue: configuration.favoriteIcon)
        } catch {
            throw DaemonStartupError(description: "\(configuration.configFile ?? "built-in configuration"): [Shortcuts] FavoriteIcon: \(error)", exitStatus: 78)
        }
        let staticItems = try readStaticItems(at: configuration.staticItemsPath)
        return DaemonSettings(configuration: configuration, staticItems: staticItems, favoriteIcon: favoriteIcon)
    }

    private func readStaticItems(at path: String) throws(DaemonStartupError) -> StaticItemsFile {
        let bytes: [UInt8]
        do {
            bytes = try FileSystem.readFile(atPath: path, limit: 16 << 20)
        } catch let error as SystemCallError where error.errno == ENOENT {
            // The daemon must start with no configuration at all, so the default
            // static-items file may be missing: that means "no static items".
            logger.log(.notice, "No static items file at '\(path)': serving no static items.", fields: ["QACTD_PATH": path])
            return StaticItemsFile(items: [], appVersion: nil)
        } catch {
            throw DaemonStartupError(description: "Cannot read the static items file: \(error)", exitStatus: 78)
        }
        do {
            return try StaticItemsFile.decode(bytes, fileName: path)
        } catch {
            throw DaemonStartupError(description: String(describing: error), exitStatus: 78)
        }
    }
}

/// The running daemon: wires configuration, state, contacts, the socket and
/// systemd together, in the order systemd expects (READY=1 only once state is
/// loaded, the first scan is done and the socket listens).
public final class Daemon: Sendable {
    private let core: DaemonCore
    private let server: VarlinkServer
    private let notifier: any ServiceManagerNotifier
    private let logger: Logger
    private let loader: SettingsLoader

    private init(core: DaemonCore, server: VarlinkServer, notifier: any ServiceManagerNotifier, logger: Logger, loader: SettingsLoader) {
        self.core = core
        self.server = server
        self.notifier = notifier
        self.logger = logger
        self.loader = loader
    }

    /// Runs until SIGTERM or SIGINT; returns the process exit status.
    public static func run(_ options: DaemonOptions) async -> Int32 {
        let logger = Logger.forCurrentProcess(level: options.logLevel, environment: options.environment)
        let notifier = SystemdNotifier()
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
        return await daemon.serveUntilStopped()
    }

    private static func start(_ options: DaemonOptions, logger: Logger, notifier: any ServiceManagerNotifier) async throws -> Daemon {
        let loader = SettingsLoader(environment: options.environment, explicitConfigPath: options.configPath, logger: logger)
        let settings = try loader.load()
        let configuration = settings.configuration

        let store = StateStore<PersistedState>(directory: StatePaths.directory(environment: options.environment))
        var restored: PersistedState?
        switch store.load() {
        case .fresh:
            logger.log(.info, "No saved state at '\(store.path)', starting clean.", fields: ["QACTD_PATH": store.path])
        case .loaded(let payload):
            restored = payload
        case .corrupt(let movedTo, let reason):
            logger.log(.error, "The state file could not be loaded (\(reason)); moved it aside to '\(movedTo)' and starting clean.",
                       fields: ["QACTD_PATH": store.path])
        }

        let scan = Self.scanContacts(configuration)
        Self.report(scan.index, logger: logger)
        let core = DaemonCore(settings: settings, restored: restored, index: scan.index, store: store,
                              socketPath: configuration.socketPath, logger: logger)
        await core.replaceIndex(scan.index, counting: ActivityCounters(filesParsed: scan.filesParsed, rescans: 0))

        let server = VarlinkServer(
            configuration: VarlinkServerConfiguration(
                socketPath: configuration.socketPath, maxConnections: configuration.maxConnections,
                maxMessageBytes: configuration.maxMessageBytes),
            serviceInfo: VarlinkServiceInfo(
                vendor: "qactd", product: "qactd", version: QactdVersion.string, url: "https://github.com/qactd/qactd",
                interfaces: [(QuickActionsInterface.name, QuickActionsInterfaceDescription.text)]),
            handler: QuickActionsHandler(core: core, reload: { _ in throw QuickActionsCallError.invalidConfiguration("not ready") }))
        let inherited = try SocketActivation.listeningDescriptors()
        if let descriptor = inherited.first {
            try await server.start(adopting: descriptor)
            logger.log(.info, "Listening on the socket passed by systemd.")
        } else {
            try await server.start()
            logger.log(.info, "Listening on '\(configuration.socketPath)'.", fields: ["QACTD_PATH": configuration.socketPath])
        }
        let daemon = Daemon(core: core, server: server, notifier: notifier, logger: logger, loader: loader)
        return daemon
    }

    struct ContactsScan {
        var index: ContactIndex
        var filesParsed: Int
    }

    static func scanContacts(_ configuration: DaemonConfiguration) -> ContactsScan {
        let scanner = ContactsDirectoryScanner(
            root: configuration.contactsDirectory, maxFileBytes: configuration.maxFileBytes,
            options: ContactParsingOptions(favoriteCategories: Set(configuration.favoriteCategories.map { $0.lowercased() })))
        let result = scanner.scan()
        var index = ContactIndex()
        for file in result.files { index.apply(path: file.path, result: file.result) }
        return ContactsScan(index: index, filesParsed: result.files.count)
    }

    static func report(_ index: ContactIndex, logger: Logger) {
        for invalid in index.invalidFiles {
            logger.log(.warning, "Skipping '\(invalid.path)': \(invalid.reason)", fields: ["QACTD_PATH": invalid.path])
        }
        for duplicate in index.duplicates {
            logger.log(.warning, "Contact identifier '\(duplicate.identifier)' in '\(duplicate.ignoredPath)' is already used by '\(duplicate.keptPath)', ignoring.",
                       fields: ["QACTD_CONTACT_ID": duplicate.identifier, "QACTD_PATH": duplicate.ignoredPath])
        }
    }

    private func serveUntilStopped() async -> Int32 {
        0
    }
}
