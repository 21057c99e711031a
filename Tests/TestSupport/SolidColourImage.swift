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
