import Foundation
import Glibc

public enum ConfigurationLoader {
    public static let fileName = "qactd.conf"

    /// Known sections and their keys; anything else is warned about.
    static let knownKeys: [String: Set<String>] = [
        "Contacts": ["Directory", "FavoriteCategories", "MaxFileBytes"],
        "Shortcuts": [
            "StaticItems", "DisplayLimit", "FavoriteType", "FavoriteIcon", "AppVersion", "Recompute",
            "RecomputeSettleMSec",
        ],
        "App": ["LaunchCommand", "ResponseTimeoutSec"],
        "Daemon": ["Socket", "MaxConnections", "MaxMessageBytes"],
    ]

    /// The user's configuration folder (`$XDG_CONFIG_HOME/qactd`, XDG_CONFIG_HOME defaulting to `~/.config`).
    public static func userConfigurationDirectory(environment: [String: String]) throws(ConfigurationError) -> String {
        if let configHome = environment["XDG_CONFIG_HOME"], configHome.hasPrefix("/") {
            return configHome + "/qactd"
        }
        return try home(environment) + "/.config/qactd"
    }

    /// Picks the file to read: `--config`, else the user's file, else the first existing
    /// system candidate, else none (built-in defaults).
    public static func locate(
        explicitPath: String?,
        environment: [String: String],
        systemCandidates: [String]
    ) throws(ConfigurationError) -> String? {
        if let explicitPath {
            let absolute = absolutePath(explicitPath)
            guard try exists(absolute) else { throw .explicitFileMissing(path: absolute) }
            return absolute
        }
        let userFile = try userConfigurationDirectory(environment: environment) + "/" + fileName
        if try exists(userFile) { return userFile }
        for candidate in systemCandidates where try exists(candidate) {
            return candidate
        }
        return nil
    }

    /// Locates, reads and validates the configuration.
    public static func load(
        explicitPath: String?,
        environment: [String: String],
        systemCandidates: [String],
        userID: uid_t = getuid()
    ) throws(ConfigurationError) -> LoadedConfiguration {
        guard
            let path = try locate(
                explicitPath: explicitPath, environment: environment, systemCandidates: systemCandidates)
        else {
            return try parse(text: "", file: nil, environment: environment, userID: userID)
        }
        let bytes: [UInt8]
        do {
            guard let read = try FileIO.readFileIfPresent(path) else {
                throw ConfigurationError.unreadable(path: path, reason: "the file disappeared while being read.")
            }
            bytes = read
        } catch let error as SystemCallError {
            throw .unreadable(path: path, reason: error.description)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .notUTF8(path: path)
        }
        return try parse(text: text, file: path, environment: environment, userID: userID)
    }

    /// Validates configuration text. `file` nil means built-in defaults: relative paths then
    /// resolve against the user's configuration folder.
    public static func parse(
        text: String,
        file: String?,
        environment: [String: String],
        userID: uid_t
    ) throws(ConfigurationError) -> LoadedConfiguration {
        let fileLabel = file ?? "(built-in defaults)"
        let baseDirectory: String
        if let file {
            baseDirectory = directoryName(of: file)
        } else {
            baseDirectory = try userConfigurationDirectory(environment: environment)
        }
        let assignments = try INIParser.parse(text, file: fileLabel)

        var warnings: [ConfigurationWarning] = []
        var warnedSections: Set<String> = []
        for header in INIParser.sectionHeaders(text) where knownKeys[header.name] == nil {
            if warnedSections.insert(header.name).inserted {
                warnings.append(
                    ConfigurationWarning(
                        file: fileLabel, line: header.line, section: header.name, key: nil, kind: .unknownSection))
            }
        }
        // Later assignments override earlier ones, as in systemd unit files.
        var values: [String: INIAssignment] = [:]
        for assignment in assignments {
            guard let keys = knownKeys[assignment.section] else { continue }
            guard keys.contains(assignment.key) else {
                warnings.append(
                    ConfigurationWarning(
                        file: fileLabel, line: assignment.line, section: assignment.section, key: assignment.key,
                        kind: .unknownKey))
                continue
            }
            values[assignment.section + "." + assignment.key] = assignment
        }

        let reader = ValueReader(
            file: fileLabel, values: values, baseDirectory: baseDirectory, environment: environment)
        let runtimeDirectory = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? "/run/user/\(userID)"

        let configuration = DaemonConfiguration(
            source: file.map { .file($0) } ?? .builtInDefaults,
            contactsDirectory: try reader.path("Contacts", "Directory", default: "~/.local/share/contacts"),
            favoriteCategories: reader.list("Contacts", "FavoriteCategories", default: ["favorite", "favorites", "starred"]),
            maxFileBytes: try reader.positiveInteger("Contacts", "MaxFileBytes", default: 1_048_576),
            staticItemsPath: try reader.path("Shortcuts", "StaticItems", default: "shortcuts.plist"),
            displayLimit: try reader.positiveInteger("Shortcuts", "DisplayLimit", default: 4),
            favoriteType: try reader.nonEmptyString("Shortcuts", "FavoriteType", default: "FavoriteAction"),
            favoriteIcon: try reader.icon("Shortcuts", "FavoriteIcon", default: "symbol:star.fill"),
            appVersion: reader.string("Shortcuts", "AppVersion").flatMap { $0.isEmpty ? nil : $0 },
            recompute: try reader.recomputePolicy("Shortcuts", "Recompute", default: .resignActive),
            recomputeSettle: .milliseconds(
                try reader.nonNegativeInteger("Shortcuts", "RecomputeSettleMSec", default: 50)),
            launchCommand: try reader.commandLine("App", "LaunchCommand"),
            responseTimeout: try reader.positiveSeconds("App", "ResponseTimeoutSec", default: .seconds(5)),
            socketPath: try reader.path("Daemon", "Socket", default: runtimeDirectory + "/qactd/qactd.sock"),
            maxConnections: try reader.positiveInteger("Daemon", "MaxConnections", default: 256),
            maxMessageBytes: try reader.positiveInteger("Daemon", "MaxMessageBytes", default: 1_048_576)
        )
        return LoadedConfiguration(configuration: configuration, warnings: warnings)
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

/// Reads one typed value at a time, turning a bad value into an error that names
/// the file, line, section, key and the value itself.
private struct ValueReader {
    let file: String
    let values: [String: INIAssignment]
    let baseDirectory: String
    let environment: [String: String]

    func assignment(_ section: String, _ key: String) -> INIAssignment? {
        values[section + "." + key]
    }

    func invalid(_ assignment: INIAssignment, _ expectation: String) -> ConfigurationError {
        .invalidValue(
            file: file, line: assignment.line, section: assignment.section, key: assignment.key,
            value: assignment.value, expectation: expectation)
    }

    func string(_ section: String, _ key: String) -> String? {
        assignment(section, key)?.value
    }

    func nonEmptyString(_ section: String, _ key: String, default fallback: String) throws(ConfigurationError) -> String {
        guard let assignment = assignment(section, key) else { return fallback }
        guard !assignment.value.isEmpty else { throw invalid(assignment, "must not be empty") }
        return assignment.value
    }

    func list(_ section: String, _ key: String, default fallback: [String]) -> [String] {
        guard let assignment = assignment(section, key) else { return fallback }
        return assignment.value.split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    func positiveInteger(_ section: String, _ key: String, default fallback: Int) throws(ConfigurationError) -> Int {
        guard let assignment = assignment(section, key) else { return fallback }
        guard let value = Int(assignment.value), value > 0 else {
            throw invalid(assignment, "is not a positive integer")
        }
        return value
    }

    func nonNegativeInteger(_ section: String, _ key: String, default fallback: Int) throws(ConfigurationError) -> Int {
        guard let assignment = assignment(section, key) else { return fallback }
        guard let value = Int(assignment.value), value >= 0 else {
            throw invalid(assignment, "is not a non-negative integer")
        }
        return value
    }

    /// Seconds as a number (`5`, `0.5`) or with a systemd-style unit (`5s`, `500ms`).
    func positiveSeconds(_ section: String, _ key: String, default fallback: Duration) throws(ConfigurationError) -> Duration {
        guard let assignment = assignment(section, key) else { return fallback }
        let text = assignment.value
        let seconds: Double?
        if text.hasSuffix("ms") {
            seconds = Double(text.dropLast(2).trimmingCharacters(in: .whitespaces)).map { $0 / 1000 }
        } else if text.hasSuffix("s") {
            seconds = Double(text.dropLast().trimmingCharacters(in: .whitespaces))
        } else {
            seconds = Double(text)
        }
        guard let seconds, seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            throw invalid(assignment, "is not a positive number of seconds (e.g. 5, 0.5, 500ms)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    func path(_ section: String, _ key: String, default fallback: String) throws(ConfigurationError) -> String {
        guard let assignment = assignment(section, key) else {
            return try ConfigurationLoader.resolve(fallback, relativeTo: baseDirectory, environment: environment)
        }
        guard !assignment.value.isEmpty else { throw invalid(assignment, "is not a path") }
        return try ConfigurationLoader.resolve(assignment.value, relativeTo: baseDirectory, environment: environment)
    }

    func recomputePolicy(_ section: String, _ key: String, default fallback: RecomputePolicy) throws(ConfigurationError) -> RecomputePolicy {
        guard let assignment = assignment(section, key) else { return fallback }
        guard let policy = RecomputePolicy(rawValue: assignment.value.lowercased()) else {
            throw invalid(assignment, "is not one of \"resign-active\" or \"change\"")
        }
        return policy
    }

    func icon(_ section: String, _ key: String, default fallback: String) throws(ConfigurationError) -> String {
        guard let assignment = assignment(section, key) else { return fallback }
        let value = assignment.value
        for prefix in ["symbol:", "type:", "system:"] where value.hasPrefix(prefix) {
            guard value.count > prefix.count else { throw invalid(assignment, "names no icon after \"\(prefix)\"") }
            return value
        }
        if value.hasPrefix("file:") {
            let path = String(value.dropFirst("file:".count))
            guard !path.isEmpty else { throw invalid(assignment, "names no file after \"file:\"") }
            return "file:" + (try ConfigurationLoader.resolve(path, relativeTo: baseDirectory, environment: environment))
        }
        throw invalid(assignment, "is not an icon: use \"symbol:NAME\", \"type:NAME\" (or \"system:NAME\") or \"file:PATH\"")
    }

    func commandLine(_ section: String, _ key: String) throws(ConfigurationError) -> [String] {
        guard let assignment = assignment(section, key) else { return [] }
        do {
            return try CommandLineSplitter.split(assignment.value)
        } catch {
            switch error {
            case .unterminatedQuote:
                throw .unterminatedQuote(
                    file: file, line: assignment.line, section: section, key: key, value: assignment.value)
            case .danglingBackslash:
                throw .danglingBackslash(
                    file: file, line: assignment.line, section: section, key: key, value: assignment.value)
            }
        }
    }
}
