/// A vCard file's cards: the properties between each `BEGIN:VCARD` and its `END:VCARD`.
extension VCardParser {
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
    static func asciiCardMarker(_ text: UnsafeBufferPointer<UInt8>) -> CardMarker? {
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
}
