/// Why an app's own item, or its list of them, was refused. `field` names what is wrong as the
/// call spelled it (`items[2].title`, `item.icon.name`, `type`), so an app developer reads
/// which value to fix; nothing is changed by a refused call.
public enum AppItemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A field's value breaks a rule of `AppItemRules`; `reason` says which.
    case invalid(field: String, reason: String)
    /// More items than `AppItemRules.maxItems` were set at once.
    case tooMany(count: Int, maxItems: Int)
    /// No item of the app's own has this type.
    case noSuchItem(type: String)

    /// One sentence naming the field, the counts or the type.
    public var description: String {
        switch self {
        case .invalid(let field, let reason): "\(field): \(reason)"
        case .tooMany(let count, let maxItems): "\(count) items are more than the \(maxItems) an app may set (MaxAppItems=)."
        case .noSuchItem(let type): "The app has no item of type \"\(type)\"."
        }
    }
}

/// The rules an app's own dynamic items are checked by when they arrive, as Android's
/// `ShortcutManager` caps and checks an app's dynamic shortcuts. Each item's `type` is its
/// identity among the app's items (Android's shortcut ID): pushing an item of a type already
/// there replaces it, removing and reporting use name types.
public struct AppItemRules: Hashable, Sendable {
    /// How many items the app's list holds (`[Shortcuts] MaxAppItems=`).
    public var maxItems: Int

    /// A type, a title or a subtitle: the longest the other identifiers of the socket may be.
    public static let maxTextBytes = 1024
    /// A themed icon name is a file name in an icon theme.
    public static let maxIconNameBytes = 255
    /// An image's path, as Linux's `PATH_MAX`.
    public static let maxPathBytes = 4096
    /// The `userInfo` of one item, counted as `userInfoBytes` does: an app's handle on what the
    /// item opens (a path, an identifier), not the data itself; an image belongs in a file
    /// the icon names.
    public static let maxUserInfoBytes = 16 * 1024
    /// `userInfo` nested deeper than this is refused before anything recurses further.
    public static let maxUserInfoDepth = 16
    /// An icon image file: a launcher draws it at menu size, so a larger one is a mistake (or an
    /// attempt to make every dock read megabytes at each change).
    public static let maxImageBytes = 1 << 20

    /// Whether an icon image file's first bytes (at least 512, or the whole file) are an image a
    /// launcher draws: PNG, JPEG, or SVG (XML text with an `<svg` element near its start).
    public static func isImage(head: [UInt8]) -> Bool {
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return true }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return true }
        let text = String(decoding: head.prefix(512), as: UTF8.self)
        return text.contains("<svg")
    }

    /// Why an icon image file at `field` is refused, as `validate` says it: `size` its bytes, `head`
    /// its first bytes; nil when it is fine. The caller looks at the file (this type does no I/O).
    public static func imageProblem(size: Int, head: [UInt8], field: String) -> AppItemError? {
        if size > maxImageBytes {
            return .invalid(field: field, reason: "names an image of \(size) bytes; an icon image may be at most \(maxImageBytes) bytes")
        }
        if !isImage(head: head) {
            return .invalid(field: field, reason: "names a file that is not a PNG, JPEG or SVG image")
        }
        return nil
    }

    /// Rules allowing at most `maxItems` items (`[Shortcuts] MaxAppItems=`, 15 by default).
    public init(maxItems: Int = 15) {
        self.maxItems = maxItems
    }

    /// Checks a whole list, as `SetItems` sets it: at most `maxItems`, each item valid, no two of
    /// one type. `field` is the list's parameter name.
    public func validate(_ items: [ShortcutItem], field: String) throws(AppItemError) {
        guard items.count <= maxItems else { throw .tooMany(count: items.count, maxItems: maxItems) }
        var seen: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            try validate(item, field: "\(field)[\(index)]")
            if let earlier = seen.updateValue(index, forKey: item.type) {
                throw .invalid(field: "\(field)[\(index)].type", reason: "repeats the type of \(field)[\(earlier)]; each item's type is its identity")
            }
        }
    }

    /// Checks one item; `field` is how the call names it (`item`, `items[3]`).
    public func validate(_ item: ShortcutItem, field: String) throws(AppItemError) {
        try Self.validateText(item.type, field: "\(field).type")
        try Self.validateText(item.title, field: "\(field).title")
        if item.title.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
            throw .invalid(field: "\(field).title", reason: "is empty; a launcher shows the title")
        }
        if let subtitle = item.subtitle { try Self.validateText(subtitle, field: "\(field).subtitle", allowsEmpty: true) }
        if let icon = item.icon { try Self.validate(icon, field: "\(field).icon") }
        if item.userInfo[DynamicItemUserInfoKey.contactIdentifier] != nil {
            throw .invalid(
                field: "\(field).userInfo.\(DynamicItemUserInfoKey.contactIdentifier)",
                reason: "is kept for the favorites' items; name the app's own handle otherwise")
        }
        guard let bytes = Self.userInfoBytes(item.userInfo, within: Self.maxUserInfoBytes, depth: Self.maxUserInfoDepth),
              bytes <= Self.maxUserInfoBytes
        else {
            throw .invalid(
                field: "\(field).userInfo",
                reason: "is larger than \(Self.maxUserInfoBytes) bytes or nested deeper than \(Self.maxUserInfoDepth); keep a handle on the data, not the data")
        }
    }

    /// A type, title or subtitle becomes a desktop entry's value and a menu's label: no control
    /// characters (a NUL cannot be written there at all), within `maxTextBytes`.
    private static func validateText(_ text: String, field: String, allowsEmpty: Bool = false) throws(AppItemError) {
        if text.isEmpty, !allowsEmpty { throw .invalid(field: field, reason: "is empty") }
        if text.utf8.count > maxTextBytes { throw .invalid(field: field, reason: "is longer than \(maxTextBytes) bytes") }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .invalid(field: field, reason: "holds a control character")
        }
    }

    private static func validate(_ icon: ShortcutIcon, field: String) throws(AppItemError) {
        switch icon {
        case .system:
            return
        case .symbol(let name), .themed(let name):
            guard !name.isEmpty, name.utf8.count <= maxIconNameBytes,
                  name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "._-+".unicodeScalars.contains($0)) }),
                  name.first != "."
            else {
                throw .invalid(
                    field: "\(field).name",
                    reason: "is not an icon name (at most \(maxIconNameBytes) ASCII letters, digits, \".\", \"_\", \"-\" and \"+\", not beginning with \".\")")
            }
        case .templateFile(let path):
            guard path.hasPrefix("/"), path.utf8.count <= maxPathBytes,
                  !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                throw .invalid(field: "\(field).name", reason: "is not an image's absolute path of at most \(maxPathBytes) bytes")
            }
        }
    }

    /// The bytes a `userInfo` holds (keys, strings and data by their length, other values 8),
    /// nil once past `limit` or deeper than `depth`, so a hostile value stops the count early.
    static func userInfoBytes(_ userInfo: [String: PropertyListValue], within limit: Int, depth: Int) -> Int? {
        var total = 0
        for (key, value) in userInfo {
            total += key.utf8.count
            guard total <= limit, let bytes = valueBytes(value, within: limit - total, depth: depth) else { return nil }
            total += bytes
        }
        return total <= limit ? total : nil
    }

    private static func valueBytes(_ value: PropertyListValue, within limit: Int, depth: Int) -> Int? {
        guard depth > 0 else { return nil }
        let bytes: Int
        switch value {
        case .string(let string): bytes = string.utf8.count
        case .data(let data): bytes = data.count
        case .integer, .real, .bool, .date: bytes = 8
        case .array(let values):
            var total = 0
            for element in values {
                guard let elementBytes = valueBytes(element, within: limit - total, depth: depth - 1) else { return nil }
                total += elementBytes
            }
            bytes = total
        case .dictionary(let dictionary):
            guard let total = userInfoBytes(dictionary, within: limit, depth: depth - 1) else { return nil }
            bytes = total
        }
        return bytes <= limit ? bytes : nil
    }
}

/// The app's own dynamic items as a value: the list `SetItems` replaces, `PushItem` adds to and
/// `RemoveItems` takes from. Checked by `AppItemRules` before any change, so a refused call
/// changes nothing.
public struct AppItemList: Hashable, Sendable {
    /// The app's items, in the order it set them (a pushed one first).
    public private(set) var items: [ShortcutItem]

    /// A list holding `items` as they are (they were checked before).
    public init(_ items: [ShortcutItem] = []) {
        self.items = items
    }

    /// Replaces the whole list, as iOS's `shortcutItems = […]`.
    public mutating func set(_ newItems: [ShortcutItem], rules: AppItemRules) throws(AppItemError) {
        try rules.validate(newItems, field: "items")
        items = newItems
    }

    /// Puts `item` first, as Android's `pushDynamicShortcut`: an item of its type is replaced,
    /// and at `maxItems` the last one (the one pushed longest ago) makes room. Returns the
    /// types that made room.
    @discardableResult
    public mutating func push(_ item: ShortcutItem, rules: AppItemRules) throws(AppItemError) -> [String] {
        try rules.validate(item, field: "item")
        var kept = items.filter { $0.type != item.type }
        var dropped: [String] = []
        while kept.count >= max(1, rules.maxItems) { dropped.append(kept.removeLast().type) }
        items = [item] + kept
        return dropped
    }

    /// Removes the items of these types; a type the list does not hold is passed over, as
    /// Android's `removeDynamicShortcuts` does. Returns the types removed.
    public mutating func remove(types: [String]) -> [String] {
        let unwanted = Set(types)
        let removed = items.map(\.type).filter(unwanted.contains)
        items.removeAll { unwanted.contains($0.type) }
        return removed
    }

    /// The item of this type; `reportItemUsed` needs one.
    public func item(ofType type: String) -> ShortcutItem? {
        items.first { $0.type == type }
    }
}
