import Contacts

/// A favorite's icon: the contact's photo cut round, or a monogram (initials on a colour that
/// stays the same for the contact) when there is no photo or it cannot be used. Here the photo's
/// header is read only to know its kind and size, and a photo too large is refused before any
/// decoder sees it; the daemon decodes it, scales and cuts it round into a PNG picture (every
/// desktop draws a PNG's alpha, where an SVG clip path is lost on Qt's SVG Tiny renderer). The
/// monogram is an SVG document: a circle and text, round everywhere.
public enum ContactFace: Hashable, Sendable {
    case photo(FaceImage)
    case monogram(initials: String, colour: String)

    /// Side of the SVG's square, in its own units (it scales without loss).
    static let side = 96

    /// The contact's face: its photo when `photo` is a usable image, else its monogram; with
    /// the reason the photo was not used, for the caller to log.
    public static func make(
        photo: [UInt8]?, name: String, identifier: String
    ) -> (face: ContactFace, problem: FaceImage.Problem?) {
        let monogram = ContactFace.monogram(initials: initials(of: name), colour: colour(for: identifier))
        guard let photo else { return (monogram, nil) }
        switch FaceImage.inspect(photo) {
        case .success(let image): return (.photo(image), nil)
        case .failure(let problem): return (monogram, problem)
        }
    }

    /// The SVG document of the monogram of the contact named `name`, `identifier`.
    public static func monogramSVG(name: String, identifier: String) -> [UInt8] {
        svg(initials: initials(of: name), colour: colour(for: identifier))
    }

    /// A monogram's SVG document (a photo's picture is the daemon's to make).
    public static func svg(initials: String, colour: String) -> [UInt8] {
        let side = Self.side
        let half = side / 2
        var text = #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(side)" height="\#(side)" viewBox="0 0 \#(side) \#(side)">"#
        text += #"<circle cx="\#(half)" cy="\#(half)" r="\#(half)" fill="\#(colour)"/>"#
        text += #"<text x="\#(half)" y="\#(half)" dy="0.35em" text-anchor="middle" font-family="sans-serif""#
            + #" font-size="\#(initials.count > 1 ? 40 : 48)" font-weight="bold" fill="white">\#(MarkupEscaping.text(initials))</text>"#
        text += "</svg>\n"
        return Array(text.utf8)
    }

    /// A name for a file holding a face's `bytes` (an SVG or PNG document, `fileExtension`), from
    /// its content: the same face is one file, and a changed photo a new name, which launchers
    /// that cache icons by path see as new.
    public static func fileName(of bytes: [UInt8], fileExtension: String) -> String {
        "face-" + StableHash.hex(bytes) + "." + fileExtension
    }

    /// Up to two letters: the first of the first word and of the last ("Grace Hopper" → "GH",
    /// "Ada" → "A"); "?" for a name with no letter.
    public static func initials(of name: String) -> String {
        let words = name.split { $0.isWhitespace || $0 == "," }.compactMap { word in word.first { $0.isLetter } }
        guard let first = words.first else { return "?" }
        let last = words.count > 1 ? words.last.map { String($0) } ?? "" : ""
        return (String(first) + last).uppercased()
    }

    /// GNOME's palette, darker shades, each light enough for white initials.
    static let palette = ["#1c71d8", "#2ec27e", "#e66100", "#c01c28", "#813d9c", "#865e3c", "#0c7a6e", "#5e5c64"]

    /// The same colour for the contact every time, on every machine: picked by a hash of its
    /// identifier that does not change between runs (Swift's `Hasher` does).
    public static func colour(for identifier: String) -> String {
        var hash: UInt32 = 0x811c_9dc5  // FNV-1a, 32 bits
        for byte in identifier.utf8 {
            hash ^= UInt32(byte)
            hash &*= 0x0100_0193
        }
        return palette[Int(hash % UInt32(palette.count))]
    }
}

/// A photo whose header says it is a JPEG or PNG image of a size a face may have. Only the
/// header is read here: the pixels are decoded by the daemon's picture maker, which reads the
/// size again from its decoder before it allocates anything.
public struct FaceImage: Hashable, Sendable {
    /// The image formats a face is made from.
    public enum Kind: String, Hashable, Sendable {
        case jpeg, png
    }

    /// The image's format.
    public var kind: Kind
    /// The width in pixels, from the header.
    public var width: Int
    /// The height in pixels, from the header.
    public var height: Int
    /// The encoded image, as the card holds it.
    public var bytes: [UInt8]

    /// Larger files are not decoded (the most a card's photo is read).
    public static let maxBytes = ContactPhoto.maxBytes
    /// Wider or taller images are not decoded: a small file can claim a huge size, which a
    /// decoder would allocate before the picture is scaled down to a face.
    public static let maxSide = 4096

    /// Why a photo gives no face (and the monogram is used instead).
    public enum Problem: Error, Hashable, Sendable, CustomStringConvertible {
        case tooLarge(bytes: Int)
        case tooManyPixels(width: Int, height: Int)
        case notAnImage
        /// The header was fine, the image is not: the decoder's words (a truncated file, bad data).
        case undecodable(String)

        /// The reason as a clause, with the size in bytes or pixels where there is one.
        public var description: String {
            switch self {
            case .tooLarge(let bytes): "the photo is \(bytes) bytes, more than \(FaceImage.maxBytes)"
            case .tooManyPixels(let width, let height):
                "the photo is \(width)×\(height) pixels, more than \(FaceImage.maxSide) on a side"
            case .notAnImage: "the photo is not a JPEG or PNG image that can be read"
            case .undecodable(let reason): "the photo cannot be decoded: \(reason)"
            }
        }
    }

    /// Its kind and size from its header, within the bounds.
    public static func inspect(_ bytes: [UInt8]) -> Result<FaceImage, Problem> {
        guard bytes.count <= maxBytes else { return .failure(.tooLarge(bytes: bytes.count)) }
        guard let (kind, width, height) = pngSize(bytes) ?? jpegSize(bytes), width > 0, height > 0 else {
            return .failure(.notAnImage)
        }
        guard width <= maxSide, height <= maxSide else { return .failure(.tooManyPixels(width: width, height: height)) }
        return .success(FaceImage(kind: kind, width: width, height: height, bytes: bytes))
    }

    private static func bigEndian(_ bytes: [UInt8], at offset: Int, count: Int) -> Int {
        bytes[offset..<(offset + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    /// The signature, then the IHDR chunk, which the format puts first: width and height.
    private static func pngSize(_ bytes: [UInt8]) -> (Kind, Int, Int)? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 24, Array(bytes[0..<8]) == signature, Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
        return (.png, bigEndian(bytes, at: 16, count: 4), bigEndian(bytes, at: 20, count: 4))
    }

    /// The markers after SOI, segment by segment by their lengths, up to the frame header
    /// (SOF0–SOF15 but DHT, JPG and DAC), which holds height and width.
    private static func jpegSize(_ bytes: [UInt8]) -> (Kind, Int, Int)? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var offset = 2
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF else { return nil }
            let marker = bytes[offset + 1]
            if marker == 0xFF { offset += 1; continue }  // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { offset += 2; continue }  // no length
            if marker == 0xD9 || marker == 0xDA { return nil }  // the end, or the data, before any frame
            let length = bigEndian(bytes, at: offset + 2, count: 2)
            guard length >= 2 else { return nil }
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard offset + 9 <= bytes.count else { return nil }
                return (.jpeg, bigEndian(bytes, at: offset + 7, count: 2), bigEndian(bytes, at: offset + 5, count: 2))
            }
            offset += 2 + length
        }
        return nil
    }
}
