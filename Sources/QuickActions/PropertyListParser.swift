/// Reads property lists with no I/O, so the pure model can decode an `Info.plist`:
/// binary ones with FoundationEssentials' `PropertyListDecoder` (`BinaryPropertyList`),
/// XML ones with a hand-written reader whose errors carry line numbers
/// (`XMLPropertyListReader` says why it is kept).
public enum PropertyListParser {
    /// Parses an XML (`<plist>` document, or a bare fragment) or binary (`bplist00`)
    /// property list. A fragment of top-level `<key>…</key><value>` pairs reads as a
    /// dictionary, so a snippet copied out of an `Info.plist` parses verbatim.
    public static func parse(_ bytes: [UInt8]) throws(PropertyListError) -> PropertyListValue {
        if bytes.starts(with: BinaryPropertyList.magic) {
            return try BinaryPropertyList.decode(bytes)
        }
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        var firstSignificant = start
        while firstSignificant < bytes.count, XMLPropertyListReader.isWhitespace(bytes[firstSignificant]) {
            firstSignificant += 1
        }
        if firstSignificant == bytes.count { throw .empty }
        guard bytes[firstSignificant] == UInt8(ascii: "<") else { throw .unrecognizedFormat }
        var reader = XMLPropertyListReader(bytes: bytes, position: start)
        return try reader.readDocument()
    }
}
