#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value whose JSON text is written straight into bytes, in the same shape its `Codable`
/// conformance gives (keys sorted, slashes not escaped): the state file and the `List` and
/// `Watch` payloads. `JSONEncoder` builds a tree of boxed values and sorts each object's keys
/// as it writes, which made it three quarters of a changed `ResignActive` (profiled at 1,000
/// favorites); these types are few and their keys fixed, so they are written directly.
public protocol JSONTextRepresentable {
    /// Compact text, or `pretty`: two-space indentation and `"key" : value`, as
    /// `JSONEncoder`'s `.prettyPrinted` writes it.
    func jsonText(pretty: Bool) throws(JSONTextError) -> [UInt8]
}

/// A value JSON cannot hold (`JSONEncoder` refuses the same ones).
public struct JSONTextError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
}

/// Appends JSON text to a byte array; the caller writes keys in sorted order.
public struct JSONTextWriter {
    public private(set) var bytes: [UInt8] = []
    private let pretty: Bool
    /// Per open container: whether nothing was written into it yet.
    private var empty: [Bool] = []

    public init(pretty: Bool, capacity: Int = 0) {
        self.pretty = pretty
        bytes.reserveCapacity(capacity)
    }

    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// Starts the member `key` of the open object; its value follows.
    public mutating func key(_ key: String) {
        nextItem()
        string(key)
        bytes.append(contentsOf: pretty ? Self.prettyColon : Self.colon)
    }

    /// Starts the next element of the open array; its value follows.
    public mutating func element() {
        nextItem()
    }

    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        // Runs of bytes that need no escape are copied whole: byte-by-byte appends were a third
        // of a changed listing's (and the state file's) encoding.
        var text = text
        text.withUTF8 { utf8 in
            var unescaped = 0
            for index in utf8.indices where utf8[index] < 0x20 || utf8[index] == UInt8(ascii: "\"") || utf8[index] == UInt8(ascii: "\\") {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[unescaped..<index]))
                appendEscaped(utf8[index])
                unescaped = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[unescaped...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "t"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        default:
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0xF)])
        }
    }

    public mutating func integer<Value: BinaryInteger>(_ value: Value) {
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func bool(_ value: Bool) {
        bytes.append(contentsOf: value ? Self.trueText : Self.falseText)
    }

    public mutating func real(_ value: Double) throws(JSONTextError) {
        guard value.isFinite else { throw JSONTextError(description: "\(value) is not a JSON number") }
        // Swift prints the shortest text that reads back as the same Double, in JSON's grammar.
        bytes.append(contentsOf: "\(value)".utf8)
    }

    private mutating func open(_ bracket: UInt8) {
        bytes.append(bracket)
        empty.append(true)
    }

    private mutating func close(_ bracket: UInt8) {
        let wasEmpty = empty.removeLast()
        if pretty && !wasEmpty { newline() }
        bytes.append(bracket)
    }

    private mutating func nextItem() {
        if empty[empty.count - 1] {
            empty[empty.count - 1] = false
        } else {
            bytes.append(UInt8(ascii: ","))
        }
        if pretty { newline() }
    }

    private mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * empty.count))
    }

    private static let colon = Array(":".utf8)
    private static let prettyColon = Array(" : ".utf8)
    private static let trueText = Array("true".utf8)
    private static let falseText = Array("false".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)
}

// MARK: - The model types, key for key as in Codable.swift

extension JSONTextWriter {
    public mutating func write(_ value: PropertyListValue) throws(JSONTextError) {
        switch value {
        case .string(let string): self.string(string)
        case .integer(let integer): self.integer(integer)
        case .real(let real): try self.real(real)
        case .bool(let bool): self.bool(bool)
        case .date(let date): string(PropertyListDate.format(date))
        case .data(let data): string(data.base64EncodedString())
        case .array(let array):
            beginArray()
            for element in array {
                self.element()
                try write(element)
            }
            endArray()
        case .dictionary(let dictionary):
            try write(dictionary)
        }
    }

    public mutating func write(_ dictionary: [String: PropertyListValue]) throws(JSONTextError) {
        beginObject()
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            self.key(key)
            try write(value)
        }
        endObject()
    }

    public mutating func write(_ icon: ShortcutIcon) {
        beginObject()
        key("kind")
        switch icon {
        case .system: string("system")
        case .symbol: string("symbol")
        case .templateFile: string("file")
        }
        key("name")
        switch icon {
        case .system(let type): string(type.rawValue)
        case .symbol(let name), .templateFile(let name): string(name)
        }
        endObject()
    }

    public mutating func write(_ item: ShortcutItem) throws(JSONTextError) {
        beginObject()
        if let icon = item.icon {
            key("icon")
            write(icon)
        }
        if let subtitle = item.subtitle {
            key("subtitle")
            string(subtitle)
        }
        key("title")
        string(item.title)
        key("type")
        string(item.type)
        if !item.userInfo.isEmpty {
            key("userInfo")
            try write(item.userInfo)
        }
        endObject()
    }

    public mutating func write(_ row: ListedShortcut) throws(JSONTextError) {
        beginObject()
        key("displayed")
        bool(row.displayed)
        key("item")
        try write(row.item)
        key("position")
        integer(row.position)
        key("source")
        string(row.source.rawValue)
        endObject()
    }
}

extension QuickActionsListing: JSONTextRepresentable {
    public func jsonText(pretty: Bool) throws(JSONTextError) -> [UInt8] {
        var writer = JSONTextWriter(pretty: pretty, capacity: 64 + 300 * items.count)
        writer.beginObject()
        writer.key("generation")
        writer.integer(generation)
        writer.key("items")
        writer.beginArray()
        for row in items {
            writer.element()
            try writer.write(row)
        }
        writer.endArray()
        writer.key("launched")
        writer.bool(launched)
        writer.endObject()
        return writer.bytes
    }
}

extension PersistedState: JSONTextRepresentable {
    public func jsonText(pretty: Bool) throws(JSONTextError) -> [UInt8] {
        var writer = JSONTextWriter(pretty: pretty, capacity: 256 + 300 * dynamicItems.count)
        writer.beginObject()
        writer.key("appVersion")
        writer.string(appVersion)
        writer.key("dynamicItems")
        writer.beginArray()
        for item in dynamicItems {
            writer.element()
            try writer.write(item)
        }
        writer.endArray()
        writer.key("formatVersion")
        writer.integer(formatVersion)
        writer.key("generation")
        writer.integer(generation)
        writer.key("launched")
        writer.bool(launched)
        if let pendingLaunchItem {
            writer.key("pendingLaunchItem")
            try writer.write(pendingLaunchItem)
        }
        writer.key("usageCounts")
        writer.beginObject()
        for (key, count) in usageCounts.sorted(by: { $0.key < $1.key }) {
            writer.key(key)
            writer.integer(count)
        }
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }
}
