import Contacts
import QuickActions

// The reply of `Status` and its parts: what the daemon serves, watches and chose, and what is
// wrong while it lasts. Shared by the daemon and `qactl`; the other messages are in files
// named after their methods.

/// A contact file that was skipped, and why.
public struct InvalidFileInfo: Codable, Sendable, Equatable {
    /// The file's path (or `eds:UID/ROW` for an Evolution row).
    public var path: String
    /// Why it was skipped, as a sentence.
    public var reason: String
    /// The skipped file at `path` and why.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// The health of the contacts folder's watcher.
public struct WatchHealthInfo: Codable, Sendable, Equatable {
    /// `watching`, `degraded` (periodic rescans instead of inotify somewhere), `reattaching`, or `starting` before the first scan.
    public var state: String
    /// Trees that could not be watched with inotify and are rescanned periodically.
    public var degradedTrees: [String]
    /// What is wrong, while something is.
    public var message: String?
    /// Files waiting for a process that has them open for writing to close them (oldest first,
    /// at most `WatchHealthInfo.listedWriterWaits`); the index keeps their previous version.
    public var waitingForWriter: [WriterWaitInfo]
    /// How many files wait for their writer in all (the list above may be cut).
    public var waitingForWriterCount: Int
    /// A scan of the contacts folder that has run for a second and is not done yet.
    public var scan: ScanProgressInfo?

    /// How many waiting files `Status` lists by name.
    public static let listedWriterWaits = 32

    /// Health with each field; nothing waits for a writer and no scan runs unless given.
    public init(
        state: String, degradedTrees: [String] = [], message: String? = nil,
        waitingForWriter: [WriterWaitInfo] = [], waitingForWriterCount: Int? = nil
    ) {
        self.state = state
        self.degradedTrees = degradedTrees
        self.message = message
        self.waitingForWriter = waitingForWriter
        self.waitingForWriterCount = waitingForWriterCount ?? waitingForWriter.count
    }
}

/// How far a long scan of the contacts folder is: the tree is listed first (files found so far),
/// then the files found are read.
public struct ScanProgressInfo: Codable, Sendable, Equatable {
    /// The two phases of a scan.
    public enum Phase: String, Sendable {
        case listing
        case reading
    }

    /// The tree scanned.
    public var tree: String
    /// `listing` or `reading` (a `Phase`).
    public var phase: String
    /// The files found so far.
    public var filesFound: Int
    /// The files read so far.
    public var filesRead: Int
    /// Known once the listing is done.
    public var filesTotal: Int?

    /// Progress with each field; `filesTotal` is set once the listing is done.
    public init(tree: String, phase: Phase, filesFound: Int, filesRead: Int) {
        self.tree = tree
        self.phase = phase.rawValue
        self.filesFound = filesFound
        self.filesRead = filesRead
        filesTotal = phase == .reading ? filesFound : nil
    }

    /// `41,200 of 100,000 files read`, or `listing '/path': 12,345 files found so far`.
    public var summary: String {
        if let filesTotal { return "\(Self.grouped(filesRead)) of \(Self.grouped(filesTotal)) files read in '\(tree)'" }
        return "listing '\(tree)': \(Self.grouped(filesFound)) files found so far"
    }

    /// Digits in groups of three, as people read large counts.
    static func grouped(_ number: Int) -> String {
        let digits = Array(String(number.magnitude))
        var text = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return number < 0 ? "-" + text : text
    }
}

/// A contact file that changed but is still open for writing somewhere, so it is not read yet.
public struct WriterWaitInfo: Codable, Sendable, Equatable {
    /// The file's path.
    public var path: String
    /// When a writer was first found, ISO 8601 in UTC.
    public var since: String
    /// The file at `path`, waited for since `since` (ISO 8601, UTC).
    public init(path: String, since: String) {
        self.path = path
        self.since = since
    }
}

/// What the configuration's defaults chose and why: which app gets the quick actions (with
/// `[Launcher] DesktopFile=auto`, the default mail app of `mimeapps.list`), what a chosen
/// favorite runs, when the set is recomputed and which address books are read.
public struct ChoicesInfo: Codable, Sendable, Equatable {
    /// How the app was chosen with `DesktopFile=auto`.
    public enum ChosenBy: String, Sendable, CaseIterable {
        /// `[Default Applications]` of `mimeappsList`.
        case defaultApplication = "default-application"
        /// `[Added Associations]` of `mimeappsList`.
        case addedAssociation = "added-association"
        /// No list names one; the entry's `MimeType=` lists `x-scheme-handler/mailto`.
        case mimeType = "mime-type"
    }

    /// Where the favorites' command comes from.
    public enum FavoriteActionFrom: String, Sendable, CaseIterable {
        /// `[Actions]` of the configuration.
        case configuration
        /// The app's own `Exec` with a `mailto:` URI.
        case appExec = "app-exec"
        /// None: a chosen favorite goes to the app over the socket.
        case none
    }

    /// `[Launcher] DesktopFile=` as written: "auto", "none", or the ID or path.
    public var desktopFile: String
    /// The desktop-file ID of the app served; nil when none.
    public var app: String?
    /// The app's own desktop entry.
    public var appEntry: String?
    /// A `ChosenBy` spelling, with `DesktopFile=auto`.
    public var chosenBy: String?
    /// The `mimeapps.list` the app was chosen from.
    public var mimeappsList: String?
    /// Why no app was found, or why it gives a favorite no command.
    public var problem: String?
    /// The command a chosen favorite runs, as `[Actions]` would write it; nil: none.
    public var favoriteAction: String?
    /// A `FavoriteActionFrom` spelling.
    public var favoriteActionFrom: String
    /// `[Shortcuts] Recompute=`: auto, resign-active or change.
    public var recompute: String
    /// Whether the set follows the contacts now (change; auto until an app speaks the socket).
    public var followingContacts: Bool
    /// `[Contacts] Evolution=` as written: none, all, or address-book UIDs.
    public var evolution: String

    /// The choices with each field.
    public init(
        desktopFile: String, app: String? = nil, appEntry: String? = nil, chosenBy: String? = nil, mimeappsList: String? = nil,
        problem: String? = nil, favoriteAction: String? = nil, favoriteActionFrom: String, recompute: String,
        followingContacts: Bool, evolution: String
    ) {
        self.desktopFile = desktopFile
        self.app = app
        self.appEntry = appEntry
        self.chosenBy = chosenBy
        self.mimeappsList = mimeappsList
        self.problem = problem
        self.favoriteAction = favoriteAction
        self.favoriteActionFrom = favoriteActionFrom
        self.recompute = recompute
        self.followingContacts = followingContacts
        self.evolution = evolution
    }
}

/// Which way the daemon starts commands (`[Actions]` commands and the `LaunchCommand`), and how
/// many `[Actions]` commands run now against `[Commands] MaxRunning=`.
public struct CommandsInfo: Codable, Sendable, Equatable {
    /// How commands are started.
    public enum Start: String, Sendable {
        /// Each in a transient unit of the user manager (`manager` is where it was reached).
        case unit
        /// As the daemon's own children (no user manager answered: `message` says why).
        case direct
    }

    /// A `Start` spelling: `unit` or `direct`.
    public var start: String
    /// With `unit`: the user manager reached.
    public var manager: String?
    /// With `direct`: why no user manager answered.
    public var message: String?
    /// How many `[Actions]` commands run now.
    public var running: Int
    /// `[Commands] MaxRunning=`: how many may run at once.
    public var limit: Int

    /// Commands with each field.
    public init(start: String, manager: String? = nil, message: String? = nil, running: Int, limit: Int) {
        self.start = start
        self.manager = manager
        self.message = message
        self.running = running
        self.limit = limit
    }
}

/// Desktop notifications of failures a person should see (`[Feedback] Notifications=`).
public struct NotificationsInfo: Codable, Sendable, Equatable {
    /// The notifications' states.
    public enum State: String, Sendable {
        /// `Notifications=off`.
        case off
        /// Nothing failed yet.
        case idle
        /// The last notification was shown.
        case on
        /// The last one could not be shown (no session bus, no server): `message` says why.
        case unavailable
    }

    /// A `State` spelling.
    public var state: String
    /// With `unavailable`: why the last notification could not be shown.
    public var message: String?
    /// Notifications the server accepted since the daemon started.
    public var shown: Int

    /// Notifications in `state`, `shown` of them shown.
    public init(state: String, message: String? = nil, shown: Int = 0) {
        self.state = state
        self.message = message
        self.shown = shown
    }
}

/// qactd's GNOME Shell extension as the shell on the session bus reports it
/// (`org.gnome.Shell.Extensions.GetExtensionInfo`): whether the menus of the dash and the app
/// grid show the live quicklist, and the one command that turns it on when they do not.
public struct ShellExtensionInfo: Codable, Sendable, Equatable {
    /// The extension's states, as `qactl status` spells them.
    public enum State: String, Sendable, CaseIterable {
        /// The shell does not know the extension: not installed where it looks, or installed
        /// after the shell started (it looks again at the next login).
        case notInstalled = "not-installed"
        /// Installed, not enabled.
        case disabled
        /// Enabled and running.
        case active
        /// The shell could not load or run it: `message` is the shell's error.
        case error
        /// Its `metadata.json` does not list this shell's version.
        case outOfDate = "out-of-date"
        /// Any other state the shell reports (downloading, initialized, being turned on or off).
        case other

        /// The state for GNOME Shell's `ExtensionState` number (js/misc/extensionUtils.js:
        /// 1 active, 2 inactive, 3 error, 4 out of date, 5 downloading, 6 initialized,
        /// 7 deactivating and 8 activating from GNOME 46, 99 uninstalled).
        public init(shellState: Int) {
            switch shellState {
            case 1: self = .active
            case 2: self = .disabled
            case 3: self = .error
            case 4: self = .outOfDate
            case 99: self = .notInstalled
            default: self = .other
            }
        }
    }

    /// The command that enables the extension (`gnome-extensions enable UUID`).
    public static func enableCommand(uuid: String) -> String { "gnome-extensions enable \(uuid)" }

    /// The extension's UUID.
    public var uuid: String
    /// One of `State`'s raw values.
    public var state: String
    /// The shell's own number for it (nil when the shell does not know the extension).
    public var shellState: Int?
    /// The shell's error (state `error`), or why it is out of date.
    public var message: String?
    /// The one command that turns it on, when it is installed and not active.
    public var enable: String?

    /// The extension's state with each field.
    public init(uuid: String, state: String, shellState: Int? = nil, message: String? = nil, enable: String? = nil) {
        self.uuid = uuid
        self.state = state
        self.shellState = shellState
        self.message = message
        self.enable = enable
    }
}

/// The live quicklist on the session bus (`DynamicItems=quicklist`): whether docks can read it,
/// and where.
public struct QuicklistInfo: Codable, Sendable, Equatable {
    /// The quicklist's states.
    public enum State: String, Sendable {
        /// Not served; `message` says why (the setting, or no session bus).
        case off
        /// Wanted, but the session bus cannot be reached now; retried with backoff.
        case waiting
        /// Served and announced.
        case on
    }

    /// `off`, `waiting` or `on`.
    public var state: String
    /// With `off`: why it is not served.
    public var message: String?
    /// The session bus's address the quicklist is served on.
    public var busAddress: String?
    /// The daemon's unique name on the bus, the service docks read the menu from.
    public var busName: String?
    /// The object path of the `com.canonical.dbusmenu` menu.
    public var objectPath: String?
    /// `application://<desktop-file ID>`, as `LauncherEntry.Update` names the app.
    public var applicationURI: String?
    /// Items in the menu (the displayed dynamic items).
    public var items: Int
    /// Who shows the menu: each reader's bus name with the program that owns it
    /// (`com.canonical.Unity (plank)`); absent while nobody does. With `DynamicItems=auto` the
    /// favorites are in the desktop entry exactly while this is absent.
    public var readers: [String]?

    /// The quicklist's state with each field.
    public init(
        state: String, message: String?, busAddress: String?, busName: String?, objectPath: String?,
        applicationURI: String?, items: Int, readers: [String] = []
    ) {
        self.state = state
        self.message = message
        self.busAddress = busAddress
        self.busName = busName
        self.objectPath = objectPath
        self.applicationURI = applicationURI
        self.items = items
        self.readers = readers.isEmpty ? nil : readers
    }
}

/// The per-user desktop entry qactd keeps with the quick actions (`[Launcher] DesktopFile=`).
public struct DesktopEntryExportInfo: Codable, Sendable, Equatable {
    /// The exported file, in qactd's exports folder (`$XDG_DATA_HOME/qactd/exports/share/applications`).
    public var path: String
    /// The app's own entry it was made from, once found.
    public var source: String?
    /// When it was last written (or found up to date), ISO 8601 in UTC.
    public var written: String?
    /// Why the file is not up to date, while that lasts.
    public var problem: String?
    /// Why launchers may not see the file although it is up to date (the exports folder is not on
    /// the session's `XDG_DATA_DIRS`), while that lasts.
    public var notice: String?

    /// The exported entry's state with each field.
    public init(path: String, source: String? = nil, written: String? = nil, problem: String? = nil, notice: String? = nil) {
        self.path = path
        self.source = source
        self.written = written
        self.problem = problem
        self.notice = notice
    }
}

/// The Evolution Data Server address books read for contacts (`[Contacts] Evolution=`).
public struct EvolutionSourcesInfo: Codable, Sendable, Equatable {
    /// `all`, or the address-book UIDs configured.
    public var selection: String
    /// The folder the address books are looked for in (`$XDG_DATA_HOME/evolution/addressbook`).
    public var folder: String
    /// Why no address book is read at all (the folder is missing, none was found), while that lasts.
    public var problem: String?
    /// Each address book found, read or skipped.
    public var books: [AddressBookInfo]
    /// The folder of the books EDS keeps for online accounts and remote servers
    /// (`$XDG_CACHE_HOME/evolution/addressbook`).
    public var cacheFolder: String?

    /// The Evolution sources with each field.
    public init(selection: String, folder: String, problem: String?, books: [AddressBookInfo], cacheFolder: String? = nil) {
        self.selection = selection
        self.folder = folder
        self.problem = problem
        self.books = books
        self.cacheFolder = cacheFolder
    }
}

/// The address books khard's configuration names (`$XDG_CONFIG_HOME/khard/khard.conf`),
/// followed besides the contacts folder (`[Contacts] Khard=auto`).
public struct KhardSourcesInfo: Codable, Sendable, Equatable {
    /// khard's configuration file, followed as it is edited, created or removed.
    public var configFile: String
    /// Why the file cannot be read (naming its line), while that lasts; the books it named
    /// before keep being followed.
    public var problem: String?
    /// Each book the file names.
    public var books: [KhardBookInfo]

    /// khard's books with each field.
    public init(configFile: String, problem: String?, books: [KhardBookInfo]) {
        self.configFile = configFile
        self.problem = problem
        self.books = books
    }
}

/// One of khard's address books: its name in khard.conf, its folder (expanded as khard
/// expands it), how it is watched, and what is wrong with it while that lasts.
public struct KhardBookInfo: Codable, Sendable, Equatable {
    /// The book's name in khard's configuration.
    public var name: String
    /// The book's folder of vCards.
    public var folder: String
    /// `watching`, `degraded`, `reattaching` (the folder is missing) or `skipped`.
    public var state: String
    /// What is wrong with the book, while that lasts.
    public var problem: String?

    /// A book with each field.
    public init(name: String, folder: String, state: String, problem: String?) {
        self.name = name
        self.folder = folder
        self.state = state
        self.problem = problem
    }
}

/// One address book: its source UID, its database, what it contributes, and what is wrong
/// with it while that lasts (the other sources keep serving meanwhile).
public struct AddressBookInfo: Codable, Sendable, Equatable {
    /// The book's UID in Evolution Data Server's registry.
    public var uid: String
    /// The book's SQLite database file.
    public var database: String
    /// How many contacts the book contributes.
    public var contacts: Int
    /// How many of them are favorites.
    public var favorites: Int
    /// Rows whose vCard could not be parsed (listed in `invalidFiles` as `eds:UID/ROW`).
    public var invalidCards: Int
    /// What is wrong with the book (locked, unreadable), while that lasts.
    public var problem: String?
    /// True just after start-up while the book's contacts other than the favorites (and the
    /// contacts pinned) are still being indexed: the set is complete, `contacts` is not yet.
    public var indexing: Bool?

    // What the book is and whether it is read, from EDS's registry of sources.
    /// `local`, or the backend of an online account's or a server's book (`carddav`,
    /// `google`, `webdav`, …).
    public var kind: String?
    /// The online account the book belongs to (its display name), if any.
    public var account: String?
    /// Why the book is not read (its source or its account is disabled), while that lasts.
    public var skipped: String?
    /// The book's own display name (an account's book is often just "Contacts"); nil for the
    /// built-in book, which has no source file.
    public var name: String?

    /// A book with each field.
    public init(uid: String, database: String, contacts: Int, favorites: Int, invalidCards: Int, problem: String?, indexing: Bool? = nil) {
        self.uid = uid
        self.database = database
        self.contacts = contacts
        self.favorites = favorites
        self.invalidCards = invalidCards
        self.problem = problem
        self.indexing = indexing
    }
}

/// The reply of `Status`: the daemon's configuration, counters and health.
public struct StatusReply: Codable, Sendable, Equatable {
    /// qactd's version (`QactdVersion.string`).
    public var version: String
    /// The configuration file read; nil when none was found (the defaults apply).
    public var configFile: String?
    /// The contacts folder watched.
    public var contactsDirectory: String
    /// The static-items property list.
    public var staticItemsFile: String
    /// The state file.
    public var stateFile: String
    /// The Unix socket the daemon serves.
    public var socket: String
    /// How many distinct contacts the index holds.
    public var contacts: Int
    /// How many of them are favorites.
    public var favorites: Int
    /// The contact files skipped, and why.
    public var invalidFiles: [InvalidFileInfo]
    /// Contacts skipped because an earlier file has the same identifier.
    public var duplicates: Int
    /// The generation of the quick-action set, raised at each change.
    public var generation: UInt64
    /// Whether the app has sent its first lifecycle message.
    public var launched: Bool
    /// The app version the dynamic items are made for.
    public var appVersion: String
    /// Whether the app's `Connect` stream is open.
    public var appConnected: Bool
    /// How many static items there are.
    public var staticItems: Int
    /// How many dynamic items the set holds.
    public var dynamicItems: Int
    /// The contacts folder watcher's health.
    public var watch: WatchHealthInfo
    /// How many times a watched contacts folder was scanned again whole.
    public var rescans: Int
    /// How many inotify events the contacts watchers handled.
    public var eventsHandled: Int
    /// How many contact files were parsed.
    public var filesParsed: Int
    /// Trigger counts per item type (a favorite's as `type/contactIdentifier`).
    public var usage: [String: Int]
    /// Why the last state write failed, while it keeps failing (it is retried on a timer
    /// with a growing delay, and at the next change).
    public var stateError: String?
    /// Whether the state file holds the current state; false while writes fail, and briefly
    /// after each change, until the daemon's writer thread has saved it.
    public var persisted: Bool
    /// While `persisted` is false: the generation the state file still holds (nil when there is none).
    public var savedGeneration: UInt64?
    /// The item a trigger left for the app's next `Connect` (no app was connected).
    public var pendingLaunchItem: ShortcutItem?
    /// Open `Watch` streams.
    public var watchers: Int
    /// nil when `DesktopFile=` is empty.
    public var desktopEntry: DesktopEntryExportInfo?
    /// The live quicklist on the session bus.
    public var quicklist: QuicklistInfo?
    /// Desktop notifications of failures.
    public var notifications: NotificationsInfo?
    /// nil when `[Contacts] Evolution=none` (and from daemons older than the field).
    public var evolution: EvolutionSourcesInfo?
    /// The app this instance serves (`qactd --app NAME`); nil for the plain daemon.
    public var app: String?
    /// Which way commands start and how many run (nil from daemons older than the field).
    public var commands: CommandsInfo?

    // What the defaults chose, and why.
    /// Which app, which command for a favorite, which recompute mode and books; nil from
    /// daemons older than the field.
    public var choices: ChoicesInfo?
    /// nil when `[Contacts] Khard=none` (and from daemons older than the field).
    public var khard: KhardSourcesInfo?
    /// qactd's GNOME Shell extension as the shell reports it; nil outside GNOME Shell (no
    /// `org.gnome.Shell` on the session bus) and from daemons older than the field.
    public var shellExtension: ShellExtensionInfo?

    /// A reply with each field; the optional parts are nil unless given.
    public init(
        version: String, configFile: String?, contactsDirectory: String, staticItemsFile: String,
        stateFile: String, socket: String, contacts: Int, favorites: Int, invalidFiles: [InvalidFileInfo],
        duplicates: Int, generation: UInt64, launched: Bool, appVersion: String, appConnected: Bool,
        staticItems: Int, dynamicItems: Int, watch: WatchHealthInfo, rescans: Int, eventsHandled: Int,
        filesParsed: Int, usage: [String: Int], stateError: String?, persisted: Bool? = nil, savedGeneration: UInt64? = nil,
        pendingLaunchItem: ShortcutItem? = nil, watchers: Int = 0, desktopEntry: DesktopEntryExportInfo? = nil,
        quicklist: QuicklistInfo? = nil, notifications: NotificationsInfo? = nil, evolution: EvolutionSourcesInfo? = nil,
        app: String? = nil, commands: CommandsInfo? = nil, choices: ChoicesInfo? = nil, khard: KhardSourcesInfo? = nil
    ) {
        self.khard = khard
        self.choices = choices
        self.version = version
        self.configFile = configFile
        self.contactsDirectory = contactsDirectory
        self.staticItemsFile = staticItemsFile
        self.stateFile = stateFile
        self.socket = socket
        self.contacts = contacts
        self.favorites = favorites
        self.invalidFiles = invalidFiles
        self.duplicates = duplicates
        self.generation = generation
        self.launched = launched
        self.appVersion = appVersion
        self.appConnected = appConnected
        self.staticItems = staticItems
        self.dynamicItems = dynamicItems
        self.watch = watch
        self.rescans = rescans
        self.eventsHandled = eventsHandled
        self.filesParsed = filesParsed
        self.usage = usage
        self.stateError = stateError
        // Without a word from the daemon: the file holds the state unless writing it failed.
        self.persisted = persisted ?? (stateError == nil)
        self.savedGeneration = savedGeneration
        self.pendingLaunchItem = pendingLaunchItem
        self.watchers = watchers
        self.desktopEntry = desktopEntry
        self.quicklist = quicklist
        self.notifications = notifications
        self.evolution = evolution
        self.app = app
        self.commands = commands
    }
}
