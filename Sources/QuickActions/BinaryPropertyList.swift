#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Reads `bplist00` files with FoundationEssentials' `PropertyListDecoder`, which
/// understands the binary format on every platform. Three things are added around it:
///
/// - the 32-byte trailer and the offset table are checked first, because a truncated
///   file (the usual way a binary plist goes bad) otherwise fails with "Corrupt
///   top-level info", or, when it is shorter than the trailer, with an error about
///   OpenStep syntax;
/// - the decoder resolves object references without cycle detection or memoisation,
///   so `Node` refuses nesting deeper than `maximumDepth` (which also ends any cycle)
///   and stops after `NodeBudget` objects, so shared references cannot make decoding
///   blow up exponentially;
/// - errors become `PropertyListError.binary` with the key path of the object at fault.
enum BinaryPropertyList {
    static let magic: [UInt8] = Array("bplist00".utf8)
    static let maximumDepth = 256
    private static let trailerSize = 32

    static func decode(_ bytes: [UInt8]) throws(PropertyListError) -> PropertyListValue {
        try checkIndex(bytes)
        // Each object costs at least one byte of references, so a file that decodes to more
        // objects than four times its size shares subtrees pathologically.
        let budget = NodeBudget(objects: bytes.count * 4 + 1024)
        do {
            return try NodeBudget.$current.withValue(budget) {
                try PropertyListDecoder().decode(Node.self, from: Data(bytes)).value
            }
        } catch {
            throw .binary(problem: describe(error))
        }
    }

    /// The trailer and the offset table, checked the way the decoder will use them but
    /// reported with the byte at fault and a hint that the file is probably truncated.
    private static func checkIndex(_ bytes: [UInt8]) throws(PropertyListError) {
        let truncated = "; the file is probably truncated or corrupt"
        guard bytes.count >= magic.count + trailerSize else {
            throw .binary(problem: "the binary property list has only \(bytes.count) bytes, too few for the 8-byte header and the 32-byte trailer\(truncated)")
        }
        let trailer = bytes.count - trailerSize
        let offsetIntSize = Int(bytes[trailer + 6])
        let objectRefSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetIntSize) else {
            throw .binary(problem: "byte \(trailer + 6) of the binary property list (in the trailer) gives an offset size of \(offsetIntSize), not 1 to 8 bytes\(truncated)")
        }
        guard (1...8).contains(objectRefSize) else {
            throw .binary(problem: "byte \(trailer + 7) of the binary property list (in the trailer) gives an object reference size of \(objectRefSize), not 1 to 8 bytes\(truncated)")
        }
        let count = readUnsigned(bytes, at: trailer + 8, size: 8)
        let top = readUnsigned(bytes, at: trailer + 16, size: 8)
        let table = readUnsigned(bytes, at: trailer + 24, size: 8)
        guard count > 0, count <= UInt64(trailer) else {
            throw .binary(problem: "byte \(trailer + 8) of the binary property list (in the trailer) gives an object count of \(count), not between 1 and the file size\(truncated)")
        }
        guard top < count else {
            throw .binary(problem: "byte \(trailer + 16) of the binary property list (in the trailer) names top object \(top), but the object count is \(count)\(truncated)")
        }
        guard table >= UInt64(magic.count), table <= UInt64(trailer), UInt64(trailer) - table >= count * UInt64(offsetIntSize) else {
            throw .binary(problem: "byte \(trailer + 24) of the binary property list (in the trailer) places the offset table of \(count) entries at byte \(table), which does not fit between the header and the trailer\(truncated)")
        }
        for index in 0..<Int(count) {
            let entry = Int(table) + index * offsetIntSize
            let offset = readUnsigned(bytes, at: entry, size: offsetIntSize)
            guard offset >= UInt64(magic.count), offset < table else {
                throw .binary(problem: "byte \(entry) of the binary property list (in the offset table) gives object \(index) the offset \(offset), outside the object area between the header and byte \(table)\(truncated)")
            }
        }
    }

    /// Big-endian; the caller has checked the range.
    private static func readUnsigned(_ bytes: [UInt8], at start: Int, size: Int) -> UInt64 {
        bytes[start..<(start + size)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The text of `PropertyListError.binary`: where (a key path such as
    /// `UIApplicationShortcutItems[0].UIApplicationShortcutItemTitle`) and what.
    private static func describe(_ error: any Error) -> String {
        let damaged = "the binary property list is damaged"
        switch error {
        case let problem as NodeProblem:
            let path = keyPath(problem.codingPath)
            return path.isEmpty ? "\(damaged): \(problem.description)" : "\(damaged) at \(path): \(problem.description)"
        case DecodingError.dataCorrupted(let context), DecodingError.typeMismatch(_, let context),
             DecodingError.valueNotFound(_, let context), DecodingError.keyNotFound(_, let context):
            var finding = context.debugDescription
            // Damage found while scanning the file comes as "not a valid property list"
            // with the decoder's own finding underneath.
            if let underlying = context.underlyingError as? CocoaError,
               let scanned = underlying.userInfo["NSDebugDescription"] as? String {
                finding = scanned
            }
            let path = keyPath(context.codingPath)
            return "\(damaged)\(path.isEmpty ? "" : " at \(path)") (the decoder reports \"\(finding)\")"
        default:
            return "\(damaged) (the decoder reports \(error))"
        }
    }

    /// `UIApplicationShortcutItems[0].UIApplicationShortcutItemTitle`; a path that runs
    /// around a reference cycle is cut short.
    private static func keyPath(_ codingPath: [any CodingKey]) -> String {
        var path = ""
        for key in codingPath.prefix(8) {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += path.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return codingPath.count > 8 ? path + "…" : path
    }

    /// Thrown by `Node` for what the decoder accepts but a property list cannot hold.
    private struct NodeProblem: Error, CustomStringConvertible {
        var codingPath: [any CodingKey]
        var description: String
    }

    /// How many more objects one decode may produce, shared by every `Node` of it.
    private final class NodeBudget: Sendable {
        @TaskLocal static var current: NodeBudget?
        private let remaining: Atomic<Int>

        init(objects: Int) {
            remaining = Atomic(objects)
        }

        func spend() -> Bool {
            remaining.subtract(1, ordering: .relaxed).newValue >= 0
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// One object of the file. The decoder is strict about kinds (a boolean never reads
    /// as an integer, a date never as a string), so trying each kind in turn is exact,
    /// except that a whole-valued real such as 2.0 reads as an integer.
    private struct Node: Decodable {
        let value: PropertyListValue

        init(from decoder: any Decoder) throws {
            guard decoder.codingPath.count <= BinaryPropertyList.maximumDepth else {
                throw Self.problem(decoder, "objects are nested more than \(BinaryPropertyList.maximumDepth) levels deep, or an object contains itself (a reference cycle)")
            }
            if let budget = NodeBudget.current, !budget.spend() {
                throw Self.problem(decoder, "the file's objects reference each other so often that decoding would never end")
            }
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                throw Self.problem(decoder, "null objects cannot be represented in a property list")
            }
            if let bool = try? single.decode(Bool.self) {
                value = .bool(bool)
            } else if let integer = try? single.decode(Int64.self) {
                value = .integer(integer)
            } else if let real = try? single.decode(Double.self) {
                value = .real(real)
            } else if let string = try Self.decodeString(single, decoder) {
                value = .string(string)
            } else if let date = try? single.decode(Date.self) {
                value = .date(date)
            } else if let data = try? single.decode(Data.self) {
                value = .data(data)
            } else if var array = try? decoder.unkeyedContainer() {
                var elements: [PropertyListValue] = []
                while !array.isAtEnd {
                    elements.append(try array.decode(Node.self).value)
                }
                value = .array(elements)
            } else {
                value = .dictionary(try Self.decodeDictionary(decoder))
            }
        }

        /// Nil when the object is not a string; an error when it is one that cannot be read.
        private static func decodeString(_ single: any SingleValueDecodingContainer, _ decoder: any Decoder) throws -> String? {
            do {
                return try single.decode(String.self)
            } catch DecodingError.typeMismatch {
                return nil
            } catch {
                throw problem(decoder, "a string holds bytes that are not text (an unpaired UTF-16 surrogate, or an ASCII byte above 0x7F)")
            }
        }

        private static func decodeDictionary(_ decoder: any Decoder) throws -> [String: PropertyListValue] {
            let container: KeyedDecodingContainer<AnyKey>
            do {
                container = try decoder.container(keyedBy: AnyKey.self)
            } catch DecodingError.typeMismatch(let type, _) where type == String.self {
                throw problem(decoder, "a dictionary key is not a string")
            } catch {
                throw problem(decoder, "an object is none of string, integer, real, boolean, date, data, array or dictionary (UID objects from keyed archives are not supported)")
            }
            var entries: [String: PropertyListValue] = [:]
            for key in container.allKeys {
                entries[key.stringValue] = try container.decode(Node.self, forKey: key).value
            }
            return entries
        }

        private static func problem(_ decoder: any Decoder, _ description: String) -> NodeProblem {
            NodeProblem(codingPath: decoder.codingPath, description: description)
        }
    }
}
