import Contacts
import Foundation
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// The reader's passes over a real SQLite file in the tables and columns of EDS's
/// `e-book-sqlite.c`, written with the statements EDS uses (`INSERT or REPLACE` for an add or an
/// edit, `DELETE … WHERE uid IN`, the `revision` key), each step in one transaction: what a pass
/// reads whole and what it names removed, including the cases only the count or the rowids give away.
final class EvolutionBookReaderTests: XCTestCase {
    private var folder: URL!
    private var database: String { folder.appendingPathComponent("contacts.db").path }
    private var contents = EvolutionBookContents()
    private var revision = 0
    private let options = EvolutionCards.parsingOptions(favoriteCategories: [])

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else {
            throw unavailable("sqlite3 is not installed: run scripts/install-deps --test")
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-eds-reader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try write("""
            CREATE TABLE folders (folder_id TEXT PRIMARY KEY, version INTEGER, multivalues TEXT, lc_collate TEXT, countrycode VARCHAR(2));
            INSERT INTO folders VALUES ('folder_id', 12, '', '', '');
            CREATE TABLE keys (key TEXT PRIMARY KEY, value TEXT, folder_id TEXT REFERENCES folders);
            CREATE TABLE folder_id (uid TEXT PRIMARY KEY, Rev TEXT, file_as TEXT, full_name TEXT, vcard TEXT, bdata TEXT);
            """)
    }

    override func tearDownWithError() throws {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    /// Runs `sql` and a new `revision` in one transaction, as EDS commits a change.
    private func write(_ sql: String) throws {
        revision += 1
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [
            database,
            "BEGIN; \(sql); INSERT or REPLACE INTO keys (key, value, folder_id) VALUES ('revision', '2026-11-25T00:00:00Z(\(revision))', 'folder_id'); COMMIT;",
        ]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, "sqlite3: \(message)")
    }

    private func card(_ uid: String, _ name: String, star: Bool) -> String {
        let flag = star ? "X-FOLKS-FAVOURITE:true\r\n" : ""
        return "INSERT or REPLACE INTO folder_id (uid, Rev, full_name, vcard) VALUES ('\(uid)', '2026-11-25T00:00:00Z', '\(name)', "
            + "'BEGIN:VCARD\r\nVERSION:3.0\r\nUID:\(uid)\r\nFN:\(name)\r\n\(flag)REV:2026-11-25T00:00:00Z\r\nEND:VCARD')"
    }

    /// One pass, applied as the engine applies it: the uids read whole and the uids removed.
    private func pass() throws -> (read: [String], removed: [String])? {
        guard let pass = try EvolutionBookReader.read(database: database, known: contents, maxCardBytes: 100_000, options: options) else {
            return nil
        }
        for uid in pass.removed { contents.remove(uid: uid) }
        for row in pass.read { contents.record(uid: row.uid, version: row.version, result: row.result) }
        contents.revision = pass.revision
        return (pass.read.map(\.uid).sorted(), pass.removed)
    }

    private func assertPass(read: [String], removed: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try pass()
        XCTAssertEqual(result?.read, read, "read whole", file: file, line: line)
        XCTAssertEqual(result?.removed, removed, "removed", file: file, line: line)
    }

    func testEditsAddsAndDeletesReadOnlyWhatChanged() throws {
        try write((0..<5).map { card("p\($0)", "Person \($0)", star: $0 == 0) }.joined(separator: ";"))
        try assertPass(read: ["p0", "p1", "p2", "p3", "p4"], removed: [])
        XCTAssertNil(try pass(), "an unchanged revision reads nothing else")
        XCTAssertEqual([contents.contacts, contents.favorites], [5, 1])

        // An edit of a middle row, then twice of the same row (the highest after the first).
        try write(card("p2", "Person 2 edited", star: true))
        try assertPass(read: ["p2"], removed: [])
        try write(card("p2", "Person 2 edited again", star: false))
        try assertPass(read: ["p2"], removed: [])
        XCTAssertEqual([contents.contacts, contents.favorites], [5, 1])

        // A delete and an add in one transaction leave the count of rows as it was.
        try write("DELETE FROM folder_id WHERE uid IN ('p1'); " + card("p5", "Person 5", star: true))
        try assertPass(read: ["p5"], removed: ["p1"])
        // A delete alone, and an edit with a delete.
        try write("DELETE FROM folder_id WHERE uid IN ('p3')")
        try assertPass(read: [], removed: ["p3"])
        try write("DELETE FROM folder_id WHERE uid IN ('p4'); " + card("p0", "Person 0 edited", star: false))
        try assertPass(read: ["p0"], removed: ["p4"])
        XCTAssertEqual([contents.contacts, contents.favorites], [3, 1])
        XCTAssertEqual(contents.rows.keys.sorted(), ["p0", "p2", "p5"])
    }

    func testRowidsGivenAgainAfterTheHighestRowsWentAwayAreFound() throws {
        try write((0..<4).map { card("p\($0)", "Person \($0)", star: false) }.joined(separator: ";"))
        try assertPass(read: ["p0", "p1", "p2", "p3"], removed: [])
        // The two highest rows go and two others come in one transaction: SQLite gives them the
        // same rowids again, above no known row, and the count is unchanged.
        try write("DELETE FROM folder_id WHERE uid IN ('p2', 'p3'); " + card("q1", "Q 1", star: true) + ";" + card("q2", "Q 2", star: false))
        try assertPass(read: ["q1", "q2"], removed: ["p2", "p3"])
        XCTAssertEqual([contents.contacts, contents.favorites], [4, 1])
        // Every row goes, then one comes.
        try write("DELETE FROM folder_id")
        try assertPass(read: [], removed: ["p0", "p1", "q1", "q2"])
        try write(card("r", "R", star: true))
        try assertPass(read: ["r"], removed: [])
        XCTAssertEqual([contents.contacts, contents.favorites], [1, 1])
    }

    /// A first read of more rows than one thread parses: every row comes back in rowid order,
    /// parsed as alone, including a row without a vCard, one that is no vCard and one over the
    /// size limit; and the rows written after it are read alone.
    func testAFirstReadOfManyRowsParsesEveryRowInOrder() throws {
        let rows = 3 * EvolutionUnparsedRows.parallelRows
        let line = "char(13, 10)"
        try write("""
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows - 1))
            INSERT INTO folder_id (uid, Rev, full_name, vcard) SELECT 'p' || i, '2026-11-25T00:00:00Z', 'Person ' || i,
              'BEGIN:VCARD' || \(line) || 'VERSION:3.0' || \(line) || 'UID:p' || i || \(line) || 'N:' || i || ';Person;;;' || \(line)
              || CASE WHEN i % 100 = 0 THEN 'X-FOLKS-FAVOURITE:true' || \(line) ELSE '' END || 'END:VCARD' FROM n;
            UPDATE folder_id SET vcard = NULL WHERE uid = 'p7';
            UPDATE folder_id SET vcard = 'not a vCard' WHERE uid = 'p8';
            UPDATE folder_id SET vcard = 'BEGIN:VCARD' || \(line) || 'FN:' || printf('%0300d', 0) || \(line) || 'END:VCARD' WHERE uid = 'p9'
            """)
        let limit = 250
        let pass = try XCTUnwrap(EvolutionBookReader.read(database: database, known: contents, maxCardBytes: limit, options: options))
        XCTAssertEqual(pass.read.map(\.uid), (0..<rows).map { "p\($0)" })
        XCTAssertEqual(pass.read.map(\.version.rowID), (1...Int64(rows)).map { $0 })
        for (number, row) in pass.read.enumerated() {
            switch (number, row.result) {
            case (7, .failure(.unreadable)), (8, .failure(.parse)), (9, .failure(.tooLarge(size: 327, limit: limit))):
                continue
            case (_, .success(let contacts)) where number > 9 || number < 7:
                XCTAssertEqual(contacts.map(\.name), ["Person \(number)"], "p\(number)")
                XCTAssertEqual(contacts.map(\.favorite), [number % 100 == 0], "p\(number)")
            default:
                XCTFail("p\(number): \(row.result)")
            }
        }
        for row in pass.read { contents.record(uid: row.uid, version: row.version, result: row.result) }
        contents.revision = pass.revision
        XCTAssertEqual([contents.contacts, contents.favorites, contents.invalidCards], [rows - 3, (rows + 99) / 100, 3])
        try write(card("p8", "Person 8", star: true))
        try assertPass(read: ["p8"], removed: [])
        XCTAssertEqual([contents.contacts, contents.favorites, contents.invalidCards], [rows - 2, (rows + 99) / 100 + 1, 2])
    }

    /// Start-up's first read of a large book (with gaps in the rowids, as deletions leave them):
    /// every row is found exactly once, copied whole when its vCard may give a favorite or is not
    /// plain, else only named.
    func testAFirstReadFavoritesFirstFindsEveryRowOnceAndCopiesOnlyTheOnesToParse() throws {
        let rows = 20_000
        let line = "char(13, 10)"
        try write("""
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows - 1))
            INSERT INTO folder_id (uid, Rev, full_name, vcard) SELECT 'p' || i, '2026-11-25T00:00:00Z', 'Person ' || i,
              'BEGIN:VCARD' || \(line) || 'VERSION:3.0' || \(line) || 'UID:p' || i || \(line) || 'FN:Person ' || i || \(line)
              || CASE WHEN i % 100 = 0 THEN 'X-FOLKS-FAVOURITE:true' || \(line) ELSE '' END || 'END:VCARD' FROM n;
            DELETE FROM folder_id WHERE uid IN ('p5', 'p9000', 'p19999');
            UPDATE folder_id SET vcard = NULL WHERE uid = 'p7';
            UPDATE folder_id SET vcard = 'BEGIN:VCARD' || \(line) || 'UID:other' || \(line) || 'END:VCARD' WHERE uid = 'p8'
            """)
        let first = try EvolutionBookReader.readFavoritesFirst(database: database, maxCardBytes: 100_000)
        XCTAssertEqual(first.revision, "2026-11-25T00:00:00Z(\(revision))")
        let copied = first.rows.uids
        XCTAssertEqual(Set(copied), Set(stride(from: 0, to: rows, by: 100).filter { $0 != 9000 }.map { "p\($0)" } + ["p7", "p8"]),
                       "the starred rows, the one without a vCard and the one whose UID is not its row's")
        XCTAssertEqual(copied.count, Set(copied).count, "no row twice")
        XCTAssertEqual(copied.count + first.plain, rows - 3, "every row, copied or counted")
        // A plain row is found by its uid, the table's key.
        let found = try EvolutionBookReader.readRows(database: database, uids: ["p3", "nobody", "p9000", "p19998"], maxCardBytes: 100_000)
        XCTAssertEqual(found.uids, ["p3", "p19998"])
        XCTAssertEqual(found.parsed(options: options).map { try? $0.result.get().map(\.name) }, [["Person 3"], ["Person 19998"]])
    }

    func testTheHighestKnownRowidFollowsRecordsAndRemovals() {
        var contents = EvolutionBookContents()
        let card: Result<[Contact], ContactFileProblem> = .success([Contact(identifier: "x", name: "x", favorite: false)])
        XCTAssertNil(contents.highestRowID)
        for (uid, rowID) in [("a", 1), ("b", 2), ("c", 3)] {
            contents.record(uid: uid, version: EvolutionRowVersion(rowID: Int64(rowID), rev: "r"), result: card)
        }
        XCTAssertEqual(contents.highestRowID, 3)
        contents.record(uid: "c", version: EvolutionRowVersion(rowID: 4, rev: "r"), result: card)
        XCTAssertEqual(contents.highestRowID, 4, "the highest row rewritten")
        contents.remove(uid: "c")
        XCTAssertEqual(contents.highestRowID, 2, "the highest row deleted")
        contents.record(uid: "a", version: EvolutionRowVersion(rowID: 1, rev: "s"), result: card)
        XCTAssertEqual(contents.highestRowID, 2)
        contents.remove(uid: "a")
        contents.remove(uid: "b")
        XCTAssertNil(contents.highestRowID)
    }
}
