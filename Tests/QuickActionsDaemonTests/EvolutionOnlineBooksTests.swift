import Contacts
import Foundation
import Logging
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// Online accounts' address books: databases made and changed by Evolution Data Server's own
/// `EBookCache` (`Tests/integration/eds-cache.py`, gir `EDataBook`) where EDS's factory keeps
/// them (`EBookCacheDriver.onlineBookDatabase`, asked of EDS itself), read by the
/// reader in `EBookCache`'s tables as local books are in `EBookSqlite`'s; and the engine choosing
/// books from a registry of sources in EDS's key-file format: where each is kept, its kind, its
/// account, and which are skipped because they or their account are disabled.
final class EvolutionOnlineBooksTests: XCTestCase {
    private var root: URL!
    private var driver: EBookCacheDriver!
    private var location: EvolutionLocation!
    private let options = EvolutionCards.parsingOptions(favoriteCategories: [])
    private let settings = EvolutionSettings(selection: .all, favoriteCategories: [], maxCardBytes: 100_000)

    override func setUpWithError() throws {
        if let reason = EBookCacheDriver.unavailableReason() {
            throw unavailable("\(reason): run scripts/install-deps --test")
        }
        root = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-eds-online-\(UUID().uuidString)")
        location = EvolutionLocation(
            dataHome: root.appendingPathComponent("data").path, configHome: root.appendingPathComponent("config").path,
            cacheHome: root.appendingPathComponent("cache").path)
        try FileManager.default.createDirectory(atPath: location.sourcesFolder, withIntermediateDirectories: true)
        driver = try EBookCacheDriver(outputFile: root.appendingPathComponent("eds-cache.out"))
    }

    override func tearDownWithError() throws {
        driver = nil
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// Where EDS keeps the online book `uid`, as its own factory says.
    private func database(_ book: String) throws -> String {
        try EBookCacheDriver.onlineBookDatabase(book, cacheHome: location.cacheHome)
    }

    /// A contact added or replaced through EBookCache, as EDS's backend writes one it synced.
    private func put(_ book: String, _ uid: String, _ name: String, email: String? = nil, star: Bool = false,
                     categories: [String] = [], offline: Bool = false) throws {
        try driver.put(try database(book), uid: uid, name: name, email: email, star: star,
                       categories: categories, offline: offline)
    }

    private func remove(_ book: String, _ uid: String, offline: Bool = false) throws {
        try driver.remove(try database(book), uid: uid, offline: offline)
    }

    /// A source key file as EDS's registry writes it.
    private func source(_ uid: String, _ text: String) throws {
        try text.write(toFile: location.sourceFile(forSource: uid), atomically: true, encoding: .utf8)
    }

    private func account(_ uid: String, name: String, enabled: Bool = true, contacts: Bool = true) throws {
        try source(uid, """
            [Data Source]
            DisplayName=\(name)
            Enabled=\(enabled)
            Parent=

            [Collection]
            BackendName=google
            ContactsEnabled=\(contacts)
            Identity=\(name)

            [GNOME Online Accounts]
            AccountId=account_1
            """)
    }

    private func addressBook(_ uid: String, parent: String?, backend: String = "carddav", enabled: Bool = true) throws {
        try source(uid, """
            [Data Source]
            DisplayName=Contacts
            Enabled=\(enabled)
            Parent=\(parent ?? "")

            [Address Book]
            BackendName=\(backend)

            [Offline]
            StaySynchronized=true
            """)
    }

    // MARK: The reader

    func testACacheMadeByEBookCacheIsReadWithItsFavoritesAndFollowedChangeByChange() throws {
        let database = try self.database("book")
        try put("book", "ada", "Ada Lovelace", email: "ada@example.org", star: true)
        try put("book", "plain", "Plain Person", email: "plain@example.org")
        try put("book", "grace", "Grace Hopper", categories: ["Starred in Android"])
        var contents = EvolutionBookContents()
        func pass() throws -> (read: [String: Bool], removed: [String])? {
            guard let pass = try EvolutionBookReader.read(
                database: database, schema: .cache, known: contents, maxCardBytes: 100_000, options: options) else { return nil }
            for uid in pass.removed { contents.remove(uid: uid) }
            for row in pass.read { contents.record(uid: row.uid, version: row.version, result: row.result) }
            contents.revision = pass.revision
            let favorites = pass.read.map { ($0.uid, (try? $0.result.get().contains(where: \.favorite)) ?? false) }
            return (Dictionary(uniqueKeysWithValues: favorites), pass.removed)
        }
        let first = try XCTUnwrap(pass())
        XCTAssertEqual(first.read, ["ada": true, "plain": false, "grace": true], "GNOME Contacts' star and Google's category")
        XCTAssertEqual([contents.contacts, contents.favorites], [3, 2])
        XCTAssertNil(try pass(), "an unchanged revision reads nothing else")

        // Starred, as the account's server sent it back: only that row is read.
        try put("book", "plain", "Plain Person", email: "plain@example.org", star: true)
        XCTAssertEqual(try pass()?.read, ["plain": true])
        // Deleted while offline: EBookCache keeps the row, marked deleted: it is no contact.
        try remove("book", "ada", offline: true)
        let offline = try XCTUnwrap(pass())
        XCTAssertEqual(offline.removed, ["ada"])
        XCTAssertEqual(offline.read, [:])
        // Deleted for good, and added again while offline.
        try remove("book", "grace")
        XCTAssertEqual(try pass()?.removed, ["grace"])
        try put("book", "ada", "Ada Lovelace", star: true, offline: true)
        XCTAssertEqual(try pass()?.read, ["ada": true])
        XCTAssertEqual([contents.contacts, contents.favorites], [2, 2])
        XCTAssertEqual(contents.rows.keys.sorted(), ["ada", "plain"])

        // Start-up's read, favorites first, and a whole read, in the cache's tables too.
        let firstRead = try EvolutionBookReader.readFavoritesFirst(database: database, schema: .cache, maxCardBytes: 100_000)
        XCTAssertEqual(Set(firstRead.rows.uids), ["ada", "plain"])
        XCTAssertEqual(try EvolutionBookReader.readRows(database: database, schema: .cache, uids: ["plain", "grace"], maxCardBytes: 100_000).uids, ["plain"])
        XCTAssertEqual(try EvolutionBookReader.read(
            database: database, schema: .cache, known: EvolutionBookContents(), whole: true, maxCardBytes: 100_000, options: options)?.read.map(\.uid).sorted(),
            ["ada", "plain"])
        let unchanged = try XCTUnwrap(EvolutionBookReader.read(
            database: database, schema: .cache, known: contents, whole: true, maxCardBytes: 100_000, options: options))
        XCTAssertEqual(unchanged.read.map(\.uid) + unchanged.removed, [], "a whole read of known rows as they are parses none")
    }

    /// One row's card, as a favorite's face reads it: from EBookCache's table, bounded (a card
    /// over the bound is seen by its count, never copied whole), and none for a row deleted
    /// offline or not there.
    func testOneRowsCardIsReadFromACacheBoundedAndNotForARowDeletedOffline() throws {
        try put("dav", "hedy", "Hedy Lamarr", email: "hedy@frequency.example", star: true)
        try put("dav", "gone", "Gone Offline", star: true)
        try remove("dav", "gone", offline: true)
        let database = try self.database("dav")
        let card = try XCTUnwrap(EvolutionBookReader.card(database: database, schema: .cache, uid: "hedy"))
        XCTAssertTrue(String(decoding: card, as: UTF8.self).contains("FN:Hedy Lamarr"), String(decoding: card, as: UTF8.self))
        XCTAssertEqual(try EvolutionBookReader.card(database: database, schema: .cache, uid: "hedy", atMost: 10)?.count, 11)
        XCTAssertEqual(try EvolutionBookReader.card(database: database, schema: .cache, uid: "hedy", atMost: card.count)?.count, card.count)
        XCTAssertNil(try EvolutionBookReader.card(database: database, schema: .cache, uid: "gone"))
        XCTAssertNil(try EvolutionBookReader.card(database: database, schema: .cache, uid: "nobody"))
    }

    func testALocalBooksReaderDoesNotTakeACacheForItsOwn() throws {
        try put("book", "ada", "Ada Lovelace", star: true)
        XCTAssertThrowsError(try EvolutionBookReader.read(
            database: try database("book"), known: EvolutionBookContents(), maxCardBytes: 100_000, options: options)
        ) { error in
            guard case EvolutionBookFault.unknownSchema = error else { return XCTFail("\(error)") }
        }
    }

    // MARK: The registry

    func testTheRegistrySaysWhereEachBookIsItsKindItsAccountAndWhyOneIsSkipped() {
        let file = { (uid: String) in "/c/evolution/sources/\(uid).source" }
        let google = EvolutionSource.parse(uid: "acc", file: file("acc"), text: """
            # written by EDS
            [Data Source]
            DisplayName=ada@example.org
            DisplayName[de]=ada@example.org
            Enabled=true
            Parent=

            [Collection]
            BackendName=google
            ContactsEnabled=false
            """)
        XCTAssertEqual(google.displayName, "ada@example.org")
        XCTAssertFalse(google.isAddressBook)
        XCTAssertFalse(google.contactsEnabled)
        let book = EvolutionSource.parse(uid: "gbook", file: file("gbook"), text: "[Data Source]\nParent=acc\nEnabled=true\n[Address Book]\nBackendName=carddav\n")
        let local = EvolutionSource.parse(uid: "work", file: file("work"), text: "[Data Source]\nEnabled=false\n[Address Book]\nBackendName=local\n")
        let broken = EvolutionSource.parse(uid: "broken", file: file("broken"), text: "[Data Source\nEnabled=true\n")
        let calendar = EvolutionSource.parse(uid: "cal", file: file("cal"), text: "[Data Source]\nEnabled=true\n[Calendar]\nBackendName=local\n")
        XCTAssertNotNil(broken.problem)
        var registry = EvolutionSourceRegistry([google, book, local, broken, calendar])

        XCTAssertEqual(registry.kind(of: "gbook"), "carddav")
        XCTAssertEqual(registry.store(of: "gbook"), .cache)
        XCTAssertEqual(registry.account(of: "gbook"), "ada@example.org")
        XCTAssertEqual(registry.skipReason("gbook"), "contacts are turned off for its account 'ada@example.org' (ContactsEnabled=false in /c/evolution/sources/acc.source)")
        XCTAssertEqual(registry.kind(of: "work"), "local")
        XCTAssertEqual(registry.store(of: "work"), .local)
        XCTAssertNil(registry.account(of: "work"))
        XCTAssertEqual(registry.skipReason("work"), "disabled in Evolution Data Server (Enabled=false in /c/evolution/sources/work.source)")
        XCTAssertTrue(registry.skipReason("broken")?.hasPrefix("its source file cannot be read: ") == true, "\(registry.skipReason("broken") ?? "nil")")
        XCTAssertTrue(registry.isRegistered(EvolutionLocation.systemSourceUID), "the built-in book needs no file")
        XCTAssertEqual(registry.store(of: EvolutionLocation.systemSourceUID), .local)
        XCTAssertNil(registry.skipReason(EvolutionLocation.systemSourceUID))
        XCTAssertFalse(registry.isRegistered("cal"), "a calendar is no address book")
        XCTAssertFalse(registry.isRegistered("nobody"))

        var enabledAccount = google
        enabledAccount.contactsEnabled = true
        enabledAccount.enabled = false
        registry = EvolutionSourceRegistry([enabledAccount, book])
        XCTAssertEqual(registry.skipReason("gbook"), "its account 'ada@example.org' is disabled (Enabled=false in /c/evolution/sources/acc.source)")
        enabledAccount.enabled = true
        registry = EvolutionSourceRegistry([enabledAccount, book])
        XCTAssertNil(registry.skipReason("gbook"))
        // A loop of parents ends.
        let loop = EvolutionSource.parse(uid: "a", file: file("a"), text: "[Data Source]\nParent=b\n[Address Book]\nBackendName=carddav\n")
        let back = EvolutionSource.parse(uid: "b", file: file("b"), text: "[Data Source]\nParent=a\nDisplayName=B\n")
        XCTAssertEqual(EvolutionSourceRegistry([loop, back]).account(of: "a"), "B")
    }

    // MARK: The engine

    private func engine(_ settings: EvolutionSettings? = nil) -> EvolutionEngine {
        EvolutionEngine(settings: settings ?? self.settings, location: location, logger: Logger(label: "test"))
    }

    private func favorites(_ index: ContactIndex) -> [String] { index.favorites.map(\.name).sorted() }

    func testTheEngineReadsOnlineBooksBesideLocalOnesAndSkipsDisabledSourcesAndAccounts() throws {
        try account("acc", name: "ada@example.org")
        try addressBook("gbook", parent: "acc")
        try addressBook("dav", parent: nil, backend: "webdav", enabled: false)
        try put("gbook", "ada", "Ada Lovelace", email: "ada@example.org", star: true)
        try put("gbook", "plain", "Plain Person")
        try put("dav", "hedy", "Hedy Lamarr", star: true)
        // A cache folder of no registered book (a removed account's leftover) is not read.
        try put("gone", "old", "Old Friend", star: true)
        try FileManager.default.createDirectory(atPath: location.bookFolder(forSource: EvolutionLocation.systemSourceUID), withIntermediateDirectories: true)

        let engine = engine()
        engine.reload(engine.settings)
        var index = ContactIndex()
        index.apply(engine.takeUpdate(force: true))
        XCTAssertEqual(favorites(index), ["Ada Lovelace"], "the disabled book's favorite is not read")
        let info = try XCTUnwrap(engine.currentInfo())
        XCTAssertEqual(info.cacheFolder, location.cacheAddressBookFolder)
        let books = Dictionary(uniqueKeysWithValues: info.books.map { ($0.uid, $0) })
        XCTAssertEqual(books.keys.sorted(), ["dav", "gbook"], "the built-in book has no database yet; the leftover is no book")
        XCTAssertEqual(books["gbook"]?.kind, "carddav")
        XCTAssertEqual(books["gbook"]?.account, "ada@example.org")
        XCTAssertEqual(books["gbook"]?.name, "Contacts", "the book's own display name")
        XCTAssertEqual(books["gbook"]?.database, try database("gbook"), "the book is read where EDS keeps it")
        XCTAssertEqual([books["gbook"]?.contacts, books["gbook"]?.favorites], [2, 1])
        XCTAssertNil(books["gbook"]?.skipped)
        XCTAssertEqual(books["dav"]?.kind, "webdav")
        XCTAssertEqual(books["dav"]?.skipped, "disabled in Evolution Data Server (Enabled=false in \(location.sourceFile(forSource: "dav")))")
        XCTAssertEqual(books["dav"]?.contacts, 0)

        // Live: a change through EBookCache, then the source enabled, then the account disabled.
        try put("gbook", "plain", "Plain Person", star: true)
        XCTAssertTrue(waitUntil(timeout: 10) {
            engine.handleEvents(ready: true)
            index.apply(engine.takeUpdate(force: false))
            return self.favorites(index) == ["Ada Lovelace", "Plain Person"]
        }, "\(favorites(index))")
        try addressBook("dav", parent: nil, backend: "webdav", enabled: true)
        XCTAssertTrue(waitUntil(timeout: 10) {
            engine.handleEvents(ready: true)
            index.apply(engine.takeUpdate(force: false))
            return self.favorites(index).contains("Hedy Lamarr")
        }, "\(favorites(index))")
        try account("acc", name: "ada@example.org", enabled: false)
        XCTAssertTrue(waitUntil(timeout: 10) {
            engine.handleEvents(ready: true)
            index.apply(engine.takeUpdate(force: false))
            return self.favorites(index) == ["Hedy Lamarr"]
        }, "\(favorites(index))")
        XCTAssertEqual(engine.currentInfo()?.books.first { $0.uid == "gbook" }?.skipped,
                       "its account 'ada@example.org' is disabled (Enabled=false in \(location.sourceFile(forSource: "acc")))")
        engine.closeInotify()
    }

    /// With no `evolution` folder in the cache home yet, the home is watched for that name: a
    /// file of another name narrows the watch to the home's own moves, and a book that appears
    /// meanwhile is found when the quiet period ends.
    func testABookThatAppearsWhileItsHomeIsNarrowedIsFoundWhenTheQuietPeriodEnds() throws {
        let cacheHome = location.cacheHome
        try FileManager.default.createDirectory(atPath: cacheHome, withIntermediateDirectories: true)
        try addressBook("gbook", parent: nil)
        let engine = engine()
        engine.reload(engine.settings)
        var index = ContactIndex()
        index.apply(engine.takeUpdate(force: true))
        XCTAssertEqual(engine.folderWatches.planned[cacheHome]?.awaited, ["evolution"])

        try Data("noise".utf8).write(to: URL(fileURLWithPath: cacheHome + "/other-program.cache"))
        XCTAssertTrue(waitUntil(timeout: 10) {
            engine.handleEvents(ready: true)
            return engine.folderWatches.muted.contains(cacheHome)
        }, "another name narrows the home's watch")
        XCTAssertNotNil(engine.folderWatches.rearmAt)
        XCTAssertLessThanOrEqual(engine.pollTimeoutMilliseconds(), Int32(EvolutionFolderWatches.quietPeriod / .milliseconds(1)))

        try put("gbook", "ada", "Ada Lovelace", star: true)
        engine.handleEvents(ready: true)
        index.apply(engine.takeUpdate(force: false))
        XCTAssertEqual(favorites(index), [], "not seen while narrowed")
        engine.rearmFolderWatches()
        engine.handleEvents(ready: true)
        index.apply(engine.takeUpdate(force: false))
        XCTAssertEqual(favorites(index), ["Ada Lovelace"], "seen when the quiet period ends")
        XCTAssertTrue(engine.folderWatches.muted.isEmpty)
        XCTAssertEqual(engine.folderWatches.planned[cacheHome]?.mask, EvolutionFolderWatches.ownMoves)
        engine.closeInotify()
    }

    func testAConfiguredListOfBooksFindsEachWhereItsBackendKeepsIt() throws {
        try addressBook("gbook", parent: nil)
        try put("gbook", "ada", "Ada Lovelace", star: true)
        let engine = engine(EvolutionSettings(selection: .books(["gbook"]), favoriteCategories: [], maxCardBytes: 100_000))
        engine.reload(engine.settings)
        var index = ContactIndex()
        index.apply(engine.takeUpdate(force: true))
        XCTAssertEqual(favorites(index), ["Ada Lovelace"])
        XCTAssertEqual(engine.currentInfo()?.books.map(\.kind), ["carddav"])
        engine.closeInotify()
    }
}
