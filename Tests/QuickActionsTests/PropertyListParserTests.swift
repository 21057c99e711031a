import Foundation
import XCTest
@testable import QuickActions

final class XMLPropertyListParserTests: XCTestCase {
    private func parse(_ text: String) throws -> PropertyListValue {
        try PropertyListParser.parse(Array(text.utf8))
    }

    private func assertXMLError(_ text: String, line expectedLine: Int, contains fragment: String, file: StaticString = #filePath, lineNumber: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: lineNumber) { error in
            guard case .xml(let line, let problem) = error as? PropertyListError else {
                return XCTFail("expected an XML error, got \(error)", file: file, line: lineNumber)
            }
            XCTAssertEqual(line, expectedLine, "\(problem)", file: file, line: lineNumber)
            XCTAssertTrue(problem.contains(fragment), "\"\(problem)\" should mention \"\(fragment)\"", file: file, line: lineNumber)
        }
    }

    func testFullDocumentWithPrologDoctypeAndComments() throws {
        let text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <!-- a comment before the root -->
        <plist version="1.0">
        <dict>
            <!-- a comment between entries -->
            <key>name</key>
            <string>Contacts</string>
            <key>count</key>
            <integer>-42</integer>
            <key>hex</key>
            <integer>0x1F</integer>
            <key>ratio</key>
            <real>2.5</real>
            <key>yes</key>
            <true/>
            <key>no</key>
            <false/>
            <key>when</key>
            <date>2024-01-01T00:00:00Z</date>
            <key>blob</key>
            <data>
                AAEC
                /w==
            </data>
            <key>list</key>
            <array>
                <string>a</string>
                <integer>1</integer>
                <array/>
                <dict/>
            </array>
        </dict>
        </plist>

        """
        let expected: PropertyListValue = .dictionary([
            "name": .string("Contacts"),
            "count": .integer(-42),
            "hex": .integer(31),
            "ratio": .real(2.5),
            "yes": .bool(true),
            "no": .bool(false),
            "when": .date(Date(timeIntervalSinceReferenceDate: 725_760_000)),
            "blob": .data(Data([0, 1, 2, 255])),
            "list": .array([.string("a"), .integer(1), .array([]), .dictionary([:])]),
        ])
        XCTAssertEqual(try parse(text), expected)
    }

    func testEntitiesCDATAAndEmptyStrings() throws {
        let text = """
        <plist><array>
        <string>&amp; &lt; &gt; &quot; &apos; &#65; &#x263A; &#X42;</string>
        <string><![CDATA[<not> & markup]]> tail</string>
        <string/>
        <string></string>
        <string>keep  inner   space</string>
        <string>a<!-- dropped -->b</string>
        </array></plist>
        """
        XCTAssertEqual(try parse(text), .array([
            .string("& < > \" ' A ☺ B"),
            .string("<not> & markup tail"),
            .string(""),
            .string(""),
            .string("keep  inner   space"),
            .string("ab"),
        ]))
    }

    func testBareFragmentIsADictionary() throws {
        let text = """
        <key>a</key>
        <string>1</string>
        <!-- comment -->
        <key>b</key>
        <array><integer>2</integer></array>
        """
        XCTAssertEqual(try parse(text), .dictionary(["a": .string("1"), "b": .array([.integer(2)])]))
    }

    func testBareArrayAndBareValue() throws {
        XCTAssertEqual(try parse("<array><true/><false></false></array>"), .array([.bool(true), .bool(false)]))
        XCTAssertEqual(try parse("  <string>x</string>\n"), .string("x"))
    }

    func testByteOrderMarkAndUTF8() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("<plist><string>Grüße</string></plist>".utf8)
        XCTAssertEqual(try PropertyListParser.parse(bytes), .string("Grüße"))
    }

    func testIntegerEdges() throws {
        XCTAssertEqual(try parse("<integer> 9223372036854775807 </integer>"), .integer(Int64.max))
        XCTAssertEqual(try parse("<integer>-9223372036854775808</integer>"), .integer(Int64.min))
        XCTAssertEqual(try parse("<integer>+7</integer>"), .integer(7))
        assertXMLError("<integer>9223372036854775808</integer>", line: 1, contains: "expected an integer")
        assertXMLError("<integer>--1</integer>", line: 1, contains: "expected an integer")
        assertXMLError("<integer>1.5</integer>", line: 1, contains: "\"1.5\"")
    }

    func testDates() throws {
        XCTAssertEqual(try parse("<date>2001-01-01T00:00:00Z</date>"), .date(Date(timeIntervalSinceReferenceDate: 0)))
        XCTAssertEqual(try parse("<date>2000-02-29T23:59:59Z</date>"), .date(Date(timeIntervalSince1970: 951_868_799)))
        XCTAssertEqual(try parse("<date>1970-01-01T00:00:00Z</date>"), .date(Date(timeIntervalSince1970: 0)))
        XCTAssertEqual(try parse("<date>2024-03-05T10:20:30.250Z</date>"), .date(Date(timeIntervalSince1970: 1_709_634_030.25)))
        assertXMLError("<date>2023-02-29T00:00:00Z</date>", line: 1, contains: "ISO 8601")
        assertXMLError("<date>2024-01-01 00:00:00</date>", line: 1, contains: "ISO 8601")
    }

    func testDateFormatRoundTrips() {
        for seconds in [0.0, 725_760_000, -978_307_200, 1_000_000_000.5, 4_102_444_800] {
            let date = Date(timeIntervalSinceReferenceDate: seconds)
            let text = PropertyListDate.format(date)
            XCTAssertEqual(PropertyListDate.parse(Substring(text)), date, text)
        }
        XCTAssertEqual(PropertyListDate.format(Date(timeIntervalSinceReferenceDate: 725_760_000)), "2024-01-01T00:00:00Z")
        XCTAssertEqual(PropertyListDate.format(Date(timeIntervalSince1970: 0)), "1970-01-01T00:00:00Z")
        XCTAssertEqual(PropertyListDate.format(Date(timeIntervalSinceReferenceDate: 1_000_000_000.5)), "2032-09-09T01:46:40.500Z")
        XCTAssertEqual(PropertyListDate.format(Date(timeIntervalSinceReferenceDate: 0.0456)), "2001-01-01T00:00:00.046Z")
        XCTAssertEqual(PropertyListDate.format(Date(timeIntervalSinceReferenceDate: 0.9996)), "2001-01-01T00:00:01Z")
        XCTAssertEqual(PropertyListDate.format(Date(timeIntervalSinceReferenceDate: .nan)), "0001-01-01T00:00:00Z")
        XCTAssertNil(PropertyListDate.parse("2024-01-01T24:00:00Z"))
        XCTAssertEqual(PropertyListDate.parse("2016-12-31T23:59:60Z"), Date(timeIntervalSince1970: 1_483_228_800))
        XCTAssertEqual(PropertyListDate.parse("2016-12-31T23:59:60.5Z"), Date(timeIntervalSince1970: 1_483_228_800.5))
        XCTAssertNil(PropertyListDate.parse("2024-01-01T00:00:00+00:00"))
    }

    func testErrorsNameLineAndExpectation() {
        assertXMLError("<plist>\n<dict>\n<key>a</key>\n</dict>\n</plist>", line: 4, contains: "expected a value for key \"a\"")
        assertXMLError("<plist>\n<dict>\n<string>x</string>\n</dict></plist>", line: 3, contains: "expected <key> or </dict>")
        assertXMLError("<plist>\n<array>\n<string>x</dict>\n</array></plist>", line: 3, contains: "expected </string> but found </dict>")
        assertXMLError("<plist>\n<array>\n<integer>1</integer>\n", line: 4, contains: "expected a value element or </array>")
        assertXMLError("<plist>\r\n<array>\r\n<foo/>\r\n</array></plist>", line: 3, contains: "unknown element <foo>")
        assertXMLError("<plist>\r<string>a &bogus; b</string></plist>", line: 2, contains: "unknown entity \"&bogus;\"")
        assertXMLError("<plist><string>a & b</string></plist>", line: 1, contains: "&amp;")
        assertXMLError("<plist><string>a<b/></string></plist>", line: 1, contains: "elements are not allowed inside <string>")
        assertXMLError("<plist><string>a</string><string>b</string></plist>", line: 1, contains: "expected </plist>")
        assertXMLError("<string>a</string>\n<string>b</string>", line: 2, contains: "expected the end of the property list")
        assertXMLError("<plist><data>!!!</data></plist>", line: 1, contains: "base64")
        assertXMLError("<plist><real>fast</real></plist>", line: 1, contains: "inside <real>")
        assertXMLError("<plist><dict><key>k</key><true/><key>k</key><false/></dict></plist>", line: 1, contains: "appears twice")
        assertXMLError("<plist><key>k</key></plist>", line: 1, contains: "outside a <dict>")
        assertXMLError("<plist/>", line: 1, contains: "empty <plist/>")
        assertXMLError("<plist><!-- never closed", line: 1, contains: "comment is not closed")
        assertXMLError("<plist><string>open", line: 1, contains: "reached the end")
        assertXMLError("<plist><string", line: 1, contains: "not closed with \">\"")
        assertXMLError("<plist><string><![CDATA[x</string>", line: 1, contains: "CDATA")
    }

    func testDeepNestingIsRefusedNotACrash() {
        let depth = 10_000
        let text = String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth)
        assertXMLError(text, line: 1, contains: "nested more than")
    }

    func testNonXMLInput() {
        XCTAssertThrowsError(try PropertyListParser.parse([])) { XCTAssertEqual($0 as? PropertyListError, .empty) }
        XCTAssertThrowsError(try PropertyListParser.parse(Array(" \n ".utf8))) { XCTAssertEqual($0 as? PropertyListError, .empty) }
        XCTAssertThrowsError(try parse("{\"json\": true}")) { XCTAssertEqual($0 as? PropertyListError, .unrecognizedFormat) }
        XCTAssertThrowsError(try PropertyListParser.parse(Array("<plist><string>".utf8) + [0xFF, 0xFE] + Array("</string></plist>".utf8))) {
            XCTAssertTrue("\($0)".contains("not valid UTF-8"), "\($0)")
        }
    }
}

final class BinaryPropertyListParserTests: XCTestCase {
    /// Written by Python's `plistlib.dumps(..., fmt=FMT_BINARY, sort_keys=True)` from an
    /// Info.plist with CFBundleShortVersionString "2.1" and two shortcut items, the first
    /// carrying a userInfo of every value type (see `testPythonFixtureDecodesEveryType`).
    static let pythonFixture = Array(Data(base64Encoded: """
    YnBsaXN0MDDTAQIDBAUGXENGQnVuZGxlTmFtZV8QGkNGQnVuZGxlU2hvcnRWZXJzaW9uU3RyaW5nXxAaVUlBcHBsaWNhdGlvblNob3J0Y3V0SXRlbXNYQ29udGFjdHNTMi4xogcm1AgJCgsMDQ4PXxAhVUlBcHBsaWNhdGlvblNob3J0Y3V0SXRlbUljb25UeXBlXxAeVUlBcHBsaWNhdGlvblNob3J0Y3V0SXRlbVRpdGxlXxAdVUlBcHBsaWNhdGlvblNob3J0Y3V0SXRlbVR5cGVfECFVSUFwcGxpY2F0aW9uU2hvcnRjdXRJdGVtVXNlckluZm9fECNVSUFwcGxpY2F0aW9uU2hvcnRjdXRJY29uVHlwZVNlYXJjaFZTZWFyY2hcU2VhcmNoQWN0aW9u2hAREhMUFRYXGBkaGxwfICEiIyQlU2JpZ1RibG9iVGxpc3RUbG9uZ1FuUm5vUm9rUXJXdW5pY29kZVR3aGVuE/////7V+g4AQwABAqIdHhABU3R3b18QFHh4eHh4eHh4eHh4eHh4eHh4eHh4ECoICSM/+AAAAAAAAGcARwByAPwA3wBlACAnEzNBxaEcAAAAANQnKAkKKSorLF8QJ1VJQXBwbGljYXRpb25TaG9ydGN1dEl0ZW1JY29uU3ltYm9sTmFtZV8QIVVJQXBwbGljYXRpb25TaG9ydGN1dEl0ZW1TdWJ0aXRsZV8QE3NxdWFyZS5hbmQuYXJyb3cudXBdU2hhcmUgYW4gaXRlbVVTaGFyZVtTaGFyZUFjdGlvbgAIAA8AHAA5AFYAXwBjAGYAbwCTALQA1AD4AR4BJQEyAUcBSwFQAVUBWgFcAV8BYgFkAWwBcQF6AX4BgQGDAYcBngGgAaEBogGrAboBwwHMAfYCGgIwAj4CRAAAAAAAAAIBAAAAAAAAAC0AAAAAAAAAAAAAAAAAAAJQ
    """, options: .ignoreUnknownCharacters)!)

    func testPythonFixtureDecodesEveryType() throws {
        let value = try PropertyListParser.parse(Self.pythonFixture)
        guard case .dictionary(let root) = value, case .array(let items)? = root["UIApplicationShortcutItems"],
              case .dictionary(let first)? = items.first,
              case .dictionary(let userInfo)? = first["UIApplicationShortcutItemUserInfo"]
        else { return XCTFail("unexpected shape: \(value)") }
        XCTAssertEqual(root["CFBundleShortVersionString"], .string("2.1"))
        XCTAssertEqual(items.count, 2)
        XCTAssertEqual(userInfo, [
            "n": .integer(42),
            "big": .integer(-5_000_000_000),
            "r": .real(1.5),
            "ok": .bool(true),
            "no": .bool(false),
            "when": .date(Date(timeIntervalSinceReferenceDate: 725_760_000)),
            "blob": .data(Data([0, 1, 2])),
            "list": .array([.integer(1), .string("two")]),
            "unicode": .string("Grüße ✓"),
            "long": .string(String(repeating: "x", count: 20)),
        ])
    }

    /// Builds a bplist00 with 1-byte offsets and references from raw object encodings.
    private func bplist(_ objects: [[UInt8]], top: UInt8 = 0, refSize: UInt8 = 1) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [UInt8] = []
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let tableOffset = bytes.count
        bytes += offsets
        bytes += [0, 0, 0, 0, 0, 0, 1, refSize]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)]
        bytes += [0, 0, 0, 0, 0, 0, 0, top]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(tableOffset)]
        return bytes
    }

    private func assertBinaryError(_ bytes: [UInt8], contains fragment: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try PropertyListParser.parse(bytes), file: file, line: line) { error in
            guard case .binary(let problem) = error as? PropertyListError else {
                return XCTFail("expected a binary error, got \(error)", file: file, line: line)
            }
            XCTAssertTrue(problem.contains(fragment), "\"\(problem)\" should mention \"\(fragment)\"", file: file, line: line)
        }
    }

    func testHandBuiltObjects() throws {
        // dict { "k": [true, 300 (2-byte int), 4-byte float 0.5, UTF-16 "é"] }
        let objects: [[UInt8]] = [
            [0xD1, 1, 2],
            [0x51, UInt8(ascii: "k")],
            [0xA4, 3, 4, 5, 6],
            [0x09],
            [0x11, 0x01, 0x2C],
            [0x22, 0x3F, 0x00, 0x00, 0x00],
            [0x61, 0x00, 0xE9],
        ]
        XCTAssertEqual(try PropertyListParser.parse(bplist(objects)),
                       .dictionary(["k": .array([.bool(true), .integer(300), .real(0.5), .string("é")])]))
    }

    func testLongCountAndSharedObjects() throws {
        // An array of 16 references to the same string: the count needs the 0xF extension.
        let objects: [[UInt8]] = [[0xAF, 0x10, 0x10] + [UInt8](repeating: 1, count: 16), [0x51, UInt8(ascii: "s")]]
        XCTAssertEqual(try PropertyListParser.parse(bplist(objects)), .array(Array(repeating: .string("s"), count: 16)))
    }

    func testSharedReferencesCannotExplode() {
        // Forty arrays, each holding the next one twice: 2^40 objects if every reference were followed.
        var objects: [[UInt8]] = (0..<40).map { [0xA2, UInt8($0 + 1), UInt8($0 + 1)] }
        objects.append([0x09])
        assertBinaryError(bplist(objects), contains: "reference each other so often")
    }

    func testErrorsNameTheKeyPath() {
        // { "items": [true, <UTF-16 string holding a lone high surrogate>] }
        let objects: [[UInt8]] = [[0xD1, 1, 2], [0x55] + Array("items".utf8), [0xA2, 3, 4], [0x09], [0x61, 0xD8, 0x00]]
        assertBinaryError(bplist(objects), contains: "damaged at items[1]: a string holds bytes that are not text")
    }

    func testWholeValuedRealReadsAsInteger() throws {
        // The decoder converts a real to an integer whenever it is exact, so 2.0 cannot be told
        // from 2 (as in JSON, which writes both as 2); 2.5 stays a real.
        XCTAssertEqual(try PropertyListParser.parse(bplist([[0x23, 0x40, 0, 0, 0, 0, 0, 0, 0]])), .integer(2))
        XCTAssertEqual(try PropertyListParser.parse(bplist([[0x23, 0x40, 0x04, 0, 0, 0, 0, 0, 0]])), .real(2.5))
    }

    func testCyclesAreErrors() {
        assertBinaryError(bplist([[0xA1, 0]]), contains: "reference cycle")
        assertBinaryError(bplist([[0xA1, 1], [0xD1, 2, 0], [0x51, UInt8(ascii: "k")]]), contains: "reference cycle")
    }

    func testMalformedInputIsAnErrorNeverACrash() {
        let valid = bplist([[0xA2, 1, 1], [0x09]])
        XCTAssertNoThrow(try PropertyListParser.parse(valid))
        assertBinaryError(Array("bplist00".utf8) + [0, 1, 2], contains: "trailer")
        assertBinaryError(bplist([[0xA1, 7]]), contains: "object index")
        assertBinaryError(bplist([[0x5F, 0x10, 0x20, 0x41]]), contains: "Corrupt ASCII string value")
        assertBinaryError(bplist([[0x4F, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]), contains: "Corrupt data value")
        assertBinaryError(bplist([[0xD1, 1, 1], [0x10, 5]]), contains: "a dictionary key is not a string")
        assertBinaryError(bplist([[0x00]]), contains: "null")
        assertBinaryError(bplist([[0x80, 1]]), contains: "UID")
        assertBinaryError(bplist([[0x09]], top: 3), contains: "top object")
        assertBinaryError(bplist([[0x09]], refSize: 0), contains: "reference size")
        assertBinaryError(bplist([[0x61, 0xD8, 0x00]]), contains: "surrogate")
        assertBinaryError(bplist([[0x13, 0, 0]]), contains: "Corrupt integer value")
        var badOffset = valid
        badOffset[badOffset.count - 32 - 2] = 250
        assertBinaryError(badOffset, contains: "outside the object area")
        var badTable = valid
        badTable[badTable.count - 1] = 200
        assertBinaryError(badTable, contains: "offset table")
        // Every truncation of a real file fails cleanly.
        for length in 8..<BinaryPropertyListParserTests.pythonFixture.count {
            XCTAssertThrowsError(try PropertyListParser.parse(Array(BinaryPropertyListParserTests.pythonFixture.prefix(length))))
        }
    }

    func testEveryByteFlipOfAFixtureIsHandled() {
        // Not asserting success or failure: a corrupted file must simply not crash or hang.
        let fixture = BinaryPropertyListParserTests.pythonFixture
        for index in 8..<fixture.count {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var bytes = fixture
                bytes[index] ^= flip
                _ = try? PropertyListParser.parse(bytes)
            }
        }
    }
}
