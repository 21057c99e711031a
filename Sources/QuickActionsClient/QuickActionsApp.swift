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

/// The picks on the app's icon, as they come: an `AsyncSequence` over the app's `Connect` stream.
public struct PickedItems: AsyncSequence, Sendable {
    /// Each element is one pick.
    public typealias Element = PickedItem
    let stream: ConnectStream
    let app: QuickActionsApp

    /// The iterator; one per sequence, since the picks are read from one connection.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: ConnectStream
        let app: QuickActionsApp

        /// The next pick, nil once the daemon ends the stream; cancelling the task ends the
        /// connection, so a waiting read returns.
        public mutating func next() async throws -> PickedItem? {
            let stream = stream
            while true {
                guard let reply = try await withTaskCancellationHandler(
                    operation: { try await offload { try stream.next() } },
                    onCancel: { stream.shutDown() })
                else { return nil }
                if let pending = reply.pendingItem {
                    return PickedItem(item: pending, contact: reply.contact, atLaunch: true, token: nil, app: app)
                }
                if let action = reply.action {
                    return PickedItem(item: action, contact: reply.contact, atLaunch: false, token: reply.token, app: app)
                }
            }
        }
    }

    /// The sequence's iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: stream, app: app) }
}

/// The `Connect` stream's connection, read on one dispatch thread at a time (each `next`
/// awaits the one before), shut down from another to end a read that waits.
final class ConnectStream: @unchecked Sendable {
    private let client: VarlinkClient
    private var replies: VarlinkClient.Replies

    init(client: VarlinkClient, replies: VarlinkClient.Replies) {
        self.client = client
        self.replies = replies
    }

    func next() throws -> ConnectReply? {
        guard let reply = try replies.next() else { return nil }
        do { return try reply.decode(ConnectReply.self) } catch {
            throw VarlinkClientError.protocolError("a Connect reply does not match its declaration: \(error)")
        }
    }

    func shutDown() { client.shutDown() }
}

/// The calls' connection, used under the app's lock only.
struct CallConnection: @unchecked Sendable {
    let client: VarlinkClient
}

/// Where an app's instance listens, and how it is started.
struct QuickActionsInstance: Sendable {
    let socketPath: String
    /// The instance's name, when the app is known by its desktop-file ID.
    let app: AppName?

    init(socketPath: String) {
        self.socketPath = socketPath
        app = nil
    }

    init(desktopFileID: String, socketPath: String?) throws {
        let id = desktopFileID.hasSuffix(".desktop") ? String(desktopFileID.dropLast(".desktop".count)) : desktopFileID
        let app = try AppName(validating: id)
        self.app = app
        if let socketPath {
            self.socketPath = socketPath
        } else if let fromEnvironment = getenv("QACTD_SOCKET").map({ String(cString: $0) }), !fromEnvironment.isEmpty {
            self.socketPath = fromEnvironment
        } else {
            let runtime = InstancePaths.runtimeFolder(xdgRuntimeDirectory: getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }, userID: getuid())
            self.socketPath = InstancePaths.socketPath(of: .app(app), runtimeFolder: runtime)
        }
    }

    /// A connection; when nothing listens, and `startsInstance`, the instance's socket unit is
    /// started by the user manager (which then starts the daemon on this first connection).
    func connect(startsInstance: Bool) throws -> VarlinkClient {
        do {
            return try VarlinkClient(unixSocketPath: socketPath)
        } catch .daemonUnreachable(let path, let reason) {
            guard startsInstance, let app else { throw VarlinkClientError.daemonUnreachable(path: path, reason: reason) }
            try Self.run(["systemctl", "--user", "start", app.socketUnit])
            return try VarlinkClient(unixSocketPath: socketPath)
        }
    }

    /// Runs a program to its end; a failure to start it or a non-zero exit says which.
    private static func run(_ arguments: [String]) throws {
        var pid = pid_t()
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        let started = posix_spawnp(&pid, arguments[0], nil, nil, &cArguments, environ)
        guard started == 0 else {
            throw VarlinkClientError.daemonUnreachable(path: arguments.joined(separator: " "), reason: "cannot run it: \(String(cString: strerror(started)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        guard status == 0 else {
            throw VarlinkClientError.daemonUnreachable(path: arguments.joined(separator: " "), reason: "it failed (wait status \(status))")
        }
    }
}

/// Runs blocking socket work on a dispatch queue, so the caller's task waits without holding a
/// thread of the concurrency pool.
func offload<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}
