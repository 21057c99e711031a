import Logging
import QuickActionsProtocol
import SystemCalls

import Glibc

/// Which books there are: the folders watched on the way to them, EDS's registry of sources
/// (where each book is kept, its kind, whether it is enabled) and what `Status` shows of them.
extension EvolutionEngine {
    /// The folders whose entries make the books, each from its home.
    var wantedFolders: [EvolutionFolderWatches.Wanted] {
        [
            .init(home: location.dataHome, folder: location.addressBookFolder),
            .init(home: location.cacheHome, folder: location.cacheAddressBookFolder),
            .init(home: location.configHome, folder: location.sourcesFolder, nameSuffix: ".source"),
        ]
    }

    /// Looks again at the folders, the registry and the books: watches what leads to the wanted
    /// folders, finds the books chosen, watches each one's folder unless it is skipped, and drops
    /// books that went away.
    func refresh() {
        needsRefresh = false
        refreshFolderWatches()
        registry = readRegistry()
        var wanted: [String: (store: EvolutionBookStore, shown: Bool)] = [:]
        switch settings.selection {
        case .none:
            break
        case .all:
            for store in [EvolutionBookStore.local, .cache] {
                for name in subfolders(of: location.addressBookFolder(store)) where EvolutionLocation.isBookFolderName(name) {
                    let uid = store == .local ? EvolutionLocation.sourceUID(forFolder: name) : name
                    // A book is read where its backend keeps it; a folder elsewhere is a leftover.
                    guard registry.isRegistered(uid), registry.store(of: uid) == store else { continue }
                    wanted[uid] = (store, access(location.database(forSource: uid, in: store), F_OK) == 0)
                }
            }
        case .books(let uids):
            for uid in uids { wanted[uid] = (registry.store(of: uid), true) }
        }
        for uid in books.keys.sorted() where wanted[uid] == nil || books[uid]?.store != wanted[uid]?.store {
            drop(uid)
        }
        for (uid, entry) in wanted.sorted(by: { $0.key < $1.key }) {
            var book = books[uid] ?? Book(uid: uid, store: entry.store)
            let wasSkipped = book.skipped
            book.skipped = registry.skipReason(uid)
            if let reason = book.skipped {
                skip(&book, reason: reason, loggedBefore: wasSkipped == reason)
                books[uid] = book
                continue
            }
            if wasSkipped != nil {
                logger.notice("Evolution address book '\(uid)' is enabled again; reading it.")
                book.dirty = true
            }
            if book.shown != entry.shown { book.dirty = true }
            book.shown = entry.shown
            if book.watch == nil, inotify >= 0 {
                let watch = inotify_add_watch(inotify, location.bookFolder(forSource: uid, in: book.store), Self.bookMask.rawValue)
                if watch >= 0 {
                    book.watch = watch
                    book.dirty = true
                }
            }
            books[uid] = book
        }
    }

    static let bookMask: InotifyEventMask = [
        .closeWrite, .movedTo, .movedFrom, .create, .delete, .deleteSelf, .moveSelf, .onlyDirectory, .excludeUnlinked,
    ]

    /// A book whose source or account is disabled: not watched, not read, its contacts dropped;
    /// `Status` lists it with the reason.
    private func skip(_ book: inout Book, reason: String, loggedBefore: Bool) {
        unwatch(&book)
        empty(&book)
        book.deferred = nil
        book.fault = nil
        book.loggedFault = nil
        book.shown = true
        if !loggedBefore {
            logger.notice("Evolution address book '\(book.uid)' is not read: \(reason).",
                          metadata: ["QACTD_PATH": "\(location.sourceFile(forSource: book.uid))"])
        }
    }

    // MARK: The registry

    /// Every `*.source` file of the registry, parsed.
    func readRegistry() -> EvolutionSourceRegistry {
        var sources: [EvolutionSource] = []
        for name in entries(of: location.sourcesFolder) where name.hasSuffix(".source") && !name.hasPrefix(".") {
            let uid = String(name.dropLast(".source".count))
            let file = location.sourceFile(forSource: uid)
            do {
                guard let bytes = try FileIO.readFileIfPresent(file) else { continue }
                sources.append(EvolutionSource.parse(uid: uid, file: file, text: String(decoding: bytes, as: UTF8.self)))
            } catch {
                sources.append(EvolutionSource(uid: uid, file: file, problem: "\(error)"))
            }
        }
        return EvolutionSourceRegistry(sources)
    }

    // MARK: Status

    /// What `Status.evolution` shows; nil with `Evolution=none`.
    func currentInfo() -> EvolutionSourcesInfo? {
        guard isEnabled else { return nil }
        let shown = books.values.filter(\.shown).sorted { $0.uid < $1.uid }
        var problem: String?
        if !isDirectory(location.addressBookFolder) && !isDirectory(location.cacheAddressBookFolder) {
            problem = "\"\(location.addressBookFolder)\" does not exist, nor does \"\(location.cacheAddressBookFolder)\": Evolution Data Server (GNOME Contacts, Evolution, online accounts) has not kept any address book for this user; waiting for one"
        } else if shown.isEmpty {
            problem = "no address book in \"\(location.addressBookFolder)\" or \"\(location.cacheAddressBookFolder)\"; waiting for one"
        }
        return EvolutionSourcesInfo(
            selection: settings.selection.description, folder: location.addressBookFolder, problem: problem,
            books: shown.map { book in
                var info = AddressBookInfo(
                    uid: book.uid, database: location.database(forSource: book.uid, in: book.store), contacts: book.contents.contacts,
                    favorites: book.contents.favorites, invalidCards: book.contents.invalidCards,
                    problem: book.fault?.description, indexing: book.deferred != nil ? true : nil)
                info.kind = registry.kind(of: book.uid)
                info.account = registry.account(of: book.uid)
                info.name = registry.sources[book.uid]?.displayName
                info.skipped = book.skipped
                return info
            },
            cacheFolder: location.cacheAddressBookFolder)
    }

    /// Logs why no address book is read once, when that changes (not at each update).
    func logProblemChange(_ problem: String?) {
        guard problem != loggedProblem else { return }
        if let problem { logger.notice("Evolution: \(problem).", metadata: ["QACTD_PATH": "\(location.addressBookFolder)"]) }
        loggedProblem = problem
    }

    // MARK: Files

    private func subfolders(of folder: String) -> [String] {
        entries(of: folder).filter { isDirectory(folder + "/" + $0) }
    }

    /// The names in `folder` (none when it cannot be listed), sorted.
    private func entries(of folder: String) -> [String] {
        ((try? directoryEntryNames(folder)) ?? []).sorted()
    }
}
