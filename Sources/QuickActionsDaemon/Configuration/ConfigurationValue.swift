import Glibc
import QuickActions
import QuickActionsProtocol

/// What every value of one configuration file is read against.
struct ConfigurationContext: Sendable {
    /// The path error messages name: the file, or "(built-in defaults)".
    let file: String
    /// Where relative paths start: the file's folder, or the user's configuration
    /// folder when there is no file.
    let baseDirectory: String
    let environment: [String: String]
    let userID: uid_t
    /// The plain daemon or one app's (`qactd --app NAME`), whose default socket is its own.
    var instance: InstanceName = .plain
}

/// One value to read as a typed setting. It carries its file, line and key so that
/// every reader can reject it with an error naming all three.
struct ConfigurationValue: Sendable {
    let text: String
    let section: String
    let key: String
    /// 0 for a key's built-in default, which has no line; defaults cannot be
    /// malformed (a test parses every one of them).
    let line: Int
    let context: ConfigurationContext

    func invalid(_ expectation: String) -> ConfigurationError {
        .invalidValue(file: context.file, line: line, section: section, key: key, value: text, expectation: expectation)
    }

    /// Empty means "not set", so that `Key=` and a missing key agree.
    func optionalString() -> String? {
        text.isEmpty ? nil : text
    }

    func nonEmptyString() throws(ConfigurationError) -> String {
        guard !text.isEmpty else { throw invalid("must not be empty") }
        return text
    }

    /// Comma-separated, blanks around items and empty items dropped.
    func list() -> [String] {
        text.split(separator: ",")
            .map { $0.trimmingBlanks() }
            .filter { !$0.isEmpty }
    }

    /// `none`, `all`, or address-book UIDs separated by commas (each a folder name: no `/`).
    func evolutionSelection() throws(ConfigurationError) -> EvolutionSelection {
        switch text.lowercased() {
        case "none", "": return .none
        case "all": return .all
        default:
            let uids = list()
            if let bad = uids.first(where: { $0.contains("/") || $0 == "." || $0 == ".." || $0.lowercased() == "none" || $0.lowercased() == "all" }) {
                throw invalid("is not none, all or a list of address-book UIDs (\"\(bad)\" cannot be one)")
            }
            return .books(uids)
        }
    }

    func positiveInteger() throws(ConfigurationError) -> Int {
        guard let value = Int(text), value > 0 else { throw invalid("is not a positive integer") }
        return value
    }

    func nonNegativeInteger() throws(ConfigurationError) -> Int {
        guard let value = Int(text), value >= 0 else { throw invalid("is not a non-negative integer") }
        return value
    }

    /// Seconds as a number (`5`, `0.5`) or with a systemd-style unit (`5s`, `500ms`).
    func positiveSeconds() throws(ConfigurationError) -> Duration {
        let seconds: Double?
        if text.hasSuffix("ms") {
            seconds = Double(text.dropLast(2).trimmingBlanks()).map { $0 / 1000 }
        } else if text.hasSuffix("s") {
            seconds = Double(text.dropLast().trimmingBlanks())
        } else {
            seconds = Double(text)
        }
        guard let seconds, seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            throw invalid("is not a positive number of seconds (e.g. 5, 0.5, 500ms)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    func path() throws(ConfigurationError) -> String {
        guard !text.isEmpty else { throw invalid("is not a path") }
        return try resolve(text)
    }

    /// One of an enumeration's spellings, in any case; the error lists them all.
    func choice<Choice: RawRepresentable & CaseIterable>(_: Choice.Type = Choice.self) throws(ConfigurationError) -> Choice
    where Choice.RawValue == String {
        guard let choice = Choice(rawValue: text.lowercased()) else {
            let spellings = Choice.allCases.map { "\"\($0.rawValue)\"" }
            throw invalid("is not one of " + spellings.dropLast().joined(separator: ", ") + " or " + (spellings.last ?? ""))
        }
        return choice
    }

    /// `auto` (the person's mail app), `none` or empty, a desktop-file ID
    /// (`org.example.Contacts.desktop`, looked up in the XDG data folders) or, when it holds a
    /// `/` or starts with `~`, the path of a desktop entry.
    func desktopFileSetting() throws(ConfigurationError) -> DesktopFileSetting {
        switch text.lowercased() {
        case "auto": return .auto
        case "none", "": return .none
        default: return .named(try desktopFile())
        }
    }

    private func desktopFile() throws(ConfigurationError) -> String {
        if text.contains("/") || text.hasPrefix("~") {
            let path = try resolve(text)
            guard path.hasSuffix(".desktop"), path.split(separator: "/").last.map({ $0.count > 8 }) == true else {
                throw invalid("is not the path of a desktop entry (a file name ending in \".desktop\")")
            }
            return path
        }
        guard DesktopFileID.isValid(text) else {
            throw invalid("is not auto, none, a desktop-file ID (such as \"org.example.Contacts.desktop\") or a path")
        }
        return text
    }

    /// The model's one icon parser, so the daemon accepts exactly what it can show;
    /// only a `file:` path is the daemon's business, made absolute like every path here.
    func icon() throws(ConfigurationError) -> ShortcutIcon {
        let icon: ShortcutIcon
        do {
            icon = try ShortcutIcon(configurationValue: text)
        } catch {
            throw invalid(Self.iconExpectation(error))
        }
        guard case .templateFile(let path) = icon else { return icon }
        return .templateFile(try resolve(path))
    }

    func commandLine() throws(ConfigurationError) -> [String] {
        do {
            return try CommandLineSplitter.split(text)
        } catch {
            throw invalid(error.rawValue)
        }
    }

    /// An `[Actions]` command: split like `LaunchCommand`, then each argument read for its fields.
    func commandTemplate() throws(ConfigurationError) -> CommandTemplate {
        let arguments = try commandLine()
        do {
            return try CommandTemplate(arguments: arguments)
        } catch {
            throw invalid(error.description)
        }
    }

    private func resolve(_ path: String) throws(ConfigurationError) -> String {
        try ConfigurationLoader.resolve(path, relativeTo: context.baseDirectory, environment: context.environment)
    }

    /// The model's error describes the icon alone; here the sentence continues after
    /// `file:line: [Section] Key: "value"`.
    private static func iconExpectation(_ error: ShortcutIconConfigurationError) -> String {
        let spellings = "use \"symbol:NAME\", \"type:NAME\" (or \"system:NAME\") or \"file:PATH\""
        switch error {
        case .missingKind:
            return "is not an icon: \(spellings)"
        case .unknownKind(_, let kind):
            return "has the unknown icon kind \"\(kind)\": \(spellings)"
        case .emptyName(let value):
            let isFile = value.lowercased().hasPrefix("file:")
            return "names no \(isFile ? "file" : "icon") after \"\(value)\""
        case .unknownSystemType(_, let type):
            return "names the unknown icon type \"\(type)\"; expected one of \(SystemIconType.allSpellings)"
        }
    }
}
