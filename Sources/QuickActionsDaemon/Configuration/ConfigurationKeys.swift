import QuickActions
import QuickActionsProtocol

/// One key of qactd.conf, written down once: its section and name drive parsing and
/// the unknown-key warnings, its default is both the built-in value and what the
/// commented default file shows, and its help text comments that file.
/// `ConfigurationKeysTests` keeps `etc/qactd/qactd.conf` and qactd.conf(5) in step with it.
struct ConfigurationKey: Sendable {
    enum Default: Sendable {
        /// Written as an active `Key=text` line of the default file and, when the key
        /// is unset, parsed exactly like a user's value: the file cannot drift from
        /// the built-in default.
        case text(String)
        /// Depends on the environment, which the file cannot express (it expands no
        /// variables), so the file shows `documentation` in a comment and `#Key=`.
        case derived(documentation: String, value: @Sendable (ConfigurationContext) -> String)

        /// How the default is shown to people: in the default file and in qactd.conf(5).
        var documentation: String {
            switch self {
            case .text(let text): return text
            case .derived(let documentation, _): return documentation
            }
        }

        func text(in context: ConfigurationContext) -> String {
            switch self {
            case .text(let text): return text
            case .derived(_, let value): return value(context)
            }
        }
    }

    let section: String
    let name: String
    let defaultValue: Default
    let help: String
    /// Parses a value and stores it in its field; throws an error naming file, line and key.
    let apply: @Sendable (inout DaemonConfiguration, ConfigurationValue) throws(ConfigurationError) -> Void

    init<Value>(
        _ section: String, _ name: String, default defaultValue: Default, help: String,
        _ field: WritableKeyPath<DaemonConfiguration, Value> & Sendable,
        _ parse: @escaping @Sendable (ConfigurationValue) throws(ConfigurationError) -> Value
    ) {
        self.section = section
        self.name = name
        self.defaultValue = defaultValue
        self.help = help
        self.apply = { configuration, value throws(ConfigurationError) in
            configuration[keyPath: field] = try parse(value)
        }
    }
}

enum ConfigurationKeys {
    /// Every key of qactd.conf(5) the daemon implements, in the order of the default file
    /// and of qactd.conf(5). Keys are applied in this order too, so with several bad
    /// values the first one listed here is reported.
    static let all: [ConfigurationKey] = [
        ConfigurationKey(
            "Contacts", "Directory", default: .text("~/.local/share/contacts"),
            help: "A vdir tree: one contact per *.vcf or *.json file, optionally in collections. Empty: no"
                + " folder (contacts from Evolution= only).",
            \.contactsDirectory, { value throws(ConfigurationError) in value.text.isEmpty ? "" : try value.path() }),
        ConfigurationKey(
            "Contacts", "FavoriteCategories", default: .text("favorite,favorites,starred"),
            help: "A contact is a favorite when its CATEGORIES hold one of these (any case).",
            \.favoriteCategories, { value in value.list() }),
        ConfigurationKey(
            "Contacts", "MaxFileBytes", default: .text("1048576"),
            help: "Larger contact files are skipped with a warning.",
            \.maxFileBytes, { value throws(ConfigurationError) in try value.positiveInteger() }),
        ConfigurationKey(
            "Contacts", "Evolution", default: .text("all"),
            help: "Evolution Data Server address books (GNOME Contacts, Evolution, online accounts) read"
                + " besides Directory=, read-only: none, all (every address book of this user, as they come"
                + " and go) or address-book UIDs separated by commas (system-address-book is \"Personal\")."
                + " X-FOLKS-FAVOURITE:true (a star in GNOME Contacts) and the category \"Starred in Android\""
                + " also mark a favorite there.",
            \.evolution, { value throws(ConfigurationError) in try value.evolutionSelection() }),
        ConfigurationKey(
            "Contacts", "Khard", default: .text("auto"),
            help: "auto: the address books khard's configuration names ($XDG_CONFIG_HOME/khard/khard.conf,"
                + " [[name]] path = folder) read besides Directory= and followed as the file changes;"
                + " X-FOLKS-FAVOURITE:true also marks a favorite there, and a book inside Directory= is read"
                + " once. none: not read.",
            \.khard, { value throws(ConfigurationError) in try value.choice() }),

        ConfigurationKey(
            "Shortcuts", "StaticItems", default: .text("shortcuts.plist"),
            help: "UIApplicationShortcutItems: an Info.plist or just the array, XML or binary.",
            \.staticItemsPath, { value throws(ConfigurationError) in try value.path() }),
        ConfigurationKey(
            "Shortcuts", "DisplayLimit", default: .text("4"),
            help: "How many quick actions the launcher shows.",
            \.displayLimit, { value throws(ConfigurationError) in try value.positiveInteger() }),
        ConfigurationKey(
            "Shortcuts", "FavoriteType", default: .text("FavoriteAction"),
            help: "The item type of the favorites' quick actions.",
            \.favoriteType, { value throws(ConfigurationError) in try value.nonEmptyString() }),
        ConfigurationKey(
            "Shortcuts", "FavoriteIcon", default: .text("symbol:star.fill"),
            help: "The favorites' icon: symbol:NAME, type:NAME (or system:NAME) or file:PATH.",
            \.favoriteIcon, { value throws(ConfigurationError) in try value.icon() }),
        ConfigurationKey(
            "Shortcuts", "Order", default: .text("usage"),
            help: "The favorites' order: usage (most used first; each time one is chosen counts, halved every"
                + " 14 days, so recent use counts more; ties by name) or name.",
            \.favoriteOrder, { value throws(ConfigurationError) in try value.choice() }),
        ConfigurationKey(
            "Shortcuts", "MaxDynamicItems", default: .text("15"),
            help: "How many favorites become quick actions, the first in Order=; the rest are left out.",
            \.maxDynamicItems, { value throws(ConfigurationError) in try value.positiveInteger() }),
        ConfigurationKey(
            "Shortcuts", "MaxAppItems", default: .text("15"),
            help: "How many items of its own the app may set (SetItems, PushItem); shown after the static items"
                + " and before the favorites, all cut at DisplayLimit=.",
            \.maxAppItems, { value throws(ConfigurationError) in try value.positiveInteger() }),
        ConfigurationKey(
            "Shortcuts", "AppVersion", default: .text(""),
            help: "Empty: CFBundleShortVersionString of StaticItems, if any.",
            \.appVersion, { value in value.optionalString() }),
        ConfigurationKey(
            "Shortcuts", "BundleIdentifier",
            default: .derived(documentation: "the desktop-file ID of DesktopFile= without .desktop") { _ in "" },
            help: "Replaces $(PRODUCT_BUNDLE_IDENTIFIER) in static item types; with neither this nor"
                + " DesktopFile= set, the types are left as written.",
            \.bundleIdentifier, { value in value.text }),
        ConfigurationKey(
            "Shortcuts", "Recompute", default: .text("auto"),
            help: "auto: follow the contacts until an app speaks the socket (connects or sends a lifecycle"
                + " message), then as resign-active; resign-active (as on iOS): when the app resigns active;"
                + " change: follow the contacts once they settle.",
            \.recompute, { value throws(ConfigurationError) in try value.choice() }),
        ConfigurationKey(
            "Shortcuts", "RecomputeSettleMSec", default: .text("50"),
            help: "With Recompute=change (and auto, while it follows them): how long the contacts must stay unchanged first.",
            \.recomputeSettle, { value throws(ConfigurationError) in .milliseconds(try value.nonNegativeInteger()) }),

        ConfigurationKey(
            "App", "LaunchCommand", default: .text(""),
            help: "Run when an action is triggered while no app is connected, without a shell.",
            \.launchCommand, { value throws(ConfigurationError) in try value.commandLine() }),
        ConfigurationKey(
            "App", "ResponseTimeoutSec", default: .text("5"),
            help: "How long a connected app may take to answer an action: 5, 0.5s or 500ms.",
            \.responseTimeout, { value throws(ConfigurationError) in try value.positiveSeconds() }),

        ConfigurationKey(
            "Feedback", "Notifications", default: .text("auto"),
            help: "auto: when a chosen quick action does nothing (its command or LaunchCommand cannot start or"
                + " fails, the app does not answer or answers not handled, the contact was removed), a desktop"
                + " notification says so, if the session bus has a notification server; off: the log only.",
            \.notifications, { value throws(ConfigurationError) in try value.choice() }),

        ConfigurationKey(
            "Commands", "MaxRunning", default: .text("16"),
            help: "How many [Actions] commands may run at once; past it a chosen quick action runs nothing and"
                + " a notification says so. Commands run in transient units of the user manager"
                + " (app-qactd-PROGRAM@RANDOM.service) when one answers, else as qactd's own children.",
            \.maxRunningCommands, { value throws(ConfigurationError) in try value.positiveInteger() }),

        ConfigurationKey(
            "Launcher", "DesktopFile", default: .text("auto"),
            help: "The app's desktop-file ID (org.example.Contacts.desktop), looked up in"
                + " $XDG_DATA_HOME/applications then $XDG_DATA_DIRS/*/applications, or a path. qactd keeps a copy"
                + " with the quick actions added in its exports folder, $XDG_DATA_HOME/qactd/exports/share/applications. auto: the person's mail app (the"
                + " default application for x-scheme-handler/mailto in mimeapps.list), whose own Exec opens a new"
                + " mail to a chosen favorite unless [Actions] names a command (an app's instance, qactd --app NAME,"
                + " takes no mail app: auto is none there). none or empty: nothing is exported.",
            \.launcherDesktopFileSetting, { value throws(ConfigurationError) in try value.desktopFileSetting() }),
        ConfigurationKey(
            "Launcher", "DynamicItems", default: .text("auto"),
            help: "Where the favorites' quick actions go: auto (the quicklist, and the desktop entry too while no"
                + " reader of the quicklist is on the session bus, so each shows once), desktop-entry (read by every"
                + " launcher) or quicklist (the live D-Bus menu of Dash to Dock, Ubuntu Dock, Plank and qactd's GNOME"
                + " Shell extension); static items always go into the desktop entry.",
            \.launcherDynamicItems, { value throws(ConfigurationError) in try value.choice() }),
        ConfigurationKey(
            "Launcher", "FavoriteFaces", default: .text("yes"),
            help: "yes: a favorite's icon in the desktop entry, the quicklist and its pinned launcher is the contact's face: the vCard's"
                + " PHOTO (inline or a file: URI, at most 1 MiB and 4096 pixels a side, JPEG or PNG) cut round, else"
                + " their initials on a colour of their own; no: FavoriteIcon= for every favorite.",
            \.favoriteFaces, { value throws(ConfigurationError) in try value.choice() }),

        ConfigurationKey(
            "Daemon", "Socket",
            default: .derived(documentation: "$XDG_RUNTIME_DIR/qactd/qactd.sock") { context in
                InstancePaths.socketPath(
                    of: context.instance,
                    runtimeFolder: InstancePaths.runtimeFolder(
                        xdgRuntimeDirectory: context.environment["XDG_RUNTIME_DIR"], userID: context.userID))
            },
            help: "Unused under socket activation. An app's instance (qactd --app NAME) defaults to"
                + " $XDG_RUNTIME_DIR/qactd/NAME.sock, where qactl --app NAME looks.",
            \.socketPath, { value throws(ConfigurationError) in try value.path() }),
        ConfigurationKey(
            "Daemon", "MaxConnections", default: .text("256"),
            help: "At the limit, a new connection takes the place of the one idle the longest; it is refused only when every connection has a call in progress.",
            \.maxConnections, { value throws(ConfigurationError) in try value.positiveInteger() }),
        ConfigurationKey(
            "Daemon", "MaxMessageBytes", default: .text("1048576"),
            help: "The largest Varlink message accepted; a longer one ends its connection.",
            \.maxMessageBytes, { value throws(ConfigurationError) in try value.positiveInteger() }),
    ]

    /// `[Actions]`: a section whose keys are not the daemon's but the configuration's own (item
    /// types), each an `ITEM-TYPE=COMMAND` template. It comes after the table's sections.
    static let actionsSection = "Actions"
    static let actionsHelp =
        "ITEM-TYPE=COMMAND: a triggered item of this type runs COMMAND instead of going to the app,"
        + " whether or not the app runs. COMMAND is split like LaunchCommand (never by a shell), then the"
        + " fields are filled in inside each argument: \(CommandTemplateField.spellings). An argument that is"
        + " one field and empty is dropped; a field that would begin an argument with \"-\" refuses the trigger."
        + " {email:uri} and {name:uri} are percent-encoded for a URI; a raw field inside another program's own"
        + " quoting (to='{email}') is the writer's risk. Without a FavoriteAction= here, DesktopFile=auto's"
        + " mail app (or a named app whose entry handles x-scheme-handler/mailto) opens a new mail through its"
        + " own Exec with mailto:{email:uri}."
    /// Shown commented out in the default file and qactd.conf(5).
    static let actionsExamples = [
        "FavoriteAction=xdg-email mailto:{email:uri}",
        "SearchAction=gnome-contacts --search \"\"",
    ]

    /// The sections in table order (the table keeps each section's keys together), then `[Actions]`.
    static let sections: [String] = all.reduce(into: []) { sections, key in
        if sections.last != key.section { sections.append(key.section) }
    } + [actionsSection]

    private static let knownKeys = Set(all.map { KeyName(section: $0.section, name: $0.name) })

    private struct KeyName: Hashable {
        let section: String
        let name: String
    }

    /// Applies the assignments over the table's defaults. Unknown sections and keys
    /// become warnings, because they are most likely typos or keys of a newer version.
    static func configuration(
        from assignments: [INIAssignment], sectionHeaders: [(name: String, line: Int)],
        source: ConfigurationSource, context: ConfigurationContext
    ) throws(ConfigurationError) -> LoadedConfiguration {
        var warnings: [ConfigurationWarning] = []
        var warnedSections: Set<String> = []
        for header in sectionHeaders where !sections.contains(header.name) {
            if warnedSections.insert(header.name).inserted {
                warnings.append(ConfigurationWarning(file: context.file, line: header.line, section: header.name, key: nil))
            }
        }
        // Later assignments override earlier ones, as in systemd unit files.
        var assigned: [KeyName: INIAssignment] = [:]
        var actions: [String: ConfigurationValue] = [:]
        for assignment in assignments where sections.contains(assignment.section) {
            if assignment.section == actionsSection {
                actions[assignment.key] = ConfigurationValue(
                    text: assignment.value, section: assignment.section, key: assignment.key, line: assignment.line,
                    context: context)
                continue
            }
            let name = KeyName(section: assignment.section, name: assignment.key)
            guard knownKeys.contains(name) else {
                warnings.append(
                    ConfigurationWarning(file: context.file, line: assignment.line, section: assignment.section, key: assignment.key))
                continue
            }
            assigned[name] = assignment
        }

        var configuration = DaemonConfiguration(source: source)
        for key in all {
            let assignment = assigned[KeyName(section: key.section, name: key.name)]
            let value = ConfigurationValue(
                text: assignment?.value ?? key.defaultValue.text(in: context), section: key.section, key: key.name,
                line: assignment?.line ?? 0, context: context)
            try key.apply(&configuration, value)
        }
        // In line order, so with several bad commands the first one in the file is reported.
        for (type, value) in actions.sorted(by: { $0.value.line < $1.value.line }) {
            configuration.actions[type] = try value.commandTemplate()
        }
        configuration.applyDefaultsDerivedFromOtherKeys()
        return LoadedConfiguration(configuration: configuration, warnings: warnings)
    }

    /// The commented default `etc/qactd/qactd.conf`. To regenerate that file after
    /// changing the table, run
    /// `QACTD_WRITE_DEFAULT_CONFIGURATION=1 swift test --filter ConfigurationKeysTests`.
    static func renderDefaultConfigurationFile() -> String {
        var lines = comment(
            "qactd configuration (see qactd.conf(5)). Every key is optional; the values below are the built-in"
                + " defaults. Relative paths start at this file's folder.")
        for section in sections {
            lines += ["", "[\(section)]"]
            if section == actionsSection {
                lines += comment(actionsHelp + " Examples:")
                lines += actionsExamples.map { "#" + $0 }
                continue
            }
            for key in all where key.section == section {
                switch key.defaultValue {
                case .text(let text):
                    lines += comment(key.help)
                    lines.append("\(key.name)=\(text)")
                case .derived(let documentation, _):
                    lines += comment(
                        "Default: \(documentation) (this file expands no variables, so the default is only"
                            + " written as a comment). \(key.help)")
                    lines.append("#\(key.name)=")
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `# ` lines of at most 80 columns, so the installed file reads well in any terminal.
    private static func comment(_ text: String) -> [String] {
        var lines: [String] = []
        var line = "#"
        for word in text.split(separator: " ") {
            if line.count + 1 + word.count > 80, line != "#" {
                lines.append(line)
                line = "#"
            }
            line += " " + word
        }
        if line != "#" { lines.append(line) }
        return lines
    }
}
