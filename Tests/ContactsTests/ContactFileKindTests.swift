import XCTest
@testable import Contacts

final class ContactFileKindTests: XCTestCase {
    func testContactFiles() {
        XCTAssertEqual(ContactFileKind.classify(fileName: "ann.vcf"), .vcard)
        XCTAssertEqual(ContactFileKind.classify(fileName: "ANN.VCF"), .vcard)
        XCTAssertEqual(ContactFileKind.classify(fileName: "a.b.Vcf"), .vcard)
        XCTAssertEqual(ContactFileKind.classify(fileName: "ann.json"), .json)
        XCTAssertEqual(ContactFileKind.classify(fileName: "ann.JSON"), .json)
    }

    func testIgnoredNames() {
        for name in [".hidden.vcf", ".ann.json", "ann.vcf.tmp", "ann.TMP", "ann.vcf~", "displayname", "color",
                     "ann.txt", "ann.", "", ".vcf", "ann.vcard.bak"] {
            XCTAssertNil(ContactFileKind.classify(fileName: name), name)
        }
    }

    func testStem() {
        XCTAssertEqual(ContactFileKind.stem(of: "ann.vcf"), "ann")
        XCTAssertEqual(ContactFileKind.stem(of: "a.b.vcf"), "a.b")
        XCTAssertEqual(ContactFileKind.stem(of: "noext"), "noext")
        XCTAssertEqual(ContactFileKind.fileName(ofPath: "/x/y/ann.vcf"), "ann.vcf")
        XCTAssertEqual(ContactFileKind.fileName(ofPath: "ann.vcf"), "ann.vcf")
    }

    func testContactsInFileDispatchesByKindAndMapsProblems() {
        let vcard = Array("BEGIN:VCARD\nFN:V\nEND:VCARD\n".utf8)
        XCTAssertEqual(try ContactFileKind.contacts(inFileAt: "/c/v.vcf", bytes: vcard).get().map(\.identifier), ["v"])
        let json = Array(#"{"name": "J"}"#.utf8)
        XCTAssertEqual(try ContactFileKind.contacts(inFileAt: "/c/j.json", bytes: json).get().map(\.name), ["J"])
        XCTAssertEqual(ContactFileKind.contacts(inFileAt: "/c/v.vcf", bytes: [0x41, 0]), .failure(.binary))
        XCTAssertEqual(ContactFileKind.contacts(inFileAt: "/c/v.vcf", bytes: []), .failure(.parse(.noVCard)))
        XCTAssertEqual(ContactFileKind.contacts(inFileAt: "/c/displayname", bytes: []), .failure(.notAContactFile(fileName: "displayname")))
    }

    func testProblemDescriptionsAreSentences() {
        XCTAssertEqual(ContactFileProblem.tooLarge(size: 2_000_000, limit: 1_048_576).description,
                       "It is 2000000 bytes, larger than the limit of 1048576 bytes.")
        XCTAssertEqual(ContactFileProblem.unreadable(reason: "Permission denied").description, "It cannot be read: Permission denied.")
        XCTAssertEqual(ContactFileProblem.parse(.endWithoutBegin(line: 3)).description,
                       "It cannot be parsed. Line 3: \"END:VCARD\" without a matching \"BEGIN:VCARD\".")
        XCTAssertEqual(ContactFileProblem.binary.description, "It holds binary data (NUL bytes), not text.")
    }
}
