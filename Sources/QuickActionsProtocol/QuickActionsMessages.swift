import Contacts
import QuickActions

/// The typed messages of `io.qactd.QuickActions`, shared by the daemon and
/// `qactl` so both sides agree on the wire by construction. Field names follow
/// the interface description in `QuickActionsInterfaceDescription.swift`.
extension QuickActionsInterface {
    public enum Method: String, CaseIterable, Sendable {
        case status = "Status", list = "List", resignActive = "ResignActive"
        case becomeActive = "BecomeActive", enterBackground = "EnterBackground"
        case trigger = "Trigger", connect = "Connect", complete = "Complete", watch = "Watch"
        case reload = "Reload", getContact = "GetContact"
        case pin = "Pin", unpin = "Unpin", pins = "Pins"
        case setItems = "SetItems", pushItem = "PushItem", removeItems = "RemoveItems"
        case reportItemUsed = "ReportItemUsed", items = "Items"

        public var qualifiedName: String { "\(QuickActionsInterface.name).\(rawValue)" }
    }

    /// Error names of the interface; the parameters of each are documented in the IDL.
    public enum ErrorName: String, CaseIterable, Sendable {
        case noSuchShortcut = "NoSuchShortcut", contactRemoved = "ContactRemoved"
        case contactNotFound = "ContactNotFound", appNotResponding = "AppNotResponding"
        case invalidConfiguration = "InvalidConfiguration"
        case appDisconnected = "AppDisconnected", appReplaced = "AppReplaced", noSuchAction = "NoSuchAction"
        case commandRefused = "CommandRefused"
        case noSuchPin = "NoSuchPin", pinDisabled = "PinDisabled", pinningUnavailable = "PinningUnavailable"
        case invalidItem = "InvalidItem", tooManyItems = "TooManyItems", noSuchItem = "NoSuchItem"

        public var qualifiedName: String { "\(QuickActionsInterface.name).\(rawValue)" }
    }
}

/// Decodes any of `{}`, `null` or omitted parameters: the methods that take none.
public struct NoParameters: Codable, Sendable, Equatable {
    public init() {}
}

public struct ListParameters: Codable, Sendable, Equatable {
    public var all: Bool?
    public var limit: Int?
    /// The language of the static titles (`fr`, `fr_CA.UTF-8`, or a `LANGUAGE`-style list);
    /// nil: the daemon's own.
    public var language: String?
    public init(all: Bool? = nil, limit: Int? = nil, language: String? = nil) {
        self.all = all
        self.limit = limit
        self.language = language
    }
}

/// The reply of `List`, and each reply of a `Watch` stream. Each row is the model's own
/// `ListedShortcut` (the IDL's `ListedItem`), so the listing is never copied field by field.
/// `List` (and each `Watch` reply) is the model's listing itself.
public typealias ListReply = QuickActionsListing

/// `ResignActive`, `BecomeActive` and `Connect` all take the app's version.
public struct AppVersionParameters: Codable, Sendable, Equatable {
    public var appVersion: String?
    public init(appVersion: String? = nil) { self.appVersion = appVersion }
}

/// What the model's recompute reports is the reply itself: `changed`, `generation`, `dynamicCount`.
public typealias ResignActiveReply = RecomputeOutcome

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

/// One reply of the app's `Connect` stream. The first reply has `pendingItem` (when a
/// trigger was waiting for the app to launch) and no token; each later reply is one
/// action to perform, to be answered with `Complete(token, handled)`.
public struct ConnectReply: Codable, Sendable, Equatable {
    public var pendingItem: ShortcutItem?
    public var action: ShortcutItem?
    /// The favorite's contact of `pendingItem` or `action`.
    public var contact: Contact?
    public var token: String?
    /// The item was made for another app version than the current one.
    public var stale: Bool?
    public init(pendingItem: ShortcutItem? = nil, action: ShortcutItem? = nil, contact: Contact? = nil, token: String? = nil, stale: Bool? = nil) {
        self.pendingItem = pendingItem
        self.action = action
        self.contact = contact
        self.token = token
        self.stale = stale
    }
}

public struct CompleteParameters: Codable, Sendable, Equatable {
    public var token: String
    public var handled: Bool
    public init(token: String, handled: Bool) {
        self.token = token
        self.handled = handled
    }
}

public struct ReloadReply: Codable, Sendable, Equatable {
    public var staticItems: Int
    public var configFile: String?
    public init(staticItems: Int, configFile: String?) {
        self.staticItems = staticItems
        self.configFile = configFile
    }
}

public struct GetContactParameters: Codable, Sendable, Equatable {
    public var identifier: String
    public init(identifier: String) { self.identifier = identifier }
}

public struct GetContactReply: Codable, Sendable, Equatable {
    public var contact: Contact
    public init(contact: Contact) { self.contact = contact }
}

// MARK: Pins

/// `Pin` names an item as `Trigger` does (but never by a pin: the daemon refuses `pinned`).
public typealias PinParameters = TriggerParameters

public struct PinnedItemInfo: Codable, Sendable, Equatable {
    public var identifier: String
    public var item: ShortcutItem
    public var state: PinnedItem.State
    /// `disabled` only: what choosing the launcher says.
    public var message: String?
    public var desktopFile: String?
    public init(identifier: String, item: ShortcutItem, state: PinnedItem.State, message: String? = nil, desktopFile: String? = nil) {
        self.identifier = identifier
        self.item = item
        self.state = state
        self.message = message
        self.desktopFile = desktopFile
    }
}

public struct PinReply: Codable, Sendable, Equatable {
    public var pin: PinnedItemInfo
    public init(pin: PinnedItemInfo) { self.pin = pin }
}

public struct UnpinParameters: Codable, Sendable, Equatable {
    public var identifier: String?
    public var position: Int?
    public var all: Bool?
    public init(identifier: String? = nil, position: Int? = nil, all: Bool? = nil) {
        self.identifier = identifier
        self.position = position
        self.all = all
    }
}

public struct UnpinReply: Codable, Sendable, Equatable {
    public var removed: [String]
    public init(removed: [String]) { self.removed = removed }
}

public struct PinsReply: Codable, Sendable, Equatable {
    public var pins: [PinnedItemInfo]
    public init(pins: [PinnedItemInfo]) { self.pins = pins }
}

// MARK: Error parameters

public struct MessageErrorParameters: Codable, Sendable, Equatable {
    public var message: String
    public init(message: String) { self.message = message }
}

public struct ContactRemovedErrorParameters: Codable, Sendable, Equatable {
    public var contactIdentifier: String
    public var message: String
    public init(contactIdentifier: String, message: String) {
        self.contactIdentifier = contactIdentifier
        self.message = message
    }
}

public struct PinDisabledErrorParameters: Codable, Sendable, Equatable {
    public var identifier: String
    public var message: String
    public init(identifier: String, message: String) {
        self.identifier = identifier
        self.message = message
    }
}

public struct ContactNotFoundErrorParameters: Codable, Sendable, Equatable {
    public var identifier: String
    public init(identifier: String) { self.identifier = identifier }
}

public struct AppNotRespondingErrorParameters: Codable, Sendable, Equatable {
    public var timeoutSeconds: Int
    public init(timeoutSeconds: Int) { self.timeoutSeconds = timeoutSeconds }
}

public struct TokenErrorParameters: Codable, Sendable, Equatable {
    public var token: String
    public init(token: String) { self.token = token }
}

// MARK: - Bounds of call parameters

/// The longest each string parameter may be, in UTF-8 bytes. A longer one is refused with
/// `org.varlink.service.InvalidParameter` naming it: the daemon keeps `appVersion` and copies
/// it into every dynamic item, so an unbounded one would grow its memory and state file.
public enum ParameterLimits {
    public static let appVersionBytes = 256
    /// An item type, a contact identifier or a token.
    public static let identifierBytes = 1024
    /// A language or a `LANGUAGE`-style list.
    public static let languageBytes = 256
    /// The types one `RemoveItems` names.
    public static let maxListedTypes = 1024
}

/// Call parameters that name their first string over its limit.
public protocol BoundedParameters: Decodable {
    /// The name of the first parameter longer than its limit, or nil.
    var oversizedParameter: String? { get }
}

extension BoundedParameters {
    /// `name` when `value` has more than `maxBytes` UTF-8 bytes.
    static func name(_ name: String, of value: String?, ifOver maxBytes: Int) -> String? {
        guard let value, value.utf8.count > maxBytes else { return nil }
        return name
    }
}

extension NoParameters: BoundedParameters {
    public var oversizedParameter: String? { nil }
}

extension ListParameters: BoundedParameters {
    public var oversizedParameter: String? { Self.name("language", of: language, ifOver: ParameterLimits.languageBytes) }
}

extension AppVersionParameters: BoundedParameters {
    public var oversizedParameter: String? { Self.name("appVersion", of: appVersion, ifOver: ParameterLimits.appVersionBytes) }
}

extension TriggerParameters: BoundedParameters {
    public var oversizedParameter: String? {
        Self.name("type", of: type, ifOver: ParameterLimits.identifierBytes)
            ?? Self.name("contactIdentifier", of: contactIdentifier, ifOver: ParameterLimits.identifierBytes)
            ?? Self.name("pinned", of: pinned, ifOver: ParameterLimits.identifierBytes)
    }
}

extension UnpinParameters: BoundedParameters {
    public var oversizedParameter: String? { Self.name("identifier", of: identifier, ifOver: ParameterLimits.identifierBytes) }
}

extension CompleteParameters: BoundedParameters {
    public var oversizedParameter: String? { Self.name("token", of: token, ifOver: ParameterLimits.identifierBytes) }
}

extension GetContactParameters: BoundedParameters {
    public var oversizedParameter: String? { Self.name("identifier", of: identifier, ifOver: ParameterLimits.identifierBytes) }
}
