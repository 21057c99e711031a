import QuickActionsProtocol
import Varlink

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
