/// Parses the JSON of an everyday message straight from its bytes into a `JSONValue`, for the
/// server's hot path: `JSONDecoder` (through `JSONValue`'s `Decodable` conformance, which tries
/// each type in turn and throws on every miss) would be most of a short call's work. It
/// covers what clients send — objects, arrays, strings, integers, booleans, null — and gives
/// up (nil) on anything else (a fraction or exponent, an integer beyond 64 bits, a duplicate
/// key, malformed text), where the caller takes the `JSONDecoder` path, so every value and
/// every error stays as it was.
enum JSONFastParser {
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = Cursor(bytes: buffer)
            guard let value = parser.value(depth: 0) else { return nil }
            parser.skipWhitespace()
            return parser.position == buffer.count ? value : nil
        }
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        /// Deeper nesting is left to `JSONDecoder`, which has its own limit.
        static let maxDepth = 64

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> JSONValue? {
            guard depth < Self.maxDepth else { return nil }
            skipWhitespace()
            guard position < bytes.count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string().map(JSONValue.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return integer()
            default: return nil
            }
        }

        mutating func literal(_ text: StaticString, _ value: JSONValue) -> JSONValue? {
            let count = text.utf8CodeUnitCount
            guard position + count <= bytes.count else { return nil }
            for offset in 0..<count where bytes[position + offset] != text.utf8Start[offset] { return nil }
            position += count
            return value
        }

        mutating func integer() -> JSONValue? {
            let start = position
            if bytes[position] == UInt8(ascii: "-") { position += 1 }
            let digitsStart = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
            let digits = position - digitsStart
            // No digits, a leading zero, or a fraction or exponent: not for this parser.
            guard digits > 0, digits == 1 || bytes[digitsStart] != UInt8(ascii: "0") else { return nil }
            if position < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position]) {
                return nil
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            return Int64(text).map(JSONValue.int)
        }

        mutating func string() -> String? {
            position += 1  // the opening quote
            let start = position
            // The common case: no escape, so the bytes are the string.
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
                    position += 1
                    return String(validating: text, as: UTF8.self)
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { return nil }
                position += 1
            }
            var decoded = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(validating: decoded, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard position < bytes.count else { return nil }
                    let escaped = bytes[position]
                    position += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
                    case UInt8(ascii: "b"): decoded.append(0x08)
                    case UInt8(ascii: "f"): decoded.append(0x0C)
                    case UInt8(ascii: "n"): decoded.append(0x0A)
                    case UInt8(ascii: "r"): decoded.append(0x0D)
                    case UInt8(ascii: "t"): decoded.append(0x09)
                    case UInt8(ascii: "u"):
                        // Only a scalar outside the surrogates; pairs go the long way.
                        guard let code = hexQuad(), let scalar = Unicode.Scalar(code) else { return nil }
                        decoded.append(contentsOf: String(scalar).utf8)
                    default: return nil
                    }
                default:
                    if byte < 0x20 { return nil }
                    decoded.append(byte)
                }
            }
            return nil
        }

        mutating func hexQuad() -> UInt32? {
            guard position + 4 <= bytes.count else { return nil }
            var code: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                position += 1
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                code = code << 4 | UInt32(digit)
            }
            return code
        }

        mutating func array(depth: Int) -> JSONValue? {
            position += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            }
            while true {
                guard let element = value(depth: depth + 1) else { return nil }
                elements.append(element)
                skipWhitespace()
                guard position < bytes.count else { return nil }
                let byte = bytes[position]
                position += 1
                if byte == UInt8(ascii: "]") { return .array(elements) }
                if byte != UInt8(ascii: ",") { return nil }
            }
        }

        mutating func object(depth: Int) -> JSONValue? {
            position += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let key = string() else { return nil }
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return nil }
                position += 1
                guard let member = value(depth: depth + 1), members.updateValue(member, forKey: key) == nil else { return nil }
                skipWhitespace()
                guard position < bytes.count else { return nil }
                let byte = bytes[position]
                position += 1
                if byte == UInt8(ascii: "}") { return .object(members) }
                if byte != UInt8(ascii: ",") { return nil }
            }
        }
    }
}

extension VarlinkCall {
    /// The call in `bytes` when it is an everyday one (see `JSONFastParser`); nil sends the
    /// caller to `JSONDecoder`, which also words the error for a malformed message.
    static func fastParse(_ bytes: [UInt8]) -> VarlinkCall? {
        guard case .object(let message)? = JSONFastParser.parse(bytes), case .string(let method)? = message["method"],
            let parameters = message.parametersObject
        else {
            return nil
        }
        guard let more = message.flag("more"), let oneway = message.flag("oneway"), let upgrade = message.flag("upgrade") else {
            return nil
        }
        return VarlinkCall(method: method, parameters: parameters, more: more, oneway: oneway, upgrade: upgrade)
    }
}

extension VarlinkReply {
    /// The reply in `bytes` when it is an everyday one (see `JSONFastParser`): a short-lived
    /// client such as `qactl` spent more on `JSONDecoder` reading its one reply than on the
    /// call itself. nil sends the caller to `JSONDecoder`, which words the error.
    static func fastParse(_ bytes: [UInt8]) -> VarlinkReply? {
        guard case .object(let message)? = JSONFastParser.parse(bytes), let parameters = message.parametersObject,
            let continues = message.flag("continues")
        else {
            return nil
        }
        let error: String?
        switch message["error"] ?? .null {
        case .null: error = nil
        case .string(let name): error = name
        default: return nil
        }
        return VarlinkReply(parameters: parameters, continues: continues, error: error)
    }
}

extension [String: JSONValue] {
    /// A message's `parameters` as `decodeParametersObject` reads them: omitted or null is
    /// `[:]`; nil for anything but an object.
    fileprivate var parametersObject: [String: JSONValue]? {
        switch self["parameters"] ?? .null {
        case .null: return [:]
        case .object(let object): return object
        default: return nil
        }
    }

    /// A boolean member as `decodeIfPresent(Bool.self) ?? false` reads it; nil for a non-boolean.
    fileprivate func flag(_ key: String) -> Bool? {
        switch self[key] ?? .null {
        case .null: return false
        case .bool(let value): return value
        default: return nil
        }
    }
}
