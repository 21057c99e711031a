import Foundation
import TestSupport
import XCTest

/// Evolution Data Server on a private session bus, with private XDG folders, driven through its
/// own client library (`Tests/integration/eds-book.py`: EBook.BookClient from Debian's python3-gi).
/// The bus's environment is what the address-book factory it activates inherits.
final class PrivateEvolutionDataServer {
    static let driverScript = DaemonFixture.repository.appendingPathComponent("Tests/integration/eds-book.py").path
    let root: URL
    var dataHome: URL { root.appendingPathComponent("data") }
    var addressBooks: URL { dataHome.appendingPathComponent("evolution/addressbook") }
    var cacheHome: URL { root.appendingPathComponent("cache") }
    var configHome: URL { root.appendingPathComponent("config") }
    func sourceFile(_ uid: String) -> URL { configHome.appendingPathComponent("evolution/sources/\(uid).source") }
    var busSocket: String { root.appendingPathComponent("bus").path }
    var environment: [String: String]
    private var bus: Process?
    private var driver: BackgroundProcess?
    private var answers = 0

    init(in folder: URL) throws {
        root = folder.appendingPathComponent("eds")
        for name in ["data", "config", "cache", "runtime"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: root.appendingPathComponent("runtime").path)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_DATA_HOME"] = root.appendingPathComponent("data").path
        environment["XDG_CONFIG_HOME"] = root.appendingPathComponent("config").path
        environment["XDG_CACHE_HOME"] = root.appendingPathComponent("cache").path
        environment["XDG_RUNTIME_DIR"] = root.appendingPathComponent("runtime").path
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(root.appendingPathComponent("bus").path)"
        environment["GSETTINGS_BACKEND"] = "memory"
        self.environment = environment
    }

    deinit { stop() }

    /// EDS, its bus and its client library are installed; else the test is skipped loudly (a
    /// failure in CI).
    static func requireInstalled() throws {
        for tool in ["/usr/bin/dbus-daemon", "/usr/bin/python3", "/usr/libexec/evolution-addressbook-factory"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            try EvolutionEndToEndTests.missing("\(tool) is missing (evolution-data-server)")
        }
        let probe = runCommand(["/usr/bin/python3", "-c", "import gi; gi.require_version('EBook', '1.2'); from gi.repository import EBook"])
        if probe.status != 0 { try EvolutionEndToEndTests.missing("gir1.2-ebook-1.2 is missing (\(probe.output))") }
    }

    /// Starts the bus and the driver; EDS itself is activated by the driver's first call.
    func start() throws {
        let bus = Process()
        bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        bus.arguments = ["--session", "--nofork", "--nopidfile", "--address=unix:path=\(busSocket)"]
        bus.environment = environment
        bus.standardInput = FileHandle.nullDevice
        bus.standardOutput = FileHandle.nullDevice
        bus.standardError = FileHandle.nullDevice
        try bus.run()
        self.bus = bus
        XCTAssertTrue(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: self.busSocket) }, "dbus-daemon did not listen")
        let driver = try BackgroundProcess(
            "/usr/bin/python3", [Self.driverScript], environment: environment,
            outputFile: root.appendingPathComponent("driver.out"), withInput: true)
        self.driver = driver
        XCTAssertTrue(waitUntil(timeout: 20) { driver.jsonLines.contains { $0["ready"] as? Bool == true } }, driver.output)
        answers = 0
    }

    /// One request to the driver; fails the test with the driver's error.
    @discardableResult
    func call(_ request: [String: Any], file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
        guard let driver, let data = try? JSONSerialization.data(withJSONObject: request) else { return [:] }
        driver.send(String(decoding: data, as: UTF8.self))
        answers += 1
        let expected = answers
        var answer: [String: Any] = [:]
        let answered = waitUntil(timeout: 30) {
            let lines = driver.jsonLines.filter { $0["ok"] != nil }
            guard lines.count >= expected else { return false }
            answer = lines[expected - 1]
            return true
        }
        XCTAssertTrue(answered, "EDS did not answer \(request): \(driver.output)", file: file, line: line)
        XCTAssertEqual(answer["ok"] as? Bool, true, "\(request): \(answer)", file: file, line: line)
        return answer
    }

    /// Adds a contact to the built-in book (or `book`); returns its EDS uid.
    func add(_ name: String, email: String? = nil, star: Bool = false, book: String = "system-address-book") -> String {
        var request: [String: Any] = ["op": "add", "name": name, "star": star, "book": book]
        if let email { request["email"] = email }
        return call(request)["uid"] as? String ?? ""
    }

    func database(_ book: String = "system") -> String { addressBooks.appendingPathComponent("\(book)/contacts.db").path }

    /// Opens an online account's or a server's book in the address-book factory, which makes
    /// its database: where EDS keeps it, found by the driver in the book's cache folder.
    func openOnlineBook(_ book: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        call(["op": "open", "book": book], file: file, line: line)["database"] as? String ?? ""
    }

    /// Asks the book's backend to sync with its server, and waits until the factory serves
    /// `uid` as given (`name`, `star`) or, with `gone`, no longer serves it; returns when
    /// that was so.
    @discardableResult
    func sync(_ book: String, uid: String, name: String? = nil, star: Bool? = nil, gone: Bool = false,
              file: StaticString = #filePath, line: UInt = #line) -> Date {
        var request: [String: Any] = ["op": "sync", "book": book, "uid": uid, "gone": gone]
        if let name { request["name"] = name }
        if let star { request["star"] = star }
        call(request, file: file, line: line)
        return Date()
    }

    func stop() {
        driver = nil
        if let bus, bus.isRunning {
            // The address-book factory it started ends with its bus.
            kill(bus.processIdentifier, SIGTERM)
            bus.waitUntilExit()
        }
    }
}

/// Favorites from GNOME Contacts / Evolution: the built qactd reading the address books of a
/// real Evolution Data Server, changed through EDS's own client library, live; and each fault
/// (no EDS data, a lock held too long, an unknown schema, a damaged database, a vCard that does
/// not parse) reported per book while the other sources keep serving, and recovered from.
final class EvolutionEndToEndTests: XCTestCase {
    override func setUpWithError() throws {
        try PrivateEvolutionDataServer.requireInstalled()
    }

    /// A component the test drives is not installed: skipped, loudly, on a developer's machine; a
    /// failure in CI (which runs scripts/install-deps --test first).
    static func missing(_ what: String) throws {
        throw unavailable("\(what): run scripts/install-deps --test")
    }

    /// `evolution` nil leaves `Evolution=` out, as a person who never configured it does.
    private func makeFixture(evolution: String? = "all", contacts: String = "", extra: String = "") throws -> (DaemonFixture, PrivateEvolutionDataServer) {
        let fixture = try DaemonFixture(extraConfiguration: "")
        try configure(fixture, evolution: evolution, contacts: contacts, extra: extra)
        let eds = try PrivateEvolutionDataServer(in: fixture.root)
        fixture.daemonEnvironment["XDG_DATA_HOME"] = eds.dataHome.path
        fixture.daemonEnvironment["XDG_CONFIG_HOME"] = eds.environment["XDG_CONFIG_HOME"]
        fixture.daemonEnvironment["XDG_CACHE_HOME"] = eds.environment["XDG_CACHE_HOME"]
        return (fixture, eds)
    }

    private func configure(_ fixture: DaemonFixture, evolution: String?, contacts: String = "", extra: String = "") throws {
        try fixture.writeConfiguration("""
            [Contacts]
            \(evolution.map { "Evolution=\($0)" } ?? "")
            \(contacts)
            [Shortcuts]
            Recompute=change
            RecomputeSettleMSec=50
            DisplayLimit=20
            MaxDynamicItems=1000
            \(extra)
            """)
        if evolution == nil {
            // Not even the fixture's own `Evolution=none`: the default, every book, as a person
            // who never wrote the key has it.
            let text = try String(contentsOf: fixture.configFile, encoding: .utf8)
            try text.replacingOccurrences(of: "\n[Contacts]\nEvolution=none", with: "").write(to: fixture.configFile, atomically: true, encoding: .utf8)
            XCTAssertFalse(try String(contentsOf: fixture.configFile, encoding: .utf8).contains("Evolution="))
        }
    }

    private func status(_ fixture: DaemonFixture) -> [String: Any] {
        (try? fixture.qactl(["status", "--json"]).json()) ?? [:]
    }

    private func books(_ fixture: DaemonFixture) -> [[String: Any]] {
        (status(fixture)["evolution"] as? [String: Any])?["books"] as? [[String: Any]] ?? []
    }

    private func book(_ fixture: DaemonFixture, _ uid: String = "system-address-book") -> [String: Any]? {
        books(fixture).first { $0["uid"] as? String == uid }
    }

    /// The titles of the dynamic items (`qactl list --all`), in favorite order.
    private func favoriteTitles(_ fixture: DaemonFixture) -> [String] {
        let items = (try? fixture.qactl(["list", "--all", "--json"]).json())?["items"] as? [[String: Any]] ?? []
        return items.filter { $0["source"] as? String == "dynamic" }.compactMap { ($0["item"] as? [String: Any])?["title"] as? String }
    }

    private func contactIdentifiers(_ fixture: DaemonFixture) -> [String] {
        let items = (try? fixture.qactl(["list", "--all", "--json"]).json())?["items"] as? [[String: Any]] ?? []
        return items.compactMap { (($0["item"] as? [String: Any])?["userInfo"] as? [String: Any])?["contactIdentifier"] as? String }
    }

    /// Holds an exclusive lock on a database, as a writer mid-transaction does, until `release`.
    private func lock(_ database: String, in fixture: DaemonFixture) throws -> BackgroundProcess {
        let script = """
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1], isolation_level=None)
            connection.execute("BEGIN EXCLUSIVE")
            print('{"locked": true}', flush=True)
            sys.stdin.readline()
            connection.execute("ROLLBACK")
            print('{"released": true}', flush=True)
            """
        let locker = try BackgroundProcess(
            "/usr/bin/python3", ["-c", script, database], environment: ProcessInfo.processInfo.environment,
            outputFile: fixture.root.appendingPathComponent("locker.out"), withInput: true)
        XCTAssertTrue(waitUntil(timeout: 10) { locker.jsonLines.contains { $0["locked"] as? Bool == true } }, locker.output)
        return locker
    }

    /// Runs SQL on a database with Python's sqlite3 (a fault injected beside EDS, never by qactd).
    private func sql(_ database: String, _ statements: String, file: StaticString = #filePath, line: UInt = #line) {
        let script = "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.executescript(sys.argv[2])\nc.commit()\nc.close()"
        let result = runCommand(["/usr/bin/python3", "-c", script, database, statements])
        XCTAssertEqual(result.status, 0, result.output, file: file, line: line)
    }

    // MARK: Live

    func testContactsAddedEditedStarredUnstarredAndDeletedInEvolutionReachListAndWatch() throws {
        let (fixture, eds) = try makeFixture()
        try eds.start()
        let hedy = eds.add("Hedy Lamarr", email: "hedy@frequency.example", star: true)
        let plain = eds.add("Plain Person", email: "plain@example.org")
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)  // launched: favorites are shown from now on
        XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Hedy Lamarr") }, "\(favoriteTitles(fixture))\n\(fixture.log())")
        XCTAssertFalse(favoriteTitles(fixture).contains("Plain Person"))
        // The identifier is EDS's own uid: stable across restarts and edits.
        let contact = fixture.qactl(["contact", hedy, "--json"])
        XCTAssertEqual(contact.status, 0, contact.stderr)
        XCTAssertEqual(((try? contact.json())?["contact"] as? [String: Any])?["email"] as? String, "hedy@frequency.example", contact.stdout)
        XCTAssertEqual(book(fixture)?["contacts"] as? Int, 2)
        XCTAssertEqual(book(fixture)?["favorites"] as? Int, 1)
        XCTAssertNil(book(fixture)?["problem"] as? String)
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("system-address-book (local): read, 2 contacts, 1 favorite"), fixture.qactl(["status"]).stdout)

        let watch = try BackgroundProcess(
            DaemonFixture.qactl, ["watch", "--json"], environment: fixture.environment,
            outputFile: fixture.root.appendingPathComponent("watch.out"))
        XCTAssertTrue(waitUntil { !watch.jsonLines.isEmpty }, watch.output)
        func watchedTitles() -> [String] {
            let items = watch.jsonLines.last?["items"] as? [[String: Any]] ?? []
            return items.filter { $0["source"] as? String == "dynamic" }.compactMap { ($0["item"] as? [String: Any])?["title"] as? String }
        }

        let radia = eds.add("Radia Perlman", email: "radia@stp.example", star: true)
        XCTAssertTrue(waitUntil { watchedTitles().contains("Radia Perlman") }, "add: \(watchedTitles())\n\(fixture.log())")
        eds.call(["op": "rename", "uid": radia, "name": "Radia Perlman-Spanning"])
        XCTAssertTrue(waitUntil { watchedTitles().contains("Radia Perlman-Spanning") && !watchedTitles().contains("Radia Perlman") }, "edit: \(watchedTitles())")
        eds.call(["op": "star", "uid": plain])
        XCTAssertTrue(waitUntil { watchedTitles().contains("Plain Person") }, "star: \(watchedTitles())")
        // Un-star and star again within the same second: EDS's Rev is unchanged, the row is not.
        eds.call(["op": "unstar", "uid": hedy])
        XCTAssertTrue(waitUntil { !watchedTitles().contains("Hedy Lamarr") }, "unstar: \(watchedTitles())")
        eds.call(["op": "star", "uid": hedy])
        XCTAssertTrue(waitUntil { watchedTitles().contains("Hedy Lamarr") }, "star again: \(watchedTitles())")
        eds.call(["op": "delete", "uid": radia])
        XCTAssertTrue(waitUntil { !watchedTitles().contains("Radia Perlman-Spanning") }, "delete: \(watchedTitles())")
        XCTAssertEqual(fixture.qactl(["contact", radia]).status, 1)
        XCTAssertEqual(favoriteTitles(fixture), watchedTitles())
        // The directory's favorites and the book's merge into one set.
        XCTAssertTrue(favoriteTitles(fixture).contains("Hedy Lamarr"))
        XCTAssertTrue(favoriteTitles(fixture).count > 2, "the demo folder's favorites are there too: \(favoriteTitles(fixture))")
        XCTAssertEqual(book(fixture)?["contacts"] as? Int, 2)
        XCTAssertEqual(book(fixture)?["favorites"] as? Int, 2)

        // Stable across a restart.
        let before = contactIdentifiers(fixture)
        fixture.stop()
        try fixture.start()
        XCTAssertEqual(contactIdentifiers(fixture), before)
    }

    /// EDS's newest row deleted and another contact added: SQLite gives the new row the deleted
    /// one's rowid again, whether the daemon read the book between the two writes or not.
    func testTheNewestContactDeletedAndAnotherAddedAreBothSeen() throws {
        let (fixture, eds) = try makeFixture()
        try eds.start()
        _ = eds.add("Hedy Lamarr", star: true)
        var newest = eds.add("Dorothy Vaughan", star: true)
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Dorothy Vaughan") }, "\(favoriteTitles(fixture))\n\(fixture.log())")
        for round in 1...3 {
            eds.call(["op": "delete", "uid": newest])
            let added = eds.add("Mary Jackson \(round)", star: true)
            XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Mary Jackson \(round)") }, "round \(round): \(favoriteTitles(fixture))")
            XCTAssertFalse(favoriteTitles(fixture).contains("Dorothy Vaughan"), "round \(round): \(favoriteTitles(fixture))")
            XCTAssertFalse(favoriteTitles(fixture).contains("Mary Jackson \(round - 1)"), "round \(round): \(favoriteTitles(fixture))")
            XCTAssertEqual(book(fixture)?["contacts"] as? Int, 2)
            XCTAssertEqual(book(fixture)?["favorites"] as? Int, 2)
            eds.call(["op": "rename", "uid": added, "name": "Mary Jackson \(round) edited"])
            XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Mary Jackson \(round) edited") }, "round \(round): \(favoriteTitles(fixture))")
            eds.call(["op": "rename", "uid": added, "name": "Mary Jackson \(round)"])
            XCTAssertTrue(waitUntil { !self.favoriteTitles(fixture).contains("Mary Jackson \(round) edited") }, "round \(round): \(favoriteTitles(fixture))")
            XCTAssertEqual(book(fixture)?["contacts"] as? Int, 2)
            newest = added
        }
        XCTAssertTrue(favoriteTitles(fixture).contains("Hedy Lamarr"))
    }

    func testAddressBooksThatAppearAndDisappearArePickedUpAndDropped() throws {
        let (fixture, eds) = try makeFixture()
        try eds.start()
        _ = eds.add("Hedy Lamarr", star: true)
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Hedy Lamarr") }, fixture.log())

        // An online account added: a new book, with a starred contact.
        let work = eds.call(["op": "new-book", "name": "Work"])["book"] as? String ?? ""
        _ = eds.add("Katherine Johnson", star: true, book: work)
        XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Katherine Johnson") }, "\(favoriteTitles(fixture))\n\(fixture.log())")
        XCTAssertEqual(book(fixture, work)?["favorites"] as? Int, 1)

        // …and removed: its contacts go with it.
        eds.call(["op": "remove-book", "book": work])
        XCTAssertTrue(waitUntil { !self.favoriteTitles(fixture).contains("Katherine Johnson") }, "\(favoriteTitles(fixture))\n\(fixture.log())")
        XCTAssertTrue(waitUntil { self.book(fixture, work) == nil }, "\(books(fixture))")
        XCTAssertTrue(favoriteTitles(fixture).contains("Hedy Lamarr"))
    }

    // MARK: Faces

    /// `FavoriteFaces=yes` with a favorite saved with a photo through EDS's own client library:
    /// EDS keeps the photo as a file in the book's `photos` folder, named by a `file://` URI in
    /// the row's vCard, and the favorite's action in the exported desktop entry has a face made
    /// of that file: a round PNG of its colour. A photo that is no image, and one over the bound, give the
    /// monogram, each logged once however often the entry is exported again; a contact not shown
    /// has its photo never read.
    func testAFavoritesPhotoSavedThroughEvolutionIsItsFace() throws {
        let (fixture, eds) = try makeFixture(extra: "[Launcher]\nDesktopFile=io.qactd.Test.desktop\nFavoriteFaces=yes")
        // The app's own entry, installed system-wide; qactd's exports folder first, as its
        // environment generator puts it for a session.
        let share = fixture.root.appendingPathComponent("share")
        try FileManager.default.createDirectory(at: share.appendingPathComponent("applications"), withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Test Contacts\nExec=/bin/true\nIcon=x-office-address-book\n"
            .write(to: share.appendingPathComponent("applications/io.qactd.Test.desktop"), atomically: true, encoding: .utf8)
        fixture.daemonEnvironment["XDG_DATA_DIRS"] = eds.dataHome.appendingPathComponent("qactd/exports/share").path + ":" + share.path
        let photo = try solidColourPNG(red: 0xE0, green: 0x10, blue: 0xB0)
        // Over the 1 MiB a photo may have: a PNG's signature, then bytes nobody needs to read.
        let huge = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data(repeating: 7, count: (1 << 20) + 4096)
        try eds.start()
        let hedy = eds.call(["op": "add", "name": "Hedy Lamarr", "star": true, "photo": photo.base64EncodedString()])["uid"] as? String ?? ""
        let broken = eds.call(["op": "add", "name": "Bob Broken", "star": true, "photo": Data("not a picture".utf8).base64EncodedString()])["uid"] as? String ?? ""
        let large = eds.call(["op": "add", "name": "Lara Large", "star": true, "photo": huge.base64EncodedString()])["uid"] as? String ?? ""
        // Not a favorite, so not shown: its photo is never read.
        let unshown = eds.call(["op": "add", "name": "Nora Plain", "photo": Data("not a picture either".utf8).base64EncodedString()])["uid"] as? String ?? ""
        // EDS keeps the photos as files of the book's, as a local book does for every app.
        let stored = runCommand(["/usr/bin/python3", "-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT vcard FROM folder_id WHERE uid = ?', (sys.argv[2],)).fetchone()[0])", eds.database(), hedy])
        XCTAssertTrue(stored.output.contains("file://") && stored.output.contains("/photos/"), "EDS stored the photo as a file: \(stored.output)")

        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let exported = eds.dataHome.appendingPathComponent("qactd/exports/share/applications/io.qactd.Test.desktop").path
        let faces = eds.dataHome.appendingPathComponent("qactd/faces/io.qactd.Test.desktop").path
        // The action of the favorite named `name` (a long uid is shortened in the action's identifier).
        func icon(_ name: String) -> String? {
            guard let text = try? String(contentsOfFile: exported, encoding: .utf8) else { return nil }
            let groups = text.components(separatedBy: "\n[").filter { $0.hasPrefix("Desktop Action ") && $0.contains("\nName=\(name)\n") }
            guard groups.count == 1, let group = groups.first?.split(separator: "]").first else { return nil }
            return desktopEntryValue(text, key: "Icon", group: String(group))
        }
        XCTAssertTrue(waitUntil { ["Hedy Lamarr", "Bob Broken", "Lara Large"].allSatisfy { icon($0)?.hasPrefix(faces + "/face-") == true } },
                      "each favorite's action has a face: \((try? String(contentsOfFile: exported, encoding: .utf8)) ?? "no entry")\n\(fixture.log())")
        let hedyFace = try XCTUnwrap(icon("Hedy Lamarr"))
        XCTAssertTrue(hedyFace.hasSuffix(".png"), hedyFace)
        let hedyPicture = try faceMiddleAndCorner(path: hedyFace)
        XCTAssertEqual(hedyPicture.middle, [0xE0, 0x10, 0xB0, 255], "the face is the photo EDS keeps: \(hedyPicture)")
        XCTAssertEqual(hedyPicture.corner.last, 0, "cut round: \(hedyPicture)")
        XCTAssertEqual(hedyPicture.size, [128, 128])
        for (name, initials) in [("Bob Broken", "BB"), ("Lara Large", "LL")] {
            let path = try XCTUnwrap(icon(name))
            let svg = try String(contentsOfFile: path, encoding: .utf8)
            XCTAssertTrue(svg.contains(">\(initials)</text>") && !svg.contains("<image") && path.hasSuffix(".svg"), "the monogram: \(svg)")
        }

        // Exported again (another favorite): each problem was logged once.
        _ = eds.add("Zed Zephyr", star: true)
        XCTAssertTrue(waitUntil { icon("Zed Zephyr") != nil && icon("Hedy Lamarr") != nil }, fixture.log())
        let log = fixture.log()
        for uid in [broken, large] {
            XCTAssertEqual(log.components(separatedBy: "The photo of contact '\(uid)' is not used").count - 1, 1, log)
        }
        XCTAssertTrue(log.contains("more than the \(1 << 20) read"), "the large photo is said to be too large: \(log)")
        XCTAssertFalse(log.contains("The photo of contact '\(unshown)'"), "only the shown favorites' photos are read: \(log)")
    }

    // MARK: Online accounts

    /// A source key file as EDS's registry writes one, replaced whole as it replaces them.
    private func writeSource(_ eds: PrivateEvolutionDataServer, _ uid: String, _ text: String) throws {
        try FileManager.default.createDirectory(at: eds.sourceFile(uid).deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: eds.sourceFile(uid), atomically: true, encoding: .utf8)
    }

    /// A Google account from GNOME Online Accounts and its address book, as EDS's registry keeps them.
    private func writeOnlineAccount(_ eds: PrivateEvolutionDataServer, book: String, bookEnabled: Bool = true) throws {
        try writeSource(eds, "goa-account", """
            [Data Source]
            DisplayName=ada@example.org
            Enabled=true
            Parent=

            [Collection]
            BackendName=google
            CalendarEnabled=true
            ContactsEnabled=true
            Identity=ada@example.org

            [GNOME Online Accounts]
            AccountId=account_1700000000_0
            """)
        try writeSource(eds, book, """
            [Data Source]
            DisplayName=Contacts
            Enabled=\(bookEnabled)
            Parent=goa-account

            [Address Book]
            BackendName=carddav

            [Offline]
            StaySynchronized=true
            """)
    }

    /// An online account's book, cached by EDS through its own EBookCache, is read like a local
    /// one: its favorite shows, its plain contact does not, a change EDS syncs in is followed,
    /// and `Status` names each book's kind and account. A book whose source is disabled (by
    /// EDS's own registry for a local one) is not read, and `Status` says why.
    func testAnOnlineAccountsCachedBookIsReadLiveAndDisabledBooksAreSkipped() throws {
        if let reason = EBookCacheDriver.unavailableReason() { try Self.missing(reason) }
        let (fixture, eds) = try makeFixture(contacts: "Directory=")
        try eds.start()
        let hedy = eds.add("Hedy Lamarr", star: true)
        let work = eds.call(["op": "new-book", "name": "Work"])["book"] as? String ?? ""
        _ = eds.add("Katherine Johnson", star: true, book: work)
        eds.call(["op": "disable-book", "book": work])
        try writeOnlineAccount(eds, book: "goa-contacts")
        // Where EDS keeps each book: the database its factory made on opening it (the account's
        // server is never reached, so EDS itself changes nothing in it).
        let online = eds.openOnlineBook("goa-contacts")
        let cache = try EBookCacheDriver(outputFile: fixture.root.appendingPathComponent("eds-cache.out"))
        try cache.put(online, uid: "ada", name: "Annie Easley", email: "ada@example.org", star: true)
        try cache.put(online, uid: "plain", name: "Plain Online", email: "plain@example.org")
        // An address book of another server whose source is disabled from the start (once EDS has
        // made its database).
        try writeSource(eds, "dav-off", "[Data Source]\nDisplayName=Old server\nEnabled=true\nParent=\n\n[Address Book]\nBackendName=carddav\n")
        let old = eds.openOnlineBook("dav-off")
        eds.call(["op": "disable-book", "book": "dav-off"])
        try cache.put(old, uid: "grace", name: "Evelyn Boyd", star: true)

        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertTrue(waitUntil { Set(["Annie Easley", "Hedy Lamarr"]).isSubset(of: self.favoriteTitles(fixture)) }, "\(favoriteTitles(fixture))\n\(fixture.log())")
        XCTAssertFalse(favoriteTitles(fixture).contains("Plain Online"))
        XCTAssertFalse(favoriteTitles(fixture).contains("Evelyn Boyd"), "a disabled source is not read")
        XCTAssertFalse(favoriteTitles(fixture).contains("Katherine Johnson"), "a book EDS's registry disabled is not read")
        XCTAssertEqual(fixture.qactl(["contact", "ada", "--json"]).status, 0)

        let onlineBook = try XCTUnwrap(book(fixture, "goa-contacts"), "\(books(fixture))")
        XCTAssertEqual(onlineBook["kind"] as? String, "carddav")
        XCTAssertEqual(onlineBook["account"] as? String, "ada@example.org")
        XCTAssertEqual(onlineBook["database"] as? String, online, "read where EDS keeps it")
        XCTAssertEqual([onlineBook["contacts"] as? Int, onlineBook["favorites"] as? Int], [2, 1])
        XCTAssertNil(onlineBook["skipped"])
        XCTAssertEqual(book(fixture)?["kind"] as? String, "local")
        XCTAssertEqual(book(fixture, "dav-off")?["kind"] as? String, "carddav")
        XCTAssertEqual(book(fixture, "dav-off")?["skipped"] as? String,
                       "disabled in Evolution Data Server (Enabled=false in \(eds.sourceFile("dav-off").path))")
        XCTAssertTrue((book(fixture, work)?["skipped"] as? String)?.contains("Enabled=false in \(eds.sourceFile(work).path)") == true, "\(books(fixture))")
        XCTAssertEqual((status(fixture)["evolution"] as? [String: Any])?["cacheFolder"] as? String, eds.cacheHome.appendingPathComponent("evolution/addressbook").path)
        let text = fixture.qactl(["status"]).stdout
        XCTAssertTrue(text.contains("\"Contacts\" goa-contacts (carddav, account ada@example.org): read, 2 contacts, 1 favorite"), text)
        XCTAssertTrue(text.contains("system-address-book (local): read"), text)
        XCTAssertTrue(text.contains("\"Old server\" dav-off (carddav): skipped: disabled in Evolution Data Server"), text)

        // Live: EDS syncs a star in, then an edit, then a deletion.
        try cache.put(online, uid: "plain", name: "Plain Online", email: "plain@example.org", star: true)
        XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Plain Online") }, "star: \(favoriteTitles(fixture))\n\(fixture.log())")
        try cache.put(online, uid: "ada", name: "Annie J. Easley", email: "ada@example.org", star: true)
        XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Annie J. Easley") && !self.favoriteTitles(fixture).contains("Annie Easley") }, "edit: \(favoriteTitles(fixture))")
        try cache.remove(online, uid: "plain", offline: true)
        XCTAssertTrue(waitUntil { !self.favoriteTitles(fixture).contains("Plain Online") }, "deleted while offline: \(favoriteTitles(fixture))")

        // The local book enabled again through EDS's registry: read; the online book's source
        // disabled: its contacts go, and Status says why.
        eds.call(["op": "enable-book", "book": work])
        XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Katherine Johnson") }, "enabled: \(favoriteTitles(fixture))\n\(fixture.log())")
        try writeOnlineAccount(eds, book: "goa-contacts", bookEnabled: false)
        XCTAssertTrue(waitUntil { !self.favoriteTitles(fixture).contains("Annie J. Easley") }, "disabled: \(favoriteTitles(fixture))\n\(fixture.log())")
        XCTAssertEqual(book(fixture, "goa-contacts")?["contacts"] as? Int, 0)
        XCTAssertNotNil(book(fixture, "goa-contacts")?["skipped"] as? String)
        XCTAssertEqual(fixture.qactl(["contact", "ada"]).status, 1, "its contacts are gone")
        XCTAssertTrue(favoriteTitles(fixture).contains("Hedy Lamarr"), "the other books keep serving")
        XCTAssertEqual(fixture.qactl(["contact", hedy]).status, 0)
    }

    /// A CardDAV account's address book as EDS itself keeps it: Radicale on loopback serves the
    /// contacts, the account and its book are registered as GNOME Online Accounts registers
    /// them, and the real address-book factory syncs the book from the server. With no
    /// `Evolution=` configured, qactd shows the book's favorites within 2 s of each sync, names
    /// the book in `Status`, and never reads the book of a disabled account or a disabled book.
    func testAnOnlineBookSyncedByEDSFromACardDAVServerIsReadAndFollowed() throws {
        try RadicaleServer.requireInstalled()
        let (fixture, eds) = try makeFixture(evolution: nil, contacts: "Directory=")
        let server = try RadicaleServer(in: fixture.root)
        try server.addAddressBook(user: "ada", name: "contacts")
        try server.put(user: "ada", book: "contacts", uid: "ada", name: "Ada Lovelace", star: true)
        try server.put(user: "ada", book: "contacts", uid: "grace", name: "Grace Hopper", categories: ["Starred in Android"])
        try server.put(user: "ada", book: "contacts", uid: "bob", name: "Bob Plain")
        try server.addAddressBook(user: "old", name: "contacts")
        try server.put(user: "old", book: "contacts", uid: "evelyn", name: "Evelyn Boyd", star: true)
        try server.start()
        try writeCardDAVAccount(eds, "dav-account", name: "ada@radicale.test", book: "dav-contacts", server: server, user: "ada")
        try writeCardDAVAccount(eds, "old-account", name: "old@radicale.test", book: "old-contacts", server: server, user: "old")
        try writeCardDAVAccount(eds, "other-account", name: "other@radicale.test", book: "off-contacts", server: server, user: "old")
        try eds.start()
        // The books to be skipped are synced while enabled, so EDS made and filled their
        // databases; then EDS's registry disables one account and one book.
        for book in ["old-contacts", "off-contacts"] {
            _ = eds.openOnlineBook(book)
            eds.sync(book, uid: "evelyn", star: true)
        }
        eds.call(["op": "disable-book", "book": "old-account"])
        eds.call(["op": "disable-book", "book": "off-contacts"])

        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertTrue(waitUntil { self.book(fixture, "off-contacts")?["skipped"] != nil && self.book(fixture, "old-contacts")?["skipped"] != nil },
                      "\(books(fixture))\n\(fixture.log())")
        let database = eds.openOnlineBook("dav-contacts")
        eds.sync("dav-contacts", uid: "ada", star: true)
        XCTAssertTrue(waitUntil(timeout: 2, every: .milliseconds(20)) { Set(["Ada Lovelace", "Grace Hopper"]).isSubset(of: self.favoriteTitles(fixture)) },
                      "the favorites within 2 s of the sync: \(favoriteTitles(fixture))\n\(fixture.log())")
        XCTAssertFalse(favoriteTitles(fixture).contains("Bob Plain"))

        let online = try XCTUnwrap(book(fixture, "dav-contacts"), "\(books(fixture))")
        XCTAssertEqual(online["database"] as? String, database, "read where EDS keeps it")
        XCTAssertEqual(online["kind"] as? String, "carddav")
        XCTAssertEqual(online["account"] as? String, "ada@radicale.test")
        XCTAssertEqual(online["name"] as? String, "Contacts")
        XCTAssertEqual([online["contacts"] as? Int, online["favorites"] as? Int], [3, 2])
        let text = fixture.qactl(["status"]).stdout
        XCTAssertTrue(text.contains("\"Contacts\" dav-contacts (carddav, account ada@radicale.test): read, 3 contacts, 2 favorites"), text)
        // EDS's registry, disabling the account, disables its books too: either says why.
        XCTAssertTrue(try String(contentsOf: eds.sourceFile("old-account"), encoding: .utf8).contains("Enabled=false"))
        XCTAssertTrue(text.contains("old-contacts (carddav, account old@radicale.test): skipped: "), text)
        XCTAssertTrue(text.contains("off-contacts (carddav, account other@radicale.test): skipped: disabled in Evolution Data Server"), text)

        // Starred on the server, as another device does, and synced again: followed.
        try server.put(user: "ada", book: "contacts", uid: "bob", name: "Bob Plain", star: true)
        eds.sync("dav-contacts", uid: "bob", star: true)
        XCTAssertTrue(waitUntil(timeout: 2, every: .milliseconds(20)) { self.favoriteTitles(fixture).contains("Bob Plain") },
                      "the star within 2 s of the sync: \(favoriteTitles(fixture))\n\(fixture.log())")
        XCTAssertEqual([book(fixture, "dav-contacts")?["contacts"] as? Int, book(fixture, "dav-contacts")?["favorites"] as? Int], [3, 3])

        // The disabled account's and the disabled book's favorite was never read.
        XCTAssertFalse(favoriteTitles(fixture).contains("Evelyn Boyd"))
        for uid in ["old-contacts", "off-contacts"] {
            XCTAssertEqual(book(fixture, uid)?["contacts"] as? Int, 0, "\(books(fixture))")
        }
        XCTAssertFalse(fixture.log().contains("Evelyn"), fixture.log())
        XCTAssertEqual(fixture.qactl(["contact", "evelyn"]).status, 1)
    }

    /// An account on a CardDAV server and its address book as EDS's registry keeps them: a
    /// collection source, and an address-book source whose parent it is, reaching the server
    /// without authentication.
    private func writeCardDAVAccount(_ eds: PrivateEvolutionDataServer, _ account: String, name: String, book: String,
                                     server: RadicaleServer, user: String) throws {
        try writeSource(eds, account, """
            [Data Source]
            DisplayName=\(name)
            Enabled=true
            Parent=

            [Collection]
            BackendName=webdav
            CalendarEnabled=false
            ContactsEnabled=true
            Identity=\(user)
            """)
        try writeSource(eds, book, """
            [Data Source]
            DisplayName=Contacts
            Enabled=true
            Parent=\(account)

            [Address Book]
            BackendName=carddav

            [Authentication]
            Host=127.0.0.1
            Method=none
            Port=\(server.port)
            User=\(user)

            [Security]
            Method=none

            [WebDAV Backend]
            ResourcePath=/\(user)/contacts/

            [Offline]
            StaySynchronized=true
            """)
    }

    func testChosenBooksOnlyAndGoogleStarredCategory() throws {
        let (fixture, eds) = try makeFixture(evolution: "system-address-book")
        try eds.start()
        eds.call(["op": "add", "name": "Starred On Android", "categories": ["Starred in Android"]])
        let other = eds.call(["op": "new-book", "name": "Other"])["book"] as? String ?? ""
        _ = eds.add("Not Chosen", star: true, book: other)
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Starred On Android") }, "\(favoriteTitles(fixture))\n\(fixture.log())")
        XCTAssertFalse(favoriteTitles(fixture).contains("Not Chosen"))
        XCTAssertEqual(books(fixture).compactMap { $0["uid"] as? String }, ["system-address-book"])
    }

    func testAddressBooksAloneWithNoFolderAndReloadTurnsThemOnAndOff() throws {
        let (fixture, eds) = try makeFixture(evolution: "none", contacts: "Directory=")
        try eds.start()
        let hedy = eds.add("Hedy Lamarr", star: true)
        try fixture.start()
        XCTAssertEqual((status(fixture)["watch"] as? [String: Any])?["state"] as? String, "off", "\(status(fixture))")
        XCTAssertEqual(status(fixture)["contacts"] as? Int, 0)
        XCTAssertNil(status(fixture)["evolution"])

        try configure(fixture, evolution: "all", contacts: "Directory=")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        XCTAssertEqual(status(fixture)["contacts"] as? Int, 1, "the reply comes after the books were read")
        XCTAssertEqual(book(fixture)?["favorites"] as? Int, 1)
        XCTAssertEqual(fixture.qactl(["contact", hedy]).status, 0)
        // Followed live from now on.
        _ = eds.add("Radia Perlman", star: true)
        XCTAssertTrue(waitUntil { self.book(fixture)?["favorites"] as? Int == 2 }, "\(books(fixture))\n\(fixture.log())")

        try configure(fixture, evolution: "none", contacts: "Directory=")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        XCTAssertEqual(status(fixture)["contacts"] as? Int, 0)
        XCTAssertNil(status(fixture)["evolution"])
    }

    func testAnIdleDaemonFollowingAnAddressBookSleeps() throws {
        let (fixture, eds) = try makeFixture()
        try eds.start()
        let hedy = eds.add("Hedy Lamarr", star: true)
        let daemon = try fixture.start()
        // The set holds her before the star goes and has lost her before the count begins: the
        // recompute a change starts comes a settle time after the index has it, so "persisted"
        // alone could be read just before that recompute's write.
        XCTAssertTrue(waitUntil { self.favoriteTitles(fixture).contains("Hedy Lamarr") }, "\(favoriteTitles(fixture))\n\(fixture.log())")
        eds.call(["op": "unstar", "uid": hedy])
        XCTAssertTrue(waitUntil { self.book(fixture)?["favorites"] as? Int == 0 && !self.favoriteTitles(fixture).contains("Hedy Lamarr") },
                      "\(books(fixture)) \(favoriteTitles(fixture))")
        XCTAssertTrue(waitUntil(every: .milliseconds(50)) { (self.status(fixture)["persisted"] as? Bool) ?? false })

        let wakeUps = try IdleEndToEndTests.wakeUps(of: daemon.processIdentifier)
        let total = wakeUps.values.reduce(0, +)
        print("idle with an address book: \(total) wake-ups in \(IdleEndToEndTests.window) (\(wakeUps.filter { $0.value > 0 }))")
        XCTAssertLessThanOrEqual(total, IdleEndToEndTests.allowedWakeUps, "threads that woke while idle: \(wakeUps.filter { $0.value > 0 })")
    }

    // MARK: Faults: reported per book, never fatal, recovered from

    func testNoEvolutionDataIsReportedAndTheFirstAddressBookIsPickedUp() throws {
        let (fixture, eds) = try makeFixture()
        try fixture.start()
        let evolution = status(fixture)["evolution"] as? [String: Any]
        XCTAssertTrue((evolution?["problem"] as? String)?.contains("does not exist") == true, "\(String(describing: evolution))")
        XCTAssertTrue((status(fixture)["contacts"] as? Int ?? 0) > 0, "the contacts folder is still served")
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("evolution"), fixture.qactl(["status"]).stdout)

        // EDS starts for the first time and keeps a contact: picked up with no restart.
        try eds.start()
        _ = eds.add("Hedy Lamarr", star: true)
        XCTAssertTrue(waitUntil { self.book(fixture)?["favorites"] as? Int == 1 }, "\(books(fixture))\n\(fixture.log())")
        XCTAssertNil((status(fixture)["evolution"] as? [String: Any])?["problem"] as? String)
    }

    func testBookLockedLongerThanTheTimeoutIsReportedOnceAndRecovers() throws {
        let (fixture, eds) = try makeFixture()
        try eds.start()
        _ = eds.add("Hedy Lamarr", star: true)
        let locker = try lock(eds.database(), in: fixture)
        try fixture.start()
        XCTAssertTrue((book(fixture)?["problem"] as? String)?.contains("locked") == true, "\(books(fixture))")
        XCTAssertTrue((status(fixture)["contacts"] as? Int ?? 0) > 0, "the contacts folder is still served")
        // Retried on a timer while the lock lasts, logged once.
        XCTAssertTrue(waitUntil(timeout: 20) { fixture.log().contains("Retrying Evolution address book") }, fixture.log())
        locker.send("release")
        XCTAssertTrue(waitUntil(timeout: 20) { self.book(fixture)?["favorites"] as? Int == 1 }, "\(books(fixture))\n\(fixture.log())")
        XCTAssertNil(book(fixture)?["problem"] as? String)
        XCTAssertEqual(fixture.log().components(separatedBy: "stayed locked").count - 1, 1, fixture.log())
        XCTAssertEqual(fixture.log().components(separatedBy: "is readable again").count - 1, 1, fixture.log())
    }

    func testUnknownSchemaIsReportedAndRecoveredFrom() throws {
        let (fixture, eds) = try makeFixture()
        try eds.start()
        _ = eds.add("Hedy Lamarr", star: true)
        // A future EDS that keeps its cards elsewhere.
        sql(eds.database(), "ALTER TABLE folder_id RENAME COLUMN vcard TO vcard_v99; UPDATE folders SET version = 99;")
        try fixture.start()
        XCTAssertTrue((book(fixture)?["problem"] as? String)?.contains("schema") == true, "\(books(fixture))")
        XCTAssertTrue((status(fixture)["contacts"] as? Int ?? 0) > 0, "the contacts folder is still served")
        sql(eds.database(), "ALTER TABLE folder_id RENAME COLUMN vcard_v99 TO vcard; UPDATE folders SET version = 12;")
        XCTAssertTrue(waitUntil { self.book(fixture)?["favorites"] as? Int == 1 }, "\(books(fixture))\n\(fixture.log())")
        XCTAssertNil(book(fixture)?["problem"] as? String)
    }

    func testCorruptDatabaseIsReportedAndRecoveredFrom() throws {
        let (fixture, eds) = try makeFixture()
        try eds.start()
        _ = eds.add("Hedy Lamarr", star: true)
        try fixture.start()
        XCTAssertTrue(waitUntil { self.book(fixture)?["favorites"] as? Int == 1 }, "\(books(fixture))")
        let database = URL(fileURLWithPath: eds.database())
        let original = try Data(contentsOf: database)
        try Data(repeating: 0x5a, count: original.count).write(to: database)
        XCTAssertTrue(waitUntil { (self.book(fixture)?["problem"] as? String)?.contains("damaged") == true }, "\(books(fixture))\n\(fixture.log())")
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("damaged"))
        XCTAssertTrue((status(fixture)["contacts"] as? Int ?? 0) > 1, "the other sources are still served")
        try original.write(to: database)
        XCTAssertTrue(waitUntil { self.book(fixture)?["problem"] == nil }, "\(books(fixture))\n\(fixture.log())")
        XCTAssertEqual(book(fixture)?["favorites"] as? Int, 1)
        // EDS still works on it, and qactd follows.
        _ = eds.add("Radia Perlman", star: true)
        XCTAssertTrue(waitUntil { self.book(fixture)?["favorites"] as? Int == 2 }, "\(books(fixture))")
    }

    /// A book of many contacts: start-up parses only what can change the set, so the set is
    /// whole as soon as the daemon answers; a contact that is no favorite is found however early
    /// it is asked for, and `Status` counts every contact once the others are indexed.
    func testAManyContactBookIsServedWholeAtOnceAndItsOtherContactsFollow() throws {
        let (fixture, eds) = try makeFixture()
        try eds.start()
        _ = eds.add("Grace Hopper", star: true)
        let plain = eds.add("Plain Person", email: "plain@example.org")
        // 20,000 more, one in a hundred starred, written as EDS writes its rows (through its
        // client library as many take minutes).
        sql(eds.database(), """
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 19999)
            INSERT INTO folder_id (uid, Rev, file_as, full_name, vcard) SELECT 'bulk' || i, '2026-11-25T00:00:00Z', 'Bulk ' || i,
              'Bulk ' || i, 'BEGIN:VCARD' || char(13, 10) || 'VERSION:3.0' || char(13, 10) || 'UID:bulk' || i || char(13, 10)
              || 'FN:Bulk ' || i || char(13, 10) || CASE WHEN i % 100 = 0 THEN 'X-FOLKS-FAVOURITE:true' || char(13, 10) ELSE '' END
              || 'END:VCARD' FROM n;
            UPDATE keys SET value = 'bulk(1)' WHERE key = 'revision';
            """)
        try fixture.start()
        // The first set made (the settle time after start, whether or not the others are indexed
        // yet) already holds every favorite.
        var first: [String] = []
        XCTAssertTrue(waitUntil { first = self.favoriteTitles(fixture); return !first.isEmpty }, fixture.log())
        let contact = fixture.qactl(["contact", plain, "--json"])
        XCTAssertEqual(contact.status, 0, contact.stderr)
        XCTAssertEqual(((try? contact.json())?["contact"] as? [String: Any])?["name"] as? String, "Plain Person", contact.stdout)
        XCTAssertTrue(waitUntil { self.book(fixture)?["contacts"] as? Int == 20_002 && self.book(fixture)?["indexing"] == nil },
                      "\(books(fixture))\n\(fixture.log())")
        XCTAssertEqual(book(fixture)?["favorites"] as? Int, 201)
        XCTAssertNotEqual(fixture.qactl(["contact", "nobody"]).status, 0)
        let whole = favoriteTitles(fixture)
        XCTAssertTrue(Set(whole).isSuperset(of: ["Grace Hopper"] + stride(from: 0, to: 20_000, by: 100).map { "Bulk \($0)" }), "\(whole)")
        XCTAssertEqual(first.sorted(), whole.sorted(), "the first set is the one every contact gives")
    }

    func testUnparsableVCardIsListedAsInvalidAndTheRestIsServed() throws {
        let (fixture, eds) = try makeFixture()
        try eds.start()
        let hedy = eds.add("Hedy Lamarr", star: true)
        let broken = eds.add("Broken Card", star: true)
        try fixture.start()
        XCTAssertTrue(waitUntil { self.book(fixture)?["favorites"] as? Int == 2 }, "\(books(fixture))")
        // What EDS itself never writes: a card with a line that is no property, as a bug or another
        // program could leave it, with a new revision as every write makes. Changed in place, the
        // newest row keeps its rowid: the reader finds it no longer the row it knew there.
        sql(eds.database(), """
            UPDATE folder_id SET vcard = 'BEGIN:VCARD' || char(13, 10) || 'VERSION:3.0' || char(13, 10) || 'no colon here'
              || char(13, 10) || 'END:VCARD', Rev = 'broken' WHERE uid = '\(broken)';
            UPDATE keys SET value = 'broken(1)' WHERE key = 'revision';
            """)
        XCTAssertTrue(waitUntil { self.book(fixture)?["invalidCards"] as? Int == 1 }, "\(books(fixture))\n\(fixture.log())")
        let invalid = status(fixture)["invalidFiles"] as? [[String: Any]] ?? []
        XCTAssertTrue(invalid.contains { ($0["path"] as? String) == "eds:system-address-book/\(broken)" }, "\(invalid)")
        XCTAssertEqual(book(fixture)?["favorites"] as? Int, 1)
        XCTAssertEqual(fixture.qactl(["contact", hedy]).status, 0)
        // Deleted through EDS: the book is whole again.
        eds.call(["op": "delete", "uid": broken])
        XCTAssertTrue(waitUntil { self.book(fixture)?["invalidCards"] as? Int == 0 }, "\(books(fixture))")
        XCTAssertTrue((status(fixture)["invalidFiles"] as? [[String: Any]] ?? []).isEmpty)
    }
}
