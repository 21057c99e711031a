#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a contact's photo is, as its vCard's `PHOTO` says: the image itself, inline (base64 in
/// vCard 2.1 and 3.0, a `data:` URI in 4.0), or a `file:` URI. A photo on the network (`http:`)
/// is never fetched.
public enum ContactPhoto: Hashable, Sendable {
    /// The image's bytes, at most `ContactPhoto.maxBytes`; `mediaType` as the card declares it
    /// (`image/jpeg`), when it does.
    case inline(bytes: [UInt8], mediaType: String?)
    /// An absolute path, from a `file://` URI with its `%XX` escapes decoded.
    case file(path: String)

    /// A photo larger than this is not read: a face needs a few kilobytes, and a card that
    /// embeds megabytes must not make a launcher's menu wait.
    public static let maxBytes = 1 << 20
}

/// Why a card's photo is not used; the daemon logs it once per contact and shows a monogram.
public enum ContactPhotoProblem: Error, Hashable, Sendable, CustomStringConvertible {
    case tooLarge(bytes: Int)
    case notBase64(line: Int)
    case unsupportedURI(String)

    /// The reason as a clause, naming the line or the size in bytes where there is one.
    public var description: String {
        switch self {
        case .tooLarge(let bytes): "the photo is \(bytes) bytes, more than the \(ContactPhoto.maxBytes) read"
        case .notBase64(let line): "the PHOTO on line \(line) is not valid base64"
        case .unsupportedURI(let uri): "the PHOTO '\(uri.prefix(64))' is neither inline nor a file: URI"
        }
    }
}

extension VCardParser {
    /// The `PHOTO` of the card in `bytes` whose contact is `identifier` (a file may hold several
    /// cards): nil when it has none. Read the general, line-by-line way, and only for the few
    /// contacts whose items are shown, so a photo costs nothing when contacts are indexed.
    public static func photo(
        in bytes: [UInt8], identifier: String, fileStem: String, options: ContactParsingOptions = .default
    ) throws -> Result<ContactPhoto, ContactPhotoProblem>? {
        let text = try TextDecoding.decodeFile(bytes)
        let cards = try splitIntoCards(unfold(physicalLines(of: text)))
        for (offset, card) in cards.enumerated() {
            let fallbackIdentifier = offset == 0 ? fileStem : "\(fileStem)#\(offset + 1)"
            guard try contact(from: card, fallbackIdentifier: fallbackIdentifier, fileStem: fileStem, options: options).identifier == identifier
            else { continue }
            // The preferred photo, else the first.
            let photos = card.filter { $0.name == "PHOTO" }
            guard let photo = photos.min(by: { ($0.preference ?? Int.max) < ($1.preference ?? Int.max) }) else { return nil }
            return photoValue(photo)
        }
        return nil
    }

    private static func photoValue(_ property: Property) -> Result<ContactPhoto, ContactPhotoProblem> {
        let value = trimmed(property.rawValue)
        let encodings = property.values(of: "ENCODING").map { $0.uppercased() }
        if encodings.contains("B") || encodings.contains("BASE64") {
            // 2.1 names the type bare (`PHOTO;JPEG;ENCODING=BASE64:`), which reads as TYPE=JPEG.
            let type = property.values(of: "TYPE").first { $0.uppercased() != "PREF" }
            return decodeBase64(value, line: property.line).map { .inline(bytes: $0, mediaType: type.map(mediaType(ofType:))) }
        }
        if value.lowercased().hasPrefix("data:") {
            // data:[<media type>][;base64],<data>
            guard let comma = value.firstIndex(of: ",") else { return .failure(.unsupportedURI(value)) }
            let header = value[value.index(value.startIndex, offsetBy: 5)..<comma].split(separator: ";").map { String($0).lowercased() }
            guard header.contains("base64") else { return .failure(.unsupportedURI(value)) }
            let type = header.first { $0.contains("/") }
            return decodeBase64(String(value[value.index(after: comma)...]), line: property.line).map { .inline(bytes: $0, mediaType: type) }
        }
        if value.lowercased().hasPrefix("file://") {
            var path = String(value.dropFirst("file://".count))
            // file://localhost/path and file:///path name the same file; another host is not ours.
            if path.lowercased().hasPrefix("localhost/") { path.removeFirst("localhost".count) }
            guard path.hasPrefix("/"), let decoded = percentDecoded(path) else { return .failure(.unsupportedURI(value)) }
            return .success(.file(path: decoded))
        }
        return .failure(.unsupportedURI(value))
    }

    /// `TYPE=JPEG` (2.1, 3.0) → `image/jpeg`.
    private static func mediaType(ofType type: String) -> String {
        type.contains("/") ? type.lowercased() : "image/" + type.lowercased()
    }

    private static func decodeBase64(_ text: String, line: Int) -> Result<[UInt8], ContactPhotoProblem> {
        // Folding may leave spaces inside the value; base64 has none of its own. An ASCII value
        // (a photo's always is) loses them byte by byte: tens of kilobytes of base64 taken
        // character by character cost milliseconds at every export.
        let compact: Data
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            compact = Data(text.utf8.filter { $0 != 0x20 && !(0x09...0x0D).contains($0) })
        } else {
            compact = Data(text.filter { !$0.isWhitespace }.utf8)
        }
        let estimated = compact.count / 4 * 3
        guard estimated <= ContactPhoto.maxBytes else { return .failure(.tooLarge(bytes: estimated)) }
        guard let data = Data(base64Encoded: compact) else { return .failure(.notBase64(line: line)) }
        return .success([UInt8](data))
    }

    private static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var utf8 = text.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
