import Contacts
import XCTest

@testable import QuickActionsDaemon

/// The pure part of reading an Evolution address book: which rows a pass reads whole, the
/// counts `Status` shows, the index paths, the favorite rules and the `Evolution=` values.
final class EvolutionBookContentsTests: XCTestCase {
    private func version(_ rowID: Int64, _ rev: String = "2026-11-25T17:04:09Z") -> EvolutionRowVersion {
        EvolutionRowVersion(rowID: rowID, rev: rev)
    }

    private func contact(_ identifier: String, favorite: Bool) -> Result<[Contact], ContactFileProblem> {
        .success([Contact(identifier: identifier, name: identifier, favorite: favorite)])
    }

    func testOnlyRowsWithAnotherRowidUidOrRevAreReadAgainAndMissingOnesAreRemoved() {
        var contents = EvolutionBookContents()
        contents.record(uid: "a", version: version(1), result: contact("a", favorite: true))
        contents.record(uid: "b", version: version(2), result: contact("b", favorite: false))
        contents.record(uid: "c", version: version(3), result: contact("c", favorite: false))
        func current(_ rowID: Int64, _ uid: String, _ rev: String = "2026-11-25T17:04:09Z") -> Bool {
            contents.isCurrent(rowID: rowID, uid: Array(uid.utf8), rev: Array(rev.utf8))
        }
        XCTAssertTrue(current(1, "a"))
        // b rewritten in the same second: EDS's Rev is unchanged, its rowid is not.
        XCTAssertFalse(current(4, "b"))
        // SQLite gave the deleted last row's rowid to another contact, or to the same one later.
        XCTAssertFalse(current(3, "d"))
        XCTAssertFalse(current(3, "c", "2026-11-25T17:05:00Z"))
        XCTAssertEqual(contents.removedUIDs(current: [1]), ["b", "c"])
        XCTAssertEqual(contents.removedUIDs(current: [1, 2, 3]), [])
        contents.record(uid: "b", version: version(4), result: contact("b", favorite: true))
        XCTAssertTrue(current(4, "b"))
        XCTAssertFalse(current(2, "b"), "the old row is forgotten")
        XCTAssertEqual(contents.count, 3)
    }

    func testCountsFollowRecordsAndRemovals() {
        var contents = EvolutionBookContents()
        contents.record(uid: "a", version: version(1), result: contact("a", favorite: true))
        contents.record(uid: "b", version: version(2), result: .failure(.parse(.noVCard)))
        XCTAssertEqual([contents.contacts, contents.favorites, contents.invalidCards], [1, 1, 1])
        contents.record(uid: "a", version: version(3), result: contact("a", favorite: false))
        contents.record(uid: "b", version: version(4), result: contact("b", favorite: true))
        XCTAssertEqual([contents.contacts, contents.favorites, contents.invalidCards], [2, 1, 0])
        contents.remove(uid: "b")
        contents.remove(uid: "unknown")
        XCTAssertEqual([contents.contacts, contents.favorites, contents.invalidCards], [1, 0, 0])
    }

    func testIndexPathsKeepTheBookApartFromTheRow() {
        XCTAssertEqual(EvolutionCards.path(book: "system-address-book", uid: "pas-id-1"), "eds:system-address-book/pas-id-1")
        XCTAssertEqual(EvolutionCards.path(book: "b1", uid: "http://x/y%z"), "eds:b1/http:%2F%2Fx%2Fy%25z")
        XCTAssertEqual(EvolutionCards.treePrefix(book: "b1"), "eds:b1")
        var index = ContactIndex()
        index.apply(path: EvolutionCards.path(book: "b1", uid: "x/1"), result: contact("x1", favorite: true))
        index.apply(path: EvolutionCards.path(book: "b10", uid: "2"), result: contact("x2", favorite: true))
        index.removeAll(under: EvolutionCards.treePrefix(book: "b1"))
        XCTAssertEqual(index.favorites.map(\.identifier), ["x2"])
    }

    func testFolksStarAndGoogleCategoryMarkFavoritesBesidesTheConfiguredOnes() throws {
        let options = EvolutionCards.parsingOptions(favoriteCategories: ["vip"])
        /// A row's vCard (nil: the column is NULL) as the reader copies and parses it.
        func parsed(_ card: [UInt8]?, uid: String = "u", maxBytes: Int = 1000) -> Result<[Contact], ContactFileProblem> {
            var rows = EvolutionUnparsedRows(maxCardBytes: maxBytes)
            Array(uid.utf8).withUnsafeBufferPointer { uid in
                guard let card else { return rows.append(rowID: 1, uid: uid, rev: nil, card: nil) }
                card.withUnsafeBufferPointer { rows.append(rowID: 1, uid: uid, rev: nil, card: $0) }
            }
            return rows.parsed(options: options)[0].result
        }
        func favorite(_ lines: String) throws -> Bool {
            try parsed(Array("BEGIN:VCARD\nVERSION:3.0\nFN:X\n\(lines)\nEND:VCARD\n".utf8)).get().first?.favorite ?? false
        }
        XCTAssertTrue(try favorite("X-FOLKS-FAVOURITE:true"))
        XCTAssertTrue(try favorite("CATEGORIES:myContacts,Starred in Android"))
        XCTAssertTrue(try favorite("CATEGORIES:VIP"))
        XCTAssertFalse(try favorite("CATEGORIES:starred"), "FavoriteCategories= replaced the defaults")
        let card = Array("BEGIN:VCARD\nFN:No UID\nEND:VCARD\n".utf8)
        XCTAssertEqual(try parsed(card, uid: "pas-id-9").get().first?.identifier, "pas-id-9")
        XCTAssertEqual(parsed(card, maxBytes: 10).failureValue, .tooLarge(size: card.count, limit: 10))
        XCTAssertEqual(parsed(nil, maxBytes: 10).failureValue, .unreadable(reason: "the row holds no vCard"))
    }

    func testEvolutionSetting() throws {
        func parse(_ value: String) throws -> EvolutionSelection {
            try ConfigurationLoader.parse(
                text: "[Contacts]\nEvolution=\(value)\n", file: "/etc/qactd/qactd.conf", environment: ["HOME": "/home/ada"], userID: 1000
            ).configuration.evolution
        }
        XCTAssertEqual(try parse("none"), EvolutionSelection.none)
        XCTAssertEqual(try parse("ALL"), .all)
        XCTAssertEqual(try parse("system-address-book, 1f2e3d"), .books(["system-address-book", "1f2e3d"]))
        XCTAssertThrowsError(try parse("a/b")) { error in
            XCTAssertEqual("\(error)".contains("/etc/qactd/qactd.conf:2"), true, "\(error)")
            XCTAssertEqual("\(error)".contains("Evolution"), true, "\(error)")
        }
        XCTAssertEqual(
            EvolutionLocation(environment: ["HOME": "/home/ada"]).addressBookFolder, "/home/ada/.local/share/evolution/addressbook")
        XCTAssertEqual(EvolutionLocation(environment: ["HOME": "/h", "XDG_DATA_HOME": "/d"]).database(forSource: "system-address-book"),
                       "/d/evolution/addressbook/system/contacts.db")
    }
}

private extension Result {
    var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
