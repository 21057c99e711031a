#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A small hand-written reader for the XML property-list dialect. It understands
/// exactly the elements a plist may contain and treats anything else as an error,
/// which keeps it far simpler (and stricter) than a general XML parser.
///
/// FoundationEssentials' `PropertyListDecoder` reads XML plists too; this reader is
/// kept because it gives better errors and reads what Info.plist authors write:
/// every error names the line where it was noticed and what was expected and found
/// (the decoder reports "Value missing for key inside <dict> at line 1" for a problem
/// on line 4), a bare `<key>…</key><value>` fragment copied out of an Info.plist reads
/// as a dictionary (the decoder returns the first key as a string), and a date such as
/// 2023-02-29 or a duplicate key is an error rather than March 1st or the last value.
struct XMLPropertyListReader {
    let bytes: [UInt8]
    var position: Int

    /// Nesting deeper than this is refused so hostile input cannot exhaust the stack.
    static let maximumDepth = 256

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    // MARK: Document structure

    mutating func readDocument() throws(PropertyListError) -> PropertyListValue {
        try skipMarkup()
        let rootStart = position
        guard let rootTag = try readStartTagIfPresent() else {
            throw failure("expected <plist>, a value element such as <dict> or <array>, or <key> but found \(describeHere())")
        }
        let value: PropertyListValue
        switch rootTag.name {
        case "plist":
            if rootTag.selfClosing {
                throw failure("expected a value inside <plist> but found an empty <plist/>", at: rootStart)
            }
            try skipMarkup()
            guard let valueTag = try readStartTagIfPresent() else {
                throw failure("expected a value element such as <dict> or <array> inside <plist> but found \(describeHere())")
            }
            value = try readValue(valueTag, depth: 1)
            try skipMarkup()
            try readEndTag("plist")
        case "key":
            // A fragment copied out of an Info.plist: top-level key/value pairs.
            position = rootStart
            value = .dictionary(try readDictionaryEntries(closingTag: nil, depth: 1))
        default:
            value = try readValue(rootTag, depth: 1)
        }
        try skipMarkup()
        guard position == bytes.count else {
            throw failure("expected the end of the property list but found \(describeHere())")
        }
        return value
    }

    private mutating func readValue(_ tag: Tag, depth: Int) throws(PropertyListError) -> PropertyListValue {
        guard depth <= Self.maximumDepth else {
            throw failure("values are nested more than \(Self.maximumDepth) levels deep", at: tag.start)
        }
        switch tag.name {
        case "dict":
            if tag.selfClosing { return .dictionary([:]) }
            return .dictionary(try readDictionaryEntries(closingTag: "dict", depth: depth + 1))
        case "array":
            if tag.selfClosing { return .array([]) }
            var elements: [PropertyListValue] = []
            while true {
                try skipMarkup()
                if isAtEndTag() {
                    try readEndTag("array")
                    return .array(elements)
                }
                guard let elementTag = try readStartTagIfPresent() else {
                    throw failure("expected a value element or </array> but found \(describeHere())")
                }
                elements.append(try readValue(elementTag, depth: depth + 1))
            }
        case "string":
            if tag.selfClosing { return .string("") }
            return .string(try readText(closingTag: "string"))
        case "integer":
            return .integer(try readScalar(tag, expecting: "an integer") { Self.parseInteger(Self.trimmed($0)) })
        case "real":
            return .real(try readScalar(tag, expecting: "a number") { Double(Self.trimmed($0)) })
        case "true", "false":
            if !tag.selfClosing {
                try skipMarkup()
                try readEndTag(tag.name)
            }
            return .bool(tag.name == "true")
        case "date":
            let text = tag.selfClosing ? "" : try readText(closingTag: "date")
            guard let date = PropertyListDate.parse(Self.trimmed(text)) else {
                throw failure("expected an ISO 8601 date such as \"2024-01-01T00:00:00Z\" inside <date> but found \"\(text)\"", at: tag.start)
            }
            return .date(date)
        case "data":
            let text = tag.selfClosing ? "" : try readText(closingTag: "data")
            let compact = String(String.UnicodeScalarView(text.unicodeScalars.filter { !$0.properties.isWhitespace }))
            guard let data = Data(base64Encoded: compact) else {
                throw failure("expected base64 text inside <data> but found \"\(Self.trimmed(text))\"", at: tag.start)
            }
            return .data(data)
        case "key":
            throw failure("found <key> outside a <dict>", at: tag.start)
        default:
            throw failure("unknown element <\(tag.name)>; expected one of <dict>, <array>, <string>, <integer>, <real>, <true/>, <false/>, <date>, <data>", at: tag.start)
        }
    }

    /// Reads `<key>…</key><value>` pairs up to `</closingTag>`, or to the end of
    /// the input when `closingTag` is nil (a bare fragment).
    private mutating func readDictionaryEntries(closingTag: String?, depth: Int) throws(PropertyListError) -> [String: PropertyListValue] {
        var entries: [String: PropertyListValue] = [:]
        while true {
            try skipMarkup()
            if let closingTag, isAtEndTag() {
                try readEndTag(closingTag)
                return entries
            }
            if closingTag == nil, position == bytes.count {
                return entries
            }
            let keyStart = position
            guard let keyTag = try readStartTagIfPresent(), keyTag.name == "key" else {
                position = keyStart
                let ending = closingTag.map { " or </\($0)>" } ?? ""
                throw failure("expected <key>\(ending) but found \(describeHere())")
            }
            let key = keyTag.selfClosing ? "" : try readText(closingTag: "key")
            try skipMarkup()
            guard let valueTag = try readStartTagIfPresent() else {
                throw failure("expected a value for key \"\(key)\" but found \(describeHere())")
            }
            let value = try readValue(valueTag, depth: depth)
            guard entries.updateValue(value, forKey: key) == nil else {
                throw failure("the key \"\(key)\" appears twice in the same dictionary", at: keyStart)
            }
        }
    }

    // MARK: Lexing

    struct Tag {
        var name: String
        var selfClosing: Bool
        var start: Int
    }

    /// Reads `<name …>` or `<name …/>` if the input is at a start tag; returns nil
    /// (consuming nothing) at an end tag, text or the end of the input.
    private mutating func readStartTagIfPresent() throws(PropertyListError) -> Tag? {
        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "<"),
              Self.isNameByte(bytes[position + 1])
        else { return nil }
        let start = position
        position += 1
        let name = readName()
        var selfClosing = false
        var quote: UInt8?
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return Tag(name: name, selfClosing: selfClosing, start: start)
            } else if byte == UInt8(ascii: "/") {
                selfClosing = true
                continue
            }
            if !Self.isWhitespace(byte) { selfClosing = false }
        }
        throw failure("the tag <\(name) is not closed with \">\"", at: start)
    }

    private mutating func readEndTag(_ expected: String) throws(PropertyListError) {
        let start = position
        guard isAtEndTag() else {
            throw failure("expected </\(expected)> but found \(describeHere())")
        }
        position += 2
        let name = readName()
        while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
        guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else {
            throw failure("the end tag </\(name) is not closed with \">\"", at: start)
        }
        position += 1
        guard name == expected else {
            throw failure("expected </\(expected)> but found </\(name)>", at: start)
        }
    }

    private func isAtEndTag() -> Bool {
        hasPrefix("</")
    }

    private mutating func readName() -> String {
        let start = position
        while position < bytes.count, Self.isNameByte(bytes[position]) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"),
             UInt8(ascii: "."), UInt8(ascii: ":"):
            return true
        default:
            return byte >= 0x80
        }
    }

    /// Skips white space, comments, processing instructions (`<?xml …?>`) and
    /// `<!DOCTYPE …>`: everything that may sit between elements.
    private mutating func skipMarkup() throws(PropertyListError) {
        while true {
            while position < bytes.count, Self.isWhitespace(bytes[position]) { position += 1 }
            if hasPrefix("<!--") {
                try skip(past: "-->", what: "comment", opening: 4)
            } else if hasPrefix("<?") {
                try skip(past: "?>", what: "processing instruction", opening: 2)
            } else if hasPrefix("<!DOCTYPE") {
                try skipDoctype()
            } else {
                return
            }
        }
    }

    private mutating func skip(past terminator: String, what: String, opening: Int) throws(PropertyListError) {
        let start = position
        position += opening
        while position < bytes.count {
            if hasPrefix(terminator) {
                position += terminator.utf8.count
                return
            }
            position += 1
        }
        throw failure("the \(what) is not closed with \"\(terminator)\"", at: start)
    }

    private mutating func skipDoctype() throws(PropertyListError) {
        let start = position
        var bracketDepth = 0
        var quote: UInt8?
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            if let open = quote {
                if byte == open { quote = nil }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
            case UInt8(ascii: "["): bracketDepth += 1
            case UInt8(ascii: "]"): bracketDepth -= 1
            case UInt8(ascii: ">") where bracketDepth <= 0: return
            default: break
            }
        }
        throw failure("the <!DOCTYPE declaration is not closed with \">\"", at: start)
    }

    /// Reads character data up to `</closingTag>`, decoding entities and CDATA
    /// sections and dropping comments.
    /// The text of `<integer>`, `<real>`…, made a value by `parse`, or an error naming what was expected.
    private mutating func readScalar<Value>(
        _ tag: Tag, expecting expectation: String, _ parse: (String) -> Value?
    ) throws(PropertyListError) -> Value {
        let text = tag.selfClosing ? "" : try readText(closingTag: tag.name)
        guard let value = parse(text) else {
            throw failure("expected \(expectation) inside <\(tag.name)> but found \"\(text)\"", at: tag.start)
        }
        return value
    }

    private mutating func readText(closingTag: String) throws(PropertyListError) -> String {
        var text: [UInt8] = []
        let start = position
        while true {
            guard position < bytes.count else {
                throw failure("expected </\(closingTag)> but reached the end of the property list", at: start)
            }
            let byte = bytes[position]
            if byte == UInt8(ascii: "<") {
                if hasPrefix("<![CDATA[") {
                    let cdataStart = position
                    position += 9
                    while true {
                        guard position < bytes.count else {
                            throw failure("the CDATA section is not closed with \"]]>\"", at: cdataStart)
                        }
                        if hasPrefix("]]>") { position += 3; break }
                        text.append(bytes[position])
                        position += 1
                    }
                } else if hasPrefix("<!--") {
                    try skip(past: "-->", what: "comment", opening: 4)
                } else if isAtEndTag() {
                    try readEndTag(closingTag)
                    break
                } else {
                    throw failure("expected text or </\(closingTag)> but found \(describeHere()); elements are not allowed inside <\(closingTag)>")
                }
            } else if byte == UInt8(ascii: "&") {
                text.append(contentsOf: try readEntity())
            } else {
                text.append(byte)
                position += 1
            }
        }
        guard let string = String(validating: text, as: UTF8.self) else {
            throw failure("the text inside <\(closingTag)> is not valid UTF-8", at: start)
        }
        return string
    }

    private mutating func readEntity() throws(PropertyListError) -> [UInt8] {
        let start = position
        position += 1
        let nameStart = position
        while position < bytes.count, bytes[position] != UInt8(ascii: ";"), position - nameStart < 12 {
            position += 1
        }
        guard position < bytes.count, bytes[position] == UInt8(ascii: ";") else {
            throw failure("the entity starting with \"&\" is not closed with \";\"; write \"&amp;\" for a literal \"&\"", at: start)
        }
        let name = String(decoding: bytes[nameStart..<position], as: UTF8.self)
        position += 1
        switch name {
        case "amp": return [UInt8(ascii: "&")]
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            var scalarValue: UInt32?
            if name.hasPrefix("#x") || name.hasPrefix("#X") {
                scalarValue = UInt32(name.dropFirst(2), radix: 16)
            } else if name.hasPrefix("#") {
                scalarValue = UInt32(name.dropFirst(1), radix: 10)
            }
            guard let scalarValue, let scalar = Unicode.Scalar(scalarValue) else {
                throw failure("unknown entity \"&\(name);\"; expected &amp; &lt; &gt; &quot; &apos; &#NN; or &#xNN;", at: start)
            }
            return Array(String(Character(scalar)).utf8)
        }
    }

    // MARK: Helpers

    private func hasPrefix(_ prefix: String) -> Bool {
        var index = position
        for byte in prefix.utf8 {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
        }
        return true
    }

    /// A short, quoted picture of the input at the current position for error messages.
    private func describeHere() -> String {
        guard position < bytes.count else { return "the end of the property list" }
        var end = position
        if bytes[position] == UInt8(ascii: "<") {
            while end < bytes.count, end - position < 40, bytes[end] != UInt8(ascii: ">") { end += 1 }
            if end < bytes.count, bytes[end] == UInt8(ascii: ">") { end += 1 }
            return String(decoding: bytes[position..<end], as: UTF8.self)
        }
        while end < bytes.count, end - position < 30, bytes[end] != UInt8(ascii: "<"), bytes[end] != 0x0A { end += 1 }
        return "text \"\(String(decoding: bytes[position..<end], as: UTF8.self))\""
    }

    private func failure(_ problem: String, at offset: Int? = nil) -> PropertyListError {
        .xml(line: lineNumber(at: offset ?? position), problem: problem)
    }

    /// Lines are counted only when an error is reported, so the happy path pays nothing.
    /// CR LF, LF and a lone CR each end one line.
    private func lineNumber(at offset: Int) -> Int {
        var line = 1
        var index = 0
        let end = min(offset, bytes.count)
        while index < end {
            if bytes[index] == 0x0A {
                line += 1
            } else if bytes[index] == 0x0D, index + 1 >= bytes.count || bytes[index + 1] != 0x0A {
                line += 1
            }
            index += 1
        }
        return line
    }

    static func trimmed(_ text: String) -> Substring {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return Substring(scalars[first...last])
    }

    static func parseInteger(_ text: Substring) -> Int64? {
        var digits = text
        var negative = false
        if digits.first == "-" || digits.first == "+" {
            negative = digits.first == "-"
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty, !digits.hasPrefix("-"), !digits.hasPrefix("+") else { return nil }
        var radix = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        }
        // Parse the magnitude unsigned so Int64.min, whose magnitude is not an Int64, still reads.
        guard let magnitude = UInt64(digits, radix: radix) else { return nil }
        if negative {
            if magnitude == UInt64(Int64.max) + 1 { return Int64.min }
            guard magnitude <= UInt64(Int64.max) else { return nil }
            return -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }
}
