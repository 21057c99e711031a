import XCTest
@testable import Contacts

final class TextDecodingTests: XCTestCase {
    func testValidUTF8IsKept() throws {
        XCTAssertEqual(try TextDecoding.decodeFile(Array("Ωmega ✓".utf8)), "Ωmega ✓")
    }

    func testByteOrderMarkIsStripped() throws {
        XCTAssertEqual(try TextDecoding.decodeFile([0xEF, 0xBB, 0xBF, 0x41]), "A")
    }

    func testInvalidUTF8IsWindows1252() throws {
        XCTAssertEqual(try TextDecoding.decodeFile([0x63, 0x61, 0x66, 0xE9, 0x20, 0x80, 0x99]), "café €™")
    }

    func testUndefinedWindows1252BytesKeepTheirLatin1CodePoints() {
        XCTAssertEqual(TextDecoding.decodeWindows1252([0x81, 0x8D, 0x8F, 0x90, 0x9D]).unicodeScalars.map(\.value), [0x81, 0x8D, 0x8F, 0x90, 0x9D])
    }

    func testEveryWindows1252HighByteMapsToTheCodePage() {
        let decoded = TextDecoding.decodeWindows1252(Array(0x80...0x9F)).unicodeScalars.map(\.value)
        XCTAssertEqual(decoded, [
            0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
            0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
            0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
            0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
        ])
    }

    func testNULByteIsBinaryDataAtItsOffset() {
        XCTAssertThrowsError(try TextDecoding.decodeFile([0xEF, 0xBB, 0xBF, 0x41, 0x00])) { error in
            XCTAssertEqual(error as? ContactParseError, .binaryData(byteOffset: 4))
        }
    }

    func testCharsetNamesAreMatchedLoosely() {
        XCTAssertEqual(TextDecoding.decode([0xE9], charset: "iso-8859-1"), "é")
        XCTAssertEqual(TextDecoding.decode([0xE9], charset: "Windows-1252"), "é")
        XCTAssertEqual(TextDecoding.decode([0xC3, 0xA9], charset: "utf-8"), "é")
        // Latin-1 bytes labelled UTF-8 (a common export bug) still decode.
        XCTAssertEqual(TextDecoding.decode([0xE9], charset: "UTF-8"), "é")
        XCTAssertEqual(TextDecoding.decode([0xC3, 0xA9], charset: "x-unknown"), "é")
    }
}
