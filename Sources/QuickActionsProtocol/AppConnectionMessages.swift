import Contacts
import QuickActions

/// `ResignActive`, `BecomeActive` and `Connect` all take the app's version.
public struct AppVersionParameters: Codable, Sendable, Equatable {
    /// The app's version (at most 256 bytes); nil: the app did not say.
    public var appVersion: String?
    /// Parameters with the app's version, or none.
    public init(appVersion: String? = nil) { self.appVersion = appVersion }
}

/// What the model's recompute reports is the reply itself: `changed`, `generation`, `dynamicCount`.
public typealias ResignActiveReply = RecomputeOutcome

/// One reply of the app's `Connect` stream. The first reply has `pendingItem` (when a
/// trigger was waiting for the app to launch) and no token; each later reply is one
/// action to perform, to be answered with `Complete(token, handled)`.
public struct ConnectReply: Codable, Sendable, Equatable {
    /// The first reply only: the item a trigger kept for the app while it was not running.
    public var pendingItem: ShortcutItem?
    /// A later reply: the item a person picked while the app runs.
    public var action: ShortcutItem?
    /// The favorite's contact of `pendingItem` or `action`.
    public var contact: Contact?
    /// With `action`: the token to answer it with, in `Complete`.
    public var token: String?
    /// The item was made for another app version than the current one.
    public var stale: Bool?
    /// A reply; every field is optional on the wire.
    public init(pendingItem: ShortcutItem? = nil, action: ShortcutItem? = nil, contact: Contact? = nil, token: String? = nil, stale: Bool? = nil) {
        self.pendingItem = pendingItem
        self.action = action
        self.contact = contact
        self.token = token
        self.stale = stale
    }
}

/// `Complete`: the app's answer to an action its `Connect` stream delivered.
public struct CompleteParameters: Codable, Sendable, Equatable {
    /// The token the action came with.
    public var token: String
    /// Whether the app did what the item asks; the waiting `Trigger` replies with it.
    public var handled: Bool
    /// The answer for the action delivered with `token`.
    public init(token: String, handled: Bool) {
        self.token = token
        self.handled = handled
    }
}
