#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value whose JSON text is written straight into bytes, in the same shape its `Codable`
/// conformance gives (keys sorted, slashes not escaped): the state file and the `List` and
/// `Watch` payloads. `JSONEncoder` builds a tree of boxed values and sorts each object's keys
/// as it writes, which costs more than the rest of a changed `ResignActive` together; these
/// types are few and their keys fixed, so they are written directly.
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
    public internal(set) var bytes: [UInt8] = []
    let pretty: Bool
    /// Per open container: whether nothing was written into it yet.
    private var empty: [Bool] = []
    /// Where `writeWhole` writes an item before appending it; allocated at the first.
    var scratch: [UInt8] = []

    public init(pretty: Bool, capacity: Int = 0) {
        self.pretty = pretty
        bytes.reserveCapacity(capacity)
    }

    /// A newline after the document.
    public mutating func endLine() {
        precondition(empty.isEmpty, "a line ends after the document, not inside it")
        bytes.append(UInt8(ascii: "\n"))
    }

    /// How many containers are open: pretty text is indented for it.
    var depth: Int { empty.count }

    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// Starts the member `key` of the open object; its value follows.
    public mutating func key(_ key: String) {
        nextItem()
        string(key)
        // Byte by byte: appending a static array retained and released it every time.
        if pretty { bytes.append(UInt8(ascii: " ")) }
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
    }

    /// Starts the next element of the open array; its value follows.
    /// `key: [ … ]`, each element written by `write`.
    public mutating func array<Elements: Sequence>(
        _ key: String, of elements: Elements, _ write: (inout JSONTextWriter, Elements.Element) throws(JSONTextError) -> Void
    ) throws(JSONTextError) {
        self.key(key)
        beginArray()
        for element in elements {
            self.element()
            try write(&self, element)
        }
        endArray()
    }

    public mutating func element() {
        nextItem()
    }

    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        // A native string's bytes are read where they lie; only another kind is copied first
        // (a copy to call `withUTF8` on retained and released every string written).
        if text.utf8.withContiguousStorageIfAvailable({ appendEscaping($0) }) == nil {
            var text = text
            text.withUTF8 { appendEscaping($0) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Runs of bytes that need no escape are copied whole: titles and identifiers are most
    /// of a listing's (and the state file's) bytes, and an append per byte is slow.
    private mutating func appendEscaping(_ utf8: UnsafeBufferPointer<UInt8>) {
        Self.escaping(utf8, run: { bytes.append(contentsOf: $0) }, escape: { appendEscaped($0) })
    }

    /// Goes through `utf8` as a JSON string's text: `run` gets each run of bytes that need no
    /// escape, `escape` each byte that does, in order. Eight bytes at a time while none of
    /// them needs an escape: the test byte by byte was most of writing a title, an email or an
    /// identifier.
    @inline(__always)
    static func escaping(_ utf8: UnsafeBufferPointer<UInt8>, run: (UnsafeBufferPointer<UInt8>) -> Void, escape: (UInt8) -> Void) {
        var unescaped = 0
        var index = 0
        let raw = UnsafeRawBufferPointer(utf8)
        while index < utf8.count {
            if index + 8 <= utf8.count, !needsEscape(raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) {
                index += 8
                continue
            }
            let byte = utf8[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                run(UnsafeBufferPointer(rebasing: utf8[unescaped..<index]))
                escape(byte)
                unescaped = index + 1
            }
            index += 1
        }
        run(UnsafeBufferPointer(rebasing: utf8[unescaped...]))
    }

    /// Whether any of the eight bytes of `word` is a control byte, a quote or a backslash (the
    /// bytes JSON escapes). A byte below 0x20 borrows into its top bit when 0x20 is taken from
    /// it, as a byte equal to the quote or the backslash does once XORed with it and less one;
    /// `& ~word` leaves out bytes that had their top bit set (UTF-8 beyond ASCII). A borrow only
    /// runs on from a byte that matched, so the answer is exact.
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let tops: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let control = (word &- ones &* 0x20) & ~word
        return (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & tops != 0
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        Self.escapeSequence(of: byte) { bytes.append($0) }
    }

    /// The bytes of the escape sequence JSON writes for `byte`, one by one.
    @inline(__always)
    static func escapeSequence(of byte: UInt8, _ emit: (UInt8) -> Void) {
        emit(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): emit(byte)
        case UInt8(ascii: "\n"): emit(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): emit(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): emit(UInt8(ascii: "t"))
        case 0x08: emit(UInt8(ascii: "b"))
        case 0x0C: emit(UInt8(ascii: "f"))
        default:
            for digit in "u00".utf8 { emit(digit) }
            emit(hexDigit(byte >> 4))
            emit(hexDigit(byte & 0xF))
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    public mutating func integer<Value: BinaryInteger>(_ value: Value) {
        guard let value = Int64(exactly: value) else { return bytes.append(contentsOf: String(value).utf8) }
        // Digits written straight in: `String(value)` allocated a string per position and count.
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for UInt64's 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[index...]))
        }
    }

    public mutating func bool(_ value: Bool) {
        if value {
            bytes.append(contentsOf: "true".utf8)
        } else {
            bytes.append(contentsOf: "false".utf8)
        }
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
        // One copy from a ready line start: appending a repeated space went the slow generic way.
        let length = 1 + 2 * empty.count
        if length <= Self.indentedNewline.utf8CodeUnitCount {
            bytes.append(contentsOf: UnsafeBufferPointer(start: Self.indentedNewline.utf8Start, count: length))
        } else {
            bytes.append(UInt8(ascii: "\n"))
            bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: length - 1))
        }
    }

    /// A static string, not an array: reading a static array retained and released it each time.
    private static let indentedNewline: StaticString = "\n                                                                "
}
