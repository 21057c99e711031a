/// A vCard's properties: name, group, parameters and value, and the value's encodings and escapes.
extension VCardParser {
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
    /// `\,` `\;` `\\` `\n` `\N` in each piece. Unknown escapes are kept as written, and so is
    /// every escape when `keepingEscapes` (for a later, finer split of each piece).
    static func unescapedComponents(
        of value: String, separatedBy separator: Unicode.Scalar?, keepingEscapes: Bool = false
    ) -> [String] {
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
                case "n" where !keepingEscapes, "N" where !keepingEscapes: current.append("\n")
                case ",", ";", "\\":
                    if keepingEscapes { current.append("\\") }
                    current.append(scalar)
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
}
