import Contacts
import Foundation
import TestSupport
import Logging
import XCTest

@testable import QuickActionsDaemon

/// Start-up's read of the address books, favorites first: what it hands the core before the
/// daemon serves must give the same set, and the same contacts for the pins and duplicates, as
/// reading every row; what `finishFirstReads` adds must make the index exactly the full read's,
/// even when the books were written in between. Real SQLite files in EDS's tables, written as
/// EDS writes them.
final class EvolutionFavoritesFirstTests: XCTestCase {
    private var root: URL!
    private var location: EvolutionLocation!
    private var revision = 0
    private let settings = EvolutionSettings(selection: .all, favoriteCategories: ["vip"], maxCardBytes: 100_000)

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else {
            throw unavailable("sqlite3 is not installed: run scripts/install-deps --test")
        }
        root = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-eds-first-\(UUID().uuidString)")
        location = EvolutionLocation(
            dataHome: root.appendingPathComponent("data").path, configHome: root.appendingPathComponent("config").path,
            cacheHome: root.appendingPathComponent("cache").path)
        try FileManager.default.createDirectory(atPath: location.sourcesFolder, withIntermediateDirectories: true)
        for book in [EvolutionLocation.systemSourceUID, "work"] {
            try FileManager.default.createDirectory(atPath: location.bookFolder(forSource: book), withIntermediateDirectories: true)
            try sql(book, """
                CREATE TABLE folders (folder_id TEXT PRIMARY KEY, version INTEGER, multivalues TEXT, lc_collate TEXT, countrycode VARCHAR(2));
                INSERT INTO folders VALUES ('folder_id', 12, '', '', '');
                CREATE TABLE keys (key TEXT PRIMARY KEY, value TEXT, folder_id TEXT REFERENCES folders);
                CREATE TABLE folder_id (uid TEXT PRIMARY KEY, Rev TEXT, file_as TEXT, full_name TEXT, vcard TEXT, bdata TEXT)
                """)
        }
        // The registry's file: a book other than the built-in one is read only while it has one.
        XCTAssertTrue(FileManager.default.createFile(atPath: location.sourceFile(forSource: "work"), contents: Data("[Data Source]\nDisplayName=Work\n\n[Address Book]\nBackendName=local\n".utf8)))
    }

    override func tearDownWithError() throws {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// Runs `statements` and a new `revision` in one transaction, as EDS commits a change.
    private func sql(_ book: String, _ statements: String) throws {
        revision += 1
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [
            location.database(forSource: book),
            "BEGIN; \(statements); INSERT or REPLACE INTO keys (key, value, folder_id) VALUES ('revision', '2026-11-25T00:00:00Z(\(revision))', 'folder_id'); COMMIT;",
        ]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "sqlite3: \(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
    }

    /// An `INSERT or REPLACE` of a row whose vCard has `lines` between its name and its end.
    private func row(_ uid: String, _ name: String, _ lines: String = "", cardUID: String? = nil) -> String {
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(cardUID ?? uid)\r\nFN:\(name)\r\nEMAIL:\(uid)@example.org\r\n\(lines)END:VCARD"
        return "INSERT or REPLACE INTO folder_id (uid, Rev, full_name, vcard) VALUES ('\(uid)', '2026-11-25T00:00:00Z', '\(name)', '\(card)')"
    }

    private let star = "X-FOLKS-FAVOURITE:true\r\n"

    private func engine() -> EvolutionEngine {
        EvolutionEngine(settings: settings, location: location, logger: Logger(label: "test"))
    }

    /// Every book read whole, as a reload reads them.
    private func fullIndex() -> ContactIndex {
        let full = engine()
        full.reload(settings)
        var index = ContactIndex()
        index.apply(full.takeUpdate(force: true))
        full.closeInotify()
        return index
    }

    private func assertSameContacts(_ index: ContactIndex, _ expected: ContactIndex, _ identifiers: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(index.favorites, expected.favorites, "favorites", file: file, line: line)
        XCTAssertEqual(index.contactCount, expected.contactCount, "contacts", file: file, line: line)
        for identifier in identifiers {
            XCTAssertEqual(index.contact(identifier: identifier), expected.contact(identifier: identifier), identifier, file: file, line: line)
            XCTAssertEqual(index.filePath(identifier: identifier), expected.filePath(identifier: identifier), identifier, file: file, line: line)
        }
    }

    func testFavoritesPinsAndDuplicatesComeFirstAndTheRestMakesTheFullIndex() throws {
        let system = EvolutionLocation.systemSourceUID
        try sql(system, [
            row("s0", "Starred by folks", star), row("s1", "Starred by category", "CATEGORIES:Friends,VIP\r\n"),
            row("s2", "Plain"), row("pinned", "Pinned, no star"), row("both", "In both books, plain here"),
            // A starred card naming another contact than its row, and that contact's own row.
            row("r1", "Names x1", star, cardUID: "x1"), row("x1", "The row x1"),
        ].joined(separator: "; ") + "; " + (0..<50).map { row("n\($0)", "Plain \($0)") }.joined(separator: "; "))
        try sql("work", [row("both", "In both books, starred here", star), row("w1", "Work plain"), row("s2", "Plain in both")].joined(separator: "; "))
        let identifiers = ["s0", "s1", "s2", "pinned", "both", "x1", "w1", "n0", "n49"]
        let expected = fullIndex()
        XCTAssertEqual(expected.contact(identifier: "both")?.favorite, false, "the built-in book's row comes first (path order)")

        let engine = engine()
        engine.start(favoritesFirst: ["pinned"])
        var index = ContactIndex()
        let first = try XCTUnwrap(engine.takeUpdate(force: true))
        index.apply(first)
        let paths = Set(first.changes.compactMap { change -> String? in if case .file(let path, _) = change { return path } else { return nil } })
        XCTAssertEqual(paths, Set([
            "s0", "s1", "pinned", "both", "r1", "x1",  // favorites, the pin, the duplicate, the row naming x1 and x1's row
        ].map { EvolutionCards.path(book: system, uid: $0) } + ["both"].map { EvolutionCards.path(book: "work", uid: $0) }),
                       "only what can matter to the set is parsed first")
        XCTAssertEqual(index.favorites, expected.favorites, "the set before the daemon serves is the full read's")
        for identifier in ["pinned", "both", "x1"] {
            XCTAssertEqual(index.contact(identifier: identifier), expected.contact(identifier: identifier), identifier)
        }
        XCTAssertEqual(first.info?.books.map(\.indexing), [true, true])
        XCTAssertEqual(first.info?.books.map(\.favorites), [3, 1], "the favorite counts are whole already")

        XCTAssertTrue(engine.finishFirstReads())
        // In parts, as the core gets them (calls are answered between parts): every part but the
        // last shows the books as they were, still indexing.
        engine.updateLimit = 16
        let parts = engine.takeUpdates(afterReload: false)
        XCTAssertEqual(parts.count, 4, "the other 53 rows in parts of 16")
        XCTAssertEqual(parts.dropLast().map { $0.info?.books.map(\.indexing) }, Array(repeating: [true, true], count: 3))
        XCTAssertEqual(parts.dropLast().map(\.changes.count), [16, 16, 16])
        for part in parts.dropLast() { index.apply(part) }
        let rest = try XCTUnwrap(parts.last)
        index.apply(rest)
        assertSameContacts(index, expected, identifiers)
        XCTAssertEqual(rest.info?.books.map(\.indexing), [nil, nil])
        XCTAssertEqual(rest.info?.books.map(\.contacts), [57, 3])
        XCTAssertFalse(engine.finishFirstReads(), "once")
        engine.closeInotify()
    }

    func testWritesBetweenTheFavoritesAndTheRestAreSeen() throws {
        let system = EvolutionLocation.systemSourceUID
        try sql(system, [row("s0", "Starred", star), row("s1", "Starred too", star)].joined(separator: "; ") + "; "
            + (0..<20).map { row("n\($0)", "Plain \($0)") }.joined(separator: "; "))
        let engine = engine()
        engine.start(favoritesFirst: [])
        var index = ContactIndex()
        index.apply(engine.takeUpdate(force: true))
        XCTAssertEqual(index.favorites.map(\.identifier).sorted(), ["s0", "s1"])
        // A favorite deleted, another unstarred, a plain row starred, one deleted, one added.
        try sql(system, "DELETE FROM folder_id WHERE uid IN ('s0', 'n3'); " + row("s1", "Unstarred") + "; " + row("n5", "Starred now", star)
            + "; " + row("n99", "Added"))
        XCTAssertTrue(engine.finishFirstReads())
        index.apply(engine.takeUpdate(force: false))
        assertSameContacts(index, fullIndex(), ["s0", "s1", "n3", "n5", "n99", "n0"])
        XCTAssertEqual(index.favorites.map(\.identifier), ["n5"])
        XCTAssertEqual(index.contactCount, 21)
        engine.closeInotify()
    }
}
