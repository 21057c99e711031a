/// Turns the bytes of a contact file (or of one quoted-printable value) into text.
///
/// Files are UTF-8 by default, but exports from older tools are ISO-8859-1 or
/// Windows-1252; as WHATWG does, both are read as Windows-1252, since the C1
/// control range it replaces never appears in real contact data.
public enum TextDecoding {
    static let utf8ByteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Decodes a whole file: strips a UTF-8 byte order mark, refuses binary data
    /// (any NUL byte), reads valid UTF-8 as is and anything else as Windows-1252.
    public static func decodeFile(_ bytes: [UInt8]) throws(ContactParseError) -> String {
        try bytes.withUnsafeBufferPointer { (bytes) throws(ContactParseError) -> String in
            switch scanFile(bytes) {
            case .binary(let nulOffset): throw .binaryData(byteOffset: nulOffset)
            case .ascii(let body), .decodingNeeded(let body): return decode(body, charset: nil)
            }
        }
    }

    /// What a whole file is, found in one pass over its bytes.
    public enum FileText {
        /// A NUL byte at this offset of the file: not text.
        case binary(nulOffset: Int)
        /// The file without its byte order mark is ASCII, and so already its own UTF-8 text.
        case ascii(UnsafeBufferPointer<UInt8>)
        /// The file without its byte order mark, to `decode`.
        case decodingNeeded(UnsafeBufferPointer<UInt8>)
    }

    /// Whether a whole file is binary, ASCII or text still to decode, in one pass over its bytes.
    public static func scanFile(_ bytes: UnsafeBufferPointer<UInt8>) -> FileText {
        let bodyStart = bytes.starts(with: utf8ByteOrderMark) ? utf8ByteOrderMark.count : 0
        var ascii = true
        // Eight bytes at a time while none is NUL (the usual zero-byte test: a byte of the word
        // minus one borrows into its top bit only from zero) nor has its top bit set.
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = bodyStart
        while offset + 8 <= raw.count {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            if (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080 != 0 || word & 0x8080_8080_8080_8080 != 0 { break }
            offset += 8
        }
        for offset in offset..<bytes.count {
            let byte = bytes[offset]
            if byte == 0 { return .binary(nulOffset: offset) }
            if byte >= 0x80 { ascii = false }
        }
        let body = UnsafeBufferPointer(rebasing: bytes[bodyStart...])
        return ascii ? .ascii(body) : .decodingNeeded(body)
    }

    /// Decodes bytes in the given `CHARSET=` (nil when none was named).
    /// UTF-8 (or no charset) falls back to Windows-1252 when the bytes are not valid UTF-8;
    /// unknown charsets are treated like no charset, the most useful guess for contact exports.
    public static func decode(_ bytes: some Collection<UInt8>, charset: String?) -> String {
        switch charset.map(normalizedCharsetName) {
        case "iso88591", "latin1", "l1", "windows1252", "cp1252", "usascii", "ascii":
            return decodeWindows1252(bytes)
        default:
            if let text = String(validating: bytes, as: UTF8.self) {
                return text
            }
            return decodeWindows1252(bytes)
        }
    }

    /// `bytes` as Windows-1252 (ISO-8859-1 where the two agree).
    public static func decodeWindows1252(_ bytes: some Collection<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            if (0x80...0x9F).contains(byte), let mapped = windows1252HighControls[Int(byte - 0x80)] {
                scalars.append(mapped)
            } else {
                // Printable Latin-1 and the five code points Windows-1252 leaves undefined
                // map to the Unicode code point of the same number.
                scalars.append(Unicode.Scalar(byte))
            }
        }
        return String(scalars)
    }

    static func withoutByteOrderMark(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        if bytes.starts(with: utf8ByteOrderMark) {
            return bytes[3...]
        }
        return bytes[...]
    }

    private static func normalizedCharsetName(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { $0 != "-" && $0 != "_" && $0 != " " })
    }

    /// Windows-1252 bytes 0x80–0x9F; nil where the code page leaves the byte undefined.
    private static let windows1252HighControls: [Unicode.Scalar?] = [
        0x20AC, nil, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, nil, 0x017D, nil,
        nil, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, nil, 0x017E, 0x0178,
    ].map { codePoint in codePoint.flatMap { Unicode.Scalar(UInt32($0)) } }
}
