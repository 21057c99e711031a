/// The static quick actions read from an `Info.plist`-compatible file, so an iOS app's
/// `UIApplicationShortcutItems` can be used as they are.
public struct StaticItemsFile: Hashable, Sendable {
    /// The key of the array of static items.
    public static let shortcutItemsKey = "UIApplicationShortcutItems"
    /// The key of the app's version in a whole Info.plist.
    public static let appVersionKey = "CFBundleShortVersionString"
    /// The key of the language a missing translation falls back to.
    public static let developmentRegionKey = "CFBundleDevelopmentRegion"

    /// The keys of one item's dictionary.
    public enum ItemKey {
        /// The item's type (required).
        public static let type = "UIApplicationShortcutItemType"
        /// The item's title (required).
        public static let title = "UIApplicationShortcutItemTitle"
        /// The item's subtitle.
        public static let subtitle = "UIApplicationShortcutItemSubtitle"
        /// A system icon type (`UIApplicationShortcutIconTypeCompose`).
        public static let iconType = "UIApplicationShortcutItemIconType"
        /// An image file's path, for the icon.
        public static let iconFile = "UIApplicationShortcutItemIconFile"
        /// A symbol name, for the icon.
        public static let iconSymbolName = "UIApplicationShortcutItemIconSymbolName"
        /// The item's `userInfo` dictionary.
        public static let userInfo = "UIApplicationShortcutItemUserInfo"
    }

    /// The static items, in the file's order.
    public var items: [ShortcutItem]
    /// `CFBundleShortVersionString`, when the file is a whole Info.plist that has one.
    public var appVersion: String?
    /// `CFBundleDevelopmentRegion`: the language a missing translation falls back to first.
    public var developmentRegion: String?

    /// A file's contents with each field.
    public init(items: [ShortcutItem], appVersion: String? = nil, developmentRegion: String? = nil) {
        self.items = items
        self.appVersion = appVersion
        self.developmentRegion = developmentRegion
    }

    /// Decodes a whole Info.plist (other keys ignored), a plist holding just the
    /// `UIApplicationShortcutItems` array, or a bare `<key>UIApplicationShortcutItems</key><array>…`
    /// fragment. `fileName` only labels errors.
    public static func decode(_ bytes: [UInt8], fileName: String) throws(StaticItemsError) -> StaticItemsFile {
        let root: PropertyListValue
        do {
            root = try PropertyListParser.parse(bytes)
        } catch {
            throw .unreadable(fileName: fileName, error)
        }
        let itemValues: [PropertyListValue]
        var appVersion: String?
        var developmentRegion: String?
        switch root {
        case .array(let array):
            itemValues = array
        case .dictionary(let dictionary):
            guard let value = dictionary[shortcutItemsKey] else {
                throw .missingShortcutItems(fileName: fileName)
            }
            guard case .array(let array) = value else {
                throw .shortcutItemsNotArray(fileName: fileName, found: value.kindDescription)
            }
            itemValues = array
            switch dictionary[appVersionKey] {
            case nil: break
            case .string(let version): appVersion = version
            case let other?:
                throw .appVersionNotString(fileName: fileName, found: other.kindDescription)
            }
            // Only a fallback for translations, so a value of another kind is ignored, not fatal.
            if case .string(let region)? = dictionary[developmentRegionKey], !region.isEmpty {
                developmentRegion = region
            }
        default:
            throw .rootNotDictionaryOrArray(fileName: fileName, found: root.kindDescription)
        }
        var items: [ShortcutItem] = []
        items.reserveCapacity(itemValues.count)
        for (index, value) in itemValues.enumerated() {
            do {
                items.append(try decodeItem(value))
            } catch {
                throw .invalidItem(fileName: fileName, index: index, problem: error)
            }
        }
        return StaticItemsFile(items: items, appVersion: appVersion, developmentRegion: developmentRegion)
    }

    /// The build settings a static item's type may name, as Xcode writes them.
    public static let bundleIdentifierSettings = ["$(PRODUCT_BUNDLE_IDENTIFIER)", "${PRODUCT_BUNDLE_IDENTIFIER}"]

    /// The file with `$(PRODUCT_BUNDLE_IDENTIFIER)` (or `${…}`) in each type replaced by
    /// `bundleIdentifier`; an empty identifier leaves the types as they are.
    public func expandingBuildSettings(bundleIdentifier: String) -> StaticItemsFile {
        guard !bundleIdentifier.isEmpty else { return self }
        var expanded = self
        expanded.items = items.map { item in
            var type = item.type
            for setting in Self.bundleIdentifierSettings {
                type = type.replacingAll(setting, with: bundleIdentifier)
            }
            return ShortcutItem(type: type, title: item.title, subtitle: item.subtitle, icon: item.icon, userInfo: item.userInfo)
        }
        return expanded
    }

    /// Each item (0-based index) whose type still holds a build setting (`$(…)` or `${…}`),
    /// with the setting as written: Xcode would have expanded it, so here it is a mistake.
    public var unexpandedBuildSettings: [(index: Int, setting: String)] {
        items.enumerated().compactMap { index, item in
            item.type.firstBuildSetting().map { (index: index, setting: $0) }
        }
    }

    private static func decodeItem(_ value: PropertyListValue) throws(StaticItemProblem) -> ShortcutItem {
        guard case .dictionary(let entries) = value else {
            throw .notADictionary(found: value.kindDescription)
        }
        func string(_ key: String, required: Bool) throws(StaticItemProblem) -> String? {
            guard let value = entries[key] else {
                if required { throw .missingKey(key) }
                return nil
            }
            guard case .string(let string) = value else {
                throw .wrongType(key: key, expected: "a string", found: value.kindDescription)
            }
            if required, string.isEmpty { throw .emptyString(key: key) }
            return string
        }
        // The type is checked first so the message for a completely empty item names it.
        guard let type = try string(ItemKey.type, required: true),
              let title = try string(ItemKey.title, required: true)
        else { throw .missingKey(ItemKey.type) }
        let subtitle = try string(ItemKey.subtitle, required: false)
        let iconTypeSpelling = try string(ItemKey.iconType, required: false)
        let iconFile = try string(ItemKey.iconFile, required: false)
        let symbolName = try string(ItemKey.iconSymbolName, required: false)
        // Every icon key is validated even when a higher-priority one wins, so a
        // typo in a fallback icon type is not hidden until the symbol is removed.
        var systemIcon: SystemIconType?
        if let iconTypeSpelling {
            guard let type = SystemIconType(spelling: iconTypeSpelling) else {
                throw .unknownIconType(iconTypeSpelling)
            }
            systemIcon = type
        }
        if iconFile?.isEmpty == true { throw .emptyString(key: ItemKey.iconFile) }
        if symbolName?.isEmpty == true { throw .emptyString(key: ItemKey.iconSymbolName) }
        let icon: ShortcutIcon?
        if let symbolName {
            icon = .symbol(symbolName)
        } else if let iconFile {
            icon = .templateFile(iconFile)
        } else {
            icon = systemIcon.map(ShortcutIcon.system)
        }
        var userInfo: [String: PropertyListValue] = [:]
        if let value = entries[ItemKey.userInfo] {
            guard case .dictionary(let dictionary) = value else {
                throw .wrongType(key: ItemKey.userInfo, expected: "a dictionary", found: value.kindDescription)
            }
            userInfo = dictionary
        }
        return ShortcutItem(type: type, title: title, subtitle: subtitle, icon: icon, userInfo: userInfo)
    }
}

/// What is wrong with one entry of `UIApplicationShortcutItems`.
public enum StaticItemProblem: Error, Hashable, Sendable, CustomStringConvertible {
    case notADictionary(found: String)
    case missingKey(String)
    case wrongType(key: String, expected: String, found: String)
    case emptyString(key: String)
    case unknownIconType(String)

    /// The key the problem is about, if any.
    public var key: String? {
        switch self {
        case .notADictionary: return nil
        case .missingKey(let key), .wrongType(let key, _, _), .emptyString(let key): return key
        case .unknownIconType: return StaticItemsFile.ItemKey.iconType
        }
    }

    /// One sentence naming the key and what is wrong.
    public var description: String {
        switch self {
        case .notADictionary(let found):
            return "expected a dictionary but found \(found)"
        case .missingKey(let key):
            return "\(key): the required key is missing"
        case .wrongType(let key, let expected, let found):
            return "\(key): expected \(expected) but found \(found)"
        case .emptyString(let key):
            return "\(key): must not be empty"
        case .unknownIconType(let spelling):
            return "\(StaticItemsFile.ItemKey.iconType): unknown icon type \"\(spelling)\"; expected one of \(SystemIconType.allSpellings)"
        }
    }
}

/// Why a static-items file was refused; every case names the file, and item
/// problems name the item (1-based, as a user counts) with its array index and key.
public enum StaticItemsError: Error, Hashable, Sendable, CustomStringConvertible {
    case unreadable(fileName: String, PropertyListError)
    case rootNotDictionaryOrArray(fileName: String, found: String)
    case missingShortcutItems(fileName: String)
    case shortcutItemsNotArray(fileName: String, found: String)
    case appVersionNotString(fileName: String, found: String)
    /// `index` is the 0-based position in the `UIApplicationShortcutItems` array.
    case invalidItem(fileName: String, index: Int, problem: StaticItemProblem)

    /// The file the error is about.
    public var fileName: String {
        switch self {
        case .unreadable(let fileName, _), .rootNotDictionaryOrArray(let fileName, _),
             .missingShortcutItems(let fileName), .shortcutItemsNotArray(let fileName, _),
             .appVersionNotString(let fileName, _), .invalidItem(let fileName, _, _):
            return fileName
        }
    }

    /// One sentence beginning with the file's name.
    public var description: String {
        let items = StaticItemsFile.shortcutItemsKey
        switch self {
        case .unreadable(let fileName, let error):
            return "\(fileName): \(error)"
        case .rootNotDictionaryOrArray(let fileName, let found):
            return "\(fileName): expected a dictionary holding \(items), or the array itself, at the top level but found \(found)."
        case .missingShortcutItems(let fileName):
            return "\(fileName): the key \(items) is missing."
        case .shortcutItemsNotArray(let fileName, let found):
            return "\(fileName): \(items): expected an array but found \(found)."
        case .appVersionNotString(let fileName, let found):
            return "\(fileName): \(StaticItemsFile.appVersionKey): expected a string but found \(found)."
        case .invalidItem(let fileName, let index, let problem):
            return "\(fileName): item \(index + 1) (\(items)[\(index)]): \(problem)."
        }
    }
}

extension PropertyListValue {
    /// "a string", "an integer", … for error messages.
    public var kindDescription: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .real: return "a real"
        case .bool: return "a boolean"
        case .date: return "a date"
        case .data: return "data"
        case .array: return "an array"
        case .dictionary: return "a dictionary"
        }
    }
}

extension String {
    /// The first `$(NAME)` or `${NAME}` in the string, as written.
    fileprivate func firstBuildSetting() -> String? {
        var index = startIndex
        while let dollar = self[index...].firstIndex(of: "$") {
            let open = self.index(after: dollar)
            guard open < endIndex else { return nil }
            let close: Character? = self[open] == "(" ? ")" : self[open] == "{" ? "}" : nil
            if let close, let end = self[open...].firstIndex(of: close), self.index(after: open) < end {
                return String(self[dollar...end])
            }
            index = open
        }
        return nil
    }
}
