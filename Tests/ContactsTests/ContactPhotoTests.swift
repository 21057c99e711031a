import Foundation
import XCTest
@testable import Contacts

final class ContactPhotoTests: XCTestCase {
    /// Eight bytes standing for an image: the parser hands on bytes, it never looks at pixels.
    private let image: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46]
    private var base64: String { Data(image).base64EncodedString() }

    private func photo(_ card: String, identifier: String = "grace", stem: String = "grace") throws -> Result<ContactPhoto, ContactPhotoProblem>? {
        try VCardParser.photo(in: Array(card.utf8), identifier: identifier, fileStem: stem)
    }

    func testInlineBase64Of21And30AndTheDataURIOf40() throws {
        // 2.1: the type bare, the value folded over two lines.
        let half = base64.index(base64.startIndex, offsetBy: 6)
        let v21 = "BEGIN:VCARD\r\nVERSION:2.1\r\nUID:grace\r\nFN:Grace\r\nPHOTO;JPEG;ENCODING=BASE64:\(base64[..<half])\r\n \(base64[half...])\r\n\r\nEND:VCARD\r\n"
        XCTAssertEqual(try photo(v21), .success(.inline(bytes: image, mediaType: "image/jpeg")))
        let v30 = "BEGIN:VCARD\nVERSION:3.0\nUID:grace\nFN:Grace\nPHOTO;ENCODING=b;TYPE=JPEG:\(base64)\nEND:VCARD\n"
        XCTAssertEqual(try photo(v30), .success(.inline(bytes: image, mediaType: "image/jpeg")))
        let v40 = "BEGIN:VCARD\nVERSION:4.0\nUID:grace\nFN:Grace\nPHOTO:data:image/png;base64,\(base64)\nEND:VCARD\n"
        XCTAssertEqual(try photo(v40), .success(.inline(bytes: image, mediaType: "image/png")))
    }

    /// The spaces and tabs folding leaves inside a value go, on an ASCII value's bytes as on
    /// any other's characters (a non-ASCII space too); anything else in it is no base64.
    func testWhitespaceInsideTheValueGoesWhateverItIs() throws {
        let split = base64.index(base64.startIndex, offsetBy: 4)
        for space in [" ", "\t", " \t ", "\u{2003}", "\u{00A0} "] {
            let card = "BEGIN:VCARD\nVERSION:3.0\nUID:grace\nFN:Grace\nPHOTO;ENCODING=b;TYPE=JPEG:\(base64[..<split])\(space)\(base64[split...])\nEND:VCARD\n"
            XCTAssertEqual(try photo(card), .success(.inline(bytes: image, mediaType: "image/jpeg")), space.debugDescription)
        }
        for foreign in ["\u{00E9}", "*"] {
            let card = "BEGIN:VCARD\nVERSION:3.0\nUID:grace\nFN:Grace\nPHOTO;ENCODING=b;TYPE=JPEG:\(base64[..<split])\(foreign)\(base64[split...])\nEND:VCARD\n"
            XCTAssertEqual(try photo(card), .failure(.notBase64(line: 5)), foreign)
        }
    }

    func testAFileURIIsAPathAndOtherURIsAreRefused() throws {
        let file = "BEGIN:VCARD\nVERSION:4.0\nUID:grace\nFN:Grace\nPHOTO:file:///home/grace/My%20Face.jpg\nEND:VCARD\n"
        XCTAssertEqual(try photo(file), .success(.file(path: "/home/grace/My Face.jpg")))
        let local = "BEGIN:VCARD\nVERSION:4.0\nUID:grace\nFN:Grace\nPHOTO;VALUE=uri:file://localhost/p.png\nEND:VCARD\n"
        XCTAssertEqual(try photo(local), .success(.file(path: "/p.png")))
        for uri in ["https://example.org/grace.jpg", "file://other-host/p.png", "file:///a%00b", "data:image/png,notbase64"] {
            let card = "BEGIN:VCARD\nVERSION:4.0\nUID:grace\nFN:Grace\nPHOTO:\(uri)\nEND:VCARD\n"
            XCTAssertEqual(try photo(card), .failure(.unsupportedURI(uri)), uri)
        }
    }

    func testBrokenOrHugeInlinePhotosAreProblemsNotErrors() throws {
        let broken = "BEGIN:VCARD\nVERSION:3.0\nUID:grace\nFN:Grace\nPHOTO;ENCODING=b;TYPE=JPEG:@@not base64@@\nEND:VCARD\n"
        XCTAssertEqual(try photo(broken), .failure(.notBase64(line: 5)))
        let huge = "BEGIN:VCARD\nVERSION:3.0\nUID:grace\nFN:Grace\nPHOTO;ENCODING=b;TYPE=JPEG:"
            + String(repeating: "AAAA", count: ContactPhoto.maxBytes / 3 + 1) + "\nEND:VCARD\n"
        guard case .failure(.tooLarge(let bytes))? = try photo(huge) else { return XCTFail("a photo over the bound is refused") }
        XCTAssertGreaterThan(bytes, ContactPhoto.maxBytes)
    }

    /// The card of the contact asked for, among several in one file; none without a PHOTO.
    func testThePhotoOfTheContactAskedForAndNoneWithoutOne() throws {
        let two = """
            BEGIN:VCARD\nVERSION:3.0\nUID:ada\nFN:Ada\nEND:VCARD
            BEGIN:VCARD\nVERSION:3.0\nFN:Grace\nPHOTO;ENCODING=b;TYPE=PNG:\(base64)\nEND:VCARD\n
            """
        XCTAssertNil(try photo(two, identifier: "ada", stem: "both"))
        XCTAssertEqual(try photo(two, identifier: "both#2", stem: "both"), .success(.inline(bytes: image, mediaType: "image/png")))
        XCTAssertNil(try photo(two, identifier: "nobody", stem: "both"))
        // What the index keeps of the contact does not change with a photo: the fast parser still skips it.
        let contacts = try VCardParser.parse(Array(two.utf8), fileStem: "both")
        XCTAssertEqual(contacts.map(\.identifier), ["ada", "both#2"])
    }
}
