#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
        string(icon.kindName)
        key("name")
        string(icon.spelledName)
        endObject()
    }

    public mutating func write(_ item: ShortcutItem) throws(JSONTextError) {
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

    /// Writes `item` in one go when its `userInfo` is empty or a favorite's (as every dynamic
    /// item's is): written through a pointer into `scratch` and appended in one copy, where
    /// writing it piece by piece appended (and checked the array) some eighty times, and with
    /// each field read once where it lies, where the piecewise way copied (and
    /// reference-counted) each string several times. False, having written nothing, for other
    /// items and any too long for `scratch`.
    private mutating func writeWhole(_ item: ShortcutItem) -> Bool {
        let fields = item.fields
        var favorite: (contactIdentifier: String, appVersion: String)?
        switch fields.userInfo {
        case .favorite(let contactIdentifier, let appVersion): favorite = (contactIdentifier, appVersion)
        case .dictionary(let dictionary): guard dictionary.isEmpty else { return false }
        }
        let depth = self.depth
        if scratch.isEmpty { scratch = [UInt8](repeating: 0, count: Self.scratchSize) }
        let pretty = pretty
        let written = scratch.withUnsafeMutableBufferPointer { buffer -> Int? in
            let end = buffer.baseAddress! + buffer.count
            var text = UnsafeTextCursor(start: buffer.baseAddress!, pretty: pretty)
            // Whether a string of `count` bytes still fits, and the line it is on, and the lines
            // that close the item: six bytes a byte at most (`\u00XX`), two quotes, and per line
            // a comma, a new line, the indentation, a key of 21 bytes at most (`"contactIdentifier"`), its
            // colon and a brace; checked before each string, so the rest of a line always fits.
            func fits(_ count: Int) -> Bool { end - text.next >= 2 + 6 * count + 4 * (30 + 2 * (depth + 2)) }
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
            if let favorite {
                // The keys in sorted order.
                member(#""userInfo""#)
                text.byte(UInt8(ascii: "{"))
                text.newline(depth: depth + 2)
                text.bytes(#""appVersion""#)
                text.colon()
                guard value(favorite.appVersion) else { return nil }
                text.byte(UInt8(ascii: ","))
                text.newline(depth: depth + 2)
                text.bytes(#""contactIdentifier""#)
                text.colon()
                guard value(favorite.contactIdentifier) else { return nil }
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

    /// A listing's row.
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

extension QuickActionsListing: JSONTextRepresentable {
    public func jsonText(pretty: Bool) throws(JSONTextError) -> [UInt8] {
        var writer = JSONTextWriter(pretty: pretty, capacity: 256 + 300 * items.count)
        writer.beginObject()
        writer.key("generation")
        writer.integer(generation)
        try writer.array("items", of: items) { writer, row throws(JSONTextError) in try writer.write(row) }
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
        try writer.array("dynamicItems", of: dynamicItems) { writer, item throws(JSONTextError) in try writer.write(item) }
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
        return writer.bytes
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
