import FoundationEssentials
import Glibc
import QuickActions
import QuickActionsProtocol
import SystemCalls

/// Finds and reads qactd.conf (`--config`, else the XDG user file, else the
/// installed default, else built-in defaults) and resolves its paths. An app's instance
/// (`qactd --app NAME`) reads `NAME.conf` in the user's folder, which must exist: falling back to
/// the shared defaults would start a second daemon on the plain one's contacts and static items.
enum ConfigurationLoader {
    static let fileName = "qactd.conf"

    /// The user's configuration folder (`$XDG_CONFIG_HOME/qactd`, XDG_CONFIG_HOME defaulting to `~/.config`).
    static func userConfigurationDirectory(environment: [String: String]) throws(ConfigurationError) -> String {
        if let configHome = environment["XDG_CONFIG_HOME"], configHome.hasPrefix("/") {
            return configHome + "/qactd"
        }
        return try home(environment) + "/.config/qactd"
    }

    /// Picks the file to read: `--config`, else an app's own file, else the user's file, else
    /// the first existing system candidate, else none (built-in defaults).
    static func locate(
        explicitPath: String?,
        environment: [String: String],
        systemCandidates: [String],
        instance: InstanceName = .plain
    ) throws(ConfigurationError) -> String? {
        if let explicitPath {
            let absolute = absolutePath(explicitPath)
            guard try exists(absolute) else { throw .explicitFileMissing(path: absolute) }
            return absolute
        }
        if let app = instance.app {
            let appFile = try userConfigurationDirectory(environment: environment) + "/" + app.configurationFileName
            guard try exists(appFile) else { throw .appFileMissing(app: app.name, path: appFile) }
            return appFile
        }
        let userFile = try userConfigurationDirectory(environment: environment) + "/" + fileName
        if try exists(userFile) { return userFile }
        for candidate in systemCandidates where try exists(candidate) {
            return candidate
        }
        return nil
    }

    /// Locates, reads and validates the configuration.
    static func load(
        explicitPath: String?,
        environment: [String: String],
        systemCandidates: [String],
        instance: InstanceName = .plain,
        userID: uid_t = getuid()
    ) throws(ConfigurationError) -> LoadedConfiguration {
        let located: String?
        do throws(ConfigurationError) {
            located = try locate(
                explicitPath: explicitPath, environment: environment, systemCandidates: systemCandidates,
                instance: instance)
        } catch {
            guard case .appFileMissing = error, let app = instance.app, let entry = try installedEntry(of: app, environment: environment)
            else { throw error }
            let loaded = try parse(text: appOwnItemsDefaults(app), file: nil, environment: environment, userID: userID, instance: instance)
            var configuration = loaded.configuration
            configuration.launchCommand = launchCommand(ofEntryAt: entry)
            return LoadedConfiguration(configuration: configuration, warnings: loaded.warnings)
        }
        guard let path = located else {
            return try parse(text: "", file: nil, environment: environment, userID: userID, instance: instance)
        }
        let bytes: [UInt8]?
        do {
            bytes = try FileIO.readFileIfPresent(path)
        } catch {
            throw .unreadable(path: path, reason: error.description)
        }
        guard let bytes else { throw .unreadable(path: path, reason: "the file disappeared while being read.") }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .notUTF8(path: path)
        }
        return try parse(text: text, file: path, environment: environment, userID: userID, instance: instance)
    }

    /// The configuration of an app's instance that nobody wrote, for an app installed under its
    /// instance's name (`NAME.desktop`): the app publishes its own items and nothing else is
    /// read — no contacts, no Evolution book, static items only if `NAME.plist` is put beside
    /// where `NAME.conf` would be — so an app that only speaks the socket needs nothing set up.
    static func appOwnItemsDefaults(_ app: AppName) -> String {
        """
        [Contacts]
        Directory=
        Evolution=none
        [Shortcuts]
        StaticItems=\(app.name).plist
        [Launcher]
        DesktopFile=\(app.name).desktop
        """
    }

    /// The app's own `Exec`, its field codes filled as a launcher starting it with nothing to
    /// open fills them: what starts the app for a pick while it does not run. Empty when the
    /// entry cannot be read or has no `Exec` (a pick then waits for the app to be started).
    static func launchCommand(ofEntryAt path: String) -> [String] {
        guard let bytes = try? FileIO.readFileIfPresent(path), let text = String(validating: bytes, as: UTF8.self),
              let document = try? DesktopEntryDocument(parsing: text)
        else { return [] }
        let value = { (key: String) in document.value(of: key).map(DesktopEntryEscaping.unescapedValue) }
        guard let exec = value("Exec"), let arguments = try? DesktopEntryExec.split(exec) else { return [] }
        return DesktopEntryExec.expand(arguments, .init(icon: value("Icon"), name: value("Name"), location: path))
    }

    /// The app's desktop entry `NAME.desktop` where launchers look for it, or nil.
    static func installedEntry(of app: AppName, environment: [String: String]) throws(ConfigurationError) -> String? {
        for folder in XDGFolders.applications(environment: environment) {
            let path = folder + "/" + app.name + ".desktop"
            if try exists(path) { return path }
        }
        return nil
    }

    /// Validates configuration text. `file` nil means built-in defaults: relative paths then
    /// resolve against the user's configuration folder.
    static func parse(
        text: String,
        file: String?,
        environment: [String: String],
        userID: uid_t,
        instance: InstanceName = .plain
    ) throws(ConfigurationError) -> LoadedConfiguration {
        let fileLabel = file ?? "(built-in defaults)"
        let baseDirectory: String
        if let file {
            baseDirectory = directoryName(of: file)
        } else {
            baseDirectory = try userConfigurationDirectory(environment: environment)
        }
        let parsed = try INIParser.parseWithSections(text, file: fileLabel)
        return try ConfigurationKeys.configuration(
            from: parsed.assignments, sectionHeaders: parsed.sectionHeaders,
            source: file.map { .file($0) } ?? .builtInDefaults,
            context: ConfigurationContext(
                file: fileLabel, baseDirectory: baseDirectory, environment: environment, userID: userID,
                instance: instance))
    }

    // MARK: Paths

    static func home(_ environment: [String: String]) throws(ConfigurationError) -> String {
        guard let home = environment["HOME"], !home.isEmpty else { throw .homeDirectoryUnknown }
        return home.count > 1 && home.hasSuffix("/") ? String(home.dropLast()) : home
    }

    /// `~` and `~/…` expand to HOME; other relative paths are relative to `baseDirectory`.
    static func resolve(
        _ path: String, relativeTo baseDirectory: String, environment: [String: String]
    ) throws(ConfigurationError) -> String {
        if path == "~" { return try home(environment) }
        if path.hasPrefix("~/") { return try home(environment) + path.dropFirst(1) }
        if path.hasPrefix("/") { return path }
        return baseDirectory + "/" + path
    }

    static func absolutePath(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }

    static func directoryName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return FileManager.default.currentDirectoryPath }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    static func exists(_ path: String) throws(ConfigurationError) -> Bool {
        do {
            return try FileIO.fileExists(path)
        } catch {
            throw .unreadable(path: path, reason: error.description)
        }
    }
}
