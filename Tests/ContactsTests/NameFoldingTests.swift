import XCTest
@testable import Contacts

final class NameFoldingTests: XCTestCase {
    func testCaseAndAccentsFold() {
        XCTAssertEqual(NameFolding.foldedKey("Émile ÅSTRÖM"), "emile astrom")
        XCTAssertEqual(NameFolding.foldedKey("Strauß"), "strauss")
        XCTAssertEqual(NameFolding.foldedKey("STRAUẞ"), "strauss")
        XCTAssertEqual(NameFolding.foldedKey("Æsir Œuvre Þór Ðan"), "aesir oeuvre thor dan")
        XCTAssertEqual(NameFolding.foldedKey("Łukasz Żółć Čapek Ğül İpek"), "lukasz zolc capek gul ipek")
        XCTAssertEqual(NameFolding.foldedKey("Nguyễn Thị Hương Đặng"), "nguyen thi huong dang")
        XCTAssertEqual(NameFolding.foldedKey("Ǆemal Ǎ Ș Ț"), "dzemal a s t")
        XCTAssertEqual(NameFolding.foldedKey("Ḑḯṩṹ"), "disu")
    }

    func testDecomposedInputFoldsLikePrecomposed() {
        XCTAssertEqual(NameFolding.foldedKey("E\u{301}mile"), NameFolding.foldedKey("Émile"))
        XCTAssertEqual(NameFolding.foldedKey("Nguye\u{302}\u{303}n"), "nguyen")
    }

    func testNonLatinTextIsKeptLowercased() {
        XCTAssertEqual(NameFolding.foldedKey("Ωmega Жук 李"), "ωmega жук 李")
        XCTAssertEqual(NameFolding.foldedKey("1 × 2 ÷ 3"), "1 × 2 ÷ 3")
    }

    func testEveryTableEntryFoldsToASCII() {
        let ranges: [ClosedRange<UInt32>] = [0x00C0...0x00D6, 0x00D8...0x00F6, 0x00F8...0x017F, 0x1EA0...0x1EF9]
        for range in ranges {
            for value in range {
                guard let scalar = Unicode.Scalar(value) else { continue }
                let folded = NameFolding.foldedKey(String(Character(scalar)))
                XCTAssertTrue(folded.unicodeScalars.allSatisfy { $0.isASCII }, "U+\(String(value, radix: 16)) folded to \(folded)")
            }
        }
    }

    func testFavoriteOrderIsByFoldedNameThenIdentifier() {
        let contacts = [
            Contact(identifier: "b", name: "émile"),
            Contact(identifier: "a", name: "Emile"),
            Contact(identifier: "z", name: "Åsa"),
            Contact(identifier: "y", name: "zoe"),
            Contact(identifier: "x", name: "Eve"),
        ]
        let sorted = contacts.sorted(by: NameFolding.areInFavoriteOrder)
        XCTAssertEqual(sorted.map(\.identifier), ["z", "a", "b", "x", "y"])
    }
}
