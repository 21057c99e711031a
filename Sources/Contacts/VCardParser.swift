/// vCard 2.1, 3.0 and 4.0 (RFC 2426, RFC 6350) → contacts (SPEC §2.4, §3).
///
/// Only what a contact's identity, name, emails and favorite flag need is decoded, so a
/// malformed value in a property nobody reads (a photo, a note) does not cost the contact.
public enum VCardParser {
    public static func parse(
        _ bytes: [UInt8], fileStem: String, options: ContactParsingOptions = .default
    ) throws(ContactParseError) -> [Contact] {
        let text = try TextDecoding.decodeFile(bytes)
        let cards = try splitIntoCards(unfold(physicalLines(of: text)))
        var contacts: [Contact] = []
        contacts.reserveCapacity(cards.count)
        for (offset, card) in cards.enumerated() {
            let fallbackIdentifier = offset == 0 ? fileStem : "\(fileStem)#\(offset + 1)"
            contacts.append(try contact(from: card, fallbackIdentifier: fallbackIdentifier, fileStem: fileStem, options: options))
        }
        return contacts
    }

    // MARK: - Lines

    struct Line: Equatable {
        /// 1-based number of the physical line the logical line starts on.
        var number: Int
        var text: String
    }

    /// Splits on CRLF, LF or CR, whichever the file uses (mixed endings included). Works on
    /// the UTF-8 bytes: CR and LF never occur inside a multi-byte sequence, so every piece
    /// between them is valid UTF-8 and is copied into its line in one go.
    static func physicalLines(of text: String) -> [Line] {
        var lines: [Line] = []
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            var previousWasCarriageReturn = false
            func finishLine(at end: Int) {
                lines.append(Line(number: lines.count + 1, text: String(decoding: bytes[start..<end], as: UTF8.self)))
            }
            for position in bytes.indices {
                switch bytes[position] {
                case UInt8(ascii: "\n"):
                    if !previousWasCarriageReturn { finishLine(at: position) }
                    start = position + 1
                    previousWasCarriageReturn = false
                case UInt8(ascii: "\r"):
                    finishLine(at: position)
                    start = position + 1
                    previousWasCarriageReturn = true
                default:
                    previousWasCarriageReturn = false
                }
            }
            if start < bytes.count { finishLine(at: bytes.count) }
        }
        return lines
    }

    /// Joins folded lines (a continuation starts with a space or tab, which is removed) and
    /// vCard 2.1 quoted-printable soft line breaks (a value line ending in `=` continues on
    /// the next line verbatim; the `=` is removed).
    static func unfold(_ physical: [Line]) -> [Line] {
        var logical: [Line] = []
        var index = physical.startIndex
        while index < physical.endIndex {
            var line = physical[index]
            index += 1
            while index < physical.endIndex {
                let next = physical[index].text
                if line.text.hasSuffix("="), headerMentionsQuotedPrintable(line.text) {
                    line.text.removeLast()
                    line.text += next
                } else if let first = next.unicodeScalars.first, first == " " || first == "\t" {
                    line.text += String(next.unicodeScalars.dropFirst())
                } else {
                    break
                }
                index += 1
            }
            logical.append(line)
        }
        return logical
    }

    private static func headerMentionsQuotedPrintable(_ text: String) -> Bool {
        guard let colon = text.firstIndex(of: ":") else { return false }
        return text[..<colon].uppercased().contains("QUOTED-PRINTABLE")
    }

    // MARK: - Cards

    static func splitIntoCards(_ lines: [Line]) throws(ContactParseError) -> [[Property]] {
        var cards: [[Property]] = []
        var current: [Property]?
        var currentBeginLine = 0
        // vCard 2.1 may nest a whole card (AGENT); its lines belong to no contact.
        var nestedDepth = 0
        for line in lines {
            let text = trimmed(line.text)
            let marker = cardMarker(text)
            guard current != nil else {
                if text.isEmpty { continue }
                switch marker {
                case .begin(let kind) where kind == "VCARD":
                    current = []
                    currentBeginLine = line.number
                    continue
                case .end:
                    throw .endWithoutBegin(line: line.number)
                default:
                    throw .expectedBegin(line: line.number, text: text)
                }
            }
            switch marker {
            case .begin:
                nestedDepth += 1
            case .end where nestedDepth > 0:
                nestedDepth -= 1
            case .end:
                cards.append(current ?? [])
                current = nil
            case nil:
                if nestedDepth > 0 || text.isEmpty { continue }
                // Appended in place: a copy held beside `current` would copy the card per line.
                current?.append(try Property(parsing: line))
            }
        }
        if current != nil {
            throw .missingEnd(beginLine: currentBeginLine)
        }
        if cards.isEmpty {
            throw .noVCard
        }
        return cards
    }

    enum CardMarker {
        case begin(String)
        case end
    }

    private static func cardMarker(_ text: String) -> CardMarker? {
        // Only BEGIN and END lines are markers: most lines are ruled out by their first byte.
        guard let first = text.utf8.first, first | 0x20 == UInt8(ascii: "b") || first | 0x20 == UInt8(ascii: "e") else {
            return nil
        }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = trimmed(text[..<colon]).uppercased()
        let value = trimmed(text[text.index(after: colon)...]).uppercased()
        switch name {
        case "BEGIN": return .begin(value)
        case "END": return .end
        default: return nil
        }
    }

    // MARK: - Properties

    struct Property {
        var line: Int
        var group: String?
        /// Uppercased, without the group.
        var name: String
        /// Names uppercased; bare vCard 2.1 parameters are filed under `ENCODING` or `TYPE`.
        var parameters: [(name: String, values: [String])]
        var rawValue: String

        init(parsing line: Line) throws(ContactParseError) {
            // The separators are ASCII, so the UTF-8 bytes are searched and every piece
            // between them is a whole run of scalars, copied into its string at once.
            let utf8 = line.text.utf8
            var separators: [String.Index] = []
            var colon: String.Index?
            var inQuotes = false
            var position = utf8.startIndex
            while position < utf8.endIndex {
                switch utf8[position] {
                case UInt8(ascii: "\""): inQuotes.toggle()
                case UInt8(ascii: ";") where !inQuotes: separators.append(position)
                case UInt8(ascii: ":") where !inQuotes: colon = position
                default: break
                }
                if colon != nil { break }
                utf8.formIndex(after: &position)
            }
            guard let colon else {
                throw .malformedProperty(line: line.number, text: line.text)
            }
            func piece(_ start: String.Index, _ end: String.Index) -> String {
                String(decoding: utf8[start..<end], as: UTF8.self)
            }
            var segments: [String] = []
            segments.reserveCapacity(separators.count + 1)
            var segmentStart = utf8.startIndex
            for separator in separators + [colon] {
                segments.append(piece(segmentStart, separator))
                segmentStart = utf8.index(after: separator)
            }
            let qualifiedName = trimmed(segments[0][...])
            if let dot = qualifiedName.lastIndex(of: ".") {
                group = String(qualifiedName[..<dot])
                name = qualifiedName[qualifiedName.index(after: dot)...].uppercased()
            } else {
                group = nil
                name = qualifiedName.uppercased()
            }
            parameters = segments.dropFirst().map(Self.parameter)
            self.line = line.number
            rawValue = piece(utf8.index(after: colon), utf8.endIndex)
        }

        private static let bareEncodings: Set<String> = ["QUOTED-PRINTABLE", "BASE64", "B", "8BIT", "7BIT"]

        private static func parameter(_ segment: String) -> (name: String, values: [String]) {
            let unquoted = segment.filter { $0 != "\"" }
            guard let equals = unquoted.firstIndex(of: "=") else {
                let value = trimmed(unquoted[...])
                return (bareEncodings.contains(value.uppercased()) ? "ENCODING" : "TYPE", [value])
            }
            let values = unquoted[unquoted.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
            return (trimmed(unquoted[..<equals]).uppercased(), values.map { trimmed($0) })
        }

        func values(of parameterName: String) -> [String] {
            parameters.filter { $0.name == parameterName }.flatMap(\.values)
        }

        var isQuotedPrintable: Bool {
            values(of: "ENCODING").contains { $0.uppercased() == "QUOTED-PRINTABLE" }
        }

        /// Lower is more preferred (RFC 6350 `PREF=1`); `TYPE=PREF` (3.0) and bare `PREF`
        /// (2.1) count as 1. Nil when the property is not marked preferred at all.
        var preference: Int? {
            let ranks = values(of: "PREF").compactMap { Int($0) }
            if let best = ranks.min() { return best }
            if values(of: "TYPE").contains(where: { $0.uppercased() == "PREF" }) { return 1 }
            return nil
        }

        /// The value with any quoted-printable transfer encoding removed (escapes still in place).
        func decodedValue() throws(ContactParseError) -> String {
            guard isQuotedPrintable else { return rawValue }
            let bytes = try VCardParser.decodeQuotedPrintable(rawValue, line: line, property: name)
            return TextDecoding.decode(bytes, charset: values(of: "CHARSET").first)
        }
    }

    static func decodeQuotedPrintable(_ value: String, line: Int, property: String) throws(ContactParseError) -> [UInt8] {
        let encoded = Array(value.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(encoded.count)
        var position = 0
        while position < encoded.count {
            let byte = encoded[position]
            guard byte == UInt8(ascii: "=") else {
                decoded.append(byte)
                position += 1
                continue
            }
            // A trailing "=" is a soft line break whose continuation line never came.
            if position == encoded.count - 1 { break }
            guard position + 2 < encoded.count,
                  let high = hexValue(encoded[position + 1]), let low = hexValue(encoded[position + 2])
            else {
                throw .badQuotedPrintable(line: line, property: property)
            }
            decoded.append(high << 4 | low)
            position += 3
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    // MARK: - Values

    /// Splits on `separator` where it is not escaped, then resolves the escapes
    /// `\,` `\;` `\\` `\n` `\N` in each piece. Unknown escapes are kept as written.
    static func unescapedComponents(of value: String, separatedBy separator: Unicode.Scalar?) -> [String] {
        // Most values have neither an escape nor the separator: nothing to split or resolve.
        if !value.utf8.contains(UInt8(ascii: "\\")), separator.map({ !value.unicodeScalars.contains($0) }) ?? true {
            return [value]
        }
        var components: [String] = []
        var current = String.UnicodeScalarView()
        var escaping = false
        for scalar in value.unicodeScalars {
            if escaping {
                switch scalar {
                case "n", "N": current.append("\n")
                case ",", ";", "\\": current.append(scalar)
                default:
                    current.append("\\")
                    current.append(scalar)
                }
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else if scalar == separator {
                components.append(String(current))
                current = String.UnicodeScalarView()
            } else {
                current.append(scalar)
            }
        }
        if escaping { current.append("\\") }
        components.append(String(current))
        return components
    }

    static func unescaped(_ value: String) -> String {
        unescapedComponents(of: value, separatedBy: nil)[0]
    }

    // MARK: - Contact

    private static let favoriteFlagProperties: Set<String> = ["X-FAVORITE", "X-STARRED", "X-DAVDROID-STARRED"]
    private static let trueWords: Set<String> = ["1", "true", "yes"]

    static func contact(
        from card: [Property], fallbackIdentifier: String, fileStem: String, options: ContactParsingOptions
    ) throws(ContactParseError) -> Contact {
        var uid: String?
        var formattedName: String?
        var structuredName: String?
        var organization: String?
        var emails: [(address: String, preference: Int?)] = []
        var favorite = false

        for property in card {
            switch property.name {
            case "UID" where uid == nil:
                uid = nonEmpty(trimmed(try property.decodedValue()[...]))
            case "FN" where formattedName == nil:
                formattedName = nonEmpty(collapsedWhitespace(unescaped(try property.decodedValue())))
            case "N" where structuredName == nil:
                structuredName = nameFromStructuredName(try property.decodedValue())
            case "ORG" where organization == nil:
                let units = unescapedComponents(of: try property.decodedValue(), separatedBy: ";")
                organization = nonEmpty(collapsedWhitespace(units[0]))
            case "EMAIL":
                if let address = nonEmpty(trimmed(unescaped(try property.decodedValue())[...])) {
                    emails.append((address, property.preference))
                }
            case "CATEGORIES":
                let categories = unescapedComponents(of: try property.decodedValue(), separatedBy: ",")
                if categories.contains(where: { options.favoriteCategories.contains(trimmed($0[...]).lowercased()) }) {
                    favorite = true
                }
            case let name where favoriteFlagProperties.contains(name):
                if trueWords.contains(trimmed(try property.decodedValue()[...]).lowercased()) {
                    favorite = true
                }
            default:
                continue
            }
        }

        var primaryEmail = emails.first?.address
        var bestPreference = Int.max
        for email in emails {
            if let preference = email.preference, preference < bestPreference {
                bestPreference = preference
                primaryEmail = email.address
            }
        }
        let name = formattedName ?? structuredName ?? organization ?? emails.first?.address ?? fileStem
        return Contact(
            identifier: uid ?? fallbackIdentifier,
            name: name,
            email: primaryEmail,
            emails: emails.map(\.address),
            favorite: favorite
        )
    }

    /// RFC 6350 `N`: family; given; additional; prefixes; suffixes, each possibly a
    /// comma-separated list. Shown as "prefix given family suffix" like a contacts app.
    private static func nameFromStructuredName(_ value: String) -> String? {
        let rawComponents = splitKeepingEscapes(value, on: ";")
        func component(_ index: Int) -> String {
            guard index < rawComponents.count else { return "" }
            return unescapedComponents(of: rawComponents[index], separatedBy: ",").joined(separator: " ")
        }
        let ordered = [component(3), component(1), component(0), component(4)]
        return nonEmpty(collapsedWhitespace(ordered.joined(separator: " ")))
    }

    /// Splits on an unescaped separator but leaves escapes for a later, finer split.
    private static func splitKeepingEscapes(_ value: String, on separator: Unicode.Scalar) -> [String] {
        var pieces: [String] = []
        var current = String.UnicodeScalarView()
        var escaping = false
        for scalar in value.unicodeScalars {
            if escaping {
                current.append(scalar)
                escaping = false
            } else if scalar == "\\" {
                current.append(scalar)
                escaping = true
            } else if scalar == separator {
                pieces.append(String(current))
                current = String.UnicodeScalarView()
            } else {
                current.append(scalar)
            }
        }
        pieces.append(String(current))
        return pieces
    }
}

// MARK: - Text helpers (FoundationEssentials has no trimming)

func trimmed(_ text: Substring) -> String {
    // Most values start and end with a visible ASCII character, which is never whitespace.
    if let first = text.utf8.first, let last = text.utf8.last, isVisibleASCII(first), isVisibleASCII(last) {
        return String(text)
    }
    guard let first = text.firstIndex(where: { !$0.isWhitespace }),
          let last = text.lastIndex(where: { !$0.isWhitespace })
    else { return "" }
    return String(text[first...last])
}

func trimmed(_ text: String) -> String {
    trimmed(text[...])
}

private func isVisibleASCII(_ byte: UInt8) -> Bool {
    (0x21...0x7E).contains(byte)
}

func collapsedWhitespace(_ text: String) -> String {
    // ASCII text with single spaces between words (most names) is already collapsed.
    var previous: UInt8 = 0x20
    let isCollapsed = text.utf8.allSatisfy { byte in
        defer { previous = byte }
        return isVisibleASCII(byte) || (byte == 0x20 && previous != 0x20)
    }
    if isCollapsed && text.utf8.last != 0x20 { return text }
    return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
}

func nonEmpty(_ text: String) -> String? {
    text.isEmpty ? nil : text
}
