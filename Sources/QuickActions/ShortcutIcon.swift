/// The 29 `UIApplicationShortcutIconType` cases, spelled as in UIKit without the prefix.
public enum SystemIconType: String, CaseIterable, Hashable, Sendable, Codable {
    case compose, play, pause, add, location, search, share, prohibit, contact, home
    case markLocation, favorite, love, cloud, invitation, confirmation, mail, message
    case date, time, capturePhoto, captureVideo, task, taskCompleted, alarm, bookmark
    case shuffle, audio, update
}

/// The icon of a shortcut item. When a static item names several, the symbol
/// wins over the file and the file over the type, as iOS reads the same `Info.plist` keys.
public enum ShortcutIcon: Hashable, Sendable {
    case system(SystemIconType)
    case symbol(String)
    case templateFile(String)
    /// A name of the icon theme (the freedesktop Icon Naming Specification's, such as
    /// `document-open-recent`), shown as it is: what a Linux app names its own icons by.
    case themed(String)
}
