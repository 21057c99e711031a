/// Where each card of a vCard file lies: from its `BEGIN:VCARD` line to the end of its
/// `END:VCARD` line (a card nested in a property, as vCard 2.1's `AGENT` allows, stays inside
/// its card). Lines end in LF or CRLF; the names are matched in any case. The cards are in the
/// order of the file, the order `VCardParser` gives its contacts in.
public enum VCardSplitting {
    /// The byte range of each card in `bytes`, from its `BEGIN:VCARD` line to the end of its `END:VCARD` line, in
    /// the file's order.
    public static func cardRanges(in bytes: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var depth = 0
        var start = 0
        var lineStart = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count, bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            let next = min(lineEnd + 1, bytes.count)
            if isLine(bytes, lineStart..<lineEnd, "BEGIN:VCARD") {
                if depth == 0 { start = lineStart }
                depth += 1
            } else if depth > 0, isLine(bytes, lineStart..<lineEnd, "END:VCARD") {
                depth -= 1
                if depth == 0 { ranges.append(start..<next) }
            }
            lineStart = next
        }
        return ranges
    }

    /// Whether the line (without its LF, maybe with a CR and blanks after) is `text`, in any case.
    private static func isLine(_ bytes: [UInt8], _ line: Range<Int>, _ text: String) -> Bool {
        var end = line.upperBound
        while end > line.lowerBound, [UInt8(ascii: "\r"), UInt8(ascii: " "), UInt8(ascii: "\t")].contains(bytes[end - 1]) { end -= 1 }
        let expected = Array(text.utf8)
        guard end - line.lowerBound == expected.count else { return false }
        for (offset, byte) in expected.enumerated() {
            let actual = bytes[line.lowerBound + offset]
            let lowered = actual >= 0x41 && actual <= 0x5a ? actual + 0x20 : actual
            let wanted = byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte
            guard lowered == wanted else { return false }
        }
        return true
    }
}
