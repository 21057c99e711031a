import Contacts
import QuickActions

/// `Trigger` (and `Pin`): an item by displayed position, by type (plus a favorite's contact identifier), or a
/// pin's launcher; exactly one of `position`, `type` and `pinned`.
public struct TriggerParameters: Codable, Sendable, Equatable {
    /// The item's 1-based position among the displayed ones.
    public var position: Int?
    /// The item's type.
    public var type: String?
    /// With `type`: the favorite's contact identifier.
    public var contactIdentifier: String?
    /// A pin's identifier: the launcher of a pinned item was chosen.
    public var pinned: String?
    /// Parameters naming the item one way.
    public init(position: Int? = nil, type: String? = nil, contactIdentifier: String? = nil, pinned: String? = nil) {
        self.position = position
        self.type = type
        self.contactIdentifier = contactIdentifier
        self.pinned = pinned
    }
}

/// The reply of `Trigger`: the item, how it was delivered, and what came of it.
public struct TriggerReply: Codable, Sendable, Equatable {
    /// What became of the `LaunchCommand` on a `launch` delivery.
    public enum LaunchStatus: String, Codable, Sendable {
        /// The command was started.
        case started
        /// The process an earlier trigger started is still running and has not connected
        /// yet: no second copy is started; it gets this (newer) item when it connects.
        case alreadyRunning
        /// The command could not be started (`launchError` says why).
        case failed
        /// No `LaunchCommand` is configured: the item waits until the app is started by other means.
        case notConfigured
    }
    /// The item chosen.
    public var item: ShortcutItem
    /// The favorite's contact, when the item is a favorite's.
    public var contact: Contact?
    /// `running` (to the connected app), `launch` (kept for the app's next `Connect`) or `command` (an
    /// `[Actions]` command ran).
    public var delivery: TriggerDelivery
    /// Whether the app reported the action as handled.
    public var handled: Bool
    /// The item was made for another app version than the current one.
    public var stale: Bool
    /// The item's 1-based position among the displayed ones, when it has one.
    public var position: Int?
    /// The token the action was delivered with (`running` only).
    public var token: String?
    /// `launch` only.
    public var launchStatus: LaunchStatus?
    /// The launched (or still running) process, `launch` only.
    public var launchPID: Int?
    /// The user manager's unit the launched app runs in, when it was started as one.
    public var launchUnit: String?
    /// `launch` only: why the `LaunchCommand` could not start.
    public var launchError: String?
    /// `command` only: the program of the item's `[Actions]` command, its pid once started,
    /// or why it could not start.
    public var commandProgram: String?
    /// The command's process, when it was started directly.
    public var commandPID: Int?
    /// The user manager's unit the command runs in, when it was started as one (then no pid).
    public var commandUnit: String?
    /// Why the command could not start.
    public var commandError: String?
    /// A reply with each field; the `launch` and `command` ones are nil unless given.
    public init(
        item: ShortcutItem, contact: Contact?, delivery: TriggerDelivery, handled: Bool, stale: Bool, position: Int?,
        token: String? = nil, launchStatus: LaunchStatus? = nil, launchPID: Int? = nil, launchError: String? = nil,
        commandProgram: String? = nil, commandPID: Int? = nil, commandError: String? = nil
    ) {
        self.item = item
        self.contact = contact
        self.delivery = delivery
        self.handled = handled
        self.stale = stale
        self.position = position
        self.token = token
        self.launchStatus = launchStatus
        self.launchPID = launchPID
        self.launchError = launchError
        self.commandProgram = commandProgram
        self.commandPID = commandPID
        self.commandError = commandError
    }
}
