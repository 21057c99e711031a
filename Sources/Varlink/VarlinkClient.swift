#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SystemCalls

/// Why a client call failed. `daemonUnreachable` is its own case so a CLI can add a
/// "start the service" hint without matching on message text.
public enum VarlinkClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing listens on the socket (missing file, refused, permission denied on the path).
    case daemonUnreachable(path: String, reason: String)
    /// The service answered with a Varlink error.
    case remote(name: String, parameters: [String: JSONValue])
    /// The service sent something that is not a valid reply, or a reply that is too large.
    case protocolError(String)
    /// The service closed the connection before the reply was complete.
    case connectionClosed
    /// A system call on an established connection failed.
    case systemCallFailed(call: String, errno: Int32)
    /// The service did not accept the connection, or did not answer, within the client's timeout.
    case timedOut(path: String, milliseconds: Int)

    /// One sentence saying what failed, with the socket's path, the error's name or the system call.
    public var description: String {
        switch self {
        case .daemonUnreachable(let path, let reason):
            return "Cannot connect to the daemon at '\(path)': \(reason)."
        case .remote(let name, _) where name == VarlinkError.permissionDenied.name:
            return "The service refused this connection (\(name)): it does not serve this user."
        case .remote(let name, let parameters):
            return VarlinkError(name: name, parameters: parameters).description
        case .protocolError(let message):
            return "The daemon sent an invalid reply: \(message)."
        case .connectionClosed:
            return "The daemon closed the connection before replying."
        case .systemCallFailed(let call, let code):
            return "The system call \(call) failed: \(errnoText(code)) (errno \(code))."
        case .timedOut(let path, let milliseconds):
            return "The daemon at '\(path)' did not answer within \(milliseconds) ms."
        }
    }
}

/// A blocking Varlink client over a Unix stream socket. Made for short-lived command-line
/// tools: no event loop, no threads, one call at a time.
public final class VarlinkClient {
    /// The Unix socket this client is connected to.
    public let socketPath: String
    private let descriptor: Int32
    private var decoder: VarlinkFrameDecoder
    /// nil: wait as long as it takes.
    private let timeoutMilliseconds: Int?

    /// `timeoutMilliseconds` bounds the connect and each send and receive (`timedOut`): for a
    /// caller that must not hang on a socket nobody serves, such as one a socket unit holds for a
    /// service that cannot start, which accepts the connection and never answers.
    public init(
        unixSocketPath path: String, maxReplyBytes: Int = 16 << 20, timeoutMilliseconds: Int? = nil
    ) throws(VarlinkClientError) {
        socketPath = path
        decoder = VarlinkFrameDecoder(maxMessageBytes: maxReplyBytes)
        self.timeoutMilliseconds = timeoutMilliseconds
        guard let address = UnixSocketAddress(path: path) else {
            throw .daemonUnreachable(
                path: path, reason: "the socket path is empty, contains NUL or is longer than \(UnixSocketAddress.maxPathBytes) bytes")
        }
        #if canImport(Darwin)
        let socketType = SOCK_STREAM
        #else
        let socketType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #endif
        let fd = socket(AF_UNIX, socketType, 0)
        guard fd >= 0 else { throw .systemCallFailed(call: "socket", errno: errno) }
        if let timeoutMilliseconds {
            // Linux bounds a Unix socket's connect by its send timeout (a full backlog), and
            // send and recv by theirs; each then fails with EAGAIN.
            var limit = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
            for option in [SO_SNDTIMEO, SO_RCVTIMEO] {
                guard setsockopt(fd, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
                    let code = errno
                    close(fd)
                    throw .systemCallFailed(call: "setsockopt", errno: code)
                }
            }
        }
        let result = retryingOnInterrupt { address.withSocketAddress { connect(fd, $0, $1) } }
        if result != 0 {
            let code = errno
            close(fd)
            if let timeoutMilliseconds, code == EAGAIN || code == EWOULDBLOCK {
                throw .timedOut(path: path, milliseconds: timeoutMilliseconds)
            }
            throw .daemonUnreachable(path: path, reason: errnoText(code))
        }
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// Ends the connection both ways without closing its descriptor, so a `Replies.next()`
    /// blocked on another thread returns (`connectionClosed`) and the descriptor is not reused
    /// under it; the descriptor is closed when the client goes.
    public func shutDown() {
        _ = shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Calls a method and returns its reply parameters.
    public func call(_ method: String, parameters: JSONValue? = nil) throws(VarlinkClientError) -> JSONValue {
        try send(VarlinkCall(method: method, parameters: try Self.object(parameters)))
        let reply = try receiveReply()
        return .object(reply.parameters)
    }

    /// Calls a method and decodes its reply's parameters into `Reply` straight from the reply's
    /// text: one `JSONDecoder` pass, where `call(_:parameters:)` followed by `JSONValue.decode`
    /// writes the parameters out as text again and reads them twice, a noticeable part of a
    /// short-lived client such as `qactl list`. Throws `VarlinkClientError`, or for parameters
    /// that do not match `Reply` the `JSONValueDecodingError` that `JSONValue.decode` words.
    public func call<Reply: Decodable>(_ method: String, parameters: JSONValue? = nil, decoding: Reply.Type) throws -> Reply {
        try send(VarlinkCall(method: method, parameters: try Self.object(parameters)))
        return try receiveDecoded(Reply.self)
    }

    /// Calls a method with typed parameters, encoded once straight into the call's text (not
    /// through a `JSONValue`), and decodes the reply as `call(_:parameters:decoding:)` does.
    /// Throws as that does, or the `EncodingError` of parameters that are not a JSON object.
    public func call<Parameters: Encodable, Reply: Decodable>(
        _ method: String, encoding parameters: Parameters, decoding: Reply.Type
    ) throws -> Reply {
        let encoded = try EncodedJSONObject(encoding: parameters)
        guard let frame = VarlinkCall.frameBytes(method: method, encodedParameters: encoded) else {
            return try call(method, parameters: JSONValue(encoding: parameters), decoding: decoding)
        }
        try send(frame: frame)
        return try receiveDecoded(Reply.self)
    }

    private func receiveDecoded<Reply: Decodable>(_ type: Reply.Type) throws -> Reply {
        let (reply, frame) = try receiveFrame()
        if let envelope = try? JSONDecoder().decode(ReplyEnvelope<Reply>.self, from: Data(frame)) {
            return envelope.parameters
        }
        return try JSONValue.object(reply.parameters).decode(Reply.self)
    }

    /// A reply's text read for its parameters alone (an error reply never gets here).
    private struct ReplyEnvelope<Parameters: Decodable>: Decodable {
        var parameters: Parameters
    }

    /// Calls a method and decodes its reply into a typed value.
    public func call<Reply: Decodable>(
        _ method: String, parameters: some Encodable, replying: Reply.Type
    ) throws(VarlinkClientError) -> Reply {
        let encoded: JSONValue
        do { encoded = try JSONValue(encoding: parameters) } catch {
            throw .protocolError("the parameters of '\(method)' cannot be encoded: \(error)")
        }
        let reply = try call(method, parameters: encoded)
        do { return try reply.decode(Reply.self) } catch {
            throw .protocolError("the reply to '\(method)' does not match its declaration: \(error)")
        }
    }

    /// Sends a call that expects no reply.
    public func callOneway(_ method: String, parameters: JSONValue? = nil) throws(VarlinkClientError) {
        try send(VarlinkCall(method: method, parameters: try Self.object(parameters), oneway: true))
    }

    /// Calls a method with `more` set; iterate the returned replies until `next()` returns `nil`.
    public func callMore(_ method: String, parameters: JSONValue? = nil) throws(VarlinkClientError) -> Replies {
        try send(VarlinkCall(method: method, parameters: try Self.object(parameters), more: true))
        return Replies(client: self)
    }

    /// The replies of a `more` call, read one at a time as the service sends them.
    public struct Replies {
        let client: VarlinkClient
        var finished = false

        /// The next reply's parameters, or `nil` after the last one (`continues` false).
        public mutating func next() throws(VarlinkClientError) -> JSONValue? {
            guard !finished else { return nil }
            let reply: VarlinkReply
            do { reply = try client.receiveReply() } catch {
                finished = true
                throw error
            }
            finished = !reply.continues
            return .object(reply.parameters)
        }
    }

    private static func object(_ parameters: JSONValue?) throws(VarlinkClientError) -> [String: JSONValue] {
        switch parameters {
        case nil, .null?: return [:]
        case .object(let object)?: return object
        case let other?: throw .protocolError("call parameters must be a JSON object, not \(other)")
        }
    }

    private func send(_ call: VarlinkCall) throws(VarlinkClientError) {
        let bytes: [UInt8]
        do { bytes = try call.frameBytes() } catch {
            throw .protocolError("the call '\(call.method)' cannot be encoded: \(error)")
        }
        try send(frame: bytes)
    }

    private func send(frame bytes: [UInt8]) throws(VarlinkClientError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { raw in
                retryingOnInterrupt { sendWithoutSignal(descriptor, raw.baseAddress, raw.count) }
            }
            if written < 0 {
                let code = errno
                if code == EPIPE || code == ECONNRESET {
                    // A service that refuses a peer (another user, too many connections) answers
                    // and closes at once, often before the call is sent: its reason is already
                    // in our receive buffer, and says more than "closed".
                    _ = try receiveReply()
                    throw .connectionClosed
                }
                if let timeoutMilliseconds, code == EAGAIN || code == EWOULDBLOCK {
                    throw .timedOut(path: socketPath, milliseconds: timeoutMilliseconds)
                }
                throw .systemCallFailed(call: "send", errno: code)
            }
            offset += written
        }
    }

    private func receiveReply() throws(VarlinkClientError) -> VarlinkReply {
        try receiveFrame().reply
    }

    /// The next reply, with the text it was read from.
    private func receiveFrame() throws(VarlinkClientError) -> (reply: VarlinkReply, bytes: [UInt8]) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            switch decoder.nextFrame() {
            case .message(let bytes):
                let reply: VarlinkReply
                if let parsed = VarlinkReply.fastParse(bytes) {
                    reply = parsed
                } else {
                    do { reply = try JSONDecoder().decode(VarlinkReply.self, from: Data(bytes)) } catch {
                        throw .protocolError("a reply is not a Varlink reply object (\(error))")
                    }
                }
                if let name = reply.error { throw .remote(name: name, parameters: reply.parameters) }
                return (reply, bytes)
            case .tooLarge:
                throw .protocolError("a reply exceeds the limit of \(decoder.maxMessageBytes) bytes")
            case .needMoreData:
                let count = chunk.withUnsafeMutableBytes { raw in
                    retryingOnInterrupt { recv(descriptor, raw.baseAddress, raw.count, 0) }
                }
                if count < 0 {
                    let code = errno
                    if code == ECONNRESET { throw .connectionClosed }
                    if let timeoutMilliseconds, code == EAGAIN || code == EWOULDBLOCK {
                        throw .timedOut(path: socketPath, milliseconds: timeoutMilliseconds)
                    }
                    throw .systemCallFailed(call: "recv", errno: code)
                }
                if count == 0 { throw .connectionClosed }
                decoder.receive(chunk[..<count])
            }
        }
    }
}

// MSG_NOSIGNAL: a daemon that went away must surface as an error, not kill the CLI with SIGPIPE.
private func sendWithoutSignal(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Darwin)
    return send(fd, buffer, count, 0)
    #else
    return send(fd, buffer, count, Int32(MSG_NOSIGNAL))
    #endif
}

