import NIOConcurrencyHelpers
import NIOCore
import SystemCalls
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who sent a call, from `SO_PEERCRED` at accept time.
public struct VarlinkPeerCredentials: Hashable, Sendable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}

/// What a handler knows about the call besides its parameters.
public struct VarlinkCallContext: Hashable, Sendable {
    /// Unique per connection for the server's lifetime: lets a service tie streaming calls
    /// (a subscription, say) to the connection that made them.
    public var connectionID: UInt64
    public var peer: VarlinkPeerCredentials

    public init(connectionID: UInt64, peer: VarlinkPeerCredentials) {
        self.connectionID = connectionID
        self.peer = peer
    }
}

/// Serves the calls of one interface. A plain call yields one reply; a `more` call may yield
/// many, `continues: true` on all but the last. A thrown `VarlinkError` becomes an error reply.
///
/// The server pulls the next reply only after the previous one was written to the socket, so a
/// slow reader holds the producer back instead of growing memory; and it cancels the stream when
/// the connection closes, which is how the service learns that a streaming peer went away
/// (`onTermination` of the stream's continuation runs).
public protocol VarlinkInterfaceHandler: Sendable {
    func handle(_ call: VarlinkCall, context: VarlinkCallContext) -> AsyncThrowingStream<VarlinkReply, any Error>

    /// The reply to a plain call when the service has it at hand (a read-only call answered
    /// from a published snapshot), or nil to go through `handle`. Called on the connection's
    /// event loop, so it must not block or wait: an answer costs no task and no thread hop.
    func immediateReply(to call: VarlinkCall, context: VarlinkCallContext) -> VarlinkReply?
}

extension VarlinkInterfaceHandler {
    public func immediateReply(to call: VarlinkCall, context: VarlinkCallContext) -> VarlinkReply? { nil }
}

extension AsyncThrowingStream where Element == VarlinkReply, Failure == any Error {
    /// A stream with the single reply of a plain call, computed by `body` in the task that reads
    /// the stream (the connection's call task), so the reply is computed where that task runs
    /// and is cancelled with it; no task of its own.
    public static func single(_ body: @escaping @Sendable () async throws -> VarlinkReply) -> Self {
        let pending = NIOLockedValueBox<(@Sendable () async throws -> VarlinkReply)?>(body)
        return AsyncThrowingStream {
            guard let body = pending.withLockedValue({ pending in defer { pending = nil }; return pending }) else { return nil }
            return try await body()
        }
    }

    /// A stream that fails at once with `error`.
    public static func failing(_ error: VarlinkError) -> Self {
        AsyncThrowingStream { continuation in continuation.finish(throwing: error) }
    }
}

/// Limits and policy of a `VarlinkServer`. Every resource a peer can make the server
/// allocate is bounded here.
public struct VarlinkServerConfiguration: Sendable {
    /// The service's interface that declares the errors of `VarlinkConnectionError` (its
    /// description holds `VarlinkConnectionError.declarations`): they are named in it.
    public var errorInterface: String
    /// A larger message gets an error reply and the connection is closed (the reply is
    /// flushed and the server keeps reading, discarding, for `closeLinger` so the peer, still
    /// busy sending, gets to read it instead of a reset).
    public var maxMessageBytes: Int = 1 << 20
    /// At this many connections a new one takes the place of an idle connection (no call
    /// running or queued; a `more` call being served, such as a subscription, is not idle),
    /// which is closed: one that never sent a complete call first, else the one idle the
    /// longest. Only when none is idle is the new one refused, with a
    /// best-effort `TooManyConnections` frame. So connections left open, or half messages,
    /// never lock a well-behaved client out.
    public var maxConnections: Int = 256
    /// A message must be complete this long after its first byte arrived, or the connection
    /// is closed: a peer trickling bytes must not hold a connection slot.
    public var partialMessageTimeout: TimeAmount = .seconds(10)
    /// A connection with no call running or queued and no half message is closed after this
    /// long; nil keeps idle connections open (they are still evicted at `maxConnections`).
    public var idleTimeout: TimeAmount? = .seconds(60)
    /// How long a connection closed for a protocol error keeps discarding the peer's input
    /// after its error reply went out (the server's side is shut down for writing at once).
    public var closeLinger: TimeAmount = .seconds(1)
    /// Calls queued behind the running one before the server stops reading from that peer.
    public var maxPipelinedCalls: Int = 64
    /// Peers of this user are served; others are refused with `PermissionDenied`.
    public var ownerUID: UInt32 = getuid()
    /// Whether root may connect too (the server's owner is always allowed).
    public var allowsRoot: Bool = true
    /// Told of each peer refused for its credentials, so the service can log it (the server
    /// itself does not log).
    public var peerRefused: (@Sendable (VarlinkPeerCredentials) -> Void)?
    /// Where each call's task runs; nil: Swift's default executor. A server whose process must
    /// stay asleep when idle passes an executor on its own event loops (see the daemon's
    /// `EventLoopExecution`).
    public var taskExecutor: (any TaskExecutor)?

    public init(errorInterface: String) {
        self.errorInterface = errorInterface
    }

    func allows(_ peer: VarlinkPeerCredentials) -> Bool {
        peer.uid == ownerUID || (allowsRoot && peer.uid == 0)
    }
}

/// Why the server could not start listening.
public enum VarlinkServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A server answers on the path; `service` is this server's product (`VarlinkServiceInfo.product`),
    /// most likely what answers there too.
    case alreadyListening(service: String, path: String)
    case notASocket(path: String)
    case pathTooLong(path: String)
    case systemCallFailed(call: String, path: String, errno: Int32)
    case bindFailed(path: String, reason: String)
    case adoptFailed(descriptor: Int32, reason: String)
    case alreadyStarted

    public var description: String {
        switch self {
        case .alreadyListening(let service, let path):
            return "Another \(service) is already listening on '\(path)'."
        case .notASocket(let path):
            return "The socket path '\(path)' exists and is not a socket; refusing to replace it."
        case .pathTooLong(let path):
            return "The socket path '\(path)' is longer than a Unix socket address allows (107 bytes)."
        case .systemCallFailed(let call, let path, let code):
            return "\(call) on '\(path)' failed: \(errnoText(code)) (errno \(code))."
        case .bindFailed(let path, let reason):
            return "Cannot listen on '\(path)': \(reason)."
        case .adoptFailed(let descriptor, let reason):
            return "Cannot use the socket-activated descriptor \(descriptor): \(reason)."
        case .alreadyStarted:
            return "The Varlink server is already listening."
        }
    }
}
