import XCTest

@testable import QuickActionsDaemon

final class CommandLineSplitterTests: XCTestCase {
    func testLaunchCommandSplitting() throws {
        XCTAssertEqual(try CommandLineSplitter.split(""), [])
        XCTAssertEqual(try CommandLineSplitter.split("   "), [])
        XCTAssertEqual(try CommandLineSplitter.split("a  b\tc"), ["a", "b", "c"])
        XCTAssertEqual(try CommandLineSplitter.split("app 'two words' \"x y\""), ["app", "two words", "x y"])
        XCTAssertEqual(try CommandLineSplitter.split("a\\ b c"), ["a b", "c"])
        XCTAssertEqual(try CommandLineSplitter.split("'' \"\""), ["", ""])
        XCTAssertEqual(try CommandLineSplitter.split("pre'quoted'post"), ["prequotedpost"])
        XCTAssertEqual(try CommandLineSplitter.split(#""say \"hi\" \$HOME \n""#), [#"say "hi" $HOME \n"#])
        XCTAssertEqual(try CommandLineSplitter.split(#"'no \escapes'"#), [#"no \escapes"#])
        XCTAssertEqual(try CommandLineSplitter.split("$HOME; rm -rf /"), ["$HOME;", "rm", "-rf", "/"])
        XCTAssertThrowsError(try CommandLineSplitter.split("'open")) { error in
            XCTAssertEqual(error as? CommandLineSplitError, .unterminatedQuote)
        }
        XCTAssertThrowsError(try CommandLineSplitter.split("\"open")) { error in
            XCTAssertEqual(error as? CommandLineSplitError, .unterminatedQuote)
        }
        XCTAssertThrowsError(try CommandLineSplitter.split("end\\")) { error in
            XCTAssertEqual(error as? CommandLineSplitError, .danglingBackslash)
        }
    }
}
