import Contacts
import Foundation
import TestSupport
import XCTest
@testable import QuickActions

final class ContactFaceTests: XCTestCase {
    // MARK: The photo's header

    /// The PNG signature and IHDR, with a width and a height.
    private func pngHeader(width: UInt32, height: UInt32) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
            + withUnsafeBytes(of: width.bigEndian, Array.init) + withUnsafeBytes(of: height.bigEndian, Array.init) + [8, 6, 0, 0, 0]
    }

    /// SOI, an APP0 segment, then the frame header (SOF0: precision, height, width).
    private func jpegHeader(width: UInt16, height: UInt16, frameMarker: UInt8 = 0xC0) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x06] + Array("JFIF".utf8) + [0xFF, frameMarker, 0x00, 0x0B, 0x08]
            + withUnsafeBytes(of: height.bigEndian, Array.init) + withUnsafeBytes(of: width.bigEndian, Array.init) + [1, 1, 0x11, 0]
    }

    func testTheKindAndSizeComeFromTheHeaderWithinTheBounds() throws {
        let png = try FaceImage.inspect(pngHeader(width: 120, height: 80)).get()
        XCTAssertEqual([png.kind == .png, png.width == 120, png.height == 80], [true, true, true])
        let jpeg = try FaceImage.inspect(jpegHeader(width: 640, height: 480)).get()
        XCTAssertEqual([jpeg.kind == .jpeg, jpeg.width == 640, jpeg.height == 480], [true, true, true])
        let progressive = try FaceImage.inspect(jpegHeader(width: 64, height: 32, frameMarker: 0xC2)).get()
        XCTAssertEqual(progressive.width, 64)

        // A small file claiming a huge size, one too long, and bytes that are no image.
        XCTAssertEqual(FaceImage.inspect(pngHeader(width: 100_000, height: 100_000)).failure, .tooManyPixels(width: 100_000, height: 100_000))
        XCTAssertEqual(FaceImage.inspect(jpegHeader(width: 9000, height: 10)).failure, .tooManyPixels(width: 9000, height: 10))
        XCTAssertEqual(FaceImage.inspect(pngHeader(width: 1, height: 1) + [UInt8](repeating: 0, count: FaceImage.maxBytes)).failure,
                       .tooLarge(bytes: FaceImage.maxBytes + 29))
        for garbage: [UInt8] in [[], Array("<svg onload=alert(1)>".utf8), [0xFF, 0xD8], [0xFF, 0xD8, 0xFF, 0xDA, 0, 2], [0xFF, 0xD8, 0xFF, 0xE0, 0, 0],
                                 Array(pngHeader(width: 0, height: 5)), Array(jpegHeader(width: 5, height: 5).prefix(16))] {
            XCTAssertEqual(FaceImage.inspect(garbage).failure, .notAnImage, "\(garbage.prefix(24))")
        }
    }

    // MARK: The monogram

    func testInitialsAndAColourStablePerContact() {
        XCTAssertEqual(ContactFace.initials(of: "Grace Hopper"), "GH")
        XCTAssertEqual(ContactFace.initials(of: "Grace Brewster Murray Hopper"), "GH")
        XCTAssertEqual(ContactFace.initials(of: "ada"), "A")
        XCTAssertEqual(ContactFace.initials(of: "Édith  Piaf"), "ÉP")
        XCTAssertEqual(ContactFace.initials(of: "Hopper, Grace"), "HG")
        XCTAssertEqual(ContactFace.initials(of: "  42 "), "?")
        XCTAssertEqual(ContactFace.initials(of: ""), "?")
        // The colour follows the identifier, not the run: these are what any machine computes.
        XCTAssertEqual(ContactFace.colour(for: "grace-hopper"), ContactFace.colour(for: "grace-hopper"))
        let colours = Set((0..<64).map { ContactFace.colour(for: "contact-\($0)") })
        XCTAssertGreaterThan(colours.count, 4, "contacts get different colours")
        XCTAssertTrue(colours.isSubset(of: ContactFace.palette))
        XCTAssertEqual(ContactFace.colour(for: "grace-hopper"), ContactFace.palette[Int(fnv1a32("grace-hopper") % UInt32(ContactFace.palette.count))])
    }

    private func fnv1a32(_ text: String) -> UInt32 {
        text.utf8.reduce(0x811c_9dc5) { ($0 ^ UInt32($1)) &* 0x0100_0193 }
    }

    func testAFaceFallsBackToTheMonogramAndSaysWhy() {
        let none = ContactFace.make(photo: nil, name: "Grace Hopper", identifier: "grace")
        XCTAssertEqual(none.face, .monogram(initials: "GH", colour: ContactFace.colour(for: "grace")))
        XCTAssertNil(none.problem)
        let broken = ContactFace.make(photo: Array("not an image".utf8), name: "Grace Hopper", identifier: "grace")
        XCTAssertEqual(broken.face, none.face)
        XCTAssertEqual(broken.problem, .notAnImage)
        let photo = ContactFace.make(photo: pngHeader(width: 4, height: 4), name: "Grace Hopper", identifier: "grace")
        guard case .photo(let image) = photo.face else { return XCTFail("a usable photo is the face") }
        XCTAssertEqual(image.width, 4)
    }

    func testTheSVGEscapesTheInitialsAndIsNamedByItsContent() {
        let text = String(decoding: ContactFace.svg(initials: "<&\"", colour: "#1c71d8"), as: UTF8.self)
        XCTAssertTrue(text.contains(">&lt;&amp;\"</text>"), text)
        let grace = ContactFace.monogramSVG(name: "Grace Hopper", identifier: "grace")
        XCTAssertEqual(ContactFace.fileName(of: grace, fileExtension: "svg"),
                       ContactFace.fileName(of: ContactFace.monogramSVG(name: "Grace Hopper", identifier: "grace"), fileExtension: "svg"))
        XCTAssertNotEqual(ContactFace.fileName(of: grace, fileExtension: "svg"),
                          ContactFace.fileName(of: ContactFace.monogramSVG(name: "Ada Lovelace", identifier: "grace"), fileExtension: "svg"))
        let name = ContactFace.fileName(of: grace, fileExtension: "svg")
        XCTAssertTrue(name.hasPrefix("face-") && name.hasSuffix(".svg") && name.count == 25, name)
        XCTAssertEqual(ContactFace.fileName(of: grace, fileExtension: "png"), name.dropLast(3) + "png")
        // The monogram is a circle, which every SVG renderer (Qt's SVG Tiny too) draws round: no clip path.
        XCTAssertTrue(String(decoding: grace, as: UTF8.self).contains("<circle"))
        XCTAssertFalse(String(decoding: grace, as: UTF8.self).contains("clipPath"))
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
