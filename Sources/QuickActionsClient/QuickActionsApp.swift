import Contacts
import Dispatch
import Glibc
import QuickActionsProtocol
import Synchronization
import Varlink

// An app names its items with the model's own types (`ShortcutItem`, `ShortcutIcon`,
// `PropertyListValue`), the very ones the daemon checks and keeps, so importing the library
// is enough to use them.
@_exported import QuickActions

/// An app's door to its quick actions: the app's own qactd instance (`qactd@APP`), reached by
/// the app's desktop-file ID, through which it publishes items of its own and receives the
/// items a person picks on its icon.
///
/// ```swift
/// let app = try await QuickActionsApp(desktopFileID: "org.example.Editor")
/// try await app.setItems([ShortcutItem(type: "open", title: "Open notes.txt")])
/// for try await pick in try await app.pickedItems() { open(pick.item); try await pick.complete() }
/// ```
///
/// Calls are short local ones, made off the caller's task on a dispatch queue. Every call
/// throws `VarlinkClientError`: `.remote` carries the daemon's error (`InvalidItem` with the
/// field, `TooManyItems`, `NoSuchItem`).
public final class QuickActionsApp: Sendable {
    /// The instance's socket.
    public let socketPath: String
    /// The one connection for calls; the picks have one of their own (`pickedItems`), as
    /// `Connect` keeps its connection busy with its stream.
    private let calls: Mutex<CallConnection>

    /// Connects to the app's instance, starting it first when nothing listens yet.
    ///
    /// - Parameters:
    ///   - desktopFileID: the app's desktop-file ID (`org.example.Editor`, with or without
    ///     `.desktop`), which names its instance.
    ///   - socketPath: the socket to use instead of the instance's; by default
    ///     `$QACTD_SOCKET`, else `$XDG_RUNTIME_DIR/qactd/ID.sock`.
    ///   - startsInstance: when nothing listens, ask the user manager to start the instance's
    ///     socket (`systemctl --user start qactd@ID.socket`) and connect again.
    public init(desktopFileID: String, socketPath: String? = nil, startsInstance: Bool = true) async throws {
        let instance = try QuickActionsInstance(desktopFileID: desktopFileID, socketPath: socketPath)
        self.socketPath = instance.socketPath
        let connection = try await offload { CallConnection(client: try instance.connect(startsInstance: startsInstance)) }
        calls = Mutex(connection)
    }

    /// Replaces the app's own items with `items`, in this order, as iOS's `shortcutItems = […]`.
    @discardableResult
    public func setItems(_ items: [ShortcutItem]) async throws -> AppItemsReply {
        try await call(.setItems, SetItemsParameters(items: items), replying: AppItemsReply.self)
    }

    /// Puts `item` first, replacing the item of its type, as Android's `pushDynamicShortcut`.
    @discardableResult
    public func pushItem(_ item: ShortcutItem) async throws -> AppItemsReply {
        try await call(.pushItem, PushItemParameters(item: item), replying: AppItemsReply.self)
    }

    /// Removes the app's items of these types.
    @discardableResult
    public func removeItems(types: [String]) async throws -> AppItemsReply {
        try await call(.removeItems, RemoveItemsParameters(types: types), replying: AppItemsReply.self)
    }

    /// Tells the daemon the app did what its item of `type` does, from its own menus.
    public func reportItemUsed(type: String) async throws {
        _ = try await call(.reportItemUsed, ReportItemUsedParameters(type: type), replying: NoParameters.self)
    }

    /// The app's own items as the daemon keeps them.
    public func items() async throws -> [ShortcutItem] {
        try await call(.items, NoParameters(), replying: ItemsReply.self).items
    }

    /// The app resigns active (as `sceneWillResignActive`): the favorites' items are derived again.
    @discardableResult
    public func resignActive(appVersion: String? = nil) async throws -> ResignActiveReply {
        try await call(.resignActive, AppVersionParameters(appVersion: appVersion), replying: ResignActiveReply.self)
    }

    /// The items a person picks, from now on: first the one the app was started for, if any,
    /// then each one picked while it runs. Complete each (`PickedItem.complete`). The app
    /// counts as running while the sequence is iterated; ending the iteration (its task
    /// cancelled) disconnects it, and the next pick starts the app again.
    public func pickedItems(appVersion: String? = nil) async throws -> PickedItems {
        let instance = QuickActionsInstance(socketPath: socketPath)
        let stream = try await offload { () throws -> ConnectStream in
            let client = try instance.connect(startsInstance: false)
            let replies = try client.callMore(QuickActionsInterface.Method.connect.qualifiedName, parameters: try JSONValue(encoding: AppVersionParameters(appVersion: appVersion)))
            return ConnectStream(client: client, replies: replies)
        }
        return PickedItems(stream: stream, app: self)
    }

    /// Answers the daemon for a pick delivered while the app runs.
    func complete(token: String, handled: Bool) async throws {
        _ = try await call(.complete, CompleteParameters(token: token, handled: handled), replying: NoParameters.self)
    }

    private func call<Parameters: Encodable & Sendable, Reply: Decodable & Sendable>(
        _ method: QuickActionsInterface.Method, _ parameters: Parameters, replying: Reply.Type
    ) async throws -> Reply {
        try await offload {
            try self.calls.withLock { connection in
                try connection.client.call(method.qualifiedName, parameters: parameters, replying: Reply.self)
            }
        }
    }
}

/// The calls' connection, used under the app's lock only.
struct CallConnection: @unchecked Sendable {
    let client: VarlinkClient
}
