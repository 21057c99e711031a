import Dispatch
import Foundation
import Glibc
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Synchronization
import Varlink
import XCTest

@testable import VarlinkNIOServer

/// Runs blocking socket code off the cooperative pool, which the server's handler tasks need.
func offloaded<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

/// Counters the test handler shares with the tests.
final class TestHandlerProbe: Sendable {
    let onewayCalls = Atomic<Int>(0)
    let streamedReplies = Atomic<Int>(0)
    let terminatedStreams = Atomic<Int>(0)
    /// The connection of the latest `Watch` call.
    let watchConnection = Atomic<UInt64>(0)
    /// The connections of every `Watch` call, in the order they came. Behind a pthread lock,
    /// which ThreadSanitizer sees (it does not see `Mutex`'s futex, and took two `Watch` calls
    /// on two event loops for a race).
    let watchConnections = NIOLockedValueBox<[UInt64]>([])
    /// `Watch` replies the server asked for while the connection still held an earlier one
    /// (which back-pressure forbids).
    let repliesAskedWhileBuffered = Atomic<Int>(0)
    /// The server the handler serves, so it can look at its connection's buffer.
    let server = NIOLockedValueBox<VarlinkServer?>(nil)
}

final class Counter: Sendable {
    private let value = Atomic<Int>(0)

    func next() -> Int { value.add(1, ordering: .relaxed).newValue }
}

/// An interface of the tests' own, so the server is shown to serve any interface: it knows
/// none but org.varlink.service. It declares the connection errors, which the fixture's
/// server names in it.
enum TestInterface {
    static let name = "org.example.test"

    /// `Big`'s parameters, the same encoded value for every caller (as a service's published listing).
    static let bigParameters = try! EncodedJSONObject(["padding": .string(String(repeating: "x", count: 300_000))])

    static let description = """
        # Just enough of an interface to exercise the server.
        interface org.example.test

        method Status() -> (version: string, onewayCalls: int, peerUID: int, connection: int)

        method List(all: ?bool, limit: ?int) -> (limit: int)

        # Slow on purpose.
        method Trigger(position: ?int) -> (position: ?int)

        method BecomeActive() -> ()

        method GetContact(identifier: string) -> ()

        # count replies (endless without count), each padded to 64 KiB.
        method Watch(count: ?int) -> (generation: int, padding: string)

        # A reply whose parameters were encoded once, beforehand: padding of 300,000 bytes.
        method Big() -> (padding: string)

        # One reply, then the stream stays open until the peer leaves.
        method Connect() -> (pendingItem: ?string)

        error ContactNotFound (identifier: string)

        error InvalidMessage (reason: string)

        error MessageTooLarge (maxBytes: int)

        error TooManyConnections (maxConnections: int)

        error InternalError (message: string)

        """
}

/// The handler of `TestInterface`: just enough behaviour to exercise the server.
struct TestInterfaceHandler: VarlinkInterfaceHandler {
    let probe: TestHandlerProbe

    private struct ListParameters: Decodable {
        var all: Bool?
        var limit: Int?
    }

    func handle(_ call: VarlinkCall, context: VarlinkCallContext) -> AsyncThrowingStream<VarlinkReply, any Error> {
        let probe = probe
        switch call.memberName {
        case "Status":
            return .single {
                VarlinkReply(parameters: [
                    "version": "test", "onewayCalls": .int(Int64(probe.onewayCalls.load(ordering: .relaxed))),
                    "peerUID": .int(Int64(context.peer.uid)), "connection": .int(Int64(context.connectionID)),
                ])
            }
        case "List":
            return .single {
                let parameters = try call.decodeParameters(ListParameters.self)
                return VarlinkReply(parameters: ["limit": .int(Int64(parameters.limit ?? 4))])
            }
        case "Trigger":
            // Slow on purpose: a quick call pipelined behind it must still be answered after it.
            return .single {
                try await Task.sleep(for: .milliseconds(200))
                return VarlinkReply(parameters: ["position": call.parameters["position"] ?? .null])
            }
        case "BecomeActive":
            return .single {
                probe.onewayCalls.add(1, ordering: .relaxed)
                return VarlinkReply()
            }
        case "GetContact":
            return .failing(VarlinkError(name: "org.example.test.ContactNotFound", parameters: ["identifier": "x"]))
        case "Watch":
            // Produces a reply only when the server asks for one, so the count shows back-pressure.
            let produced = Counter()
            let padding = JSONValue.string(String(repeating: "x", count: 64 * 1024))
            let count = call.parameters["count"]?.intValue
            let connection = context.connectionID
            probe.watchConnection.store(connection, ordering: .relaxed)
            probe.watchConnections.withLockedValue { $0.append(connection) }
            return AsyncThrowingStream(unfolding: {
                let sequence = produced.next()
                if let count, sequence > count { return nil }
                // Checked as each reply is asked for, not after some time: the previous reply
                // must have left the connection's buffer for the socket.
                if sequence > 1, let server = probe.server.withLockedValue({ $0 }),
                    let buffered = await server.bufferedReplyBytes(connectionID: connection), buffered > 0
                {
                    probe.repliesAskedWhileBuffered.add(1, ordering: .relaxed)
                }
                probe.streamedReplies.add(1, ordering: .relaxed)
                let last = count.map { sequence == $0 } ?? false
                return VarlinkReply(parameters: ["generation": .int(Int64(sequence)), "padding": padding], continues: !last)
            })
        case "Big":
            return .single { VarlinkReply(encodedParameters: TestInterface.bigParameters) }
        case "Connect":
            return AsyncThrowingStream { continuation in
                continuation.yield(VarlinkReply(parameters: ["pendingItem": .null], continues: true))
                continuation.onTermination = { _ in probe.terminatedStreams.add(1, ordering: .relaxed) }
            }
        default:
            return .failing(.methodNotImplemented(call.method))
        }
    }
}

/// A raw client socket for what VarlinkClient deliberately cannot do: malformed bytes, half
/// messages, pipelining, reading replies to oneway calls.
final class RawConnection: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String, terminated: Bool = true) {
        var bytes = Array(text.utf8)
        if terminated { bytes.append(0) }
        sendBytes(bytes)
    }

    func sendBytes(_ bytes: [UInt8]) {
        _ = sendAll(bytes)
    }

    /// Blocking sends until every byte is written or a send fails; returns the bytes written.
    func sendAll(_ bytes: [UInt8]) -> Int {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { break }
            offset += written
        }
        return offset
    }

    /// Bytes a non-blocking send could not take yet; sent first next time.
    private var unsent: [UInt8] = []

    /// Queues `bytes` without blocking: false when the kernel's buffer is full (the bytes are
    /// kept and go out first on a later call, so messages never interleave).
    func sendWithoutBlocking(_ bytes: [UInt8]) -> Bool {
        if !unsent.isEmpty {
            let written = unsent.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if written > 0 { unsent.removeFirst(written) }
            if !unsent.isEmpty { return false }
        }
        let written = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        if written == bytes.count { return true }
        // Part of it (or none) went out: the rest is sent before anything else.
        unsent = Array(bytes[max(0, written)...])
        return written > 0
    }

    /// Waits until the kernel's buffer has room for more bytes: false if it has none within
    /// `milliseconds` (the peer stopped reading).
    func waitUntilWritable(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let result = poll(&descriptor, 1, Int32((left / .milliseconds(1)).rounded(.up)))
            if result > 0 { return descriptor.revents & Int16(POLLOUT) != 0 }
            if result == 0 { return false }
            if errno != EINTR { return false }
        }
    }

    func setReceiveTimeout(milliseconds: Int) {
        var timeout = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Calls `org.varlink.service.GetInfo` and reads its reply: whether it came.
    func getInfo() -> Bool {
        send(#"{"method":"org.varlink.service.GetInfo"}"#)
        guard case .frame(let reply) = readFrame() else { return false }
        return reply["parameters"]?["product"] != nil
    }

    enum ReadResult: Equatable {
        case frame(JSONValue)
        case closed
        case timedOut
    }

    /// The next NUL-terminated frame, `closed` at end of stream, `timedOut` after the receive timeout.
    func readFrame() -> ReadResult {
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let frame = Array(buffer[..<end])
                buffer.removeFirst(end + 1)
                return (try? JSONValue(jsonData: Data(frame))).map(ReadResult.frame) ?? .frame(.string("<invalid JSON>"))
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return .closed }
            if count < 0 {
                if errno == EINTR { continue }
                return errno == EAGAIN || errno == EWOULDBLOCK ? .timedOut : .closed
            }
            buffer += chunk[..<count]
        }
    }
}

/// A server on a fresh temporary folder, with the test handler registered.
final class ServerFixture: @unchecked Sendable {
    let folder: String
    let socketPath: String
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
    let probe = TestHandlerProbe()
    private(set) var servers: [VarlinkServer] = []

    init() {
        folder = NSTemporaryDirectory() + "varlink-server-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        socketPath = folder + "/run/test.sock"
    }

    static let info = VarlinkServiceInfo(
        vendor: "testd", product: "testd", version: "0.0-test", url: "https://example.invalid/testd",
        interfaces: [.init(name: TestInterface.name, description: TestInterface.description)])

    func makeServer(_ configure: (inout VarlinkServerConfiguration) -> Void = { _ in }) -> VarlinkServer {
        var configuration = VarlinkServerConfiguration(errorInterface: TestInterface.name)
        configure(&configuration)
        let server = VarlinkServer(
            info: Self.info, handlers: [TestInterface.name: TestInterfaceHandler(probe: probe)],
            configuration: configuration, group: group)
        servers.append(server)
        probe.server.withLockedValue { $0 = server }
        return server
    }

    func start(_ configure: (inout VarlinkServerConfiguration) -> Void = { _ in }) async throws -> VarlinkServer {
        let server = makeServer(configure)
        try await server.listen(unixSocketPath: socketPath)
        return server
    }

    func tearDown() async {
        for server in servers { await server.stop() }
        try? await group.shutdownGracefully()
        try? FileManager.default.removeItem(atPath: folder)
    }

    func call(_ method: String, _ parameters: JSONValue? = nil) async throws -> JSONValue {
        let path = socketPath
        return try await offloaded { try VarlinkClient(unixSocketPath: path).call(method, parameters: parameters) }
    }
}
