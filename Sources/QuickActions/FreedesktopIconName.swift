/// Icons by the freedesktop Icon Naming Specification (names Adwaita and hicolor themes have).
public enum FreedesktopIconName {
    /// One name for each of UIKit's 29 system icon types.
    public static func name(for type: SystemIconType) -> String {
        switch type {
        case .compose: "document-edit"
        case .play: "media-playback-start"
        case .pause: "media-playback-pause"
        case .add: "list-add"
        case .location: "find-location"
        case .search: "system-search"
        case .share: "document-send"
        case .prohibit: "process-stop"
        case .contact: "x-office-address-book"
        case .home: "go-home"
        case .markLocation: "mark-location"
        case .favorite: "starred"
        case .love: "emblem-favorite"
        case .cloud: "weather-overcast"
        case .invitation: "appointment-new"
        case .confirmation: "emblem-default"
        case .mail: "mail-unread"
        case .message: "user-available"
        case .date: "x-office-calendar"
        case .time: "preferences-system-time"
        case .capturePhoto: "camera-photo"
        case .captureVideo: "camera-video"
        case .task: "view-list-bullet"
        case .taskCompleted: "object-select"
        case .alarm: "alarm-symbolic"
        case .bookmark: "bookmark-new"
        case .shuffle: "media-playlist-shuffle"
        case .audio: "audio-x-generic"
        case .update: "software-update-available"
        }
    }

    /// SF Symbols names (by their first component) that have an obvious freedesktop twin.
    static let symbols: [String: String] = [
        "star": "starred", "heart": "emblem-favorite", "person": "avatar-default", "magnifyingglass": "system-search",
        "envelope": "mail-unread", "phone": "call-start", "message": "user-available", "bubble": "user-available",
        "calendar": "x-office-calendar", "clock": "preferences-system-time", "camera": "camera-photo",
        "video": "camera-video", "house": "go-home", "bookmark": "bookmark-new", "plus": "list-add",
        "play": "media-playback-start", "pause": "media-playback-pause", "location": "find-location",
        "mappin": "mark-location", "cloud": "weather-overcast", "checkmark": "object-select", "alarm": "alarm-symbolic",
        "shuffle": "media-playlist-shuffle", "music": "audio-x-generic", "square": "document-send",
    ]

    /// The icon of an action: the table for system types; a symbol by its first name
    /// component (`star.fill` → `starred`); an absolute file path as it is. Anything else
    /// (an unknown symbol, a file relative to an app bundle) takes `fallback`, the app's own icon.
    public static func icon(for icon: ShortcutIcon?, fallback: String?) -> String? {
        switch icon {
        case .system(let type)?: return name(for: type)
        case .symbol(let symbol)?:
            let first = symbol.split(separator: ".").first.map(String.init) ?? symbol
            return symbols[first] ?? fallback
        case .templateFile(let path)? where path.hasPrefix("/"): return path
        case .themed(let name)?: return name
        default: return fallback
        }
    }
}
