import Contacts
import QuickActions

public struct TriggerParameters: Codable, Sendable, Equatable {
    public var position: Int?
    public var type: String?
    public var contactIdentifier: String?
    /// A pin's identifier: the launcher of a pinned item was chosen.
    public var pinned: String?
    public init(position: Int? = nil, type: String? = nil, contactIdentifier: String? = nil, pinned: String? = nil) {
        self.position = position
        self.type = type
        self.contactIdentifier = contactIdentifier
        self.pinned = pinned
    }
}

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
    public var item: ShortcutItem
    public var contact: Contact?
    public var delivery: TriggerDelivery
    public var handled: Bool
    public var stale: Bool
    public var position: Int?
    /// The token the action was delivered with (`running` only).
    public var token: String?
    /// `launch` only.
    public var launchStatus: LaunchStatus?
    /// The launched (or still running) process, `launch` only.
    public var launchPID: Int?
    /// The user manager's unit the launched app runs in, when it was started as one.
    public var launchUnit: String?
    public var launchError: String?
    /// `command` only: the program of the item's `[Actions]` command, its pid once started,
    /// or why it could not start.
    public var commandProgram: String?
    public var commandPID: Int?
    /// The user manager's unit the command runs in, when it was started as one (then no pid).
    public var commandUnit: String?
    public var commandError: String?
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
