import FoundationEssentials
import Glibc
import Logging
import QuickActions
import QuickActionsProtocol
import SystemCalls

/// Reads configuration and static items from disk into `DaemonSettings`.
/// Used at start-up (failure refuses to start) and on reload (failure keeps the old settings).
struct SettingsLoader: Sendable {
    /// Completes a parsed configuration for an environment and an instance (see `desktopDefaults`).
    typealias DesktopDefaults = @Sendable (inout DaemonConfiguration, _ environment: [String: String], _ instance: InstanceName) -> Void

    let environment: [String: String]
    let explicitConfigPath: String?
    let systemCandidates: [String]
    let logger: Logger
    /// Fills in what the configuration leaves to the desktop (`DesktopFile=auto`'s mail app,
    /// the favorites' command from the app's entry) from the files as they are now. The
    /// composition passes `Daemon.desktopDefaults`, which reads the launchers' desktop entries:
    /// this room knows nothing of them.
    let desktopDefaults: DesktopDefaults
    /// An app's instance reads its own `NAME.conf`.
    var instance: InstanceName = .plain

    func load() throws(DaemonStartupError) -> DaemonSettings {
        let loaded = try loadResolved()
        let configuration = loaded.configuration
        for warning in loaded.warnings {
            logger.warning("\(warning)", metadata: ["QACTD_PATH": "\(warning.file)"])
        }
        logChoices(configuration)
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

    /// The configuration with `DesktopFile=auto`'s mail app chosen from the files as they are
    /// now, logging nothing: what the mail app's watcher compares with the running one.
    func loadConfiguration() throws(DaemonStartupError) -> DaemonConfiguration {
        try loadResolved().configuration
    }

    private func loadResolved() throws(DaemonStartupError) -> LoadedConfiguration {
        let loaded: LoadedConfiguration
        do {
            loaded = try ConfigurationLoader.load(
                explicitPath: explicitConfigPath, environment: environment, systemCandidates: systemCandidates,
                instance: instance)
        } catch {
            throw .configuration(error)
        }
        var configuration = loaded.configuration
        desktopDefaults(&configuration, environment, instance)
        return LoadedConfiguration(configuration: configuration, warnings: loaded.warnings)
    }

    /// What the defaults chose, once per load: the app and the favorites' command.
    private func logChoices(_ configuration: DaemonConfiguration) {
        if let app = configuration.defaultApp {
            if let choice = app.choice {
                logger.info("Serving the mail app \(choice.desktopFileID) (DesktopFile=auto: \(choice.reason.explanation)).")
            }
            if let problem = app.problem {
                logger.notice("DesktopFile=auto: \(problem).")
            }
        }
        if case .appExec(let path) = configuration.favoriteActionSource,
           let template = configuration.actions[configuration.favoriteType] {
            logger.info("A favorite opens a new mail with the app's own Exec from \(path): \(template.text).")
        }
    }

    /// Every `<lang>.lproj/InfoPlist.strings` in the static-items file's folder, by language.
    /// A folder without the file is skipped; a file that does not parse refuses the settings,
    /// like a broken static-items file.
    private func readStringsTables(besides staticItemsPath: String) throws(DaemonStartupError) -> [String: [String: String]] {
        let folder = parentFolder(of: staticItemsPath)
        let names: [String]
        do {
            names = try directoryEntryNames(folder)
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
                throw .stringsFileUnreadable(error)
            }
            do {
                tables[language] = try StringsFile.parse(bytes: bytes, fileName: path)
            } catch {
                throw .stringsFile(error)
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
            throw .staticItemsUnreadable(error)
        }
        do {
            return try StaticItemsFile.decode(bytes, fileName: path)
        } catch {
            throw .staticItems(error)
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
