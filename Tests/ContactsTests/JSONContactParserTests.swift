import XCTest
@testable import Contacts

final class JSONContactParserTests: XCTestCase {
    private func parse(_ text: String, stem: String = "stem") throws -> [Contact] {
        try JSONContactParser.parse(Array(text.utf8), fileStem: stem)
    }

    private func parseError(_ text: String) -> ContactParseError? {
        do {
            _ = try JSONContactParser.parse(Array(text.utf8), fileStem: "stem")
            return nil
        } catch {
            return error
        }
    }

    func testFullDocument() throws {
        let contacts = try parse(#"{"identifier": "c-1", "name": "Ann Lee", "email": "ann@x.org", "favorite": true}"#)
        XCTAssertEqual(contacts, [Contact(identifier: "c-1", name: "Ann Lee", email: "ann@x.org", emails: ["ann@x.org"], favorite: true)])
    }

    func testIdentifierFallsBackToStemAndFavoriteDefaultsToFalse() throws {
        let contacts = try parse(#"{"name": "Ann"}"#, stem: "ann")
        XCTAssertEqual(contacts, [Contact(identifier: "ann", name: "Ann")])
    }

    func testNameFallsBackToEmailThenStem() throws {
        XCTAssertEqual(try parse(#"{"email": "e@x.org", "name": "  "}"#).first?.name, "e@x.org")
        XCTAssertEqual(try parse(#"{"name": null}"#, stem: "lonely").first?.name, "lonely")
    }

    func testUnknownKeysAreIgnoredAndBOMIsAccepted() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(#"{"name": "Bo", "phone": "123"}"#.utf8)
        XCTAssertEqual(try JSONContactParser.parse(bytes, fileStem: "bo").first?.name, "Bo")
    }

    func testWrongTypeNamesTheKey() {
        let error = parseError(#"{"name": "A", "favorite": "yes"}"#)
        XCTAssertEqual(error, .jsonWrongType(key: "favorite", expected: "a boolean (true or false)"))
        XCTAssertEqual(error?.description, "The value of key \"favorite\" is not a boolean (true or false).")
        XCTAssertEqual(parseError(#"{"name": 42}"#), .jsonWrongType(key: "name", expected: "a string"))
    }

    func testArrayIsNotAnObject() {
        XCTAssertEqual(parseError(#"[{"name": "A"}]"#), .jsonNotAnObject)
    }

    func testMalformedJSON() {
        guard case .invalidJSON(let detail) = parseError(#"{"name": "A""#) else {
            return XCTFail("expected invalidJSON")
        }
        XCTAssertFalse(detail.isEmpty)
    }

    func testNULByteIsBinary() {
        XCTAssertEqual(parseError("{\"name\": \"A\"}\u{0}"), .binaryData(byteOffset: 13))
    }
}
