/// Desktop-file IDs as the Desktop Entry Specification defines them: a file's path below an
/// `applications` folder with each `/` written as `-`, ending in ".desktop".
public enum DesktopFileID {
    public static let suffix = ".desktop"

    /// A name ending in ".desktop" with something before it, no `/`, no control characters,
    /// and not starting with a dot (which would make a hidden file).
    public static func isValid(_ identifier: String) -> Bool {
        guard identifier.hasSuffix(suffix), identifier.count > suffix.count, !identifier.hasPrefix(".") else { return false }
        return !identifier.unicodeScalars.contains { $0 == "/" || $0.value < 0x20 || $0.value == 0x7F }
    }

    /// Hyphens beyond this are not tried as folder separators (2^n candidates).
    static let maxHyphensTriedAsFolders = 6

    /// The paths below an `applications` folder that may hold `identifier`, most direct first:
    /// `a-b-c.desktop`, then with hyphens read as subfolders (`a/b-c.desktop`, `a-b/c.desktop`,
    /// `a/b/c.desktop`), as the specification's mapping of subfolders to IDs allows.
    public static func relativePaths(of identifier: String) -> [String] {
        let stem = identifier.dropLast(suffix.count)
        let hyphens = stem.indices.filter { stem[$0] == "-" }
        guard !hyphens.isEmpty, hyphens.count <= maxHyphensTriedAsFolders else { return [identifier] }
        var paths: [String] = []
        for mask in 0..<(1 << hyphens.count) {
            var characters = Array(stem)
            for (bit, index) in hyphens.enumerated() where mask & (1 << bit) != 0 {
                characters[stem.distance(from: stem.startIndex, to: index)] = "/"
            }
            let path = String(characters) + suffix
            // A hyphen at either end of a segment would make an empty folder name.
            if !path.contains("//"), !path.hasPrefix("/"), !path.contains("/.") { paths.append(path) }
        }
        return paths
    }
}

/// The escaping rules of the Desktop Entry Specification, in one place, so that no text from a
/// contact or a strings file can add a line, a key, a group or an `Exec` argument.
public enum DesktopEntryEscaping {
    /// A `string` or `localestring` value: `\\`, `\n`, `\t`, `\r`, and `\s` for a space at
    /// either end (readers trim blanks around a value). Other control characters have no
    /// escape and are not allowed in a value, so each becomes a space.
    public static func value(_ text: String) -> String {
        var escaped = ""
        let scalars = Array(text.unicodeScalars)
        for (offset, scalar) in scalars.enumerated() {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case "\r": escaped += "\\r"
            case " " where offset == 0 || offset == scalars.count - 1: escaped += "\\s"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    escaped += offset == 0 || offset == scalars.count - 1 ? "\\s" : " "
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return escaped
    }

    /// Whether `value(_:)` keeps `text` exactly: no control character without an escape.
    public static func isRepresentable(_ text: String) -> Bool {
        !text.unicodeScalars.contains { ($0.value < 0x20 && !["\n", "\t", "\r"].contains($0)) || $0.value == 0x7F }
    }

    /// A raw value as readers see it: `\s`, `\n`, `\t`, `\r` and `\\` decoded.
    public static func unescapedValue(_ raw: String) -> String {
        var text = ""
        var escaping = false
        for character in raw {
            if escaping {
                switch character {
                case "s": text += " "
                case "n": text += "\n"
                case "t": text += "\t"
                case "r": text += "\r"
                case "\\": text += "\\"
                default: text += "\\" + String(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                text.append(character)
            }
        }
        return escaping ? text + "\\" : text
    }

    /// Characters that the specification reserves in `Exec`: an argument holding one is quoted.
    static let reservedInExec: Set<Unicode.Scalar> = [
        " ", "\t", "\n", "\"", "'", "\\", ">", "<", "~", "|", "&", ";", "$", "*", "?", "#", "(", ")", "`",
    ]

    /// One `Exec` argument: `%` doubled (a field code is never expanded from it); quoted in
    /// double quotes when it is empty or holds a reserved character, with `"`, `` ` ``, `$` and
    /// `\` backslash-escaped inside the quotes. Not yet escaped as a value: see `exec(_:)`.
    public static func execArgument(_ argument: String) -> String {
        let percentDoubled = argument.replacingAll("%", with: "%%")
        let needsQuotes = argument.isEmpty || argument.unicodeScalars.contains { reservedInExec.contains($0) || $0.value < 0x20 || $0.value == 0x7F }
        guard needsQuotes else { return percentDoubled }
        var quoted = "\""
        for scalar in percentDoubled.unicodeScalars {
            if scalar == "\"" || scalar == "`" || scalar == "$" || scalar == "\\" { quoted += "\\" }
            quoted.unicodeScalars.append(scalar)
        }
        return quoted + "\""
    }

    /// The value of an `Exec` key running exactly `arguments`: each argument quoted by the
    /// `Exec` rules, then the whole line escaped as a string value on top, as the
    /// specification requires (so a backslash in a quoted argument is written four times).
    public static func exec(_ arguments: [String]) -> String {
        value(arguments.map(execArgument).joined(separator: " "))
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}

/// A desktop entry read as lines, each kept byte for byte, so a copy keeps every key, group,
/// comment and translation of the app's own file.
public struct DesktopEntryDocument: Hashable, Sendable {
    public enum Line: Hashable, Sendable {
        case groupHeader(name: String, text: String)
        /// `key` includes any `[locale]`; `value` is the raw text after `=`, blanks trimmed.
        case entry(key: String, value: String, text: String)
        /// A comment, a blank line, or anything else, kept as it is.
        case other(text: String)

        public var text: String {
            switch self {
            case .groupHeader(_, let text), .entry(_, _, let text), .other(let text): return text
            }
        }
    }

    public var lines: [Line]

    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        case noDesktopEntryGroup
        case entryBeforeFirstGroup(line: Int)

        public var description: String {
            switch self {
            case .noDesktopEntryGroup: return "its first group is not [Desktop Entry]"
            case .entryBeforeFirstGroup(let line): return "line \(line) is a key before any group"
            }
        }
    }

    public init(parsing text: String) throws(ParseError) {
        var lines: [Line] = []
        var sawGroup = false
        var rawLines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if rawLines.last == "" { rawLines.removeLast() }
        for (offset, raw) in rawLines.enumerated() {
            let trimmed = raw.trimmingBlanks()
            if trimmed.hasPrefix("["), trimmed.hasSuffix("]"), trimmed.count >= 2 {
                let name = String(trimmed.dropFirst().dropLast())
                if !sawGroup, name != "Desktop Entry" { throw .noDesktopEntryGroup }
                sawGroup = true
                lines.append(.groupHeader(name: name, text: raw))
            } else if !trimmed.hasPrefix("#"), !trimmed.isEmpty, let equals = raw.firstIndex(of: "=") {
                guard sawGroup else { throw .entryBeforeFirstGroup(line: offset + 1) }
                lines.append(.entry(key: raw[..<equals].trimmingBlanks(), value: raw[raw.index(after: equals)...].trimmingBlanks(), text: raw))
            } else {
                lines.append(.other(text: raw))
            }
        }
        guard sawGroup else { throw .noDesktopEntryGroup }
        self.lines = lines
    }

    /// Every group's name, in file order.
    public var groupNames: [String] {
        lines.compactMap { if case .groupHeader(let name, _) = $0 { return name } else { return nil } }
    }

    /// The raw (still escaped) value of `key` in `group`; the last one wins, as in GLib.
    public func value(of key: String, in group: String = "Desktop Entry") -> String? {
        var current: String?
        var found: String?
        for line in lines {
            switch line {
            case .groupHeader(let name, _): current = name
            case .entry(let entryKey, let value, _) where current == group && entryKey == key: found = value
            default: break
            }
        }
        return found
    }

    /// The app's own action identifiers (`Actions=`, a `;`-separated list).
    public var actionIdentifiers: [String] {
        guard let list = value(of: "Actions") else { return [] }
        return DesktopEntryList.split(list)
    }

    public var text: String {
        lines.map(\.text).joined(separator: "\n") + "\n"
    }
}

/// The specification's lists: items separated by `;` (escaped as `\;` inside an item), the
/// last one optionally followed by `;`.
public enum DesktopEntryList {
    public static func split(_ raw: String) -> [String] {
        var items: [String] = []
        var current = ""
        var escaping = false
        for character in raw {
            if escaping {
                current += character == ";" ? ";" : "\\" + String(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == ";" {
                items.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if escaping { current += "\\" }
        if !current.isEmpty { items.append(current) }
        return items.map { $0.trimmingBlanks() }.filter { !$0.isEmpty }
    }
}

/// One quick action as a `[Desktop Action …]` group.
public struct DesktopQuickAction: Hashable, Sendable {
    /// A `Name[locale]=` line.
    public struct LocalizedName: Hashable, Sendable {
        public var locale: String
        public var name: String

        public init(locale: String, name: String) {
            self.locale = locale
            self.name = name
        }
    }

    public var identifier: String
    public var name: String
    /// `Name[locale]`, in the order written.
    public var localizedNames: [LocalizedName]
    /// An icon name or an absolute path; nil: no `Icon` key.
    public var icon: String?
    public var command: [String]

    public init(identifier: String, name: String, localizedNames: [LocalizedName] = [], icon: String?, command: [String]) {
        self.identifier = identifier
        self.name = name
        self.localizedNames = localizedNames
        self.icon = icon
        self.command = command
    }

    /// The group's lines, every value escaped.
    public var lines: [String] {
        var lines = ["[Desktop Action \(identifier)]", "Name=\(DesktopEntryEscaping.value(name))"]
        for localized in localizedNames {
            lines.append("Name[\(localized.locale)]=\(DesktopEntryEscaping.value(localized.name))")
        }
        if let icon { lines.append("Icon=\(DesktopEntryEscaping.value(icon))") }
        lines.append("Exec=\(DesktopEntryEscaping.exec(command))")
        return lines
    }
}

/// The exported entry: the app's own file with the quick actions added.
public enum DesktopEntryExport {
    /// The key that marks a file qactd wrote, so it never overwrites one it did not.
    public static let generatedMarkKey = "X-Qactd-Generated"
    public static let sourceKey = "X-Qactd-Source"
    /// The socket of the daemon that wrote the file, so a daemon finds its own leftovers.
    public static let socketKey = "X-Qactd-Socket"
    /// Records that the app's own entry said `DBusActivatable=true`, which the copy turns off.
    public static let dbusActivatableKey = "X-Qactd-Source-DBusActivatable"
    /// The main group's keys GNOME Shell compares when it re-reads an entry (with `Hidden`,
    /// `NoDisplay`, `OnlyShowIn` and `NotShowIn`, which decide whether it is shown): when one of them
    /// differs, the shell replaces the app's object with a new one, and an app with open windows loses
    /// its icon's running state and its window list. `compose` copies each of them from the app's own
    /// entry byte for byte, so a rewrite of the actions never replaces a running app.
    public static let keysLaunchersCompare: Set<String> = [
        "Type", "Exec", "TryExec", "Name", "GenericName", "Comment", "Icon", "X-GNOME-FullName", "Hidden", "NoDisplay",
        "OnlyShowIn", "NotShowIn",
    ]

    /// Whether a per-user file is one qactd wrote (and may replace or remove).
    public static func isGenerated(_ document: DesktopEntryDocument) -> Bool {
        document.value(of: generatedMarkKey) == "true"
    }

    /// The app's entry, every line kept, with `Actions=` extended by the quick actions (after
    /// the app's own), the mark and the source path added to `[Desktop Entry]`, and one group
    /// per quick action at the end, in the order given. Every key in `keysLaunchersCompare` (and
    /// its translations) stays as the app's entry has it, whatever the actions are.
    public static func compose(source: DesktopEntryDocument, sourcePath: String, socketPath: String, actions: [DesktopQuickAction]) -> String {
        let ownActions = source.actionIdentifiers
        let actionsValue = (ownActions + actions.map(\.identifier)).map { $0 + ";" }.joined()
        var output: [String] = []
        var inDesktopEntry = false
        var addedKeys = false
        func addKeys() {
            guard !addedKeys else { return }
            addedKeys = true
            if !actionsValue.isEmpty { output.append("Actions=\(actionsValue)") }
            output.append("\(generatedMarkKey)=true")
            output.append("\(sourceKey)=\(DesktopEntryEscaping.value(sourcePath))")
            output.append("\(socketKey)=\(DesktopEntryEscaping.value(socketPath))")
        }
        // Where [Desktop Entry]'s last key is, so the new keys go right after it, before the
        // blank lines and comments that lead into the next group.
        var lastEntryOfDesktopEntry = -1
        var scanningDesktopEntry = false
        for (offset, line) in source.lines.enumerated() {
            switch line {
            case .groupHeader(let name, _): scanningDesktopEntry = name == "Desktop Entry"
                if scanningDesktopEntry { lastEntryOfDesktopEntry = offset }
            case .entry where scanningDesktopEntry: lastEntryOfDesktopEntry = offset
            default: break
            }
        }
        for (offset, line) in source.lines.enumerated() {
            switch line {
            case .groupHeader(let name, _):
                inDesktopEntry = name == "Desktop Entry"
                output.append(line.text)
            case .entry(let key, _, _) where inDesktopEntry && ["Actions", generatedMarkKey, sourceKey, socketKey, dbusActivatableKey].contains(key):
                break  // rewritten once below, so the list is not given twice
            case .entry("DBusActivatable", let value, _) where inDesktopEntry && value == "true" && !actions.isEmpty:
                // A D-Bus activatable app gets its actions as ActivateAction calls, which it cannot
                // answer for ours: launchers must run the actions' Exec instead, and the app's Exec
                // still starts it (a D-Bus app stays single-instance either way).
                output.append("DBusActivatable=false")
                output.append("\(dbusActivatableKey)=true")
            default:
                output.append(line.text)
            }
            if offset == lastEntryOfDesktopEntry { addKeys() }
        }
        for action in actions {
            output.append("")
            output += action.lines
        }
        return output.joined(separator: "\n") + "\n"
    }
}

/// Stable, collision-free action identifiers made of `A-Za-z0-9-` only.
public enum DesktopActionIdentifier {
    static let prefix = "qactd-"
    static let maxReadableLength = 40

    /// `qactd-<type>` or `qactd-<type>-<contact>`, other characters folded to `-`; when that
    /// loses information (non-ASCII, punctuation) or grows long, a hash of the exact type and
    /// contact follows, so two items never share an identifier by folding.
    public static func make(type: String, contactIdentifier: String?) -> String {
        prefix + stem(type: type, contactIdentifier: contactIdentifier)
    }

    /// `make` without its prefix: `<type>` or `<type>-<contact>`, or the folded text and a hash.
    public static func stem(type: String, contactIdentifier: String?) -> String {
        let exact = type + (contactIdentifier.map { "\u{0}" + $0 } ?? "")
        let readable = [type, contactIdentifier].compactMap { $0 }.map(fold).joined(separator: "-")
        let isExact = readable == [type, contactIdentifier].compactMap { $0 }.joined(separator: "-")
            && !type.contains("-") && readable.count <= maxReadableLength
        if isExact { return readable }
        let shortened = String(readable.prefix(maxReadableLength)).trimmingHyphens()
        return (shortened.isEmpty ? "" : shortened + "-") + hash(exact)
    }

    /// Adds `-2`, `-3`, … until the identifier is not in `taken`.
    public static func unique(_ identifier: String, avoiding taken: Set<String>) -> String {
        guard taken.contains(identifier) else { return identifier }
        var counter = 2
        while taken.contains("\(identifier)-\(counter)") { counter += 1 }
        return "\(identifier)-\(counter)"
    }

    private static func fold(_ text: String) -> String {
        var folded = ""
        for scalar in text.unicodeScalars {
            let isAlphanumeric = (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9")
            if isAlphanumeric {
                folded.unicodeScalars.append(scalar)
            } else if !folded.hasSuffix("-") {
                folded += "-"
            }
        }
        return folded.trimmingHyphens()
    }

    /// FNV-1a, 64 bits: the same in every run and on every machine (Swift's `Hasher` is seeded).
    static func hash(_ text: String) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01b3
        }
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension String {
    fileprivate func trimmingHyphens() -> String {
        var text = Substring(self)
        while text.first == "-" { text = text.dropFirst() }
        while text.last == "-" { text = text.dropLast() }
        return String(text)
    }
}

extension StringProtocol {
    func trimmingBlanks() -> String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return String(text)
    }
}

/// Icons by the freedesktop Icon Naming Specification (names Adwaita and hicolor themes have).
public enum FreedesktopIconName {
    /// One name for each of UIKit's 29 system icon types.
    public static func name(for type: SystemIconType) -> String {
        switch type {
        case .compose: "document-edit"
        case .play: "media-playback-start"
        case .pause: "media-playback-pause"
        case .add: "list-add"
        case .location: "find-location"
        case .search: "system-search"
        case .share: "document-send"
        case .prohibit: "process-stop"
        case .contact: "x-office-address-book"
        case .home: "go-home"
        case .markLocation: "mark-location"
        case .favorite: "starred"
        case .love: "emblem-favorite"
        case .cloud: "weather-overcast"
        case .invitation: "appointment-new"
        case .confirmation: "emblem-default"
        case .mail: "mail-unread"
        case .message: "user-available"
        case .date: "x-office-calendar"
        case .time: "preferences-system-time"
        case .capturePhoto: "camera-photo"
        case .captureVideo: "camera-video"
        case .task: "view-list-bullet"
        case .taskCompleted: "object-select"
        case .alarm: "alarm-symbolic"
        case .bookmark: "bookmark-new"
        case .shuffle: "media-playlist-shuffle"
        case .audio: "audio-x-generic"
        case .update: "software-update-available"
        }
    }

    /// SF Symbols names (by their first component) that have an obvious freedesktop twin.
    static let symbols: [String: String] = [
        "star": "starred", "heart": "emblem-favorite", "person": "avatar-default", "magnifyingglass": "system-search",
        "envelope": "mail-unread", "phone": "call-start", "message": "user-available", "bubble": "user-available",
        "calendar": "x-office-calendar", "clock": "preferences-system-time", "camera": "camera-photo",
        "video": "camera-video", "house": "go-home", "bookmark": "bookmark-new", "plus": "list-add",
        "play": "media-playback-start", "pause": "media-playback-pause", "location": "find-location",
        "mappin": "mark-location", "cloud": "weather-overcast", "checkmark": "object-select", "alarm": "alarm-symbolic",
        "shuffle": "media-playlist-shuffle", "music": "audio-x-generic", "square": "document-send",
    ]

    /// The icon of an action: the table for system types; a symbol by its first name
    /// component (`star.fill` → `starred`); an absolute file path as it is. Anything else
    /// (an unknown symbol, a file relative to an app bundle) takes `fallback`, the app's own icon.
    public static func icon(for icon: ShortcutIcon?, fallback: String?) -> String? {
        switch icon {
        case .system(let type)?: return name(for: type)
        case .symbol(let symbol)?:
            let first = symbol.split(separator: ".").first.map(String.init) ?? symbol
            return symbols[first] ?? fallback
        case .templateFile(let path)? where path.hasPrefix("/"): return path
        default: return fallback
        }
    }
}

/// `.lproj` languages as desktop-entry locales (`lang_COUNTRY`).
public enum DesktopEntryLocale {
    /// `fr` → `fr`; `pt_br`/`pt-BR` → `pt_BR`; `zh-Hans` → `zh_CN`, `zh-Hant` → `zh_TW`;
    /// nil for `Base` and for names that are no language.
    public static func locale(forLanguage language: String) -> String? {
        let parts = language.replacingAll("-", with: "_").split(separator: "_").map(String.init)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }),
              first.lowercased() != "base"
        else { return nil }
        let lang = first.lowercased()
        guard parts.count > 1 else { return lang }
        let region = parts[1]
        switch (lang, region.lowercased()) {
        case ("zh", "hans"): return "zh_CN"
        case ("zh", "hant"): return "zh_TW"
        default: break
        }
        if region.count == 2, region.allSatisfy({ $0.isASCII && $0.isLetter }) { return lang + "_" + region.uppercased() }
        return lang
    }
}
