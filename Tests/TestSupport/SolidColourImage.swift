import Foundation
import XCTest

/// A real PNG of one solid colour, made by Pillow (Debian's python3-pil), for a photo whose
/// colour a screenshot can be searched for. Pillow missing: skipped loudly (a failure in CI).
public func solidColourPNG(red: UInt8, green: UInt8, blue: UInt8, size: Int = 96) throws -> Data {
    let script = """
        import base64, io, sys
        from PIL import Image
        buffer = io.BytesIO()
        Image.new("RGB", (int(sys.argv[4]), int(sys.argv[4])), tuple(int(c) for c in sys.argv[1:4])).save(buffer, "PNG")
        sys.stdout.write(base64.b64encode(buffer.getvalue()).decode())
        """
    let made = runCommand(["/usr/bin/python3", "-c", script, "\(red)", "\(green)", "\(blue)", "\(size)"])
    guard made.status == 0 else {
        throw unavailable("Pillow cannot make a PNG (python3-pil; run scripts/install-deps --test): \(made.output)")
    }
    let bytes = Data(base64Encoded: made.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? Data()
    XCTAssertTrue(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "Pillow wrote a PNG: \(made.output.prefix(64))")
    return bytes
}

/// A face picture's size and the RGBA of its middle and its top-left corner, read by Pillow
/// (a photo's face is a PNG cut round: its corner is transparent).
public func faceMiddleAndCorner(path: String) throws -> (size: [Int], middle: [Int], corner: [Int]) {
    let script = """
        import json, sys
        from PIL import Image
        image = Image.open(sys.argv[1]).convert("RGBA")
        width, height = image.size
        print(json.dumps({"size": [width, height], "middle": image.getpixel((width // 2, height // 2)), "corner": image.getpixel((0, 0))}))
        """
    let read = runCommand(["/usr/bin/python3", "-c", script, path])
    guard read.status == 0 else {
        throw unavailable("Pillow cannot read the face '\(path)' (python3-pil; run scripts/install-deps --test): \(read.output)")
    }
    let values = try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [String: [Int]] ?? [:]
    return (values["size"] ?? [], values["middle"] ?? [], values["corner"] ?? [])
}
