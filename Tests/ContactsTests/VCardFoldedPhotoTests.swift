import XCTest
@_spi(Reference) @testable import Contacts

/// A photo's hundreds of folded base64 lines, which the parser passes over without joining them
/// (taking each line to be as long as the one before, and checking it): the contact indexed
/// from the card is the one without the photo, in every line ending and folding, and the
/// parser agrees with `referenceParse` however the lines are cut or broken.
final class VCardFoldedPhotoTests: XCTestCase {
    /// Base64 text of `count` characters, the same every run.
    private static func base64(_ count: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        return String((0..<count).map { alphabet[($0 &* 31 &+ $0 / 7) % alphabet.count] })
    }

    /// A photo property folded at `width` octets: `PHOTO:…` then continuation lines each
    /// starting with `fold` (a space or a tab), every line ended by `newline`.
    private static func photo(lines: Int, width: Int = 75, fold: String = " ", newline: String) -> String {
        let data = base64(width * lines)
        let header = "PHOTO:data:image/jpeg;base64,"
        var folded = [header + data.prefix(width - header.count)]
        var rest = data.dropFirst(width - header.count)
        while !rest.isEmpty {
            folded.append(fold + rest.prefix(width - 1))
            rest = rest.dropFirst(width - 1)
        }
        return folded.joined(separator: newline) + newline
    }

    private func card(photo: String, newline: String, last: Bool = false) -> String {
        let head = ["BEGIN:VCARD", "VERSION:4.0", "UID:grace", "FN:Grace Hopper", "EMAIL:grace@example.org"]
            .joined(separator: newline) + newline
        if last {
            return head + "CATEGORIES:favorite" + newline + photo + "END:VCARD" + newline
        }
        return head + photo + "CATEGORIES:favorite" + newline + "TEL:+1-555-0100" + newline + "END:VCARD" + newline
    }

    private static let grace = Contact(identifier: "grace", name: "Grace Hopper", email: "grace@example.org",
                                       emails: ["grace@example.org"], favorite: true)

    /// Both parsers' results for `bytes`, checked equal; the one-pass parser's returned.
    private func parsed(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> Result<[Contact], ContactParseError> {
        let fast = Result { () throws(ContactParseError) in try VCardParser.parse(bytes, fileStem: "card") }
        let reference = Result { () throws(ContactParseError) in try VCardParser.referenceParse(bytes, fileStem: "card") }
        let shown = String(decoding: bytes.prefix(400), as: UTF8.self).debugDescription
        XCTAssertEqual(fast, reference, "for \(shown)…", file: file, line: line)
        return fast
    }

    func testAFoldedPhotoBeforeTheCategoriesIsPassedOverInEveryLineEnding() {
        for newline in ["\r\n", "\n", "\r"] {
            for fold in [" ", "\t"] {
                for lines in [2, 3, 900] {
                    let text = card(photo: Self.photo(lines: lines, fold: fold, newline: newline), newline: newline)
                    let described = "\(lines) lines, \(newline.debugDescription), \(fold.debugDescription)"
                    XCTAssertEqual(try parsed(Array(text.utf8)).get(), [Self.grace], described)
                }
            }
        }
    }

    func testAPhotoAsTheLastPropertyOfTheCard() {
        for newline in ["\r\n", "\n"] {
            let text = card(photo: Self.photo(lines: 300, newline: newline), newline: newline, last: true)
            XCTAssertEqual(try parsed(Array(text.utf8)).get(), [Self.grace])
            // Two such cards in one file, the second not a favorite.
            let second = text.replacingOccurrences(of: "grace", with: "ada")
                .replacingOccurrences(of: "CATEGORIES:favorite", with: "CATEGORIES:work")
            let both = try? parsed(Array((text + second).utf8)).get()
            XCTAssertEqual(both?.map(\.identifier), ["grace", "ada"])
            XCTAssertEqual(both?.map(\.favorite), [true, false])
        }
    }

    func testACardEndingInsideItsPhotoIsMissingItsEnd() {
        for newline in ["\r\n", "\n", "\r"] {
            let head = "BEGIN:VCARD\(newline)FN:Grace\(newline)"
            let photo = Self.photo(lines: 200, newline: newline)
            for text in [head + photo, head + String(photo.dropLast(newline.count)), head + String(photo.dropLast(newline.count + 30))] {
                XCTAssertEqual(parsed(Array(text.utf8)), .failure(.missingEnd(beginLine: 1)))
            }
        }
    }

    /// A line after the photo that is no property is reported on its own line: the lines
    /// passed over are counted.
    func testLinesAfterThePhotoKeepTheirNumbers() {
        for newline in ["\r\n", "\n", "\r"] {
            let photo = Self.photo(lines: 250, newline: newline)
            let photoLines = photo.components(separatedBy: newline).count - 1
            XCTAssertGreaterThan(photoLines, 250)
            let text = "BEGIN:VCARD\(newline)FN:Grace\(newline)" + photo + "not a property\(newline)END:VCARD\(newline)"
            XCTAssertEqual(parsed(Array(text.utf8)), .failure(.malformedProperty(line: 2 + photoLines + 1, text: "not a property")))
        }
    }

    /// Lines whose length changes (shorter, longer, empty, a tab or a lone CR inside, a line
    /// end where the one before ended but an earlier one too): the guess fails and the line is
    /// searched, so the card's later properties are still read.
    func testLinesOfChangingLengthAreStillFollowed() {
        let newline = "\r\n"
        var photo = Self.photo(lines: 40, newline: newline).components(separatedBy: newline)
        photo[5] = String(photo[5].prefix(20))
        photo[6] = photo[6] + "ABCDEFGH"
        photo[9] = " "
        photo[12] = String(photo[12].prefix(30)) + "\t" + photo[12].dropFirst(31)
        photo[15] = String(photo[15].prefix(30)) + "\r " + photo[15].dropFirst(31)
        photo[18] = String(photo[18].prefix(30)) + "\nX-CUT:here" + photo[18].dropFirst(41)
        photo[21] = String(photo[21].prefix(30)) + "\n " + photo[21].dropFirst(32)
        let text = card(photo: photo.joined(separator: newline), newline: newline)
        let contacts = try? parsed(Array(text.utf8)).get()
        XCTAssertEqual(contacts, [Self.grace])
    }

    /// A line as long as the ones before it, where a line ends, but which holds an earlier
    /// line end followed by a property: that property is read.
    func testALineEndBeforeTheGuessedOneEndsThePhoto() {
        for newline in ["\r\n", "\n", "\r"] {
            let data = Self.base64(74 * 30)
            var photo = ["PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQ"]
            for line in 0..<30 {
                photo.append(" " + data.dropFirst(74 * line).prefix(74))
            }
            let inner = " " + data.prefix(20) + newline + "EMAIL:c@example.org"
            photo.append(inner + String(repeating: " ", count: 75 - inner.count))
            let text = card(photo: photo.joined(separator: newline) + newline, newline: newline)
            let contacts = try? parsed(Array(text.utf8)).get()
            XCTAssertEqual(contacts?.first?.emails, ["grace@example.org", "c@example.org"], newline.debugDescription)
            XCTAssertEqual(contacts?.first?.favorite, true)
        }
    }

    /// Bytes that change what the file is (a NUL, Latin-1, UTF-8 outside ASCII) or where its
    /// lines end, put anywhere in a long photo: both parsers agree, whatever comes of it.
    func testEditsInsideAPhotoAgreeWithTheReference() {
        // Seeded, so a failure repeats.
        var state: UInt64 = 35
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33)
        }
        let interesting: [[UInt8]] = [[0x0D], [0x0A], [0x0D, 0x0A], [0x20], [0x09], [0x00], [0xE9], [0xC3, 0xA9], [0x3A], [0x3D]]
        for newline in ["\r\n", "\n"] {
            let base = Array(card(photo: Self.photo(lines: 60, newline: newline), newline: newline).utf8)
            for _ in 0..<300 {
                var bytes = base
                for _ in 0..<(1 + next() % 3) {
                    let position = 100 + next() % (bytes.count - 200)
                    bytes.replaceSubrange(position..<(position + next() % 2), with: interesting[next() % interesting.count])
                }
                _ = parsed(bytes)
            }
        }
    }
}
