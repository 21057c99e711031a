import CTurboJPEG
import Foundation
import Logging
import QuickActions
import TestSupport
import XCTest
@testable import QuickActionsDaemon

/// A photo's face as a picture: photos made here with the same libraries (TurboJPEG's encoder,
/// libpng's), turned into the face and read back with libpng.
final class FacePictureTests: XCTestCase {
    private typealias Colour = (red: UInt8, green: UInt8, blue: UInt8)
    private let red: Colour = (0xE0, 0x1B, 0x24)
    private let green: Colour = (0x2E, 0xC2, 0x7E)
    private let blue: Colour = (0x1C, 0x71, 0xD8)

    private func pixels(width: Int, height: Int, colour: (Int, Int) -> Colour) -> FacePicture.Pixels {
        var rgba: [UInt8] = []
        rgba.reserveCapacity(width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let pixel = colour(x, y)
                rgba += [pixel.red, pixel.green, pixel.blue, 255]
            }
        }
        return FacePicture.Pixels(width: width, height: height, rgba: rgba)
    }

    private func png(_ pixels: FacePicture.Pixels) throws -> [UInt8] {
        try FacePicture.encodePNG(pixels)
    }

    /// A JPEG by TurboJPEG's own encoder (4:4:4, quality 95: colours stay close).
    private func jpeg(_ pixels: FacePicture.Pixels) throws -> [UInt8] {
        let handle = try XCTUnwrap(tjInitCompress())
        defer { tjDestroy(handle) }
        var buffer: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let status = pixels.rgba.withUnsafeBufferPointer {
            tjCompress2(handle, $0.baseAddress, Int32(pixels.width), 0, Int32(pixels.height), Int32(TJPF_RGBA.rawValue),
                        &buffer, &size, Int32(TJSAMP_444.rawValue), 95, 0)
        }
        defer { tjFree(buffer) }
        XCTAssertEqual(status, 0, String(cString: tjGetErrorStr2(handle)))
        return Array(UnsafeBufferPointer(start: buffer, count: Int(size)))
    }

    /// The face `FaceFiles` makes of `photo`, which must be a PNG picture, decoded.
    private func face(of photo: [UInt8], file: StaticString = #filePath, line: UInt = #line) throws -> FacePicture.Pixels {
        let (document, problem) = FaceFiles.document(photo: photo, name: "Grace Hopper", identifier: "grace")
        XCTAssertNil(problem, file: file, line: line)
        XCTAssertEqual(document.fileExtension, "png", file: file, line: line)
        XCTAssertEqual(Array(document.bytes.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], file: file, line: line)
        return try FacePicture.decodePNG(document.bytes)
    }

    private func pixel(_ pixels: FacePicture.Pixels, _ x: Int, _ y: Int) -> [Int] {
        let offset = (y * pixels.width + x) * 4
        return pixels.rgba[offset..<(offset + 4)].map(Int.init)
    }

    private func assertColour(_ pixel: [Int], _ colour: Colour, _ label: String, file: StaticString = #filePath, line: UInt = #line) {
        for (channel, expected) in zip(pixel.prefix(3), [colour.red, colour.green, colour.blue]) {
            XCTAssertEqual(Double(channel), Double(expected), accuracy: 6, "\(label): \(pixel)", file: file, line: line)
        }
        XCTAssertEqual(pixel[3], 255, "\(label): opaque: \(pixel)", file: file, line: line)
    }

    /// A photo's picture is named by the photo: a daemon that starts again (its memory of made
    /// faces gone) reads the picture it drew before instead of decoding the photo and drawing it
    /// again; a changed photo is a new name, drawn anew.
    func testAPictureDrawnBeforeARestartIsReadBackNotDrawnAgain() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-faces-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let card = folder + "/grace.vcf"
        func request(_ colour: Colour) throws -> FaceRequest {
            let photo = Data(try png(pixels(width: 64, height: 64) { _, _ in colour })).base64EncodedString()
            try "BEGIN:VCARD\nVERSION:3.0\nUID:grace\nFN:Grace Hopper\nPHOTO;ENCODING=b;TYPE=PNG:\(photo)\nEND:VCARD\n"
                .write(toFile: card, atomically: true, encoding: .utf8)
            return FaceRequest(identifier: "grace", name: "Grace Hopper", card: .file(card))
        }
        let app = "org.example.Contacts.desktop"
        var first = FaceFiles(dataHome: folder)
        let red = try request(self.red)
        let drawn = try XCTUnwrap(first.sync([red], appDesktopFileID: app, logger: Logger(label: "test"))["grace"])
        XCTAssertTrue(drawn.path.hasSuffix("-\(FacePicture.side).png"), drawn.path)
        assertColour(pixel(try FacePicture.decodePNG(drawn.quicklistImage), 64, 64), self.red, "drawn")

        // The file is swapped for another picture under the same name: what the next daemon
        // shows is that file, so it read the file and drew nothing.
        let marker = try png(pixels(width: FacePicture.side, height: FacePicture.side) { _, _ in self.blue })
        try Data(marker).write(to: URL(fileURLWithPath: drawn.path))
        var restarted = FaceFiles(dataHome: folder)
        let readBack = try XCTUnwrap(restarted.sync([red], appDesktopFileID: app, logger: Logger(label: "test"))["grace"])
        XCTAssertEqual(readBack.path, drawn.path)
        XCTAssertEqual(readBack.quicklistImage, marker, "read back, not drawn again")

        // What is no such picture under that name (not a PNG, or not of the face's size) is
        // drawn again and replaced.
        for stray in [Array("not a picture".utf8), try png(pixels(width: 8, height: 8) { _, _ in self.blue })] {
            try Data(stray).write(to: URL(fileURLWithPath: drawn.path))
            var again = FaceFiles(dataHome: folder)
            let redrawn = try XCTUnwrap(again.sync([red], appDesktopFileID: app, logger: Logger(label: "test"))["grace"])
            XCTAssertEqual(redrawn.path, drawn.path)
            assertColour(pixel(try FacePicture.decodePNG(redrawn.quicklistImage), 64, 64), self.red, "drawn again")
            XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: drawn.path))), redrawn.quicklistImage, "and replaced")
        }

        let green = try request(self.green)
        let redrawn = try XCTUnwrap(restarted.sync([green], appDesktopFileID: app, logger: Logger(label: "test"))["grace"])
        XCTAssertNotEqual(redrawn.path, drawn.path, "a new photo, a new name")
        assertColour(pixel(try FacePicture.decodePNG(redrawn.quicklistImage), 64, 64), self.green, "drawn anew")
        XCTAssertFalse(FileManager.default.fileExists(atPath: drawn.path), "the face no longer shown goes")
    }

    /// The face of a JPEG and of a PNG photo: 128 × 128, the photo's colour in the middle, the
    /// corners fully transparent, the circle's edge between (anti-aliased: partly transparent).
    func testAJPEGAndAPNGPhotoBecomeARoundPNGFace() throws {
        let photo = pixels(width: 200, height: 200) { _, _ in self.red }
        for (kind, bytes) in [("jpeg", try jpeg(photo)), ("png", try png(photo))] {
            let face = try face(of: bytes)
            XCTAssertEqual([face.width, face.height], [FacePicture.side, FacePicture.side], kind)
            XCTAssertEqual(FacePicture.side, 128)
            assertColour(pixel(face, 64, 64), red, "\(kind) centre")
            assertColour(pixel(face, 64, 2), red, "\(kind) top middle, inside the circle")
            for (x, y) in [(0, 0), (127, 0), (0, 127), (127, 127), (8, 8), (119, 119)] {
                XCTAssertEqual(pixel(face, x, y)[3], 0, "\(kind): corner (\(x), \(y)) is transparent")
            }
            // On the circle: neither inside nor out, a smooth edge.
            let edge = (0..<64).map { pixel(face, $0, $0)[3] }
            XCTAssertTrue(edge.contains { 0 < $0 && $0 < 255 }, "\(kind): anti-aliased edge \(edge)")
        }
    }

    /// A landscape loses its sides, a portrait its top and bottom: the centre square is the face.
    func testANonSquarePhotoIsCentreCropped() throws {
        let thirds = [red, green, blue]
        let landscape = pixels(width: 300, height: 100) { x, _ in thirds[x / 100] }
        let portrait = pixels(width: 90, height: 270) { _, y in thirds[y / 90] }
        for (label, photo) in [("landscape", landscape), ("portrait", portrait)] {
            for (kind, bytes) in [("jpeg", try jpeg(photo)), ("png", try png(photo))] {
                let face = try face(of: bytes)
                for (x, y) in [(64, 64), (4, 64), (123, 64), (64, 4), (64, 123)] {
                    assertColour(pixel(face, x, y), green, "\(label) \(kind) (\(x), \(y)): the middle third only")
                }
            }
        }
    }

    /// A photo smaller than the face is enlarged to it.
    func testASmallPhotoIsEnlarged() throws {
        let face = try face(of: try png(pixels(width: 16, height: 12) { x, _ in x < 8 ? self.red : self.blue }))
        XCTAssertEqual([face.width, face.height], [128, 128])
        assertColour(pixel(face, 40, 64), red, "left half")
        assertColour(pixel(face, 88, 64), blue, "right half")
    }

    /// A photo whose header passes but whose data is broken, bytes that are no image, a header
    /// claiming 100000 × 100000 pixels and an image of no pixels: the monogram, and why.
    func testABrokenOrHostilePhotoGivesTheMonogramAndSaysWhy() throws {
        let photo = pixels(width: 64, height: 64) { _, _ in self.red }
        let monogram = ContactFace.monogramSVG(name: "Grace Hopper", identifier: "grace")
        func problem(_ bytes: [UInt8], _ label: String, file: StaticString = #filePath, line: UInt = #line) -> FaceImage.Problem? {
            let (document, problem) = FaceFiles.document(photo: bytes, name: "Grace Hopper", identifier: "grace")
            XCTAssertEqual(document.fileExtension, "svg", label, file: file, line: line)
            XCTAssertEqual(document.bytes, monogram, label, file: file, line: line)
            XCTAssertNotNil(problem, label, file: file, line: line)
            return problem
        }
        let jpegBytes = try jpeg(photo), pngBytes = try png(photo)
        for (label, truncated) in [("jpeg", Array(jpegBytes.prefix(jpegBytes.count / 2))), ("png", Array(pngBytes.prefix(pngBytes.count - 20)))] {
            guard case .undecodable(let reason)? = problem(truncated, "truncated \(label)") else {
                XCTFail("truncated \(label): the decoder's error"); continue
            }
            XCTAssertFalse(reason.isEmpty, label)
            XCTAssertTrue(FaceImage.Problem.undecodable(reason).description.hasPrefix("the photo cannot be decoded: "), reason)
        }
        // The header is a JPEG's (the frame header read), the rest garbage.
        var garbage = Array(jpegBytes.prefix(200))
        garbage += [UInt8](repeating: 0x5A, count: 400)
        XCTAssertNotNil(problem(garbage, "garbage jpeg"))
        XCTAssertEqual(problem(Array("<svg onload=alert(1)>".utf8), "not an image"), .notAnImage)

        // A real PNG whose IHDR (its CRC made right, so libpng reads it) claims 100000 × 100000.
        let huge = withHeader(pngBytes, width: 100_000, height: 100_000)
        XCTAssertEqual(problem(huge, "huge png"), .tooManyPixels(width: 100_000, height: 100_000))
        // libpng's own reading of the size is checked too, before any pixel is allocated.
        XCTAssertEqual(decodingProblem(try FacePicture.decodePNG(huge)), .tooManyPixels(width: 100_000, height: 100_000))
        XCTAssertEqual(problem(withHeader(pngBytes, width: 0, height: 64), "empty png"), .notAnImage)
        XCTAssertNotNil(decodingProblem(try FacePicture.decodePNG(withHeader(pngBytes, width: 0, height: 64))))
        // A JPEG frame header claiming 0 lines: no image.
        XCTAssertEqual(problem(withFrameSize(jpegBytes, width: 64, height: 0), "empty jpeg"), .notAnImage)
        XCTAssertEqual(problem(withFrameSize(jpegBytes, width: 60_000, height: 60_000), "huge jpeg"), .tooManyPixels(width: 60_000, height: 60_000))
    }

    /// A 4096-pixel JPEG is decoded at 512 pixels (TurboJPEG's 1/8), not at full size; how fast
    /// is scripts/bench's to say (its photos rows), never a timed test.
    func testALargeJPEGIsDecodedScaledDown() throws {
        // Stripes of 512 rows, built by the row (a pixel at a time is slow in a debug build).
        let rows = [red, blue].map { colour in Array(repeatElement([colour.red, colour.green, colour.blue, 255], count: 4096).joined()) }
        var rgba: [UInt8] = []
        rgba.reserveCapacity(4096 * 4096 * 4)
        for y in 0..<4096 { rgba += rows[(y / 512) % 2] }
        let bytes = try jpeg(FacePicture.Pixels(width: 4096, height: 4096, rgba: rgba))
        let decoded = try FacePicture.decodeJPEG(bytes, atLeast: FacePicture.side)
        XCTAssertEqual([decoded.width, decoded.height], [512, 512])
        let small = try FacePicture.decodeJPEG(try jpeg(pixels(width: 300, height: 200) { _, _ in self.red }), atLeast: FacePicture.side)
        XCTAssertEqual([small.width, small.height], [225, 150], "3/4, the smallest scale that keeps 128 pixels (5/8 keeps 125)")
        let face = try face(of: bytes)
        XCTAssertEqual(face.width, 128)
    }

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

        func draw(_ document: (bytes: [UInt8], fileExtension: String), _ label: String) throws -> [String: Any] {
            let path = folder.appendingPathComponent(ContactFace.fileName(of: document.bytes, fileExtension: document.fileExtension)).path
            try Data(document.bytes).write(to: URL(fileURLWithPath: path))
            let drawn = runCommand(["/usr/bin/python3", "-c", script, "draw", path])
            XCTAssertEqual(drawn.status, 0, "\(label): \(drawn.output)")
            return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(drawn.output.utf8)) as? [String: Any], drawn.output)
        }
        for kind in ["jpeg", "png"] {
            let photoPath = folder.appendingPathComponent("photo.\(kind)").path
            let made = runCommand(["/usr/bin/python3", "-c", script, "make", kind, photoPath])
            XCTAssertEqual(made.status, 0, made.output)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: photoPath)))
            guard case .photo(let image) = ContactFace.make(photo: bytes, name: "Grace Hopper", identifier: "grace").face else {
                return XCTFail("\(kind): the photo is the face")
            }
            XCTAssertEqual([image.width, image.height], [64, 48], kind)
            let (document, problem) = FaceFiles.document(photo: bytes, name: "Grace Hopper", identifier: "grace")
            XCTAssertNil(problem, kind)
            XCTAssertEqual(document.fileExtension, "png", kind)
            let drawn = try draw(document, kind)
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
        let monogram = FaceFiles.document(photo: nil, name: "Grace Hopper", identifier: "grace").document
        XCTAssertEqual(monogram.fileExtension, "svg")
        let drawn = try draw(monogram, "monogram")
        let colour = ContactFace.colour(for: "grace")
        let expected = stride(from: 1, to: 7, by: 2).map { Int(colour.dropFirst($0).prefix(2), radix: 16) ?? -1 }
        // Above the initials, inside the circle: the contact's colour.
        let above = try XCTUnwrap(drawn["centre"] as? [Int])
        XCTAssertEqual(Array(above.prefix(3)), expected, "\(drawn)")
        XCTAssertEqual((drawn["corner"] as? [Int])?.last, 0, "\(drawn)")
    }

    // MARK: Headers rewritten

    /// `png` with its IHDR's width and height replaced and the chunk's CRC made right.
    private func withHeader(_ png: [UInt8], width: UInt32, height: UInt32) -> [UInt8] {
        var bytes = png
        bytes.replaceSubrange(16..<24, with: withUnsafeBytes(of: width.bigEndian, Array.init) + withUnsafeBytes(of: height.bigEndian, Array.init))
        let crc = crc32(bytes[12..<29])
        bytes.replaceSubrange(29..<33, with: withUnsafeBytes(of: crc.bigEndian, Array.init))
        return bytes
    }

    /// PNG's CRC-32 (ISO 3309), bit by bit.
    private func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// `jpeg` with its baseline frame header (SOF0) claiming another size.
    private func withFrameSize(_ jpeg: [UInt8], width: UInt16, height: UInt16) -> [UInt8] {
        var bytes = jpeg
        guard let frame = (2..<(bytes.count - 9)).first(where: { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 }) else {
            XCTFail("no SOF0 in the JPEG")
            return bytes
        }
        bytes.replaceSubrange((frame + 5)..<(frame + 9), with: withUnsafeBytes(of: height.bigEndian, Array.init) + withUnsafeBytes(of: width.bigEndian, Array.init))
        return bytes
    }
}

/// Why `decode` threw, or nil when it did not.
private func decodingProblem(_ decode: @autoclosure () throws(FaceImage.Problem) -> FacePicture.Pixels) -> FaceImage.Problem? {
    do throws(FaceImage.Problem) {
        _ = try decode()
        return nil
    } catch {
        return error
    }
}

/// Photos for the face tests of other classes: real PNGs by libpng, and a face file's middle.
enum TestPhoto {
    /// A `width` × `height` PNG of one opaque colour, `rgb`.
    static func png(width: Int, height: Int, rgb: [UInt8]) throws -> [UInt8] {
        let rgba = Array(repeatElement(rgb + [255], count: width * height).joined())
        return try FacePicture.encodePNG(FacePicture.Pixels(width: width, height: height, rgba: rgba))
    }

    /// The RGBA of the middle and of the top-left corner of the face PNG at `path`.
    static func middleAndCorner(ofFace path: String) throws -> (middle: [UInt8], corner: [UInt8]) {
        let face = try FacePicture.decodePNG([UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        let middle = ((face.height / 2) * face.width + face.width / 2) * 4
        return (Array(face.rgba[middle..<(middle + 4)]), Array(face.rgba[0..<4]))
    }
}
