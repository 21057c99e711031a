import QuickActions
import QuickActionsProtocol

/// What the launcher exporters are handed after every change (`DaemonCore.publishToLaunchers`).
struct LauncherPublication: Equatable, Sendable {
    /// Exactly what `List` shows (static items first, then favorites, cut at the display
    /// limit; only static items before the first launch), in the daemon's language.
    var displayed: QuickActionsListing
    /// The same rows before translation: static titles are the keys of `localization`.
    var untranslated: QuickActionsListing
    var localization: Localization
    var configuration: DaemonConfiguration
    /// The socket this daemon serves, which every exported command names explicitly.
    var socketPath: String
    /// The pinned items, each a launcher of its own (static titles translated).
    var pins: [PinnedItem] = []
    /// The favorites shown (displayed or pinned) whose icon is their face; empty with
    /// `FavoriteFaces=no`.
    var faces: [FaceRequest] = []
    /// Counts changes to the cards of `faces`: a new count makes the faces be read again even
    /// when the contacts the index keeps (which have no photo) are the same.
    var faceCardChanges: UInt64 = 0
}
