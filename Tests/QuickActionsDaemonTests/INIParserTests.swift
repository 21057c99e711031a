import XCTest

@testable import QuickActionsDaemon

final class INIParserTests: XCTestCase {
    func testCommentsWhitespaceAndEmptyLines() throws {
        let assignments = try INIParser.parse(
            """
            # a comment
              ; another comment

            [Shortcuts]
              DisplayLimit   =   6  \r
            FavoriteType=Call=Now
            Empty=
            """, file: "x.conf")
        XCTAssertEqual(
            assignments,
            [
                INIAssignment(section: "Shortcuts", key: "DisplayLimit", value: "6", line: 5),
                INIAssignment(section: "Shortcuts", key: "FavoriteType", value: "Call=Now", line: 6),
                INIAssignment(section: "Shortcuts", key: "Empty", value: "", line: 7),
            ])
    }

    /// The mistakes of a README once shown verbatim: each is refused with its line, key and the
    /// hint, never taken as part of the value.
    func testACommentAfterAValueIsRefusedWithAHint() {
        let cases: [(text: String, key: String, comment: String)] = [
            ("[Contacts]\nEvolution=all   # GNOME Contacts\n", "Evolution", "# GNOME Contacts"),
            ("[Launcher]\nDesktopFile=thunderbird.desktop\t; whose icon\n", "DesktopFile", "; whose icon"),
            ("[Actions]\nFavoriteAction=thunderbird -compose \"to='{email}'\" # a mail\n", "FavoriteAction", "# a mail"),
            ("[Contacts]\nFavoriteCategories=starred,\u{00A0}#vip\n", "FavoriteCategories", "#vip"),
        ]
        for (text, key, comment) in cases {
            XCTAssertThrowsError(try INIParser.parse(text, file: "/home/u/.config/qactd/qactd.conf"), text) { error in
                guard case .invalidValue(let file, let line, _, let named, _, let expectation)? = error as? ConfigurationError else {
                    return XCTFail("\(error)")
                }
                XCTAssertEqual(file, "/home/u/.config/qactd/qactd.conf")
                XCTAssertEqual(line, 2)
                XCTAssertEqual(named, key)
                XCTAssertTrue(expectation.hasPrefix("ends in what looks like a comment (\"\(comment)\"): "), expectation)
                XCTAssertTrue("\(error)".hasPrefix("/home/u/.config/qactd/qactd.conf:2: "), "\(error)")
                XCTAssertTrue("\(error)".contains("qactd.conf takes comments only on lines of their own"), "\(error)")
            }
        }
        // A `#` or `;` that no blank precedes is part of the value, as in a URI's fragment.
        XCTAssertEqual(
            try INIParser.parse("[Actions]\nOpen=xdg-open https://example.org/#top;x\n", file: "a.conf").map(\.value),
            ["xdg-open https://example.org/#top;x"])
    }

    func testSyntaxErrorsNameFileAndLine() {
        XCTAssertThrowsError(try INIParser.parse("# c\nDisplayLimit=4\n", file: "a.conf")) { error in
            XCTAssertEqual(error as? ConfigurationError, .entryOutsideSection(file: "a.conf", line: 2, key: "DisplayLimit"))
            XCTAssertEqual("\(error)", "a.conf:2: the key \"DisplayLimit\" appears before any [Section] header.")
        }
        XCTAssertThrowsError(try INIParser.parse("[App]\n\nnonsense\n", file: "a.conf")) { error in
            XCTAssertEqual(error as? ConfigurationError, .lineWithoutAssignment(file: "a.conf", line: 3, text: "nonsense"))
        }
        XCTAssertThrowsError(try INIParser.parse("[App\n", file: "a.conf")) { error in
            XCTAssertEqual(error as? ConfigurationError, .malformedSectionHeader(file: "a.conf", line: 1, text: "[App"))
        }
        XCTAssertThrowsError(try INIParser.parse("[App]\n = x\n", file: "a.conf")) { error in
            XCTAssertEqual(error as? ConfigurationError, .emptyKey(file: "a.conf", line: 2))
        }
    }
}
