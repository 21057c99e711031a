/// One quick action as a `[Desktop Action …]` group.
public struct DesktopQuickAction: Hashable, Sendable {
    /// A `Name[locale]=` line.
    public struct LocalizedName: Hashable, Sendable {
        /// The locale, as the key's brackets write it (`fr`, `pt_BR`).
        public var locale: String
        /// The name in that locale.
        public var name: String

        /// A `Name[locale]=name` line.
        public init(locale: String, name: String) {
            self.locale = locale
            self.name = name
        }
    }

    /// The action's identifier, in `Actions=` and its group's name.
    public var identifier: String
    /// `Name=`: the untranslated title.
    public var name: String
    /// `Name[locale]`, in the order written.
    public var localizedNames: [LocalizedName]
    /// An icon name or an absolute path; nil: no `Icon` key.
    public var icon: String?
    /// `Exec=`: the program and its arguments, escaped when written.
    public var command: [String]

    /// An action with each key.
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
    /// The key naming the app's own entry the file was made from.
    public static let sourceKey = "X-Qactd-Source"
    /// The socket of the daemon that wrote the file, so a daemon finds its own leftovers.
    public static let socketKey = "X-Qactd-Socket"
    /// Records that the app's own entry said `DBusActivatable=true`, which the copy turns off.
    public static let dbusActivatableKey = "X-Qactd-Source-DBusActivatable"
    /// Marks a copy qactd no longer exports but keeps under its name while a shell may hold it
    /// (`ExportRetirement` in the daemon): the app's own entry, no quick actions.
    public static let retiredKey = "X-Qactd-Retired"
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

    /// Whether a file qactd wrote is a retired copy.
    public static func isRetired(_ document: DesktopEntryDocument) -> Bool {
        isGenerated(document) && document.value(of: retiredKey) == "true"
    }

    /// The retired copy of the app's entry: every line of it, `DBusActivatable` included, with
    /// only qactd's marks added, so launchers offer exactly what the app's own entry offers.
    public static func composeRetired(source: DesktopEntryDocument, sourcePath: String, socketPath: String) -> String {
        compose(source: source, sourcePath: sourcePath, socketPath: socketPath, actions: [], retired: true)
    }

    /// The app's entry, every line kept, with `Actions=` extended by the quick actions (after
    /// the app's own), the mark and the source path added to `[Desktop Entry]`, and one group
    /// per quick action at the end, in the order given. Every key in `keysLaunchersCompare` (and
    /// its translations) stays as the app's entry has it, whatever the actions are.
    public static func compose(
        source: DesktopEntryDocument, sourcePath: String, socketPath: String, actions: [DesktopQuickAction], retired: Bool = false
    ) -> String {
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
            if retired { output.append("\(retiredKey)=true") }
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
            case .entry(let key, _, _) where inDesktopEntry && ["Actions", generatedMarkKey, sourceKey, socketKey, dbusActivatableKey, retiredKey].contains(key):
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
