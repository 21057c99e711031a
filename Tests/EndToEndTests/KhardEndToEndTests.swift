import Foundation
import TestSupport
import XCTest

/// A person who keeps a vdir with khard (and vdirsyncer): the built qactd, started with no
/// configuration file at all, follows the folders `$XDG_CONFIG_HOME/khard/khard.conf` names,
/// with Debian's own `khard` writing the cards, and follows that file as it is edited.
final class KhardEndToEndTests: XCTestCase {
    private var fixture: DaemonFixture!
    private var home = ""
    private var configHome = ""
    private var khardConf: String { configHome + "/khard/khard.conf" }
    /// The contacts folder qactd reads with nothing configured.
    private var defaultFolder: String { home + "/.local/share/contacts" }

    override func setUpWithError() throws {
        guard runCommand(["khard", "--version"]).status == 0 else {
            throw unavailable("khard is not installed (scripts/install-deps --test installs it)")
        }
        fixture = try DaemonFixture(copyDemo: false)
        let root = fixture.root.path
        home = root + "/home"
        configHome = root + "/config"
        let runtime = root + "/runtime-user"
        for folder in [home + "/.contacts/family", home + "/.contacts/friends", configHome + "/khard", defaultFolder, root + "/share", root + "/etc-xdg"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        fixture.daemonEnvironment = [
            "HOME": home, "XDG_CONFIG_HOME": configHome, "XDG_DATA_HOME": home + "/.local/share",
            "XDG_CACHE_HOME": root + "/cache", "XDG_DATA_DIRS": root + "/share", "XDG_CONFIG_DIRS": root + "/etc-xdg",
            "XDG_RUNTIME_DIR": runtime, "XDG_CURRENT_DESKTOP": "", "CONTACTS_ROOT": home + "/.contacts",
        ]
        fixture.socketPathOverride = runtime + "/qactd/qactd.sock"
        try writeKhardConf(books: """
            [[family]]
            path = ~/.contacts/family/
            [[friends]]
            path = "$HOME/.contacts/friends"   # as vdirsyncer keeps it
            """)
    }

    override func tearDown() {
        fixture?.stop()
        fixture = nil
    }

    /// The way an editor saves: a temporary file renamed over the old one.
    private func replace(_ path: String, with text: String) throws {
        try text.write(toFile: path + ".swp~", atomically: false, encoding: .utf8)
        XCTAssertEqual(rename(path + ".swp~", path), 0)
    }

    private func writeKhardConf(books: String) throws {
        try replace(khardConf, with: """
            [addressbooks]
            \(books)
            [general]
            editor = /bin/true
            merge_editor = /bin/true
            [vcard]
            preferred_version = 4.0
            """)
    }

    /// `khard new` in `book` from a template, as the person types it; returns the card's UID.
    private func khardNew(_ name: String, email: String, book: String, categories: String? = nil) throws -> String {
        let template = fixture.root.path + "/new.yaml"
        let parts = name.split(separator: " ")
        try """
            Formatted name : \(name)
            First name : \(parts[0])
            Last name : \(parts[1])
            Email :
                home : \(email)
            \(categories.map { "Categories : \($0)" } ?? "")
            """.write(toFile: template, atomically: true, encoding: .utf8)
        let made = runCommand(
            ["khard", "new", "--vcard-version", "4.0", "-a", book, "-i", template],
            environment: ["HOME": home, "XDG_CONFIG_HOME": configHome, "CONTACTS_ROOT": home + "/.contacts", "EDITOR": "true"])
        XCTAssertEqual(made.status, 0, made.output)
        let uid = try XCTUnwrap(made.output.split(separator: "\n").first { $0.contains("UID:") }?.split(separator: " ").last.map(String.init))
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(home)/.contacts/\(book)/\(uid).vcf"), "khard writes one card per file")
        return uid
    }

    /// The contacts the launcher is offered now, by identifier.
    private func shown() -> [String] {
        let items = (try? fixture.qactl(["list", "--json"]).json())?["items"] as? [[String: Any]] ?? []
        return items.compactMap { (($0["item"] as? [String: Any])?["userInfo"] as? [String: Any])?["contactIdentifier"] as? String }.sorted()
    }

    private func khardStatus() -> [String: Any] {
        (try? fixture.qactl(["status", "--json"]).json())?["khard"] as? [String: Any] ?? [:]
    }

    private func books() -> [String: [String: Any]] {
        let books = khardStatus()["books"] as? [[String: Any]] ?? []
        return Dictionary(books.map { ($0["name"] as? String ?? "", $0) }) { first, _ in first }
    }

    private func waitShown(_ expected: [String], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(waitUntil(timeout: 10) { self.shown() == expected.sorted() },
                      "\(what): \(shown()) instead of \(expected.sorted())\n\(fixture.qactl(["status"]).stdout)\n\(fixture.log())", file: file, line: line)
    }

    func testFavoritesKhardWroteAreQuickActionsWithNoConfigurationAndFollowedLive() throws {
        let ada = try khardNew("Ada Lovelace", email: "ada@example.org", book: "family")
        let grace = try khardNew("Grace Hopper", email: "grace@example.org", book: "friends", categories: "starred")
        try ContactCard.vCard("Linus Default", favorite: true, uid: "linus").write(
            toFile: defaultFolder + "/linus.vcf", atomically: true, encoding: .utf8)

        try fixture.start(configured: false)
        XCTAssertNil(try fixture.qactl(["status", "--json"]).json()["configFile"], "no configuration of qactd's")
        waitShown([grace, "linus"], "the starred card khard wrote and the default folder's favorite")
        XCTAssertEqual(khardStatus()["configFile"] as? String, khardConf)
        XCTAssertEqual(books()["family"]?["folder"] as? String, home + "/.contacts/family")
        XCTAssertEqual(books()["friends"]?["state"] as? String, "watching")
        XCTAssertEqual(try fixture.qactl(["status", "--json"]).json()["contacts"] as? Int, 3)
        let human = fixture.qactl(["status"]).stdout
        XCTAssertTrue(human.contains("family: \(home)/.contacts/family, watching"), human)
        XCTAssertTrue(human.contains("khard's address books family, friends"), human)

        // Starred the way another program (GNOME Contacts through a sync) writes it: the card
        // rewritten with X-FOLKS-FAVOURITE, saved through a temporary file.
        let adaFile = "\(home)/.contacts/family/\(ada).vcf"
        let card = try String(contentsOfFile: adaFile, encoding: .utf8)
        try replace(adaFile, with: card.replacingOccurrences(of: "END:VCARD", with: "X-FOLKS-FAVOURITE:true\r\nEND:VCARD"))
        waitShown([ada, grace, "linus"], "Ada starred in her card")

        // A new card, written by khard while the daemon serves.
        let hedy = try khardNew("Hedy Lamarr", email: "hedy@example.org", book: "family", categories: "favorite")
        waitShown([ada, grace, hedy, "linus"], "a new starred card")

        // Removed with khard.
        let removed = runCommand(["khard", "remove", "--force", "uid:\(grace)"], environment: ["HOME": home, "XDG_CONFIG_HOME": configHome])
        XCTAssertEqual(removed.status, 0, removed.output)
        waitShown([ada, hedy, "linus"], "Grace removed")
    }

    func testKhardConfigurationEditedCreatedBrokenAndRemovedIsFollowedWithoutRestart() throws {
        try FileManager.default.removeItem(atPath: khardConf)
        try fixture.start(configured: false)
        XCTAssertEqual(khardStatus()["configFile"] as? String, khardConf, "looked for even while missing")
        XCTAssertEqual(books().count, 0)

        // The file created: both books followed, their favorites shown.
        try writeKhardConf(books: "[[family]]\npath = ~/.contacts/family\n[[friends]]\npath = ${CONTACTS_ROOT}/friends\n")
        let ada = try khardNew("Ada Lovelace", email: "ada@example.org", book: "family", categories: "starred")
        let grace = try khardNew("Grace Hopper", email: "grace@example.org", book: "friends", categories: "starred")
        waitShown([ada, grace], "both books' favorites once khard.conf exists")

        // Edited: friends dropped, a book whose folder is missing added.
        try writeKhardConf(books: "[[family]]\npath = ~/.contacts/family\n[[work]]\npath = ~/.contacts/work\n")
        waitShown([ada], "the dropped book's contacts are gone")
        XCTAssertTrue(waitUntil { self.books()["work"]?["state"] as? String == "reattaching" }, "\(khardStatus())")
        let problem = try XCTUnwrap(books()["work"]?["problem"] as? String)
        XCTAssertTrue(problem.contains(home + "/.contacts/work") && problem.contains(khardConf), problem)
        let human = fixture.qactl(["status"]).stdout
        XCTAssertTrue(human.contains("work: \(home)/.contacts/work, reattaching — the folder \"\(home)/.contacts/work\" that \(khardConf) names is missing"), human)

        // The missing folder appears, with a favorite in it.
        try FileManager.default.createDirectory(atPath: home + "/.contacts/work", withIntermediateDirectories: true)
        try ContactCard.vCard("Katherine Johnson", favorite: true, uid: "katherine").write(
            toFile: home + "/.contacts/work/katherine.vcf", atomically: true, encoding: .utf8)
        waitShown([ada, "katherine"], "the folder followed once it appears")
        XCTAssertEqual(books()["work"]?["state"] as? String, "watching")

        // A broken file is reported with its line; the books it named keep serving.
        try writeKhardConf(books: "[[family]]\npath ~/.contacts/family\n")
        XCTAssertTrue(waitUntil { (self.khardStatus()["problem"] as? String)?.contains("\(self.khardConf), line 3: expected [section] or key = value") == true },
                      "\(khardStatus())")
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("line 3: expected [section] or key = value"))
        XCTAssertEqual(shown(), [ada, "katherine"].sorted())

        // Removed: khard's contacts go, the daemon serves on.
        try FileManager.default.removeItem(atPath: khardConf)
        waitShown([], "no khard books without khard.conf")
        XCTAssertNil(khardStatus()["problem"])
        XCTAssertEqual(fixture.qactl(["status"]).status, 0)
    }

    func testAnExplicitDirectoryKeepsKhardBooksAndKhardNoneTurnsThemOff() throws {
        let ada = try khardNew("Ada Lovelace", email: "ada@example.org", book: "family", categories: "starred")
        // The friends book is the contacts folder itself: read once, as part of it.
        try ContactCard.vCard("Grace Hopper", favorite: true, uid: "grace").write(
            toFile: home + "/.contacts/friends/grace.vcf", atomically: true, encoding: .utf8)
        func configure(directory: String, khard: String = "") throws {
            try "[Contacts]\nDirectory=\(directory)\n\(khard)\n".write(to: fixture.configFile, atomically: true, encoding: .utf8)
        }
        func contacts() -> Int? { (try? fixture.qactl(["status", "--json"]).json())?["contacts"] as? Int }
        try configure(directory: home + "/.contacts/friends")
        try fixture.start()
        waitShown([ada, "grace"], "Directory= and the khard book beside it")
        XCTAssertEqual(books()["friends"]?["state"] as? String, "skipped")
        XCTAssertEqual(books()["family"]?["state"] as? String, "watching")
        XCTAssertEqual(contacts(), 2, "Grace indexed once")

        // Directory= around both books: the folder reads them, each once.
        try configure(directory: home + "/.contacts")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        XCTAssertEqual(books()["family"]?["state"] as? String, "skipped")
        XCTAssertEqual(shown(), [ada, "grace"].sorted(), "the book the folder took in stays")
        XCTAssertEqual(contacts(), 2)

        // And back: the book is khard's again.
        try configure(directory: home + "/.contacts/friends")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        XCTAssertEqual(books()["family"]?["state"] as? String, "watching")
        XCTAssertEqual(shown(), [ada, "grace"].sorted(), "the book the folder let go of is read again")
        XCTAssertEqual(contacts(), 2)

        try configure(directory: home + "/.contacts/friends", khard: "Khard=none")
        let check = DaemonFixture.run(DaemonFixture.qactd, ["--check-config", fixture.configFile.path])
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        waitShown(["grace"], "Khard=none reads no khard book")
        XCTAssertTrue(khardStatus().isEmpty)

        try configure(directory: home + "/.contacts/friends", khard: "Khard=sometimes")
        let refused = DaemonFixture.run(DaemonFixture.qactd, ["--check-config", fixture.configFile.path])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stderr.contains(":3: [Contacts] Khard: \"sometimes\" is not one of \"auto\" or \"none\""), refused.stderr)
    }
}
