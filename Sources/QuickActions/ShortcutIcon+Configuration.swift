/// Why a configuration value (such as `FavoriteIcon=`) does not name an icon.
public enum ShortcutIconConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    case missingKind(value: String)
    case unknownKind(value: String, kind: String)
    case emptyName(value: String)
    case unknownSystemType(value: String, type: String)

    /// One sentence naming the value and what is wrong with it.
    public var description: String {
        switch self {
        case .missingKind(let value):
            return "The icon \"\(value)\" has no kind; write \"symbol:NAME\", \"type:NAME\" (or \"system:NAME\"), \"themed:NAME\" or \"file:PATH\"."
        case .unknownKind(let value, let kind):
            return "The icon \"\(value)\" has the unknown kind \"\(kind)\"; expected \"symbol\", \"type\", \"system\", \"themed\" or \"file\"."
        case .emptyName(let value):
            return "The icon \"\(value)\" names nothing after the colon."
        case .unknownSystemType(let value, let type):
            return "The icon \"\(value)\" names the unknown icon type \"\(type)\"; expected one of \(SystemIconType.allSpellings)."
        }
    }
}

extension ShortcutIcon {
    /// Parses the configuration spelling: `symbol:star.fill`, `type:favorite`
    /// (or `system:favorite`, or UIKit's `type:UIApplicationShortcutIconTypeFavorite`)
    /// `themed:document-open` and `file:/path/icon.png`. The kind's case is ignored (`Symbol:star`), the name's
    /// is kept. This is the only icon-spelling parser: the daemon's `FavoriteIcon=`
    /// goes through it too, so what the configuration accepts is what can be shown.
    public init(configurationValue value: String) throws(ShortcutIconConfigurationError) {
        guard let colon = value.firstIndex(of: ":") else { throw .missingKind(value: value) }
        let kind = String(value[..<colon]).lowercased()
        let name = String(value[value.index(after: colon)...])
        guard !name.isEmpty else { throw .emptyName(value: value) }
        switch kind {
        case "symbol":
            self = .symbol(name)
        case "file":
            self = .templateFile(name)
        case "themed":
            self = .themed(name)
        case "type", "system":
            guard let type = SystemIconType(spelling: name) else {
                throw .unknownSystemType(value: value, type: name)
            }
            self = .system(type)
        default:
            throw .unknownKind(value: value, kind: String(value[..<colon]))
        }
    }

    /// The configuration spelling; `ShortcutIcon(configurationValue:)` reads it back.
    public var configurationValue: String {
        switch self {
        case .system(let type): return "type:\(type.rawValue)"
        case .symbol(let name): return "symbol:\(name)"
        case .templateFile(let path): return "file:\(path)"
        case .themed(let name): return "themed:\(name)"
        }
    }
}
