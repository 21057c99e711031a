import Contacts
import QuickActions

/// `ResignActive`, `BecomeActive` and `Connect` all take the app's version.
public struct AppVersionParameters: Codable, Sendable, Equatable {
    public var appVersion: String?
    public init(appVersion: String? = nil) { self.appVersion = appVersion }
}

/// What the model's recompute reports is the reply itself: `changed`, `generation`, `dynamicCount`.
public typealias ResignActiveReply = RecomputeOutcome

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
