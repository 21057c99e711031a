import Contacts

/// How a trigger names an item: by where the launcher showed it, or by its type (and, for a
/// favorite, its contact), which still names the same item when the list changed since.
public enum TriggerTarget: Hashable, Sendable {
    /// 1-based position among the displayed items.
    case position(Int)
    /// An item type; `contactIdentifier` picks among favorites sharing one type
    /// (nil means the first in order).
    case type(String, contactIdentifier: String?)
}

/// The raw values are the wire spelling (`delivery` in `Trigger`'s reply).
public enum TriggerDelivery: String, Hashable, Sendable, Codable {
    /// An app process is connected and is handed the action.
    case running = "running"
    /// No app is connected: the item waits as the pending launch item.
    case launch = "launch"
    /// The item's type has an `[Actions]` command: the daemon runs it, whether or not an app runs.
    case command = "command"
}

/// The item a trigger names, and how it is to be delivered.
public struct TriggerResolution: Hashable, Sendable {
    /// The item named.
    public var item: ShortcutItem
    /// The favorite's contact, for dynamic items.
    public var contact: Contact?
    /// The item was made for another app version than the current one: the app
    /// was updated and has not yet recomputed its set.
    public var stale: Bool
    /// How the item reaches the app or its command.
    public var delivery: TriggerDelivery

    /// A resolution with each field.
    public init(item: ShortcutItem, contact: Contact?, stale: Bool, delivery: TriggerDelivery) {
        self.item = item
        self.contact = contact
        self.stale = stale
        self.delivery = delivery
    }
}

/// Why a trigger names no item.
public enum TriggerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The associated text says which item was asked for and what exists.
    case noSuchShortcut(String)
    /// The favorite's contact is gone from the contacts directory.
    case contactRemoved(String)

    /// One sentence saying which item was asked for and why it cannot be.
    public var description: String {
        switch self {
        case .noSuchShortcut(let detail):
            return detail
        case .contactRemoved:
            return "This contact is no longer available"
        }
    }
}

extension TriggerTarget {
    /// Picks the item without side effects; `QuickActionsState.trigger` adds the
    /// contact check, staleness, usage and delivery.
    func select(in listing: [ListedShortcut]) -> Result<ListedShortcut, TriggerError> {
        switch self {
        case .position(let position):
            let displayed = listing.filter(\.displayed)
            guard let match = displayed.first(where: { $0.position == position }) else {
                let range = displayed.isEmpty ? "no shortcuts are displayed" : "displayed positions are 1 to \(displayed.count)"
                return .failure(.noSuchShortcut("No shortcut is displayed at position \(position); \(range)."))
            }
            return .success(match)
        case .type(let type, let contactIdentifier):
            // The display limit is ignored here: a launcher may offer an item by
            // type that did not fit on screen, but never one the app has not set.
            let candidates = listing.filter { $0.item.type == type }
            let match: ListedShortcut?
            if let contactIdentifier {
                match = candidates.first { $0.item.contactIdentifier == contactIdentifier }
            } else {
                match = candidates.first
            }
            guard let match else {
                let forContact = contactIdentifier.map { " for contact \"\($0)\"" } ?? ""
                return .failure(.noSuchShortcut("No shortcut of type \"\(type)\"\(forContact) is available."))
            }
            return .success(match)
        }
    }
}
