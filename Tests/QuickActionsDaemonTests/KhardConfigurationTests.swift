import XCTest

@testable import QuickActionsDaemon

/// khard.conf as khard reads it (configobj): the `[addressbooks]` section's `[[name]]`
/// subsections and their `path`, expanded as khard expands it.
final class KhardConfigurationTests: XCTestCase {
    let environment = ["HOME": "/home/ada", "CONTACTS": "/srv/cards", "XDG_DATA_HOME": "/home/ada/.local/share"]

    func parse(_ text: String) throws -> [KhardConfiguration.AddressBook] {
        try KhardConfiguration.parse(text, environment: environment).addressBooks
    }

    func assertError(_ text: String, line: Int, _ message: String, file: StaticString = #filePath, at: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: at) { error in
            XCTAssertEqual(error as? KhardConfiguration.ParseError, KhardConfiguration.ParseError(line: line, message: message), file: file, line: at)
            XCTAssertEqual("\(error)", "line \(line): \(message)", file: file, line: at)
        }
    }

    func testSeveralBooksWithTildeAndVariablesExpanded() throws {
        let books = try parse("""
            # khard configuration
            [addressbooks]
            [[family]]
            path = ~/.contacts/family/
            [[friends]]
                path = $HOME/.contacts/friends
            [[work]]
            path = ${CONTACTS}/work   # synced by vdirsyncer
            [[unset]]
            path = /data/$NOT_SET/x

            [general]
            debug = no
            default_action = list
            [vcard]
            preferred_version = 4.0
            """)
        XCTAssertEqual(books.map(\.name), ["family", "friends", "work", "unset"])
        XCTAssertEqual(books.map(\.folder), ["/home/ada/.contacts/family", "/home/ada/.contacts/friends", "/srv/cards/work", "/data/$NOT_SET/x"])
        XCTAssertEqual(books.map(\.line), [4, 6, 8, 10])
        XCTAssertEqual(books[2].written, "${CONTACTS}/work")
    }

    func testQuotedValuesAndNamesCommentsAndCRLF() throws {
        let books = try parse("\u{FEFF}[addressbooks]\r\n[[\"my book\"]]  # the quoted name\r\npath = \"~/My Contacts/a#b\"  # a comment\r\n[['other']]\r\n'path' = '$HOME/x'\r\n")
        XCTAssertEqual(books.map(\.name), ["my book", "other"])
        XCTAssertEqual(books.map(\.folder), ["/home/ada/My Contacts/a#b", "/home/ada/x"])
    }

    func testPathsAreMadeNormalAndRelativeOnesHaveNoFolder() throws {
        let books = try parse("""
            [addressbooks]
            [[a]]
            path = ~/./contacts//a/../b/
            [[relative]]
            path = contacts/c
            [[home]]
            path = ~
            """)
        XCTAssertEqual(books.map(\.folder), ["/home/ada/contacts/b", nil, "/home/ada"])
    }

    func testSubsectionsOfOtherSectionsAndNoBooksAtAll() throws {
        XCTAssertEqual(try parse("[general]\n[[addressbooks]]\npath = /x\n"), [])
        XCTAssertEqual(try parse(""), [])
        XCTAssertEqual(try parse("[addressbooks]\n"), [])
    }

    func testErrorsNameTheirLine() {
        assertError("[addressbooks]\n[[a]]\npath /x\n", line: 3, "expected [section] or key = value")
        assertError("[addressbooks]\n[[a]]\n", line: 2, "address book \"a\" has no path")
        assertError("[addressbooks]\n[[a]\npath = /x\n", line: 2, "a section header without its closing ]]")
        assertError("[addressbooks]\n[[a]]]\npath = /x\n", line: 2, "the brackets of a section header do not match")
        assertError("[[a]]\npath = /x\n", line: 1, "section \"a\" is nested too deeply (no section [...] above it)".replacingOccurrences(of: "...", with: "…"))
        assertError("[addressbooks]\n[[a]]\npath = /x\n[[a]]\npath = /y\n", line: 4, "section \"a\" appears twice")
        assertError("[addressbooks]\n[[a]]\npath = \"/x\n", line: 3, "a quoted value without its closing \"")
        assertError("[addressbooks]\n[[a]]\npath = \"/x\" /y\n", line: 3, "text after a quoted value")
        assertError("[addressbooks]\n[[a]]\npath = '''/x'''\n", line: 3, "multi-line values are not supported")
        assertError("[addressbooks]\n = /x\n", line: 2, "a value without a key")
    }
}
