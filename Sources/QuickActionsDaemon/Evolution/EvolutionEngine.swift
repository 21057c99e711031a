import Contacts
import Logging
import QuickActionsProtocol
import SystemCalls

import Glibc

/// What the Evolution watcher hands the core: index changes and every book's state.
struct EvolutionUpdate: Sendable {
    var changes: [ContactIndexChange]
    var info: EvolutionSourcesInfo?
}

/// The Evolution watcher's mutable part, touched only under `EvolutionWatcher`'s lock: by
/// `attach` before the thread starts, then by the thread alone. Watches the data home's
/// `evolution/addressbook` chain (books appearing and disappearing) and each book's folder
/// (the database and its journal), and reads a book when its folder says it was written.
final class EvolutionEngine: WatchedSource, FolderWatching {
    struct Book {
        let uid: String
        /// Where EDS keeps it, and so its schema.
        var store: EvolutionBookStore = .local
        /// Why it is not read (its source or account disabled), while that lasts.
        var skipped: String?
        var watch: Int32?
        var contents = EvolutionBookContents()
        var fault: EvolutionBookFault?
        /// The fault last logged, so a fault is logged once, not per retry.
        var loggedFault: EvolutionBookFault?
        var dirty = true
        /// With `Evolution=all`, a folder without a database yet is watched but not shown.
        var shown = true
        /// After the first read at start-up: the rows not parsed yet, until `finishFirstReads`.
        var deferred: DeferredRows?
    }

    /// A book's first read at start-up, of which only the rows that can matter to the set were
    /// parsed: the rest wait for `finishFirstReads`, once the daemon serves.
    struct DeferredRows {
        /// The identifiers of the contacts parsed, and those of them a row of another name gave
        /// (a card whose `UID` is not its row's, a second card in a row).
        var identifiers: Set<String> = []
        var foreignIdentifiers: Set<String> = []
    }

    private(set) var settings: EvolutionSettings
    private var options: ContactParsingOptions
    let location: EvolutionLocation
    let logger: Logger
    private(set) var inotify: Int32 = -1
    /// The folders watched to see books and sources come and go (`EvolutionFolderWatches`), by
    /// watch descriptor (a handful: a folder's descriptor is looked for among them).
    var folderWatches = EvolutionFolderWatches()
    var watchedFolders: [Int32: String] = [:]
    /// EDS's registry of sources as last read.
    var registry = EvolutionSourceRegistry()
    /// By UID; a handful, so an event's book is looked for by its watch among them.
    var books: [String: Book] = [:]
    var needsRefresh = true
    /// Once the daemon serves: a book whose first read was deferred is read whole when dirty
    /// (until then it waits, however often it is written).
    private var restReleased = false
    var changes: [ContactIndexChange] = []
    private var deliveredInfo: EvolutionSourcesInfo?
    var loggedProblem: String?
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    /// While a book's fault may end with nothing the watches see (a lock): the next retry.
    private(set) var retryAt: ContinuousClock.Instant?
    private var retryDelay: Duration = .zero
    static let firstRetry: Duration = .seconds(1)
    static let longestRetry: Duration = .seconds(30)

    init(settings: EvolutionSettings, location: EvolutionLocation, logger: Logger) {
        self.settings = settings
        self.options = EvolutionCards.parsingOptions(favoriteCategories: settings.favoriteCategories)
        self.location = location
        self.logger = logger
    }

    var isEnabled: Bool { settings.selection != .none }

    // MARK: Start, reload, stop

    /// Start-up's read, favorites first: each book's rows are read whole, but only those whose
    /// vCard may give a favorite (`VCardTriage`) are parsed, with any plain row that names a
    /// contact in `wanted` (the pinned ones) or one a parsed row of another book names (the
    /// same contact in two books: which one the index keeps is decided now, not after the
    /// favorites are served). The other rows, which cannot change the set, are parsed and
    /// indexed by `finishFirstReads` once the daemon serves.
    func start(favoritesFirst wanted: Set<String>) {
        guard isEnabled else { return }
        openInotify()
        refresh()
        readDirtyBooks(favoritesFirst: true)
        parseRowsOfContactsNamedElsewhere(wanted)
    }

    /// Parses and indexes the rows start-up left: `Status` then counts every contact. The book
    /// is read whole again, so whatever was written since start-up is seen too. Returns whether
    /// there were any.
    func finishFirstReads() -> Bool {
        restReleased = true
        let deferred = books.keys.filter { books[$0]?.deferred != nil }
        for uid in deferred { books[uid]?.dirty = true }
        readDirtyBooks()
        return !deferred.isEmpty
    }

    /// Stopping with rows left unindexed: they are dropped, so `Status` no longer says indexing.
    func abandonFirstReads() -> Bool {
        let deferred = books.keys.filter { books[$0]?.deferred != nil }
        for uid in deferred { books[uid]?.deferred = nil }
        return !deferred.isEmpty
    }

    /// The plain rows of each deferred book that name a contact wanted or parsed in another
    /// book, or named by a row of another name in the same book: parsed now (see `start`).
    private func parseRowsOfContactsNamedElsewhere(_ wanted: Set<String>) {
        let deferredBooks = books.keys.sorted().filter { books[$0]?.deferred != nil }
        let parsedByBook = deferredBooks.map { books[$0]?.deferred?.identifiers ?? [] }
        for (position, uid) in deferredBooks.enumerated() {
            guard var book = books.removeValue(forKey: uid), let deferred = book.deferred else { continue }
            var named = wanted.union(deferred.foreignIdentifiers)
            for (other, identifiers) in parsedByBook.enumerated() where other != position { named.formUnion(identifiers) }
            // A plain row's contact is identified as its row: the rows of those names not parsed yet.
            let rows = named.filter { book.contents.rows[$0] == nil }.sorted()
            // A fault here leaves the rows to `finishFirstReads`, which reads the book whole.
            if !rows.isEmpty, let found = try? EvolutionBookReader.readRows(
                database: location.database(forSource: uid, in: book.store), schema: .of(book.store), uids: rows,
                maxCardBytes: settings.maxCardBytes) {
                index(found.parsed(options: options), of: &book)
            }
            books[uid] = book
        }
    }

    /// Records parsed rows in the book and hands them to the core; notes, while the book's first
    /// read is deferred, which identifiers they gave.
    private func index(_ rows: [EvolutionBookPass.ReadRow], of book: inout Book) {
        let prefix = EvolutionCards.treePrefix(book: book.uid)
        changes.reserveCapacity(changes.count + rows.count)
        for row in rows {
            book.contents.record(uid: row.uid, version: row.version, result: row.result)
            changes.append(.file(path: EvolutionCards.path(treePrefix: prefix, uid: row.uid), result: row.result))
            if book.deferred != nil, case .success(let contacts) = row.result {
                for contact in contacts {
                    book.deferred?.identifiers.insert(contact.identifier)
                    if contact.identifier != row.uid { book.deferred?.foreignIdentifiers.insert(contact.identifier) }
                }
            }
        }
    }

    /// New settings: every book is read again from scratch (the favorite rules may differ);
    /// books no longer chosen are dropped with their contacts.
    func reload(_ settings: EvolutionSettings) {
        self.settings = settings
        options = EvolutionCards.parsingOptions(favoriteCategories: settings.favoriteCategories)
        for uid in books.keys.sorted() { drop(uid) }
        guard isEnabled else {
            closeInotify()
            retryAt = nil
            return
        }
        openInotify()
        needsRefresh = true
        refresh()
        readDirtyBooks()
    }

    func closeInotify() {
        if inotify >= 0 { close(inotify) }
        inotify = -1
        watchedFolders = [:]
        folderWatches = EvolutionFolderWatches()
        for uid in books.keys { books[uid]?.watch = nil }
    }

    private func openInotify() {
        guard inotify < 0 else { return }
        inotify = (try? Inotify.open(logger: logger, failure: "Cannot watch the Evolution address books, read at start and on reload only:").get()) ?? -1
    }

    // MARK: The thread's work

    /// `poll`'s timeout: until the next retry of a locked book or the end of a folder's quiet
    /// period, else none.
    func pollTimeoutMilliseconds() -> Int32 {
        WakeUpSocket.milliseconds(until: [retryAt, folderWatches.rearmAt].compactMap { $0 }.min())
    }

    /// Reads the queued events, then every book they (or a due retry) marked.
    func handleEvents(ready: Bool) {
        if ready { readQueuedEvents() }
        if folderWatchesRearmDue { rearmFolderWatches() }
        if let retryAt, retryAt <= .now {
            self.retryAt = nil
            for (uid, book) in books where book.fault?.retriesOnTimer == true {
                logger.debug("Retrying Evolution address book '\(uid)' after \(retryDelay).")
                books[uid]?.dirty = true
            }
        }
        if needsRefresh { refresh() }
        readDirtyBooks()
    }

    /// The changes since the last call and, if it changed, what `Status` shows; nil when nothing did.
    func takeUpdate(force: Bool) -> EvolutionUpdate? {
        let info = currentInfo()
        logProblemChange(info?.problem)
        guard force || !changes.isEmpty || info != deliveredInfo else { return nil }
        defer { changes = [] }
        deliveredInfo = info
        return EvolutionUpdate(changes: changes, info: info)
    }

    /// The changes in parts of at most `updateLimit`, the last one with what `Status` shows (the
    /// ones before it with what it showed): the core applies each part whole and answers calls
    /// between them, so indexing a large book's other contacts holds no call up for long.
    func takeUpdates(afterReload: Bool) -> [EvolutionUpdate] {
        let limit = updateLimit
        guard changes.count > limit, let shown = deliveredInfo else { return takeUpdate(force: afterReload).map { [$0] } ?? [] }
        let all = changes
        var parts = stride(from: 0, to: all.count - limit, by: limit).map {
            EvolutionUpdate(changes: Array(all[$0..<($0 + limit)]), info: shown)
        }
        changes = Array(all[(parts.count * limit)...])
        if let last = takeUpdate(force: true) { parts.append(last) }
        return parts
    }

    /// Tests make it small.
    var updateLimit = 16_384

    private func readQueuedEvents() {
        for event in Inotify.readQueued(from: inotify, buffer: &buffer, source: "the address books", logger: logger) { handle(event) }
    }

    /// The quiet period ended: the muted watches widened again, and the folders looked at, since
    /// what was awaited may have appeared meanwhile.
    func rearmFolderWatches() {
        if widenMutedFolderWatches() { needsRefresh = true }
    }

    private func handle(_ event: InotifyEvent) {
        if event.mask.contains(.queueOverflow) {
            needsRefresh = true
            for uid in books.keys { books[uid]?.dirty = true }
            return
        }
        if let verdict = folderVerdict(event) {
            if verdict == .refresh { needsRefresh = true }
            return
        }
        guard let uid = books.first(where: { $0.value.watch == event.watchDescriptor })?.key else { return }
        if event.mask.contains(.ignored) || event.mask.contains(.deleteSelf) || event.mask.contains(.moveSelf) {
            // The folder went away (its watch with it): look again at what is there.
            books[uid]?.watch = nil
            books[uid]?.dirty = true
            needsRefresh = true
            return
        }
        if let store = books[uid]?.store, Self.endsAWrite(event, in: store) { books[uid]?.dirty = true }
    }

    /// An event after which the book may read differently: EDS closed the database it wrote
    /// (`IN_CLOSE_WRITE`), a transaction committed (its journal deleted), or the database itself
    /// appeared, was replaced or went. Not the journal's creation: that starts a transaction,
    /// and reading then would only wait for its lock.
    static func endsAWrite(_ event: InotifyEvent, in store: EvolutionBookStore) -> Bool {
        switch event.name {
        case store.databaseName?:
            return !event.mask.isDisjoint(with: [.closeWrite, .create, .movedTo, .delete, .movedFrom])
        case store.journalName?:
            return !event.mask.isDisjoint(with: [.delete, .movedFrom])
        default:
            return false
        }
    }

    // MARK: Books

    func drop(_ uid: String) {
        guard var book = books.removeValue(forKey: uid) else { return }
        if book.loggedFault != nil || book.contents.contacts > 0 {
            logger.notice("Evolution address book '\(uid)' is gone; its contacts are dropped.", metadata: ["QACTD_PATH": "\(location.database(forSource: uid, in: book.store))"])
        }
        unwatch(&book)
        empty(&book)
    }

    func unwatch(_ book: inout Book) {
        guard let watch = book.watch else { return }
        if inotify >= 0 { inotify_rm_watch(inotify, watch) }
        book.watch = nil
    }

    /// Its contacts leave the index.
    func empty(_ book: inout Book) {
        guard !book.contents.isEmpty else { return }
        changes.append(.removedTree(directory: EvolutionCards.treePrefix(book: book.uid)))
        book.contents = EvolutionBookContents()
    }

    /// `favoritesFirst`: start-up's first read of each book, of the rows that can matter to the
    /// set (see `start(favoritesFirst:)`). A book whose first read was deferred is read whole.
    private func readDirtyBooks(favoritesFirst: Bool = false) {
        for uid in books.keys.sorted() where books[uid]?.dirty == true && books[uid]?.skipped == nil
            && (books[uid]?.deferred == nil || restReleased) {
            // Taken out while it changes, so its contents are not copied (they are the book's only reference).
            guard var book = books.removeValue(forKey: uid) else { continue }
            book.dirty = false
            read(&book, favoritesFirst: favoritesFirst)
            books[uid] = book
        }
        let retrying = books.values.contains { $0.fault?.retriesOnTimer == true }
        if !retrying {
            retryAt = nil
            retryDelay = .zero
        } else if retryAt == nil {
            retryDelay = retryDelay == .zero ? Self.firstRetry : min(retryDelay * 2, Self.longestRetry)
            retryAt = .now + retryDelay
        }
    }

    private func read(_ book: inout Book, favoritesFirst: Bool) {
        let database = location.database(forSource: book.uid, in: book.store)
        let schema = EvolutionBookSchema.of(book.store)
        do throws(EvolutionBookFault) {
            if !isDirectory(location.bookFolder(forSource: book.uid, in: book.store)) || !registry.isRegistered(book.uid) {
                throw EvolutionBookFault.noSuchBook
            }
            if access(database, F_OK) != 0 { throw EvolutionBookFault.noDatabase }
            book.shown = true
            if favoritesFirst, book.contents.isEmpty {
                let first = try EvolutionBookReader.readFavoritesFirst(database: database, schema: schema, maxCardBytes: settings.maxCardBytes)
                book.deferred = DeferredRows()
                // The revision stays unknown: `finishFirstReads` reads the book whole.
                index(first.rows.parsed(options: options), of: &book)
                recovered(&book, database: database)
                return
            }
            // After start-up's favorites: the book whole, indexing every row not indexed yet as it is now.
            guard let pass = try EvolutionBookReader.read(
                database: database, schema: schema, known: book.contents, whole: book.deferred != nil,
                maxCardBytes: settings.maxCardBytes, options: options)
            else {
                recovered(&book, database: database)
                return
            }
            let prefix = EvolutionCards.treePrefix(book: book.uid)
            // A book's first read, or the rest of it after start-up's favorites: its tables made
            // at their size once.
            if book.contents.isEmpty || book.deferred != nil { book.contents.reserveCapacity(book.contents.count + pass.read.count) }
            book.deferred = nil
            for uid in pass.removed {
                book.contents.remove(uid: uid)
                changes.append(.removed(path: EvolutionCards.path(treePrefix: prefix, uid: uid)))
            }
            index(pass.read, of: &book)
            book.contents.revision = pass.revision
            recovered(&book, database: database)
        } catch {
            book.fault = error
            switch error {
            case .noSuchBook, .noDatabase:
                // Nothing left to serve from it.
                empty(&book)
            case .locked, .unknownSchema, .corrupt, .unreadable:
                // The contacts last read keep being served while the book cannot be read.
                break
            }
            if error == .noDatabase, settings.selection == .all { book.shown = false }
            let quiet = !book.shown && error == .noDatabase
            if book.loggedFault != error, !quiet {
                logger.warning("Evolution address book '\(book.uid)' at '\(database)': \(error)",
                               metadata: ["QACTD_PATH": "\(database)"])
                book.loggedFault = error
            }
        }
    }

    private func recovered(_ book: inout Book, database: String) {
        book.fault = nil
        if book.loggedFault != nil {
            logger.notice("Evolution address book '\(book.uid)' at '\(database)' is readable again: \(book.contents.contacts) contacts.",
                          metadata: ["QACTD_PATH": "\(database)"])
            book.loggedFault = nil
        }
    }
}
