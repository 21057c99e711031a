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
