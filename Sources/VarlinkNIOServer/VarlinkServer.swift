import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SystemCalls
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A Varlink listener on a Unix socket: answers `org.varlink.service` itself and routes every
/// other call to the handler registered for its interface. It knows no interface of its own.
public final class VarlinkServer: Sendable {
    public let configuration: VarlinkServerConfiguration
    let dispatcher: VarlinkServiceDispatcher
    let handlers: [String: any VarlinkInterfaceHandler]
    private let group: any EventLoopGroup
    /// A pthread mutex, not `Synchronization.Mutex`: on Linux the latter hands a contended lock
    /// over inside the kernel (`FUTEX_LOCK_PI` / `FUTEX_UNLOCK_PI`, in the uninstrumented
    /// standard library), which ThreadSanitizer cannot see, so it reported the accept and close
    /// paths as racing; it intercepts pthread locks and keeps checking this state for real.
    private let state = NIOLockedValueBox(State())

    private struct State {
        var listener: (any Channel)?
        var ownedSocket: OwnedSocketFile?
        var socketFolderProblem: String?
        var connections: [UInt64: Connection] = [:]
        var nextConnectionID: UInt64 = 1
    }

    private struct Connection {
        var channel: any Channel
        /// Since when the connection has had no call running or queued; nil while it has one.
        var idleSince: NIODeadline?
        /// Whether a complete call ever arrived. Connections that never sent one (silent, or a
        /// half message) go first when room is needed, so a flood of them never evicts a
        /// client that holds its connection between calls.
        var hasCalled = false

        /// Evicted first: never called, then idle the longest.
        func evictsBefore(_ other: Connection) -> Bool {
            guard let since = idleSince, let otherSince = other.idleSince else { return idleSince != nil }
            if hasCalled != other.hasCalled { return !hasCalled }
            return since < otherSince
        }
    }

    /// The socket file this server created, identified by inode so `stop()` never removes a
    /// file that a newer server put in its place.
    private struct OwnedSocketFile {
        var path: String
        var device: UInt64
        var inode: UInt64
    }

    public init(
        info: VarlinkServiceInfo,
        handlers: [String: any VarlinkInterfaceHandler],
        configuration: VarlinkServerConfiguration,
        group: any EventLoopGroup
    ) {
        self.dispatcher = VarlinkServiceDispatcher(info: info)
        self.handlers = handlers
        self.configuration = configuration
        self.group = group
    }

    /// The path of the socket this server bound itself, if any.
    public var socketPath: String? { state.withLockedValue { $0.ownedSocket?.path } }

    public var connectionCount: Int { state.withLockedValue { $0.connections.count } }

    /// Set by `listen(unixSocketPath:)` when the socket's folder existed and others may write
    /// to it: they could replace the socket and answer the owner's clients in the server's
    /// place. The server still listens (the folder is the user's choice); the service should
    /// warn.
    public var socketFolderProblem: String? { state.withLockedValue { $0.socketFolderProblem } }

    /// Bytes of replies a connection holds because its peer's socket has no room for them: 0
    /// while the peer keeps up, nil for a connection that is gone. Back-pressure made visible.
    func bufferedReplyBytes(connectionID: UInt64) async -> Int? {
        guard let channel = state.withLockedValue({ $0.connections[connectionID]?.channel }) else { return nil }
        return try? await channel.getOption(.bufferedWritableBytes).get()
    }

    /// Binds a fresh socket at `path`: creates a missing parent folder with mode 0700, replaces
    /// a stale socket file, refuses if another server answers there, and leaves the socket 0600.
    public func listen(unixSocketPath path: String) async throws(VarlinkServerError) {
        guard state.withLockedValue({ $0.listener == nil }) else { throw .alreadyStarted }
        guard path.utf8.count <= 107 else { throw .pathTooLong(path: path) }
        try SocketPath.createParentFolder(of: path)
        let folderProblem = SocketPath.othersMayReplace(path)
        state.withLockedValue { $0.socketFolderProblem = folderProblem }
        try SocketPath.removeIfStale(path, service: dispatcher.info.product)

        // Bound here rather than by NIO: NIO unlinks the path when its own listener closes,
        // even if the file there is by then another server's socket.
        let descriptor = try SocketPath.bindListening(path, backlog: 128)
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let code = errno
            close(descriptor)
            throw .systemCallFailed(call: "lstat", path: path, errno: code)
        }
        let channel: any Channel
        do {
            channel = try await bootstrap().withBoundSocket(descriptor).get()
        } catch {
            // The descriptor now belongs to NIO, which closes it on failure; closing it here too
            // could close an unrelated descriptor that reused the number.
            unlink(path)
            throw .bindFailed(path: path, reason: "\(error)")
        }
        let owned = OwnedSocketFile(path: path, device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        state.withLockedValue {
            $0.listener = channel
            $0.ownedSocket = owned
        }
    }

    /// Serves on a listening socket passed by systemd socket activation. The socket file
    /// belongs to systemd and is left in place on stop.
    public func listen(adoptingDescriptor descriptor: Int32) async throws(VarlinkServerError) {
        guard state.withLockedValue({ $0.listener == nil }) else { throw .alreadyStarted }
        let channel: any Channel
        do {
            channel = try await bootstrap().withBoundSocket(descriptor).get()
        } catch {
            throw .adoptFailed(descriptor: descriptor, reason: "\(error)")
        }
        state.withLockedValue { $0.listener = channel }
    }

    /// Stops listening, closes every connection (cancelling their streams) and removes the
    /// socket file if this server created it.
    public func stop() async {
        let (listener, connections, owned) = state.withLockedValue { state in
            let taken = (state.listener, state.connections.values.map(\.channel), state.ownedSocket)
            state.listener = nil
            state.ownedSocket = nil
            return taken
        }
        try? await listener?.close()
        for connection in connections {
            try? await connection.close()
        }
        if let owned {
            var status = stat()
            if lstat(owned.path, &status) == 0, UInt64(status.st_dev) == owned.device,
                UInt64(status.st_ino) == owned.inode
            {
                unlink(owned.path)
            }
        }
    }

    private func bootstrap() -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            // A peer may shut down its sending side and still wait for the replies it asked for.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(VarlinkConnectionHandler(server: self))
                }
            }
    }

    /// Registers an accepted connection, or returns `nil` when the server is at its limit and
    /// no connection is idle. At the limit, an idle connection is closed to make room (one that
    /// never sent a call first, else the one idle the longest), so idle or stalled peers never
    /// lock a well-behaved client out.
    func admit(_ channel: any Channel) -> UInt64? {
        let (admitted, evicted) = state.withLockedValue { state -> (UInt64?, (any Channel)?) in
            var evicted: (any Channel)?
            if state.connections.count >= configuration.maxConnections {
                let candidate = state.connections.min { $0.value.evictsBefore($1.value) }
                guard let candidate, candidate.value.idleSince != nil else { return (nil, nil) }
                evicted = state.connections.removeValue(forKey: candidate.key)?.channel
            }
            let id = state.nextConnectionID
            state.nextConnectionID += 1
            // Idle from the start: a peer that connects and sends nothing holds no call.
            state.connections[id] = Connection(channel: channel, idleSince: .now())
            return (id, evicted)
        }
        evicted?.close(promise: nil)
        return admitted
    }

    /// A connection's handler reports whether it has a call running or queued.
    func connection(_ connectionID: UInt64, isIdle: Bool) {
        state.withLockedValue { state in
            guard state.connections[connectionID] != nil else { return }
            state.connections[connectionID]?.idleSince = isIdle ? .now() : nil
        }
    }

    /// A connection's first complete call arrived: it is no longer among the first to go.
    func connectionMadeItsFirstCall(_ connectionID: UInt64) {
        state.withLockedValue { $0.connections[connectionID]?.hasCalled = true }
    }

    func release(connectionID: UInt64) {
        _ = state.withLockedValue { $0.connections.removeValue(forKey: connectionID) }
    }

    /// A connection-level failure, named in the interface that declares it.
    func named(_ error: VarlinkConnectionError) -> VarlinkError {
        error.varlinkError(in: configuration.errorInterface)
    }
}

/// The checks around a socket path that NIO's bind does not make.
enum SocketPath {
    static func createParentFolder(of path: String) throws(VarlinkServerError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        do {
            try makeDirectories(String(path[..<slash]), mode: 0o700)
        } catch {
            throw .systemCallFailed(call: error.call, path: error.path ?? path, errno: error.errno)
        }
    }

    /// Why others could replace a socket at `path`: its folder is writable by group or others
    /// and not sticky (a sticky folder such as /tmp lets only a file's owner rename or remove it).
    static func othersMayReplace(_ path: String) -> String? {
        guard let slash = path.lastIndex(of: "/") else { return nil }
        let folder = slash == path.startIndex ? "/" : String(path[..<slash])
        var status = stat()
        guard stat(folder, &status) == 0 else { return nil }
        let permissions = status.st_mode & 0o7777
        guard permissions & 0o022 != 0, permissions & S_ISVTX == 0 else { return nil }
        let octal = String(permissions, radix: 8)
        return "The socket folder '\(folder)' has mode \(String(repeating: "0", count: max(0, 4 - octal.count)) + octal): "
            + "other users can write to it, so they could replace the socket '\(path)' and answer your clients in its place. "
            + "Make it 0700 (chmod 0700 '\(folder)'), or point the socket at a folder only you can write to."
    }

    /// A listening socket at `path` with mode 0600. The umask is tightened around bind() so the
    /// socket is never reachable with looser permissions, not even before the chmod().
    static func bindListening(_ path: String, backlog: Int32) throws(VarlinkServerError) -> Int32 {
        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw .systemCallFailed(call: "socket", path: path, errno: errno) }
        guard let address = UnixSocketAddress(path: path) else {
            close(fd)
            throw .systemCallFailed(call: "bind", path: path, errno: ENAMETOOLONG)
        }
        let previousMask = umask(0o077)
        let bound = address.withSocketAddress { bind(fd, $0, $1) }
        let bindErrno = errno
        umask(previousMask)
        guard bound == 0 else {
            close(fd)
            throw .systemCallFailed(call: "bind", path: path, errno: bindErrno)
        }
        guard chmod(path, 0o600) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw .systemCallFailed(call: "chmod", path: path, errno: code)
        }
        guard listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw .systemCallFailed(call: "listen", path: path, errno: code)
        }
        return fd
    }

    /// Removes a socket file nobody listens on; refuses when a server answers or the path is
    /// something other than a socket.
    /// `service` names the product in the error, so the user learns what holds the socket.
    static func removeIfStale(_ path: String, service: String) throws(VarlinkServerError) {
        var status = stat()
        if lstat(path, &status) != 0 {
            if errno == ENOENT { return }
            throw .systemCallFailed(call: "lstat", path: path, errno: errno)
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path: path) }
        switch probe(path) {
        case .answering:
            throw .alreadyListening(service: service, path: path)
        case .refused:
            guard unlink(path) == 0 || errno == ENOENT else {
                throw .systemCallFailed(call: "unlink", path: path, errno: errno)
            }
        case .failed(let code):
            throw .systemCallFailed(call: "connect", path: path, errno: code)
        }
    }

    private enum ProbeResult {
        case answering, refused, failed(Int32)
    }

    private static func probe(_ path: String) -> ProbeResult {
        // Non-blocking, so a live server with a full backlog reads as "answering" instead of hanging start-up.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return .failed(errno) }
        defer { close(fd) }
        guard let address = UnixSocketAddress(path: path) else { return .failed(ENAMETOOLONG) }
        let result = retryingOnInterrupt { address.withSocketAddress { connect(fd, $0, $1) } }
        if result == 0 { return .answering }
        switch errno {
        case EAGAIN, EINPROGRESS: return .answering
        case ECONNREFUSED: return .refused
        default: return .failed(errno)
        }
    }
}

