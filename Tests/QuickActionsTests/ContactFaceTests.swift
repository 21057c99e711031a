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
        let hostile = ContactFace.monogram(initials: "<&\"", colour: "#1c71d8")
        let text = String(decoding: hostile.svg, as: UTF8.self)
        XCTAssertTrue(text.contains(">&lt;&amp;\"</text>"), text)
        let grace = ContactFace.make(photo: nil, name: "Grace Hopper", identifier: "grace").face
        XCTAssertEqual(grace.fileName, ContactFace.make(photo: nil, name: "Grace Hopper", identifier: "grace").face.fileName)
        XCTAssertNotEqual(grace.fileName, ContactFace.make(photo: nil, name: "Ada Lovelace", identifier: "grace").face.fileName)
        XCTAssertTrue(grace.fileName.hasPrefix("face-") && grace.fileName.hasSuffix(".svg") && grace.fileName.count == 25, grace.fileName)
    }

    // MARK: Drawn by the desktop's own loader

    /// GdkPixbuf (the loader GTK, Plank and GNOME Shell draw icons with, librsvg for SVG) draws
    /// each face: a real JPEG and a real PNG photo made by GdkPixbuf itself show their colour in
    /// the middle and nothing in the corners (the circle), and a monogram its colour.
    func testGdkPixbufDrawsThePhotoRoundAndTheMonogram() throws {
        let script = #"""
            import sys, json, gi
            gi.require_version("GdkPixbuf", "2.0")
            from gi.repository import GdkPixbuf
            if sys.argv[1] == "make":
                kind, path = sys.argv[2], sys.argv[3]
                pixbuf = GdkPixbuf.Pixbuf.new(GdkPixbuf.Colorspace.RGB, False, 8, 64, 48)
                pixbuf.fill(0xE01B24FF)
                pixbuf.savev(path, kind, [], [])
            else:
                pixbuf = GdkPixbuf.Pixbuf.new_from_file_at_size(sys.argv[2], 96, 96)
                data, stride, channels = pixbuf.get_pixels(), pixbuf.get_rowstride(), pixbuf.get_n_channels()
                def pixel(x, y):
                    offset = y * stride + x * channels
                    return list(data[offset:offset + channels])
                print(json.dumps({"width": pixbuf.get_width(), "centre": pixel(48, 30), "corner": pixel(2, 2), "channels": channels}))
            """#
        let probe = runCommand(["/usr/bin/python3", "-c", "import gi; gi.require_version('GdkPixbuf', '2.0'); from gi.repository import GdkPixbuf; "
                                + "assert 'svg' in [f.get_name() for f in GdkPixbuf.Pixbuf.get_formats()]"])
        if probe.status != 0 { throw unavailable("GdkPixbuf with its SVG loader is missing (gir1.2-gdkpixbuf-2.0, librsvg2-common): \(probe.output)") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-faces-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        func draw(_ face: ContactFace, _ label: String) throws -> [String: Any] {
            let path = folder.appendingPathComponent(face.fileName).path
            try Data(face.svg).write(to: URL(fileURLWithPath: path))
            let drawn = runCommand(["/usr/bin/python3", "-c", script, "draw", path])
            XCTAssertEqual(drawn.status, 0, "\(label): \(drawn.output)")
            return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(drawn.output.utf8)) as? [String: Any], drawn.output)
        }
        for kind in ["jpeg", "png"] {
            let photoPath = folder.appendingPathComponent("photo.\(kind)").path
            let made = runCommand(["/usr/bin/python3", "-c", script, "make", kind, photoPath])
            XCTAssertEqual(made.status, 0, made.output)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: photoPath)))
            let (face, problem) = ContactFace.make(photo: bytes, name: "Grace Hopper", identifier: "grace")
            XCTAssertNil(problem, kind)
            guard case .photo(let image) = face else { return XCTFail("\(kind): the photo is the face") }
            XCTAssertEqual([image.width, image.height], [64, 48], kind)
            let drawn = try draw(face, kind)
            XCTAssertEqual(drawn["width"] as? Int, 96, kind)
            let centre = try XCTUnwrap(drawn["centre"] as? [Int], "\(drawn)")
            XCTAssertEqual(centre.count, 4, "drawn with transparency: \(drawn)")
            // The photo's red (JPEG may shift it a little).
            XCTAssertEqual(Double(centre[0]), 0xE0, accuracy: 8, "\(kind): \(drawn)")
            XCTAssertEqual(Double(centre[1]), 0x1B, accuracy: 8, "\(kind): \(drawn)")
            XCTAssertEqual(Double(centre[2]), 0x24, accuracy: 8, "\(kind): \(drawn)")
            XCTAssertEqual(centre[3], 255, "\(kind): \(drawn)")
            XCTAssertEqual((drawn["corner"] as? [Int])?.last, 0, "\(kind): round, so the corner is empty: \(drawn)")
        }
        let monogram = ContactFace.make(photo: nil, name: "Grace Hopper", identifier: "grace").face
        let drawn = try draw(monogram, "monogram")
        let colour = ContactFace.colour(for: "grace")
        let expected = stride(from: 1, to: 7, by: 2).map { Int(colour.dropFirst($0).prefix(2), radix: 16) ?? -1 }
        // Above the initials, inside the circle: the contact's colour.
        let above = try XCTUnwrap(drawn["centre"] as? [Int])
        XCTAssertEqual(Array(above.prefix(3)), expected, "\(drawn)")
        XCTAssertEqual((drawn["corner"] as? [Int])?.last, 0, "\(drawn)")
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
