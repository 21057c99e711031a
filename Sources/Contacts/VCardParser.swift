/// vCard 2.1, 3.0 and 4.0 (RFC 2426, RFC 6350) → contacts: the format address books and
/// vdirsyncer leave in the contacts directory.
///
/// Only what a contact's identity, name, emails and favorite flag need is decoded, so a
/// malformed value in a property nobody reads (a photo, a note) does not cost the contact.
public enum VCardParser {
    public static func parse(
        _ bytes: [UInt8], fileStem: String, options: ContactParsingOptions = .default
    ) throws(ContactParseError) -> [Contact] {
        try bytes.withUnsafeBufferPointer { (buffer) throws(ContactParseError) -> [Contact] in
            try parse(contentsOf: buffer, fileStem: fileStem, options: options)
        }
    }

    /// The same, from bytes the caller keeps (the scanner's read buffer, reused from file to
    /// file). A file of ASCII text (most are) is parsed where it lies, in one pass: lines are
    /// byte ranges, joined into a scratch buffer only when folded, and only the properties a
    /// contact keeps become strings. Anything else is first decoded (`TextDecoding`), and a
    /// line that is not ASCII goes the general way (`CardCollector.take(_:)`), so both give
    /// what `referenceParse` gives, which tests and the fuzz target check.
    public static func parse(
        contentsOf bytes: UnsafeBufferPointer<UInt8>, fileStem: String, options: ContactParsingOptions = .default
    ) throws(ContactParseError) -> [Contact] {
        switch TextDecoding.scanFile(bytes) {
        case .binary(let nulOffset):
            throw .binaryData(byteOffset: nulOffset)
        case .ascii(let body):
            return try parseText(body, fileStem: fileStem, options: options)
        case .decodingNeeded(let body):
            var text = TextDecoding.decode(body, charset: nil)
            let result = text.withUTF8 { utf8 in
                Result { () throws(ContactParseError) -> [Contact] in try parseText(utf8, fileStem: fileStem, options: options) }
            }
            return try result.get()
        }
    }

    /// The parser as it was first written, line by line on `String`s: kept as the reference
    /// that `parse` must agree with (tests and the fuzz target compare them).
    @_spi(Reference) public static func referenceParse(
        _ bytes: [UInt8], fileStem: String, options: ContactParsingOptions = .default
    ) throws(ContactParseError) -> [Contact] {
        let text = try TextDecoding.decodeFile(bytes)
        let cards = try splitIntoCards(unfold(physicalLines(of: text)))
        return try contacts(from: cards, fileStem: fileStem, options: options)
    }

    private static func contacts(
        from cards: [[Property]], fileStem: String, options: ContactParsingOptions
    ) throws(ContactParseError) -> [Contact] {
        var contacts: [Contact] = []
        contacts.reserveCapacity(cards.count)
        for (offset, card) in cards.enumerated() {
            let fallbackIdentifier = offset == 0 ? fileStem : "\(fileStem)#\(offset + 1)"
            contacts.append(try contact(from: card, fallbackIdentifier: fallbackIdentifier, fileStem: fileStem, options: options))
        }
        return contacts
    }

    // MARK: - One pass over bytes

    /// Splits `text` (valid UTF-8) into physical lines and joins folded ones, as
    /// `physicalLines` and `unfold` do, handing each logical line to a `CardCollector`.
    private static func parseText(
        _ text: UnsafeBufferPointer<UInt8>, fileStem: String, options: ContactParsingOptions
    ) throws(ContactParseError) -> [Contact] {
        var collector = CardCollector()
        var lines = PhysicalLines(text: text)
        var joined: [UInt8] = []
        var pending = lines.next()
        while let first = pending {
            pending = lines.next()
            let firstBytes = UnsafeBufferPointer(rebasing: text[first.range])
            guard let next = pending, let join = joinKind(firstBytes, next: UnsafeBufferPointer(rebasing: text[next.range])) else {
                try collector.take(firstBytes, number: first.number)
                continue
            }
            if join == .folded, collector.isInsideCard, isUnreadFoldedProperty(firstBytes) {
                // A photo (tens of kilobytes of base64) or a long note: its folded lines are
                // passed over, never joined, as nothing of the property would be kept.
                while let following = pending, let byte = text[following.range].first, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                    pending = lines.next()
                }
                continue
            }
            joined.removeAll(keepingCapacity: true)
            joined.append(contentsOf: firstBytes)
            var nextJoin: JoinKind? = join
            while let join = nextJoin, let next = pending {
                switch join {
                case .softLineBreak:
                    joined.removeLast()
                    joined.append(contentsOf: UnsafeBufferPointer(rebasing: text[next.range]))
                case .folded:
                    joined.append(contentsOf: UnsafeBufferPointer(rebasing: text[next.range.dropFirst()]))
                }
                pending = lines.next()
                nextJoin = pending.flatMap { following in
                    joined.withUnsafeBufferPointer { joinKind($0, next: UnsafeBufferPointer(rebasing: text[following.range])) }
                }
            }
            try joined.withUnsafeBufferPointer { (line) throws(ContactParseError) in
                try collector.take(line, number: first.number)
            }
        }
        return try contacts(from: collector.finish(), fileStem: fileStem, options: options)
    }

    /// Whether `line`, the first of a folded logical line, starts a property that the contact
    /// does not read whatever follows it, inside a card: the name before its first colon is
    /// neither kept (`Property.parsingKept`) nor a card marker, and the header does not mention
    /// quoted-printable, so only lines starting with a space or a tab continue it (the soft line
    /// breaks of quoted-printable would need the joined text). Such a line comes to nothing in
    /// `CardCollector.take` however it ends, on the ASCII way and on the general way alike.
    private static func isUnreadFoldedProperty(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard isASCII(line), asciiCardMarker(asciiTrimmed(line)) == nil, !asciiHeaderMentionsQuotedPrintable(line) else { return false }
        do {
            return try Property.parsingKept(asciiLine: line, number: 0) == nil
        } catch {
            return false  // no colon on the first line: the joined line decides
        }
    }

    private struct PhysicalLine {
        var range: Range<Int>
        /// 1-based.
        var number: Int
    }

    /// The physical lines of `physicalLines(of:)`, as byte ranges, one at a time.
    private struct PhysicalLines {
        let text: UnsafeBufferPointer<UInt8>
        private var position = 0
        private var start = 0
        private var number = 0

        init(text: UnsafeBufferPointer<UInt8>) {
            self.text = text
        }

        mutating func next() -> PhysicalLine? {
            while position < text.count, let base = text.baseAddress {
                let end = VCardTriage.lineBreak(base, from: position, count: text.count)
                guard end < text.count else {
                    position = end
                    break
                }
                position = end + 1
                let lineStart = start
                start = position
                // The LF of a CRLF: its line ended at the CR.
                if base[end] == UInt8(ascii: "\n"), end > 0, base[end - 1] == UInt8(ascii: "\r") { continue }
                return line(lineStart..<end)
            }
            guard start < text.count else { return nil }
            defer { start = text.count }
            return line(start..<text.count)
        }

        private mutating func line(_ range: Range<Int>) -> PhysicalLine {
            number += 1
            return PhysicalLine(range: range, number: number)
        }
    }

    private enum JoinKind {
        /// A quoted-printable value line ending in `=`: the `=` goes, the next line follows verbatim.
        case softLineBreak
        /// The next line starts with a space or a tab, which goes.
        case folded
    }

    /// Whether `next` continues `line`, decided as `unfold` decides.
    private static func joinKind(_ line: UnsafeBufferPointer<UInt8>, next: UnsafeBufferPointer<UInt8>) -> JoinKind? {
        if line.last == UInt8(ascii: "=") {
            let softLineBreak = isASCII(line)
                ? asciiHeaderMentionsQuotedPrintable(line)
                : { let text = String(decoding: line, as: UTF8.self); return text.hasSuffix("=") && headerMentionsQuotedPrintable(text) }()
            if softLineBreak { return .softLineBreak }
        }
        if let first = next.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { return .folded }
        return nil
    }

    private static func asciiHeaderMentionsQuotedPrintable(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let marker: StaticString = "QUOTED-PRINTABLE"
        let length = marker.utf8CodeUnitCount
        guard colon >= length else { return false }
        return (0...(colon - length)).contains { start in
            asciiEqualsIgnoringCase(UnsafeBufferPointer(rebasing: line[start..<(start + length)]), marker)
        }
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
        var collector = CardCollector()
        for line in lines {
            try collector.take(line)
        }
        return try collector.finish()
    }

    /// Gathers the properties of each card from logical lines, and finds the structural errors
    /// (lines outside a card, nesting, a missing end, a line that is no property).
    struct CardCollector {
        private var cards: [[Property]] = []
        private var current: [Property]?
        private var currentBeginLine = 0
        // vCard 2.1 may nest a whole card (AGENT); its lines belong to no contact.
        private var nestedDepth = 0

        /// One logical line, the general way: Unicode trimming and case mapping, every property kept.
        mutating func take(_ line: Line) throws(ContactParseError) {
            let text = trimmed(line.text)
            try take(marker: cardMarker(text), isBlank: text.isEmpty, number: line.number, trimmedText: text) { () throws(ContactParseError) in
                try Property(parsing: line)
            }
        }

        /// One logical line as UTF-8 bytes. An ASCII line is read on its bytes (where trimming
        /// and case mapping are ASCII's) and yields only the properties `contact(from:)` reads;
        /// any other line goes the general way.
        mutating func take(_ line: UnsafeBufferPointer<UInt8>, number: Int) throws(ContactParseError) {
            guard isASCII(line) else {
                try take(Line(number: number, text: String(decoding: line, as: UTF8.self)))
                return
            }
            let text = asciiTrimmed(line)
            try take(marker: asciiCardMarker(text), isBlank: text.isEmpty, number: number,
                     trimmedText: String(decoding: text, as: UTF8.self)) { () throws(ContactParseError) in
                try Property.parsingKept(asciiLine: line, number: number)
            }
        }

        private mutating func take(
            marker: CardMarker?, isBlank: Bool, number: Int, trimmedText: @autoclosure () -> String,
            property: () throws(ContactParseError) -> Property?
        ) throws(ContactParseError) {
            guard current != nil else {
                if isBlank { return }
                switch marker {
                case .begin(let kind) where kind == "VCARD":
                    // Room for what a card usually keeps (UID, FN, EMAIL…) without growing.
                    current = []
                    current?.reserveCapacity(4)
                    currentBeginLine = number
                    return
                case .end:
                    throw .endWithoutBegin(line: number)
                default:
                    throw .expectedBegin(line: number, text: trimmedText())
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
                if nestedDepth > 0 || isBlank { return }
                // Appended in place: a copy held beside `current` would copy the card per line.
                if let property = try property() { current?.append(property) }
            }
        }

        /// Between a card's `BEGIN` and its `END`.
        var isInsideCard: Bool { current != nil }

        func finish() throws(ContactParseError) -> [[Property]] {
            if current != nil {
                throw .missingEnd(beginLine: currentBeginLine)
            }
            if cards.isEmpty {
                throw .noVCard
            }
            return cards
        }
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

    /// `cardMarker` for a trimmed ASCII line.
    private static func asciiCardMarker(_ text: UnsafeBufferPointer<UInt8>) -> CardMarker? {
        guard let first = text.first, first | 0x20 == UInt8(ascii: "b") || first | 0x20 == UInt8(ascii: "e"),
              let colon = text.firstIndex(of: UInt8(ascii: ":"))
        else { return nil }
        let name = asciiTrimmed(UnsafeBufferPointer(rebasing: text[..<colon]))
        if asciiEqualsIgnoringCase(name, "BEGIN") {
            let value = asciiTrimmed(UnsafeBufferPointer(rebasing: text[(colon + 1)...]))
            return .begin(asciiEqualsIgnoringCase(value, "VCARD") ? "VCARD" : String(decoding: value.map(asciiUppercased), as: UTF8.self))
        }
        return asciiEqualsIgnoringCase(name, "END") ? .end : nil
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

        private init(line: Int, group: String?, name: String, parameters: [(name: String, values: [String])], rawValue: String) {
            self.line = line
            self.group = group
            self.name = name
            self.parameters = parameters
            self.rawValue = rawValue
        }

        /// What `init(parsing:)` makes of an ASCII line, or nil when `contact(from:)` does not
        /// read the property, of which nothing is then made. Throws as `init(parsing:)` does.
        static func parsingKept(asciiLine line: UnsafeBufferPointer<UInt8>, number: Int) throws(ContactParseError) -> Property? {
            var nameEnd: Int?
            var colon: Int?
            var inQuotes = false
            for position in line.indices {
                switch line[position] {
                case UInt8(ascii: "\""): inQuotes.toggle()
                case UInt8(ascii: ";") where !inQuotes: if nameEnd == nil { nameEnd = position }
                case UInt8(ascii: ":") where !inQuotes: colon = position
                default: break
                }
                if colon != nil { break }
            }
            guard let colon else {
                throw .malformedProperty(line: number, text: String(decoding: line, as: UTF8.self))
            }
            let qualifiedName = asciiTrimmed(UnsafeBufferPointer(rebasing: line[..<(nameEnd ?? colon)]))
            let dot = qualifiedName.lastIndex(of: UInt8(ascii: "."))
            let name = dot.map { UnsafeBufferPointer(rebasing: qualifiedName[($0 + 1)...]) } ?? qualifiedName
            guard let kept = keptNames.first(where: { asciiEqualsIgnoringCase(name, $0) }) else { return nil }
            var parameters: [(name: String, values: [String])] = []
            if let nameEnd {
                // Parameters (`EMAIL;TYPE=INTERNET:…`, as address books export them) read on the
                // bytes; one with quotes goes the general way, which removes them.
                let header = UnsafeBufferPointer(rebasing: line[(nameEnd + 1)..<colon])
                guard !header.contains(UInt8(ascii: "\"")) else {
                    return try Property(parsing: Line(number: number, text: String(decoding: line, as: UTF8.self)))
                }
                parameters = asciiParameters(header)
            }
            return Property(
                line: number, group: dot.map { String(decoding: UnsafeBufferPointer(rebasing: qualifiedName[..<$0]), as: UTF8.self) },
                name: kept.description, parameters: parameters,
                rawValue: String(decoding: UnsafeBufferPointer(rebasing: line[(colon + 1)...]), as: UTF8.self))
        }

        /// `parameter(_:)` of each `;`-separated segment of an ASCII header without quotes.
        private static func asciiParameters(_ header: UnsafeBufferPointer<UInt8>) -> [(name: String, values: [String])] {
            func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String { String(decoding: asciiTrimmed(bytes), as: UTF8.self) }
            var parameters: [(name: String, values: [String])] = []
            var start = header.startIndex
            while start <= header.endIndex {
                let end = header[start...].firstIndex(of: UInt8(ascii: ";")) ?? header.endIndex
                let segment = UnsafeBufferPointer(rebasing: header[start..<end])
                if let equals = segment.firstIndex(of: UInt8(ascii: "=")) {
                    let name = asciiTrimmed(UnsafeBufferPointer(rebasing: segment[..<equals]))
                    var values: [String] = []
                    var valueStart = equals + 1
                    while valueStart <= segment.endIndex {
                        let valueEnd = segment[valueStart...].firstIndex(of: UInt8(ascii: ",")) ?? segment.endIndex
                        values.append(text(UnsafeBufferPointer(rebasing: segment[valueStart..<valueEnd])))
                        valueStart = valueEnd + 1
                    }
                    parameters.append((String(decoding: name.lazy.map(asciiUppercased), as: UTF8.self), values))
                } else {
                    let value = asciiTrimmed(segment)
                    let isEncoding = bareEncodingNames.contains { asciiEqualsIgnoringCase(value, $0) }
                    parameters.append((isEncoding ? "ENCODING" : "TYPE", [String(decoding: value, as: UTF8.self)]))
                }
                start = end + 1
            }
            return parameters
        }

        /// Every property `contact(from:)` reads.
        private static let keptNames: [StaticString] = ["UID", "FN", "N", "ORG", "EMAIL", "CATEGORIES", folksFavouriteName] + favoriteFlagNames

        private static let bareEncodingNames: [StaticString] = ["QUOTED-PRINTABLE", "BASE64", "B", "8BIT", "7BIT"]
        private static let bareEncodings = Set(bareEncodingNames.map(\.description))

        private static func parameter(_ segment: String) -> (name: String, values: [String]) {
            // Most segments (`TYPE=OTHER`) hold no quote: nothing to filter character by character.
            let unquoted = segment.utf8.contains(UInt8(ascii: "\"")) ? segment.filter { $0 != "\"" } : segment
            guard let equals = unquoted.firstIndex(of: "=") else {
                let value = trimmed(unquoted[...])
                return (bareEncodings.contains(value.uppercased()) ? "ENCODING" : "TYPE", [value])
            }
            let values = unquoted[unquoted.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
            return (trimmed(unquoted[..<equals]).uppercased(), values.map { trimmed($0) })
        }

        func values(of parameterName: String) -> [String] {
            if parameters.isEmpty { return [] }  // most properties have none
            return parameters.filter { $0.name == parameterName }.flatMap(\.values)
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

    /// One hexadecimal digit's value (quoted-printable, a photo's `file:` URI).
    static func hexValue(_ byte: UInt8) -> UInt8? {
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
        value.utf8.contains(UInt8(ascii: "\\")) ? unescapedComponents(of: value, separatedBy: nil)[0] : value
    }

    // MARK: - Contact

    static let favoriteFlagNames: [StaticString] = ["X-FAVORITE", "X-STARRED", "X-DAVDROID-STARRED"]
    private static let favoriteFlagProperties = Set(favoriteFlagNames.map(\.description))
    /// Honored only with `ContactParsingOptions.folksFavourite` (Evolution address books).
    static let folksFavouriteName: StaticString = "X-FOLKS-FAVOURITE"
    private static let trueWords: Set<String> = ["1", "true", "yes"]

    static func contact(
        from card: [Property], fallbackIdentifier: String, fileStem: String, options: ContactParsingOptions
    ) throws(ContactParseError) -> Contact {
        var uid: String?
        var formattedName: String?
        var structuredName: String?
        var pendingStructuredName: String?
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
                // Composed only when needed: the name is FN's whenever there is one (nearly
                // always), and composing it was a good part of parsing an address book's card.
                if let earlier = pendingStructuredName {
                    pendingStructuredName = nil
                    structuredName = nameFromStructuredName(earlier)
                    if structuredName != nil { continue }
                }
                pendingStructuredName = try property.decodedValue()
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
            case "X-FOLKS-FAVOURITE" where options.folksFavourite:
                if trueWords.contains(trimmed(try property.decodedValue()[...]).lowercased()) {
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
        if formattedName == nil, structuredName == nil { structuredName = pendingStructuredName.flatMap(nameFromStructuredName) }
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
        // Without an escape a `,` only separates words within a component, as a space does
        // once whitespace is collapsed: one string, no array of parts (EDS writes `N` for
        // every contact, most of its components empty).
        if !value.utf8.contains(UInt8(ascii: "\\")) {
            let components = value.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
            var joined: [UInt8] = []
            joined.reserveCapacity(value.utf8.count + 4)
            for index in [3, 1, 0, 4] where index < components.count {
                joined.append(0x20)
                joined.append(contentsOf: components[index].lazy.map { $0 == UInt8(ascii: ",") ? 0x20 : $0 })
            }
            return nonEmpty(collapsedWhitespace(String(decoding: joined, as: UTF8.self)))
        }
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
    // ASCII (a structured name with empty components joined by spaces, as EDS writes `N`)
    // collapses byte by byte, without Unicode's whitespace property for each character.
    if let collapsed = text.utf8.withContiguousStorageIfAvailable(asciiCollapsedWhitespace), let collapsed {
        return collapsed
    }
    return text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
}

/// `collapsedWhitespace` for ASCII bytes; nil when they are not all ASCII.
private func asciiCollapsedWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    guard isASCII(bytes) else { return nil }
    return String(unsafeUninitializedCapacity: bytes.count) { output in
        var count = 0
        var pendingSpace = false
        for byte in bytes {
            if byte == 0x20 || (0x09...0x0D).contains(byte) {
                pendingSpace = count > 0
                continue
            }
            if pendingSpace {
                output[count] = 0x20
                count += 1
                pendingSpace = false
            }
            output[count] = byte
            count += 1
        }
        return count
    }
}

func nonEmpty(_ text: String) -> String? {
    text.isEmpty ? nil : text
}

// MARK: - ASCII helpers (a line of ASCII bytes needs no Unicode rules)

func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    // Eight bytes at a time: ASCII bytes have the top bit clear.
    let raw = UnsafeRawBufferPointer(bytes)
    var offset = 0
    while offset + 8 <= raw.count {
        if raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
        offset += 8
    }
    return !bytes[offset...].contains { $0 >= 0x80 }
}

/// `trimmed` for ASCII: the whitespace among ASCII characters is tab, LF, VT, FF, CR and space.
func asciiTrimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
    func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
    guard let first = bytes.firstIndex(where: { !isWhitespace($0) }), let last = bytes.lastIndex(where: { !isWhitespace($0) }) else {
        return UnsafeBufferPointer(rebasing: bytes[0..<0])
    }
    return UnsafeBufferPointer(rebasing: bytes[first...last])
}

func asciiUppercased(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 0x20 : byte
}

/// Whether `bytes` uppercased are `uppercase`.
func asciiEqualsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ uppercase: StaticString) -> Bool {
    guard bytes.count == uppercase.utf8CodeUnitCount else { return false }
    let expected = uppercase.utf8Start
    for offset in bytes.indices where asciiUppercased(bytes[offset]) != expected[offset] { return false }
    return true
}
