/// The old-style strings format of `<lang>.lproj/InfoPlist.strings`, which translates the static
/// items' titles and subtitles: `"key" = "value";`
/// pairs, keys and values quoted (`"…"` or `'…'`) or unquoted (letters, digits and `_$+/:.-`),
/// `"key";` as a short form of `"key" = "key";`, `/* … */` and `//` comments, the escapes
/// `\n \t \r \" \' \\ \a \b \f \v`, `\U` with 1–4 hex digits (a UTF-16 unit: two in a row
/// make a surrogate pair) and 1–3 octal digits, and optionally the braces of a whole
/// old-style dictionary around it all. The bytes are UTF-8, or UTF-16 with a byte-order mark
/// (what Xcode writes); a UTF-8 byte-order mark is skipped.
///
/// A key given twice keeps its last value, as CoreFoundation's reader does: Xcode merges
/// strings files by appending, so refusing duplicates would refuse files that work on iOS.
public enum StringsFile {
    /// `fileName` only labels errors.
    public static func parse(bytes: [UInt8], fileName: String) throws(StringsFileError) -> [String: String] {
        let scalars = try decode(bytes, fileName: fileName)
        var parser = StringsParser(scalars: scalars, fileName: fileName)
        return try parser.parseFile()
    }

    private static func decode(_ bytes: [UInt8], fileName: String) throws(StringsFileError) -> [Unicode.Scalar] {
        if bytes.starts(with: [0xFF, 0xFE]) {
            return try decodeUTF16(bytes.dropFirst(2), bigEndian: false, fileName: fileName)
        }
        if bytes.starts(with: [0xFE, 0xFF]) {
            return try decodeUTF16(bytes.dropFirst(2), bigEndian: true, fileName: fileName)
        }
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(body.count)
        var decoder = UTF8()
        var iterator = body.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: return scalars
            case .error:
                throw .invalidEncoding(fileName: fileName, line: lineNumber(of: scalars), encoding: "UTF-8")
            }
        }
    }

    private static func decodeUTF16(_ bytes: ArraySlice<UInt8>, bigEndian: Bool, fileName: String) throws(StringsFileError) -> [Unicode.Scalar] {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let first = UInt16(bytes[index]), second = UInt16(bytes[index + 1])
            units.append(bigEndian ? first << 8 | second : second << 8 | first)
            index += 2
        }
        let encoding = bigEndian ? "UTF-16BE" : "UTF-16LE"
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(units.count)
        var decoder = UTF16()
        var iterator = units.makeIterator()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: break loop
            case .error:
                throw .invalidEncoding(fileName: fileName, line: lineNumber(of: scalars), encoding: encoding)
            }
        }
        // An odd byte count means the file was cut short in the middle of a unit.
        if index != bytes.endIndex {
            throw .invalidEncoding(fileName: fileName, line: lineNumber(of: scalars), encoding: encoding)
        }
        return scalars
    }

    /// The line the next scalar would be on.
    static func lineNumber(of scalars: [Unicode.Scalar]) -> Int {
        1 + scalars.reduce(0) { $0 + ($1 == "\n" ? 1 : 0) }
    }
}

/// Why a strings file was refused; each case names the file and the line (1-based).
public enum StringsFileError: Error, Hashable, Sendable, CustomStringConvertible {
    case invalidEncoding(fileName: String, line: Int, encoding: String)
    case syntax(fileName: String, line: Int, message: String)

    /// The file the error is about.
    public var fileName: String {
        switch self {
        case .invalidEncoding(let fileName, _, _), .syntax(let fileName, _, _): return fileName
        }
    }

    /// The 1-based line the error is on.
    public var line: Int {
        switch self {
        case .invalidEncoding(_, let line, _), .syntax(_, let line, _): return line
        }
    }

    /// One sentence naming the file, the line and what is wrong.
    public var description: String {
        switch self {
        case .invalidEncoding(let fileName, let line, let encoding):
            return "\(fileName):\(line): not valid \(encoding) (a UTF-16 strings file must start with a byte-order mark)."
        case .syntax(let fileName, let line, let message):
            return "\(fileName):\(line): \(message)."
        }
    }
}

/// A recursive-descent reader over the decoded scalars; it counts lines as it goes.
private struct StringsParser {
    let scalars: [Unicode.Scalar]
    let fileName: String
    var position = 0
    var line = 1

    init(scalars: [Unicode.Scalar], fileName: String) {
        self.scalars = scalars
        self.fileName = fileName
    }

    mutating func parseFile() throws(StringsFileError) -> [String: String] {
        var table: [String: String] = [:]
        try skipWhitespaceAndComments()
        // A whole old-style dictionary (`{ "a" = "b"; }`) is the same format with braces.
        let braced = peek() == "{"
        if braced { advance() }
        while true {
            try skipWhitespaceAndComments()
            guard let next = peek() else {
                if braced { throw error("the file ends before the closing '}'") }
                return table
            }
            if braced, next == "}" {
                advance()
                try skipWhitespaceAndComments()
                if peek() != nil { throw error("unexpected text after the closing '}'") }
                return table
            }
            let key = try parseString(what: "a key")
            // A missing ';' or '=' is reported on the line of what it should follow, not
            // on the line of the next entry (or of the file's end).
            var lineOfLastToken = line
            try skipWhitespaceAndComments()
            let value: String
            switch peek() {
            case "=":
                advance()
                try skipWhitespaceAndComments()
                value = try parseString(what: "a value for \"\(key)\"")
                lineOfLastToken = line
                try skipWhitespaceAndComments()
            case ";":
                value = key
            default:
                throw .syntax(fileName: fileName, line: lineOfLastToken, message: "expected '=' or ';' after the key \"\(key)\"")
            }
            guard peek() == ";" else {
                throw .syntax(fileName: fileName, line: lineOfLastToken, message: "expected ';' after the value of \"\(key)\"")
            }
            advance()
            table[key] = value
        }
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        position + offset < scalars.count ? scalars[position + offset] : nil
    }

    private mutating func advance() {
        if scalars[position] == "\n" { line += 1 }
        position += 1
    }

    private func error(_ message: String) -> StringsFileError {
        .syntax(fileName: fileName, line: line, message: message)
    }

    private mutating func skipWhitespaceAndComments() throws(StringsFileError) {
        while let scalar = peek() {
            if scalar.properties.isWhitespace {
                advance()
            } else if scalar == "/", peek(1) == "*" {
                let startLine = line
                advance()
                advance()
                while true {
                    guard let inside = peek() else {
                        throw .syntax(fileName: fileName, line: startLine, message: "the comment opened here is never closed with '*/'")
                    }
                    if inside == "*", peek(1) == "/" {
                        advance()
                        advance()
                        break
                    }
                    advance()
                }
            } else if scalar == "/", peek(1) == "/" {
                while let inside = peek(), inside != "\n" { advance() }
            } else {
                return
            }
        }
    }

    private static func isUnquotedCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_", "$", "+", "/", ":", ".", "-": return true
        default: return false
        }
    }

    private mutating func parseString(what: String) throws(StringsFileError) -> String {
        guard let first = peek() else { throw error("expected \(what) but the file ends") }
        if first == "\"" || first == "'" { return try parseQuoted(quote: first) }
        guard Self.isUnquotedCharacter(first) else {
            if first == "(" || first == "{" || first == "<" {
                throw error("expected \(what) as a string; arrays, dictionaries and data are not allowed here")
            }
            throw error("expected \(what) but found '\(first.escaped(asASCII: false))'")
        }
        var result = String.UnicodeScalarView()
        while let scalar = peek(), Self.isUnquotedCharacter(scalar) {
            result.append(scalar)
            advance()
        }
        return String(result)
    }

    private mutating func parseQuoted(quote: Unicode.Scalar) throws(StringsFileError) -> String {
        let startLine = line
        advance()
        var result = String.UnicodeScalarView()
        // `\U` escapes are UTF-16 units; a high surrogate waits here for its low half.
        var pendingHighSurrogate: UInt16?
        func flushSurrogate() {
            if pendingHighSurrogate != nil {
                result.append("\u{FFFD}")
                pendingHighSurrogate = nil
            }
        }
        while true {
            guard let scalar = peek() else {
                throw .syntax(fileName: fileName, line: startLine, message: "the string opened here is never closed with \(quote)")
            }
            advance()
            if scalar == quote {
                flushSurrogate()
                return String(result)
            }
            guard scalar == "\\" else {
                flushSurrogate()
                result.append(scalar)
                continue
            }
            guard let escaped = peek() else { continue }
            advance()
            if escaped == "U" || escaped == "u" {
                var value: UInt16 = 0
                var digits = 0
                while digits < 4, let digit = peek(), let hex = Self.hexValue(digit) {
                    value = value << 4 | UInt16(hex)
                    digits += 1
                    advance()
                }
                guard digits > 0 else { throw error("\\U must be followed by 1 to 4 hexadecimal digits") }
                if UTF16.isLeadSurrogate(value) {
                    flushSurrogate()
                    pendingHighSurrogate = value
                } else if UTF16.isTrailSurrogate(value), let high = pendingHighSurrogate {
                    let combined = 0x10000 + (UInt32(high - 0xD800) << 10) + UInt32(value - 0xDC00)
                    result.append(Unicode.Scalar(combined) ?? "\u{FFFD}")
                    pendingHighSurrogate = nil
                } else {
                    flushSurrogate()
                    result.append(Unicode.Scalar(value) ?? "\u{FFFD}")
                }
                continue
            }
            flushSurrogate()
            if let octal = Self.octalValue(escaped) {
                var value = UInt32(octal)
                var digits = 1
                while digits < 3, let digit = peek(), let next = Self.octalValue(digit) {
                    value = value << 3 | UInt32(next)
                    digits += 1
                    advance()
                }
                result.append(Unicode.Scalar(value) ?? "\u{FFFD}")
                continue
            }
            switch escaped {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "r": result.append("\r")
            case "a": result.append("\u{07}")
            case "b": result.append("\u{08}")
            case "f": result.append("\u{0C}")
            case "v": result.append("\u{0B}")
            // `\"`, `\'`, `\\` and any other escaped character stand for themselves, as in CoreFoundation.
            default: result.append(escaped)
            }
        }
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar {
        case "0"..."9": return UInt8(scalar.value - 48)
        case "a"..."f": return UInt8(scalar.value - 87)
        case "A"..."F": return UInt8(scalar.value - 55)
        default: return nil
        }
    }

    private static func octalValue(_ scalar: Unicode.Scalar) -> UInt8? {
        ("0"..."7").contains(scalar) ? UInt8(scalar.value - 48) : nil
    }
}
