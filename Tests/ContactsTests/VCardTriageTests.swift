import XCTest
@testable import Contacts

/// `VCardTriage.isPlain` against the parser: a card it calls plain must parse (if at all) into
/// at most one contact, no favorite under any rules, identified as the row's name. Every way a
/// favorite can be written must make a card not plain.
final class VCardTriageTests: XCTestCase {
    /// Every rule at once: each favorite flag, folks' star and any category a person may choose.
    private let everyRule = ContactParsingOptions(
        favoriteCategories: ["favorite", "starred", "starred in android", "vip", "x"], folksFavourite: true)

    private func isPlain(_ card: String, identifier: String = "p1") -> Bool {
        var card = card
        var identifier = identifier
        return card.withUTF8 { card in identifier.withUTF8 { VCardTriage.isPlain(card, identifier: $0) } }
    }

    /// The triage's promise, checked on `card`: fails the test if a plain card gives a favorite,
    /// several contacts, or a contact named otherwise.
    private func assertPromiseHolds(_ card: String, identifier: String = "p1", file: StaticString = #filePath, line: UInt = #line) {
        guard isPlain(card, identifier: identifier) else { return }
        guard let contacts = try? VCardParser.parse(Array(card.utf8), fileStem: identifier, options: everyRule) else { return }
        XCTAssertLessThanOrEqual(contacts.count, 1, "several contacts from a plain card: \(card.debugDescription)", file: file, line: line)
        for contact in contacts {
            XCTAssertFalse(contact.favorite, "a favorite from a plain card: \(card.debugDescription)", file: file, line: line)
            XCTAssertEqual(contact.identifier, identifier, "for \(card.debugDescription)", file: file, line: line)
        }
    }

    private let evolutionCard = """
        BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ada Lovelace\r\nN:Lovelace;Ada;;;\r\nEMAIL;TYPE=OTHER:ada@example.org\r\n\
        TEL;TYPE=CELL:+44 20 7946 0000\r\nUID:p1\r\nX-EVOLUTION-FILE-AS:Lovelace\\, Ada\r\nREV:2026-11-25T00:00:00Z\r\nEND:VCARD
        """

    func testAnAddressBooksPlainCardIsPlainAndParsesAsTheRowsContact() throws {
        XCTAssertTrue(isPlain(evolutionCard))
        let contacts = try VCardParser.parse(Array(evolutionCard.utf8), fileStem: "p1", options: everyRule)
        XCTAssertEqual(contacts.map(\.identifier), ["p1"])
        XCTAssertEqual(contacts.first?.favorite, false)
        XCTAssertTrue(isPlain("BEGIN:VCARD\nVERSION:4.0\nFN:No UID\nEND:VCARD\n"), "no UID: the row's name identifies it")
        XCTAssertTrue(isPlain("BEGIN:VCARD\rVERSION:2.1\rUID:p1\rFN:Carriage returns\rEND:VCARD\r"))
    }

    func testEveryWayOfWritingAFavoriteMarkIsNotPlain() throws {
        let marks = VCardTriage.favoriteNames.map(\.description)
        for mark in marks {
            for written in [mark, mark.lowercased(), "item1." + mark, mark + " ", " " + mark, mark.capitalized] {
                for value in [":true", ";TYPE=X:1", ":starred"] {
                    let line = written + value
                    XCTAssertFalse(isPlain("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:p1\r\n\(line)\r\nEND:VCARD"), line)
                    XCTAssertFalse(isPlain("BEGIN:VCARD\nUID:p1\n\(line)\nEND:VCARD\n"), "LF: \(line)")
                    // A bare CR ends a line for the parser too.
                    XCTAssertFalse(isPlain("BEGIN:VCARD\r\nUID:p1\r\nFN:x\r\(line)\r\nEND:VCARD"), "after a bare CR: \(line)")
                    XCTAssertFalse(isPlain("BEGIN:VCARD\r\nUID:p1\r\nFN:x\n\(line)\r\nEND:VCARD"), "after a bare LF: \(line)")
                }
                // Folded anywhere in the name, or its line continued.
                let middle = written.index(written.startIndex, offsetBy: written.count / 2)
                let folded = written[..<middle] + "\r\n " + written[middle...] + ":true"
                XCTAssertFalse(isPlain("BEGIN:VCARD\r\nUID:p1\r\n\(folded)\r\nEND:VCARD"), "folded: \(folded)")
            }
        }
        XCTAssertFalse(isPlain("BEGIN:VCARD\r\nUID:p1\r\nNOTE:a long note\r\n\tfolded\r\nEND:VCARD"), "any folded line")
        XCTAssertFalse(isPlain("BEGIN:VCARD\r\nUID:p1\r\nX-\"CATEGORIES\":starred\r\nEND:VCARD"), "a quote in a name")
        // Unicode uppercases the ligature to "ST": the parser reads X-STARRED.
        let ligature = "BEGIN:VCARD\r\nUID:p1\r\nX-\u{FB06}ARRED:true\r\nEND:VCARD"
        XCTAssertEqual(try VCardParser.parse(Array(ligature.utf8), fileStem: "p1", options: everyRule).first?.favorite, true)
        XCTAssertFalse(isPlain(ligature), "a name outside ASCII")
    }

    func testTheParserAndTheTriageKnowTheSameFavoriteNames() {
        let parserNames = Set(([VCardParser.folksFavouriteName, "CATEGORIES"] + VCardParser.favoriteFlagNames).map(\.description))
        XCTAssertEqual(Set(VCardTriage.favoriteNames.map(\.description)), parserNames)
        for name in parserNames {
            XCTAssertTrue(VCardTriage.favoriteRuns.contains { name.lowercased().contains($0.description) }, "\(name) holds no run the triage looks for")
            XCTAssertFalse(isPlain("BEGIN:VCARD\r\nUID:p1\r\n\(name):true\r\nEND:VCARD"), name)
        }
    }

    func testOnlyABareUIDLineWithTheRowsNameIsPlain() {
        func card(_ lines: String) -> String { "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:x\r\n\(lines)END:VCARD\r\n" }
        XCTAssertTrue(isPlain(card("UID:p1\r\n")))
        XCTAssertTrue(isPlain(card("uid:p1\r\n")), "names are case-insensitive")
        XCTAssertFalse(isPlain(card("UID:p2\r\n")), "another identifier")
        XCTAssertFalse(isPlain(card("UID:p1 \r\n")), "trimmed by the parser")
        XCTAssertFalse(isPlain(card("UID:p1\r\nUID:p1\r\n")), "two UIDs")
        XCTAssertFalse(isPlain(card("UID;VALUE=text:p1\r\n")), "a parameter (which may encode the value)")
        XCTAssertFalse(isPlain(card("item1.UID:p1\r\n")), "a group")
        XCTAssertFalse(isPlain(card("X-UID:p1\r\n")), "not told apart from UID")
        XCTAssertFalse(isPlain(card("UID:p1\r\n"), identifier: "p1 "))
        XCTAssertFalse(isPlain(card("UID:p\u{E9}\r\n"), identifier: "p\u{E9}"), "not ASCII: decoding may change it")
    }

    func testASecondOrNestedCardIsNotPlain() {
        XCTAssertFalse(isPlain("BEGIN:VCARD\r\nUID:p1\r\nEND:VCARD\r\nBEGIN:VCARD\r\nFN:b\r\nEND:VCARD\r\n"))
        XCTAssertFalse(isPlain("BEGIN:VCARD\r\nUID:p1\r\nAGENT:BEGIN:VCARD\r\nBEGIN:VCARD\r\nFN:b\r\nEND:VCARD\r\nEND:VCARD\r\n"))
    }

    /// Cards made from pieces that matter to the parser (favorite marks in every spelling,
    /// groups, parameters, folds, QP soft breaks, each line ending, UIDs right and wrong),
    /// thousands of them: the promise holds for each, and both answers occur often.
    func testThePromiseHoldsOnGeneratedCards() {
        var generator = SplitMix64(seed: 0x5EED_CA7E)
        let common = ["FN", "N", "EMAIL", "TEL", "NOTE", "ORG", "UID", "REV"]
        let names = common + common + common + ["FN", "N", "EMAIL", "X-\u{FB06}ARRED", "\u{FEFF}FN", "TEL", "NOTE", "ORG", "UID", "X-UID", "CATEGORIES", "categories", "X-FOLKS-FAVOURITE",
                     "x-starred", "X-FAVORITE", "X-DAVDROID-STARRED", "item1.CATEGORIES", "item2.UID", "BEGIN", "END", "X-EVOLUTION-FILE-AS"]
        let separators = [":", ";TYPE=PREF:", ";ENCODING=QUOTED-PRINTABLE:", " :", ";\"q:x\":"]
        let values = ["p1", "p2", "true", "1", "starred", "Starred in Android", "VIP,x", "a=", "VCARD", "", "ada@example.org", "p1 "]
        let endings = ["\r\n", "\r\n", "\r\n", "\n", "\n", "\r", "\r\n ", "\n\t"]
        var plain = 0
        var notPlain = 0
        for _ in 0..<20_000 {
            var card = "BEGIN:VCARD" + endings[generator.next(endings.count)]
            for _ in 0..<(1 + generator.next(4)) {
                card += names[generator.next(names.count)] + separators[generator.next(separators.count)]
                    + values[generator.next(values.count)] + endings[generator.next(endings.count)]
            }
            card += "END:VCARD" + endings[generator.next(endings.count)]
            if isPlain(card) { plain += 1 } else { notPlain += 1 }
            assertPromiseHolds(card)
        }
        XCTAssertGreaterThan(plain, 500, "too few plain cards to test the promise on")
        XCTAssertGreaterThan(notPlain, 500)
    }
}

/// A small deterministic generator, so a failure is reproduced exactly.
private struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
