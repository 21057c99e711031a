/// A vCard's lines: physical lines split on any line end, and folded lines and quoted-printable
/// soft line breaks joined, once over bytes (`parse`) and once over strings (`referenceParse`).
extension VCardParser {
    // MARK: - One pass over bytes

    /// Splits `text` (valid UTF-8) into physical lines and joins folded ones, as
    /// `physicalLines` and `unfold` do, handing each logical line to a `CardCollector`.
    static func parseText(
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

    /// A text's physical lines, as byte ranges, one at a time: a line ends at CRLF, LF or CR.
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

    /// Splits on CRLF, LF or CR, whichever the file uses (mixed endings included), as
    /// `PhysicalLines` does for `parse`. CR and LF never occur inside a multi-byte sequence, so
    /// every piece between them is valid UTF-8 and is copied into its line in one go.
    static func physicalLines(of text: String) -> [Line] {
        var text = text
        return text.withUTF8 { bytes in
            var lines: [Line] = []
            var physical = PhysicalLines(text: bytes)
            while let line = physical.next() {
                lines.append(Line(number: line.number, text: String(decoding: bytes[line.range], as: UTF8.self)))
            }
            return lines
        }
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
}
