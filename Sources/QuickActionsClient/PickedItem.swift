import Contacts
import QuickActions

/// One item a person picked on the app's icon.
public struct PickedItem: Sendable {
    /// The item, with the `userInfo` the app gave it.
    public let item: ShortcutItem
    /// The favorite's contact, when the item is a favorite's.
    public let contact: Contact?
    /// True for the item the app was started for (it needs no answer); false for one picked
    /// while it runs.
    public let atLaunch: Bool
    let token: String?
    let app: QuickActionsApp

    /// Tells the daemon the pick was handled (or not); the launcher's `Trigger` waits for it,
    /// as iOS's completion handler. Does nothing for the item the app was started for.
    public func complete(handled: Bool = true) async throws {
        guard let token else { return }
        try await app.complete(token: token, handled: handled)
    }
}
