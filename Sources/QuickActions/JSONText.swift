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
    public private(set) var bytes: [UInt8] = []
    private let pretty: Bool
    /// Per open container: whether nothing was written into it yet.
    private var empty: [Bool] = []
    /// What a remembering writer (`reusing:`) recorded so far; unused otherwise.
    private var recorder = ItemTextRecorder()
    private var remembering = false
    /// Where `writeWhole` writes an item before appending it; allocated at the first.
    private var scratch: [UInt8] = []

    public init(pretty: Bool, capacity: Int = 0) {
        self.pretty = pretty
        bytes.reserveCapacity(capacity)
    }

    /// A writer that remembers where each `ShortcutItem` and listing row it writes lies, and
    /// copies one's text from `previous` (the texts of the document written before) when that
    /// document had the same at the same place in its order; `finishRemembering()` returns the texts.
    public init(pretty: Bool, capacity: Int = 0, reusing previous: ShortcutItemTexts) {
        self.init(pretty: pretty, capacity: capacity)
        recorder = ItemTextRecorder(previous: previous.pretty == pretty ? previous : ShortcutItemTexts(), pretty: pretty)
        remembering = true
    }

    /// A writer that continues a document inside `containers` open containers, the innermost
    /// last, each with something written into it already or not (`false`: empty so far): a
    /// part of a document written apart from the part before it.
    init(pretty: Bool, capacity: Int, continuingInside containers: [Bool]) {
        self.init(pretty: pretty, capacity: capacity)
        empty = containers
    }

    /// The text of `items` as elements of a state's `dynamicItems` array (each after a comma,
    /// but for the array's first, `first`), with each item's place: a part for
    /// `PersistedState.jsonText(pretty:itemParts:)`, written apart from the others.
    public static func dynamicItemsPart(_ items: ArraySlice<ShortcutItem>, first: Bool, pretty: Bool) throws(JSONTextError) -> ShortcutItemTexts {
        // Inside the state object and its `dynamicItems` array: the depth of every item in it.
        var writer = JSONTextWriter(pretty: pretty, capacity: 360 * items.count, continuingInside: [false, first])
        var texts = ShortcutItemTexts()
        texts.pretty = pretty
        texts.items.reserve(items.count)
        for item in items {
            writer.element()
            let start = writer.bytes.count
            try writer.writeEncoding(item)
            texts.items.record(item, at: .init(start: start, end: writer.bytes.count, depth: 2))
        }
        texts.segments = [writer.bytes]
        return texts
    }

    /// The finished document's item texts, for the next document's writer.
    public mutating func finishRemembering() -> ShortcutItemTexts {
        guard remembering else { return ShortcutItemTexts() }
        remembering = false
        recorder.current.segments = [bytes]
        return recorder.current
    }

    /// A newline after the document.
    public mutating func endLine() {
        precondition(empty.isEmpty, "a line ends after the document, not inside it")
        bytes.append(UInt8(ascii: "\n"))
    }

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
        if dictionary.count == 2 {
            // A dynamic item's `userInfo`: two entries, read once each.
            var entries = dictionary.makeIterator()
            if let first = entries.next(), let second = entries.next() {
                let (low, high) = first.key < second.key ? (first, second) : (second, first)
                key(low.key)
                try write(low.value)
                key(high.key)
                try write(high.value)
            }
        } else if dictionary.count <= 8 {
            // A dynamic item's few `userInfo` keys in sorted order by picking the next smallest
            // each time: sorting allocated an array of pairs per item.
            var previous: String?
            for _ in 0..<dictionary.count {
                var next: Dictionary<String, PropertyListValue>.Index?
                for index in dictionary.indices {
                    let key = dictionary[index].key
                    if let previous, key <= previous { continue }
                    if let best = next, dictionary[best].key <= key { continue }
                    next = index
                }
                guard let next else { break }
                let (key, value) = dictionary[next]
                self.key(key)
                try write(value)
                previous = key
            }
        } else {
            for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
                self.key(key)
                try write(value)
            }
        }
        endObject()
    }

    public mutating func write(_ icon: ShortcutIcon) {
        beginObject()
        key("kind")
        string(icon.kindName)
        key("name")
        string(icon.spelledName)
        endObject()
    }

    public mutating func write(_ item: ShortcutItem) throws(JSONTextError) {
        guard remembering else { return try writeEncoding(item) }
        let depth = empty.count
        let start = bytes.count
        if let index = recorder.previous.items.take(item, depth: depth, cursor: &recorder.itemCursor) {
            copyPrevious(recorder.previous.items.places[index])
        } else {
            try writeEncoding(item)
        }
        recorder.current.items.record(item, at: .init(start: start, end: bytes.count, depth: depth))
    }

    private mutating func copyPrevious(_ place: ShortcutItemTexts.Place) {
        let text = recorder.previous.segments[place.segment]
        text.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[place.start..<place.end])) }
        recorder.current.copiedCount += 1
    }

    mutating func writeEncoding(_ item: ShortcutItem) throws(JSONTextError) {
        if writeWhole(item) { return }
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

    /// Writes `item` in one go when its `userInfo` holds at most two entries, both strings (as
    /// every dynamic item's does): written through a pointer into `scratch` and appended in one
    /// copy, where writing it piece by piece appended (and checked the array) some eighty times,
    /// and with each field read once where it lies, where the piecewise way copied (and
    /// reference-counted) each string and the dictionary's entries several times. False,
    /// having written nothing, for other items and any too long for `scratch`.
    private mutating func writeWhole(_ item: ShortcutItem) -> Bool {
        let fields = item.fields
        guard fields.userInfo.count <= 2 else { return false }
        let depth = empty.count
        if scratch.isEmpty { scratch = [UInt8](repeating: 0, count: Self.scratchSize) }
        let pretty = pretty
        let written = scratch.withUnsafeMutableBufferPointer { buffer -> Int? in
            let end = buffer.baseAddress! + buffer.count
            var text = UnsafeTextCursor(start: buffer.baseAddress!, pretty: pretty)
            // Whether a string of `count` bytes still fits, and the line it is on, and the lines
            // that close the item: six bytes a byte at most (`\u00XX`), two quotes, and per line
            // a comma, a new line, the indentation, a key of ten bytes at most, its colon and a
            // brace; checked before each string, so the rest of a line always fits.
            func fits(_ count: Int) -> Bool { end - text.next >= 2 + 6 * count + 4 * (20 + 2 * (depth + 2)) }
            var firstMember = true
            func member(_ key: StaticString) {
                if !firstMember { text.byte(UInt8(ascii: ",")) }
                firstMember = false
                text.newline(depth: depth + 1)
                text.bytes(key)
                text.colon()
            }
            func value(_ string: String) -> Bool {
                guard fits(string.utf8.count) else { return false }
                text.string(string)
                return true
            }
            text.byte(UInt8(ascii: "{"))
            if let icon = fields.icon {
                member(#""icon""#)
                text.byte(UInt8(ascii: "{"))
                text.newline(depth: depth + 2)
                text.bytes(#""kind""#)
                text.colon()
                text.bytes(icon.kindText)
                text.byte(UInt8(ascii: ","))
                text.newline(depth: depth + 2)
                text.bytes(#""name""#)
                text.colon()
                guard value(icon.spelledName) else { return nil }
                text.newline(depth: depth + 1)
                text.byte(UInt8(ascii: "}"))
            }
            if let subtitle = fields.subtitle {
                member(#""subtitle""#)
                guard value(subtitle) else { return nil }
            }
            member(#""title""#)
            guard value(fields.title) else { return nil }
            member(#""type""#)
            guard value(fields.type) else { return nil }
            let userInfo = fields.userInfo
            if !userInfo.isEmpty {
                member(#""userInfo""#)
                text.byte(UInt8(ascii: "{"))
                // Each entry read once, the keys in sorted order without sorting (an array per item).
                let first = userInfo[userInfo.startIndex]
                let next = userInfo.index(after: userInfo.startIndex)
                let second = next == userInfo.endIndex ? nil : userInfo[next]
                func entry(_ entry: (key: String, value: PropertyListValue)) -> Bool {
                    guard case .string(let string) = entry.value else { return false }
                    text.newline(depth: depth + 2)
                    guard value(entry.key) else { return false }
                    text.colon()
                    return value(string)
                }
                if let second, second.key < first.key {
                    guard entry(second) else { return nil }
                    text.byte(UInt8(ascii: ","))
                    guard entry(first) else { return nil }
                } else {
                    guard entry(first) else { return nil }
                    if let second {
                        text.byte(UInt8(ascii: ","))
                        guard entry(second) else { return nil }
                    }
                }
                text.newline(depth: depth + 1)
                text.byte(UInt8(ascii: "}"))
            }
            text.newline(depth: depth)
            text.byte(UInt8(ascii: "}"))
            return text.next - buffer.baseAddress!
        }
        guard let written else { return false }
        scratch.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<written])) }
        return true
    }

    /// Room for one item written whole; larger ones are written piece by piece.
    private static var scratchSize: Int { 4096 }

    /// A listing's row; with a recorder, copied whole when the previous listing had the same
    /// row (item, place, display) at its place in the order, else written with its item copied
    /// when only the row's position moved.
    public mutating func write(_ row: ListedShortcut) throws(JSONTextError) {
        guard remembering else { return try writeEncoding(row) }
        let depth = empty.count
        let start = bytes.count
        let itemStart: Int
        if let index = recorder.previous.rows.take(row, depth: depth, cursor: &recorder.rowCursor) {
            let place = recorder.previous.rows.places[index]
            copyPrevious(place)
            // The row's item is recorded too, so a later listing where rows moved copies it.
            itemStart = start + place.itemOffset
            recorder.current.items.record(row.item, at: .init(start: itemStart, end: itemStart + place.itemLength, depth: depth + 1))
            recorder.itemCursor = place.itemIndex + 1
        } else {
            try writeEncoding(row)
            itemStart = recorder.current.items.places[recorder.current.items.count - 1].start
        }
        let item = recorder.current.items.places[recorder.current.items.count - 1]
        recorder.current.rows.record(row, at: .init(
            start: start, end: bytes.count, depth: depth, itemIndex: recorder.current.items.count - 1,
            itemOffset: itemStart - start, itemLength: item.end - item.start))
    }

    private mutating func writeEncoding(_ row: ListedShortcut) throws(JSONTextError) {
        beginObject()
        key("displayed")
        bool(row.displayed)
        key("item")
        try write(row.item)
        key("position")
        integer(row.position)
        key("source")
        string(row.source.rawValue)
        if let usage = row.usage {
            key("usage")
            beginObject()
            key("lastUsed")
            integer(usage.lastUsed)
            key("score")
            try real(usage.score)
            endObject()
        }
        endObject()
    }
}

/// Where each shortcut item (and each listing row) of one encoded document lies in its text,
/// so the next document copies the text of every item and row that did not change: when one
/// favorite of a thousand changes, encoding all of them again — once for the watchers, once for
/// the state file — would be most of the edit's cost. Elements are matched by their place in
/// the order, not looked up by value: a favorite added, removed or edited shifts the match by
/// one at most, and the check is one comparison of equal values (which share storage, so it is
/// quick), not hashing: hashing whole items costs more than encoding them, so a dictionary
/// keyed by items would save nothing.
public struct ShortcutItemTexts: Sendable {
    struct Place: Sendable {
        /// Which of the document's segments holds it, and where in that segment.
        var segment = 0
        var start: Int
        var end: Int
        /// Pretty text is indented for the depth it was written at.
        var depth: Int
        /// For a row: its item's index among the items, and where the item lies within the row.
        var itemIndex = 0
        var itemOffset = 0
        var itemLength = 0
    }

    /// Elements of one kind in the order written, each with its place.
    struct Elements<Element: Equatable & Sendable>: Sendable {
        private(set) var elements: [Element] = []
        private(set) var places: [Place] = []

        var count: Int { elements.count }

        mutating func reserve(_ count: Int) {
            elements.reserveCapacity(count)
            places.reserveCapacity(count)
        }

        mutating func record(_ element: Element, at place: Place) {
            elements.append(element)
            places.append(place)
        }

        /// The index of an element equal to `element`, written at `depth`, at `cursor` or the
        /// one after it (the one at `cursor` was removed or changed); moves the cursor past it.
        func take(_ element: Element, depth: Int, cursor: inout Int) -> Int? {
            for candidate in cursor..<min(cursor + 2, elements.count) where places[candidate].depth == depth && elements[candidate] == element {
                cursor = candidate + 1
                return candidate
            }
            return nil
        }
    }

    var items = Elements<ShortcutItem>()
    var rows = Elements<ListedShortcut>()
    /// The document's text: one segment as a writer wrote it, or its parts written apart
    /// (`joined`), in order, which are written to a file as they are rather than copied together.
    public internal(set) var segments: [[UInt8]] = []
    var pretty = false

    public init() {}

    /// Items whose text could not be written: no document's part.
    init(itemsWithoutText items: [ShortcutItem]) {
        for item in items { self.items.record(item, at: .init(start: 0, end: 0, depth: 0)) }
    }

    /// The items, in order.
    public var elements: [ShortcutItem] { items.elements }

    /// A part of a document's text that holds no items.
    init(text: [UInt8], pretty: Bool) {
        segments = [text]
        self.pretty = pretty
    }

    /// How many items' text this document leaves for the next.
    public var count: Int { items.count }
    /// How many items and rows were copied from the document before rather than written.
    public internal(set) var copiedCount = 0

    /// The texts of a document's consecutive parts (`PersistedState.jsonText(pretty:itemParts:)`) as one
    /// document's: their segments in order, not copied into one.
    public static func joined(_ parts: [ShortcutItemTexts]) -> ShortcutItemTexts {
        var joined = ShortcutItemTexts()
        joined.pretty = parts.first?.pretty ?? false
        joined.items.reserve(parts.reduce(0) { $0 + $1.items.count })
        for part in parts {
            let first = joined.segments.count
            joined.segments += part.segments
            for (element, place) in zip(part.items.elements, part.items.places) {
                var place = place
                place.segment += first
                joined.items.record(element, at: place)
            }
        }
        return joined
    }

    /// Whether few of `items` are at their place among this document's items (sampled at up
    /// to 16 places): most of them must then be encoded anew rather than copied.
    public func sharesFewItems(with items: [ShortcutItem]) -> Bool {
        guard !items.isEmpty else { return false }
        let samples = min(16, items.count)
        var shared = 0
        for sample in 0..<samples {
            let index = sample * items.count / samples
            if index < self.items.count && self.items.elements[index] == items[index] { shared += 1 }
        }
        return shared * 2 < samples
    }
}

/// A writer's record of what it wrote and its place in the previous document. Kept in the
/// writer as a plain stored value, changed in place: taken out of an optional and put back per
/// item, it would retain and release every array it holds each time; as a class, every access
/// would pay a dynamic exclusivity check.
struct ItemTextRecorder {
    var previous = ShortcutItemTexts()
    var itemCursor = 0
    var rowCursor = 0
    var current = ShortcutItemTexts()

    init() {}

    init(previous: ShortcutItemTexts, pretty: Bool) {
        self.previous = previous
        current.pretty = pretty
        current.items.reserve(previous.items.count)
        current.rows.reserve(previous.rows.count)
    }
}

/// A document holding shortcut items, whose text can reuse the previous document's item texts.
public protocol ShortcutItemsJSONText: JSONTextRepresentable {
    func write(into writer: inout JSONTextWriter) throws(JSONTextError)
    var itemCountHint: Int { get }
}

extension ShortcutItemsJSONText {
    public func jsonText(pretty: Bool) throws(JSONTextError) -> [UInt8] {
        var writer = JSONTextWriter(pretty: pretty, capacity: 256 + 300 * itemCountHint)
        try write(into: &writer)
        return writer.bytes
    }

    /// The same text as `jsonText(pretty:)`, copying unchanged items from `itemTexts` (the
    /// texts of the document written before), which it replaces with this document's.
    /// `lineEnd`: a newline after the document (a file's last line), written before the texts
    /// are kept, so adding it after would not copy the whole text.
    public func jsonText(pretty: Bool, itemTexts: inout ShortcutItemTexts, lineEnd: Bool = false) throws(JSONTextError) -> [UInt8] {
        // Room for the previous document's size too: growing a state file's buffer copied it all again.
        let previousSize = itemTexts.segments.reduce(0) { $0 + $1.count }
        let capacity = max(256 + 300 * itemCountHint, previousSize + previousSize / 8)
        var writer = JSONTextWriter(pretty: pretty, capacity: capacity, reusing: itemTexts)
        try write(into: &writer)
        if lineEnd { writer.endLine() }
        itemTexts = writer.finishRemembering()
        return writer.bytes
    }
}

extension QuickActionsListing: ShortcutItemsJSONText {
    public var itemCountHint: Int { items.count }

    public func write(into writer: inout JSONTextWriter) throws(JSONTextError) {
        writer.beginObject()
        writer.key("generation")
        writer.integer(generation)
        try writer.array("items", of: items) { writer, row throws(JSONTextError) in try writer.write(row) }
        writer.key("launched")
        writer.bool(launched)
        writer.endObject()
    }
}

extension PersistedState: ShortcutItemsJSONText {
    public var itemCountHint: Int { dynamicItems.count }

    public func write(into writer: inout JSONTextWriter) throws(JSONTextError) {
        writeBeforeDynamicItems(into: &writer)
        try writer.array("dynamicItems", of: dynamicItems) { writer, item throws(JSONTextError) in try writer.write(item) }
        try writeAfterDynamicItems(into: &writer)
    }

    /// The text `jsonText(pretty:)` writes, with the dynamic items' texts taken from `itemParts`
    /// (`JSONTextWriter.dynamicItemsPart`, in order): what comes before the items and what after
    /// them (with `lineEnd` a newline) are written around the parts, which are not copied. The
    /// texts are the document's, and the item texts it leaves for the next document. Nil when
    /// the parts do not hold exactly this state's items, or were written in the other layout.
    /// A large set of new items (the app's version changed) is written in parts at once, on
    /// several threads, as it is derived.
    public func jsonText(pretty: Bool, itemParts: [ShortcutItemTexts], lineEnd: Bool = false) throws(JSONTextError) -> ShortcutItemTexts? {
        var index = 0
        for part in itemParts {
            guard part.pretty == pretty, part.segments.count == 1, index + part.items.count <= dynamicItems.count,
                  part.items.elements.elementsEqual(dynamicItems[index..<(index + part.items.count)])
            else { return nil }
            index += part.items.count
        }
        guard index == dynamicItems.count, !dynamicItems.isEmpty else { return nil }
        var head = JSONTextWriter(pretty: pretty, capacity: 256)
        writeBeforeDynamicItems(into: &head)
        head.key("dynamicItems")
        head.beginArray()
        // Inside the state object and its `dynamicItems` array, which has items.
        var tail = JSONTextWriter(pretty: pretty, capacity: 256, continuingInside: [false, false])
        tail.endArray()
        try writeAfterDynamicItems(into: &tail)
        if lineEnd { tail.endLine() }
        return ShortcutItemTexts.joined([ShortcutItemTexts(text: head.bytes, pretty: pretty)] + itemParts + [ShortcutItemTexts(text: tail.bytes, pretty: pretty)])
    }

    private func writeBeforeDynamicItems(into writer: inout JSONTextWriter) {
        writer.beginObject()
        writer.key("appVersion")
        writer.string(appVersion)
    }

    /// The members after `dynamicItems`, and the end of the state object.
    private func writeAfterDynamicItems(into writer: inout JSONTextWriter) throws(JSONTextError) {
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
        if !pins.isEmpty {
            try writer.array("pins", of: pins) { writer, pin throws(JSONTextError) in
                writer.beginObject()
                writer.key("identifier")
                writer.string(pin.identifier)
                writer.key("item")
                try writer.write(pin.item)
                writer.key("state")
                writer.string(pin.state.rawValue)
                writer.endObject()
            }
        }
        writer.key("usageCounts")
        writer.beginObject()
        for (key, count) in usageCounts.sorted(by: { $0.key < $1.key }) {
            writer.key(key)
            writer.integer(count)
        }
        writer.endObject()
        if !usageTimes.isEmpty {
            writer.key("usageTimes")
            writer.beginObject()
            for (key, times) in usageTimes.sorted(by: { $0.key < $1.key }) {
                try writer.array(key, of: times) { writer, time in writer.integer(time) }
            }
            writer.endObject()
        }
        writer.endObject()
    }
}

extension ShortcutIcon {
    /// The `kind` and `name` of its JSON text, key for key as in Codable.swift.
    fileprivate var kindName: String {
        switch self {
        case .system: "system"
        case .symbol: "symbol"
        case .templateFile: "file"
        }
    }

    /// `kindName` as JSON text, quotes and all.
    fileprivate var kindText: StaticString {
        switch self {
        case .system: #""system""#
        case .symbol: #""symbol""#
        case .templateFile: #""file""#
        }
    }

    fileprivate var spelledName: String {
        switch self {
        case .system(let type): type.rawValue
        case .symbol(let name), .templateFile(let name): name
        }
    }
}


/// Writes JSON text through a pointer into memory its user measured to be large enough.
private struct UnsafeTextCursor {
    private(set) var next: UnsafeMutablePointer<UInt8>
    let pretty: Bool

    init(start: UnsafeMutablePointer<UInt8>, pretty: Bool) {
        next = start
        self.pretty = pretty
    }

    mutating func byte(_ byte: UInt8) {
        next.pointee = byte
        next += 1
    }

    mutating func bytes(_ text: StaticString) {
        next.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
        next += text.utf8CodeUnitCount
    }

    mutating func bytes(_ run: UnsafeBufferPointer<UInt8>) {
        guard let base = run.baseAddress else { return }
        next.update(from: base, count: run.count)
        next += run.count
    }

    /// A new line indented for `depth` open containers; nothing in compact text.
    mutating func newline(depth: Int) {
        guard pretty else { return }
        byte(UInt8(ascii: "\n"))
        next.update(repeating: UInt8(ascii: " "), count: 2 * depth)
        next += 2 * depth
    }

    mutating func colon() {
        if pretty { bytes(" : ") } else { byte(UInt8(ascii: ":")) }
    }

    mutating func string(_ text: String) {
        byte(UInt8(ascii: "\""))
        if text.utf8.withContiguousStorageIfAvailable({ escaping($0) }) == nil {
            var text = text
            text.withUTF8 { escaping($0) }
        }
        byte(UInt8(ascii: "\""))
    }

    private mutating func escaping(_ utf8: UnsafeBufferPointer<UInt8>) {
        JSONTextWriter.escaping(utf8, run: { bytes($0) }, escape: { JSONTextWriter.escapeSequence(of: $0) { byte($0) } })
    }
}
