import Foundation
import Glibc

// MARK: - Errors and warnings

/// Everything that makes a configuration unusable. Descriptions follow the
/// compiler convention `file:line:` so editors can jump to the offending line.
public enum ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    case explicitFileMissing(path: String)
    case unreadable(path: String, reason: String)
    case notUTF8(path: String)
    case entryOutsideSection(file: String, line: Int, key: String)
    case lineWithoutAssignment(file: String, line: Int, text: String)
    case malformedSectionHeader(file: String, line: Int, text: String)
    case emptyKey(file: String, line: Int)
    case invalidValue(file: String, line: Int, section: String, key: String, value: String, expectation: String)
    case unterminatedQuote(file: String, line: Int, section: String, key: String, value: String)
    case danglingBackslash(file: String, line: Int, section: String, key: String, value: String)
    case homeDirectoryUnknown

    public var description: String {
        switch self {
        case .explicitFileMissing(let path):
            return "The configuration file \"\(path)\" given with --config does not exist."
        case .unreadable(let path, let reason):
            return "Cannot read the configuration file \"\(path)\": \(reason)"
        case .notUTF8(let path):
            return "The configuration file \"\(path)\" is not valid UTF-8."
        case .entryOutsideSection(let file, let line, let key):
            return "\(file):\(line): the key \"\(key)\" appears before any [Section] header."
        case .lineWithoutAssignment(let file, let line, let text):
            return "\(file):\(line): \"\(text)\" is neither a [Section] header, a Key=Value assignment nor a comment."
        case .malformedSectionHeader(let file, let line, let text):
            return "\(file):\(line): \"\(text)\" is not a valid [Section] header."
        case .emptyKey(let file, let line):
            return "\(file):\(line): the assignment has no key before \"=\"."
        case .invalidValue(let file, let line, let section, let key, let value, let expectation):
            return "\(file):\(line): [\(section)] \(key): \"\(value)\" \(expectation)"
        case .unterminatedQuote(let file, let line, let section, let key, let value):
            return "\(file):\(line): [\(section)] \(key): \"\(value)\" has an unterminated quote."
        case .danglingBackslash(let file, let line, let section, let key, let value):
            return "\(file):\(line): [\(section)] \(key): \"\(value)\" ends with a backslash that escapes nothing."
        case .homeDirectoryUnknown:
            return "HOME is not set, so \"~\" and the default folders cannot be resolved."
        }
    }
}

/// A problem that does not stop the daemon (an unknown key is most likely a typo
/// or a key from a newer version), returned as data so the caller decides how to log it.
public struct ConfigurationWarning: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        case unknownSection
        case unknownKey
    }

    public let file: String
    public let line: Int
    public let section: String
    public let key: String?
    public let kind: Kind

    public var description: String {
        switch kind {
        case .unknownSection:
            return "\(file):\(line): unknown section [\(section)], ignoring."
        case .unknownKey:
            return "\(file):\(line): [\(section)] unknown key \"\(key ?? "")\", ignoring."
        }
    }
}

// MARK: - INI parsing

/// One `Key=Value` assignment with where it came from, so later validation can name the line.
public struct INIAssignment: Equatable, Sendable {
    public let section: String
    public let key: String
    public let value: String
    public let line: Int
}

/// The systemd unit-file dialect: `[Section]`, `Key=Value` with whitespace around `=`
/// ignored, and `#` / `;` full-line comments.
public enum INIParser {
    public static func parse(_ text: String, file: String) throws(ConfigurationError) -> [INIAssignment] {
        var assignments: [INIAssignment] = []
        var section: String?
        // Split on every line-end convention; keep empty lines so line numbers stay right.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for (index, rawLine) in lines.enumerated() {
            let lineNumber = index + 1
            var line = rawLine.trimmingCharacters(in: .whitespaces)
            if lineNumber == 1, line.hasPrefix("\u{FEFF}") {
                line = String(line.dropFirst()).trimmingCharacters(in: .whitespaces)
            }
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") {
                continue
            }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw .malformedSectionHeader(file: file, line: lineNumber, text: line)
                }
                let name = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                guard !name.isEmpty, !name.contains("["), !name.contains("]") else {
                    throw .malformedSectionHeader(file: file, line: lineNumber, text: line)
                }
                section = name
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw .lineWithoutAssignment(file: file, line: lineNumber, text: line)
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else {
                throw .emptyKey(file: file, line: lineNumber)
            }
            guard let section else {
                throw .entryOutsideSection(file: file, line: lineNumber, key: key)
            }
            assignments.append(INIAssignment(section: section, key: key, value: value, line: lineNumber))
        }
        return assignments
    }

    /// Section headers with no assignments still deserve an unknown-section warning,
    /// so the headers are reported separately.
    static func sectionHeaders(_ text: String) -> [(name: String, line: Int)] {
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        var headers: [(name: String, line: Int)] = []
        for (index, rawLine) in lines.enumerated() {
            var line = rawLine.trimmingCharacters(in: .whitespaces)
            if index == 0, line.hasPrefix("\u{FEFF}") { line = String(line.dropFirst()) }
            if line.hasPrefix("["), line.hasSuffix("]"), line.count > 2 {
                headers.append((line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces), index + 1))
            }
        }
        return headers
    }
}

// MARK: - Command-line splitting

public enum CommandLineSplitError: Error, Equatable, Sendable {
    case unterminatedQuote
    case danglingBackslash
}

/// Splits a command line into argv the way a POSIX shell tokenises words, without
/// any expansion: the command is executed directly, never handed to a shell, so
/// nothing from a triggered item can be interpreted as shell syntax.
public enum CommandLineSplitter {
    public static func split(_ line: String) throws(CommandLineSplitError) -> [String] {
        var arguments: [String] = []
        var current = ""
        var inWord = false
        var iterator = Array(line).makeIterator()
        while let character = iterator.next() {
            switch character {
            case " ", "\t", "\n":
                if inWord {
                    arguments.append(current)
                    current = ""
                    inWord = false
                }
            case "'":
                inWord = true
                var closed = false
                while let quoted = iterator.next() {
                    if quoted == "'" { closed = true; break }
                    current.append(quoted)
                }
                if !closed { throw .unterminatedQuote }
            case "\"":
                inWord = true
                var closed = false
                while let quoted = iterator.next() {
                    if quoted == "\"" { closed = true; break }
                    if quoted == "\\" {
                        guard let escaped = iterator.next() else { throw .unterminatedQuote }
                        // Inside double quotes a shell keeps the backslash unless it escapes one of these.
                        if escaped == "\"" || escaped == "\\" || escaped == "$" || escaped == "`" {
                            current.append(escaped)
                        } else if escaped != "\n" {
                            current.append("\\")
                            current.append(escaped)
                        }
                        continue
                    }
                    current.append(quoted)
                }
                if !closed { throw .unterminatedQuote }
            case "\\":
                guard let escaped = iterator.next() else { throw .danglingBackslash }
                inWord = true
                current.append(escaped)
            default:
                inWord = true
                current.append(character)
            }
        }
        if inWord { arguments.append(current) }
        return arguments
    }
}

// MARK: - Typed configuration

/// When the dynamic set is derived from the contacts index (SPEC §2.8).
public enum RecomputePolicy: String, Equatable, Sendable, CaseIterable {
    case resignActive = "resign-active"
    case change
}

/// Where the effective configuration came from, for status output and log lines.
public enum ConfigurationSource: Equatable, Sendable, CustomStringConvertible {
    case file(String)
    case builtInDefaults

    public var description: String {
        switch self {
        case .file(let path): return "\"\(path)\""
        case .builtInDefaults: return "built-in defaults"
        }
    }
}

/// Every key of SPEC §5, validated and with paths already made absolute.
public struct DaemonConfiguration: Equatable, Sendable {
    public var source: ConfigurationSource

    // [Contacts]
    public var contactsDirectory: String
    public var favoriteCategories: [String]
    public var maxFileBytes: Int

    // [Shortcuts]
    public var staticItemsPath: String
    public var displayLimit: Int
    public var favoriteType: String
    /// Raw `symbol:NAME`, `type:NAME` / `system:NAME` or `file:PATH` (a relative file made absolute);
    /// the model layer turns it into an icon.
    public var favoriteIcon: String
    /// nil when unset, so the version from the static-items plist applies.
    public var appVersion: String?
    public var recompute: RecomputePolicy
    public var recomputeSettle: Duration

    // [App]
    public var launchCommand: [String]
    public var responseTimeout: Duration

    // [Daemon]
    public var socketPath: String
    public var maxConnections: Int
    public var maxMessageBytes: Int
}

/// The configuration plus the non-fatal findings made while reading it.
public struct LoadedConfiguration: Equatable, Sendable {
    public let configuration: DaemonConfiguration
    public let warnings: [ConfigurationWarning]
}

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
