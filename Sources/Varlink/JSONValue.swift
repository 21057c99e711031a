#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JSON document as a value, so Varlink messages can carry interface-specific parameters
/// without the protocol layer knowing their types.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue: Codable {
    /// Decodes any JSON value; throws `DecodingError.dataCorrupted` when it is none of null, bool, number,
    /// string, array or object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "The value is not a JSON null, bool, number, string, array or object.")
        }
    }

    /// Encodes the value as the JSON it stands for.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text, keys sorted so the same value always prints the same way.
    public var description: String {
        (try? String(decoding: jsonData(), as: UTF8.self)) ?? "<unencodable JSON value>"
    }
}

extension JSONValue {
    /// The member `key` of an object; nil when it has none or the value is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The string, or nil when the value is not a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, or nil when the value is not an integer.
    public var intValue: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The Boolean, or nil when the value is not a Boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The members, or nil when the value is not an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The elements, or nil when the value is not an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// Parses JSON text: everyday text with `JSONFastParser`, anything else (and every error)
    /// with `JSONDecoder`, which gives the same values.
    public init(jsonData data: Data) throws {
        if let parsed = JSONFastParser.parse(Array(data)) {
            self = parsed
        } else {
            self = try JSONDecoder().decode(JSONValue.self, from: data)
        }
    }

    /// Compact JSON text with sorted keys.
    public func jsonData() throws -> Data {
        try JSONValue.encoder.encode(self)
    }

    /// Converts any `Encodable` value (typically a wire struct) into a JSON value.
    public init(encoding value: some Encodable) throws {
        try self.init(jsonData: JSONValue.encoder.encode(value))
    }

    /// Decodes a typed value from this JSON value. A failure names the offending
    /// parameter, which is exactly what `org.varlink.service.InvalidParameter` reports.
    public func decode<Value: Decodable>(_ type: Value.Type = Value.self) throws(JSONValueDecodingError) -> Value {
        // A call's empty parameters arrive omitted or `null`; both mean "no parameters given".
        let normalized: JSONValue = self == .null ? .object([:]) : self
        do {
            let data = try JSONValue.encoder.encode(normalized)
            return try JSONDecoder().decode(Value.self, from: data)
        } catch let error as DecodingError {
            var failure = JSONValueDecodingError(decodingError: error)
            if failure.parameter.isEmpty, let number = normalized.unrepresentableNumber(decoding: Value.self) {
                failure.parameter = number
            }
            throw failure
        } catch {
            throw JSONValueDecodingError(parameter: "", reason: "\(error)")
        }
    }

    /// JSONDecoder reports a number that does not fit the declared type (a float or a huge
    /// integer for an `Int`) with no coding path. This finds the number at fault: the first
    /// one (in key order) that still fails to decode when every other number is made a 0.
    private func unrepresentableNumber<Value: Decodable>(decoding type: Value.Type) -> String? {
        let numbers = numberPaths()
        guard numbers.count > 0, numbers.count <= 64 else { return nil }
        for candidate in numbers {
            let others = replacingNumbers(except: candidate, path: [])
            do {
                _ = try JSONDecoder().decode(Value.self, from: try JSONValue.encoder.encode(others))
            } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
                return candidate.joined(separator: ".")
            } catch {
                continue
            }
        }
        return nil
    }

    private func numberPaths(prefix: [String] = []) -> [[String]] {
        switch self {
        case .int, .double: return [prefix]
        case .array(let elements): return elements.indices.flatMap { elements[$0].numberPaths(prefix: prefix + ["\($0)"]) }
        case .object(let members): return members.keys.sorted().flatMap { members[$0]!.numberPaths(prefix: prefix + [$0]) }
        case .null, .bool, .string: return []
        }
    }

    private func replacingNumbers(except kept: [String], path: [String]) -> JSONValue {
        switch self {
        case .int, .double: return path == kept ? self : .int(0)
        case .array(let elements):
            return .array(elements.indices.map { elements[$0].replacingNumbers(except: kept, path: path + ["\($0)"]) })
        case .object(let members):
            return .object(members.reduce(into: [:]) { $0[$1.key] = $1.value.replacingNumbers(except: kept, path: path + [$1.key]) })
        case .null, .bool, .string: return self
        }
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

/// A JSON value that did not match the expected type, reduced to the parameter at fault.
public struct JSONValueDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The dotted path of the offending parameter (`"position"`, `"item.icon.kind"`); empty when
    /// the value as a whole was wrong (for example an array where an object was expected).
    public var parameter: String
    /// Why the value is wrong, as a clause (`"it is required but missing"`).
    public var reason: String

    /// An error naming the dotted path of the parameter at fault and why it is wrong.
    public init(parameter: String, reason: String) {
        self.parameter = parameter
        self.reason = reason
    }

    init(decodingError: DecodingError) {
        switch decodingError {
        case .keyNotFound(let key, let context):
            self.init(parameter: Self.path(context.codingPath + [key]), reason: "it is required but missing")
        case .typeMismatch(let type, let context):
            self.init(parameter: Self.path(context.codingPath), reason: "expected a value of type \(type)")
        case .valueNotFound(let type, let context):
            self.init(parameter: Self.path(context.codingPath), reason: "expected a value of type \(type), found null")
        case .dataCorrupted(let context):
            self.init(parameter: Self.path(context.codingPath), reason: context.debugDescription)
        @unknown default:
            self.init(parameter: "", reason: "\(decodingError)")
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.map { key in key.intValue.map { "\($0)" } ?? key.stringValue }.joined(separator: ".")
    }

    /// The Varlink error a service replies with for this failure.
    public var varlinkError: VarlinkError { .invalidParameter(parameter) }

    /// One sentence naming the parameter (when there is one) and the reason.
    public var description: String {
        parameter.isEmpty
            ? "The parameters are invalid: \(reason)."
            : "The parameter '\(parameter)' is invalid: \(reason)."
    }
}

// Literals keep wire structures readable where they are written by hand (tests, handlers).
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// A JSON string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A JSON integer.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A JSON Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A JSON array of the elements, in order.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// JSON `null`.
    public init(nilLiteral: ()) { self = .null }

    /// A JSON object; of two equal keys, the last one's value is kept.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
