import Contacts
import Logging
import QuickActionsProtocol
import SystemCalls

import Glibc

/// What the khard engine reads its books with, from qactd's own configuration.
struct KhardSettings: Equatable, Sendable {
    var books: KhardBooks
    /// `Directory=`: a khard book inside it (or holding it) is read once, as part of it.
    var contactsDirectory: String
    var maxFileBytes: Int
    var favoriteCategories: [String]

    init(_ configuration: DaemonConfiguration) {
        books = configuration.khard
        contactsDirectory = configuration.contactsDirectory
        maxFileBytes = configuration.maxFileBytes
        favoriteCategories = configuration.favoriteCategories
    }
}

/// What the khard watcher hands the core: index changes, the work they cost, and what `Status` shows.
struct KhardUpdate: Sendable {
    var changes: [ContactIndexChange]
    var work: ActivityCounters
    var info: KhardSourcesInfo?
}

/// The khard watcher's mutable part, touched only under `KhardWatcher`'s lock: by `attach`
/// before the thread starts, then by the thread alone. Follows khard's configuration file
/// (its folder's chain is watched as `EvolutionFolderWatches` plans, so an editor's temporary
/// file renamed over it, or the file created or removed, is seen) and keeps one `WatcherEngine`
/// per address book it names, each the contacts folder's engine for that folder: their files'
/// paths are the index paths, distinct from the contacts folder's and each other's since no
/// two followed folders overlap, and a book dropped is forgotten as the tree of its folder.
final class KhardEngine: WatchedSource, FolderWatching {
    struct Book {
        var name: String
        var folder: String
        let engine: WatcherEngine
    }

    let logger: Logger
    private(set) var settings: KhardSettings
    /// `$XDG_CONFIG_HOME/khard/khard.conf`; nil without a configuration home.
    let configFile: String?
    private let configHome: String?
    /// What `~` and `$VAR` in a book's path expand to.
    private let environment: [String: String]
    private let timing: DirectoryWatcherTiming
    private(set) var inotify: Int32 = -1
    var folderWatches = EvolutionFolderWatches()
    var watchedFolders: [Int32: String] = [:]
    private(set) var books: [Book] = []
    /// Books the file names that are not followed, and why.
    private var skipped: [KhardBookInfo] = []
    /// Why the file cannot be read, while that lasts.
    private var problem: String?
    /// The file's bytes last read (nil: missing), so a save that changes nothing changes nothing.
    private var readBytes: [UInt8]??
    private var needsReading = true
    private var changes: [ContactIndexChange] = []
    private var work = ActivityCounters()
    private var deliveredInfo: KhardSourcesInfo?
    private var loggedProblems: Set<String> = []
    private var buffer = [UInt8](repeating: 0, count: 4 * 1024)

    static let maxConfigurationBytes = 1 << 20

    init(settings: KhardSettings, environment: [String: String], logger: Logger, timing: DirectoryWatcherTiming = DirectoryWatcherTiming()) {
        self.settings = settings
        self.environment = environment
        self.logger = logger
        self.timing = timing
        configHome = XDGFolder.configHome.path(in: environment)
        configFile = configHome.map { $0 + "/khard/khard.conf" }
    }

    var isEnabled: Bool { settings.books == .auto && configFile != nil }

    var wantedFolders: [EvolutionFolderWatches.Wanted] {
        guard let configHome, isEnabled else { return [] }
        return [.init(home: configHome, folder: configHome + "/khard", nameSuffix: "khard.conf")]
    }

    var pollDescriptors: [Int32] { ([inotify] + books.map(\.engine.inotify)).filter { $0 >= 0 } }

    /// Watches khard's configuration folder, reads the file and every book it names.
    func start() {
        guard isEnabled else { return }
        if inotify < 0 {
            inotify = (try? Inotify.open(logger: logger, failure: "Cannot watch khard's configuration, read at start and on reload only:").get()) ?? -1
        }
        needsReading = true
        readConfigurationIfNeeded()
    }

    func reload(_ newSettings: KhardSettings) {
        settings = newSettings
        guard isEnabled else {
            follow([])
            closeOwnInotify()
            problem = nil
            readBytes = nil
            return
        }
        // Read again, as the contacts folder is on a reload: the books' files and the file itself.
        for book in books { book.engine.reload(scanner(book.folder)) }
        readBytes = nil
        start()
    }

    func closeInotify() {
        closeOwnInotify()
        for book in books { book.engine.closeInotify() }
    }

    private func closeOwnInotify() {
        if inotify >= 0 { close(inotify) }
        inotify = -1
        watchedFolders = [:]
        folderWatches = EvolutionFolderWatches()
    }

    // MARK: The thread's work

    func pollTimeoutMilliseconds() -> Int32 {
        let timeouts = [WakeUpSocket.milliseconds(until: folderWatches.rearmAt)] + books.map { $0.engine.pollTimeoutMilliseconds() }
        return timeouts.filter { $0 >= 0 }.min() ?? -1
    }

    func handleEvents(ready: Bool) {
        if ready {
            for event in Inotify.readQueued(from: inotify, buffer: &buffer, source: "khard's configuration", logger: logger) {
                if event.mask.contains(.queueOverflow) || folderVerdict(event) == .refresh { needsReading = true }
            }
        }
        if folderWatchesRearmDue, widenMutedFolderWatches() { needsReading = true }
        readConfigurationIfNeeded()
        // Each book's engine reads its own queue, which is empty unless its descriptor woke the thread.
        for book in books { book.engine.handleEvents(ready: ready) }
    }

    func takeUpdates(afterReload: Bool) -> [KhardUpdate] {
        takeUpdate(force: afterReload).map { [$0] } ?? []
    }

    /// The changes since the last call and, if it changed, what `Status` shows; nil when nothing did.
    func takeUpdate(force: Bool) -> KhardUpdate? {
        for book in books {
            guard let update = book.engine.takeUpdate(force: false) else { continue }
            changes += update.changes
            work.eventsHandled += update.work.eventsHandled
            work.filesParsed += update.work.filesParsed
            work.rescans += update.work.rescans
        }
        let info = currentInfo()
        logProblems(info)
        guard force || !changes.isEmpty || work != ActivityCounters() || info != deliveredInfo else { return nil }
        defer {
            changes = []
            work = ActivityCounters()
            deliveredInfo = info
        }
        return KhardUpdate(changes: changes, work: work, info: info)
    }

    /// Every book's contacts are read whole by `start`: nothing is left for later.
    func finishFirstReads() -> Bool { false }
    func abandonFirstReads() -> Bool { false }

    // MARK: The configuration file

    private func readConfigurationIfNeeded() {
        guard needsReading, isEnabled, let configFile else { return }
        needsReading = false
        refreshFolderWatches()
        let bytes: [UInt8]?
        do {
            bytes = try FileIO.readFileIfPresent(configFile, atMost: Self.maxConfigurationBytes)
        } catch {
            problem = "cannot read \(configFile): \(error); the address books it named are followed as they were"
            return
        }
        if let readBytes, readBytes == bytes { return }
        readBytes = .some(bytes)
        guard let bytes else {
            problem = nil
            follow([])
            return
        }
        do {
            let configuration = try KhardConfiguration.parse(String(decoding: bytes, as: UTF8.self), environment: environment)
            problem = nil
            follow(configuration.addressBooks)
        } catch {
            // A file half-way through an edit keeps the books it named before.
            problem = "cannot read \(configFile), \(error); the address books it named before are followed as they were"
        }
    }

    /// Follows the books named, in order: a book's folder that is `Directory=` or an earlier
    /// book's, or lies inside or around one, is skipped, so no file is indexed twice.
    private func follow(_ named: [KhardConfiguration.AddressBook]) {
        var wanted: [(name: String, folder: String)] = []
        skipped = []
        for book in named {
            guard let folder = book.folder else {
                skipped.append(KhardBookInfo(
                    name: book.name, folder: book.written, state: "skipped",
                    problem: "its path \"\(book.written)\" (\(configFile ?? "khard.conf"), line \(book.line)) is not an absolute path once expanded"))
                continue
            }
            let directory = settings.contactsDirectory
            if !directory.isEmpty, Self.overlap(folder, directory) {
                skipped.append(KhardBookInfo(
                    name: book.name, folder: folder, state: "skipped",
                    problem: Self.isInside(folder, directory)
                        ? "read as part of the contacts folder \"\(directory)\" (Directory=)"
                        : "it holds the contacts folder \"\(directory)\" (Directory=), which is read alone"))
                continue
            }
            if let other = wanted.first(where: { Self.overlap(folder, $0.folder) }) {
                skipped.append(KhardBookInfo(
                    name: book.name, folder: folder, state: "skipped",
                    problem: Self.isInside(folder, other.folder)
                        ? "read as part of address book \"\(other.name)\" (\(other.folder))"
                        : "it holds address book \"\(other.name)\" (\(other.folder)), which is read alone"))
                continue
            }
            wanted.append((book.name, folder))
        }
        for book in books where !wanted.contains(where: { $0.folder == book.folder }) {
            logger.notice("No longer following khard address book '\(book.name)' ('\(book.folder)').", metadata: ["QACTD_PATH": "\(book.folder)"])
            // Its descriptor closed takes its watches with it; what it had not handed over is moot.
            book.engine.closeInotify()
            _ = book.engine.takeUpdate(force: false)
            // A book a reload put inside `Directory=` is the contacts folder's now, which the
            // reload has just read (it is reloaded first): its files are that folder's to keep.
            let directory = settings.contactsDirectory
            if directory.isEmpty || !Self.isInside(book.folder, directory) {
                changes.append(.removedTree(directory: book.folder))
            }
        }
        books = wanted.map { want in
            if var kept = books.first(where: { $0.folder == want.folder }) {
                kept.name = want.name
                kept.engine.folderName = Self.folderName(of: want.name)
                return kept
            }
            logger.notice("Following khard address book '\(want.name)' ('\(want.folder)').", metadata: ["QACTD_PATH": "\(want.folder)"])
            let engine = WatcherEngine(
                scanner: scanner(want.folder), logger: logger, timing: timing,
                addWatch: { inotify_add_watch($0, $1, $2) }, probeWriter: OpenForWritingProbe.acquireReadLease)
            engine.folderName = Self.folderName(of: want.name)
            engine.start()
            return Book(name: want.name, folder: want.folder, engine: engine)
        }
    }

    /// How the book's engine names its folder in log lines.
    private static func folderName(of book: String) -> String { "khard address book '\(book)'" }

    private func scanner(_ folder: String) -> ContactsDirectoryScanner {
        ContactsDirectoryScanner(
            root: folder, maxFileBytes: settings.maxFileBytes,
            options: ContactParsingOptions(favoriteCategories: Set(settings.favoriteCategories), folksFavourite: true))
    }

    /// Whether one folder is the other or lies inside it.
    static func overlap(_ first: String, _ second: String) -> Bool {
        isInside(first, second) || isInside(second, first)
    }

    /// Whether `folder` is `parent` or lies inside it.
    static func isInside(_ folder: String, _ parent: String) -> Bool {
        func normal(_ path: String) -> String { path.count > 1 && path.hasSuffix("/") ? normal(String(path.dropLast())) : path }
        let (folder, parent) = (normal(folder), normal(parent))
        return folder == parent || folder.hasPrefix(parent == "/" ? parent : parent + "/")
    }

    // MARK: Status

    private func currentInfo() -> KhardSourcesInfo? {
        guard isEnabled, let configFile else { return nil }
        let followed = books.map { book in
            let health = book.engine.healthInfo
            let problem: String? = switch health.state {
            case "reattaching": "the folder \"\(book.folder)\" that \(configFile) names is missing; waiting for it to appear"
            case "watching": nil
            default: health.message
            }
            return KhardBookInfo(name: book.name, folder: book.folder, state: health.state, problem: problem)
        }
        return KhardSourcesInfo(configFile: configFile, problem: problem, books: followed + skipped)
    }

    /// Each problem (or book skipped) is logged once, when it appears.
    private func logProblems(_ info: KhardSourcesInfo?) {
        var problems: [(text: String, path: String, skipped: Bool)] = []
        if let info {
            if let problem = info.problem { problems.append((problem, info.configFile, false)) }
            for book in info.books {
                guard let problem = book.problem else { continue }
                let skipped = book.state == "skipped"
                problems.append(("Khard address book '\(book.name)'\(skipped ? " is skipped" : ""): \(problem)", book.folder, skipped))
            }
        }
        for problem in problems where !loggedProblems.contains(problem.text) {
            let level: Logger.Level = problem.skipped ? .notice : .warning
            logger.log(level: level, "\(problem.text).", metadata: ["QACTD_PATH": "\(problem.path)"])
        }
        loggedProblems = Set(problems.map(\.text))
    }
}

/// Keeps the contacts of khard's address books live: a thread of its own (`qactd-khard`)
/// sleeps in `poll` on the descriptor that watches khard's configuration and on each book's,
/// and hands the index changes, in order, to the core, as `DirectoryWatcher` does for the
/// contacts folder. With `Khard=none` it holds no descriptor and starts no thread.
typealias KhardWatcher = WatcherThread<KhardEngine>

extension WatcherThread where Engine == KhardEngine {
    convenience init(settings: KhardSettings, environment: [String: String], logger: Logger, timing: DirectoryWatcherTiming = DirectoryWatcherTiming()) {
        self.init(
            KhardEngine(settings: settings, environment: environment, logger: logger, timing: timing),
            named: "qactd-khard", for: "the khard address-book watcher")
    }

    /// Reads khard's configuration and every book it names, whole; the returned update is their contacts.
    func attach() -> KhardUpdate {
        attach { engine in
            engine.start()
            return engine.takeUpdate(force: true) ?? KhardUpdate(changes: [], work: ActivityCounters(), info: nil)
        }
    }
}
