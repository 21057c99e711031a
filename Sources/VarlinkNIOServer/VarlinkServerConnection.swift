import CLinux
import NIOCore
import SystemCalls
import Varlink

#if canImport(Glibc)
import Glibc
#endif

/// `struct ucred` from <sys/socket.h>, which Swift's Glibc module does not export
/// (it sits behind _GNU_SOURCE). Same layout: pid, uid, gid (CLinux's shim.c checks it).
private struct PeerCredentialsOption: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}


/// One Varlink connection: checks the peer, splits the byte stream into calls, runs them
/// strictly one after another so pipelined calls are answered in order, and writes replies with
/// back-pressure. All state lives on the channel's event loop.
final class VarlinkConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Pending {
        case call(VarlinkCall)
        /// The stream is unusable from here on: answer with this error, then close.
        case fatal(VarlinkError)
    }

    private let server: VarlinkServer
    private var decoder: VarlinkFrameDecoder
    private var queue: [Pending] = []
    private var queueHead = 0
    private var connectionID: UInt64?
    private var peer: VarlinkPeerCredentials?
    private var runningCall: Task<Void, Never>?
    private var isBusy = false
    private var isClosing = false
    private var inputClosed = false
    private var readHeld = false
    private var partialMessageTimer: Scheduled<Void>?
    /// Runs while the connection has no call running or queued and no half message.
    private var idleTimer: Scheduled<Void>?
    /// What the server was last told (it evicts the connection idle the longest).
    private var reportedIdle = true
    private var hasCalled = false
    /// After a protocol error: the reply went out and the output is shut down; input is
    /// discarded until the peer closes or `closeLinger` passes.
    private var isLingering = false
    private var lingerTimer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(server: VarlinkServer) {
        self.server = server
        self.decoder = VarlinkFrameDecoder(maxMessageBytes: server.configuration.maxMessageBytes)
    }

    private var queuedCount: Int { queue.count - queueHead }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        guard let id = server.admit(context.channel) else {
            refuse(with: server.named(.tooManyConnections(maxConnections: server.configuration.maxConnections)), context: context)
            return
        }
        connectionID = id
        guard let options = context.channel as? any SocketOptionProvider else {
            refuse(with: .permissionDenied, context: context)
            return
        }
        let credentials: EventLoopFuture<PeerCredentialsOption> = options.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(CLinux_SO_PEERCRED))
        credentials.assumeIsolated().whenComplete { result in
            guard let context = self.context, !self.isClosing else { return }
            guard case .success(let raw) = result else {
                self.refuse(with: .permissionDenied, context: context)
                return
            }
            let peer = VarlinkPeerCredentials(pid: raw.pid, uid: raw.uid, gid: raw.gid)
            guard self.server.configuration.allows(peer) else {
                self.server.configuration.peerRefused?(peer)
                self.refuse(with: .permissionDenied, context: context)
                return
            }
            self.peer = peer
            self.decodeCalls(context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        isClosing = true
        // Cancelling the running call's task ends the handler's stream, which is how the service
        // learns that a streaming peer (a subscription's caller, say) went away.
        runningCall?.cancel()
        runningCall = nil
        queue.removeAll()
        queueHead = 0
        partialMessageTimer?.cancel()
        partialMessageTimer = nil
        idleTimer?.cancel()
        idleTimer = nil
        lingerTimer?.cancel()
        lingerTimer = nil
        if let connectionID { server.release(connectionID: connectionID) }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        let buffer = unwrapInboundIn(data)
        decoder.receive(buffer.readableBytesView)
        decodeCalls(context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            if isLingering {
                context.close(promise: nil)
            } else {
                closeIfDone(context: context)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // Reading pauses while many calls wait behind a slow one, so a peer that pipelines without
    // end is held back by the kernel's socket buffer instead of growing the queue.
    func read(context: ChannelHandlerContext) {
        if queuedCount >= server.configuration.maxPipelinedCalls {
            readHeld = true
        } else {
            context.read()
        }
    }

    private func decodeCalls(context: ChannelHandlerContext) {
        guard peer != nil, !isClosing else { return }
        decoding: while true {
            if case .fatal? = queue.last { break }
            switch decoder.nextCall() {
            case .call(let call): queue.append(.call(call))
            case .needMoreData: break decoding
            case .replyErrorAndClose(let error): queue.append(.fatal(server.named(error)))
            }
        }
        startNextCall(context: context)
        updateDeadlines(context: context)
    }

    /// Arms or disarms the two deadlines after anything that changes what the connection holds,
    /// and tells the server whether the connection is idle (which makes it evictable).
    private func updateDeadlines(context: ChannelHandlerContext) {
        guard !isClosing else { return }
        let loop = context.eventLoop.assumeIsolated()
        if decoder.hasPartialMessage {
            if partialMessageTimer == nil {
                partialMessageTimer = loop.scheduleTask(in: server.configuration.partialMessageTimeout) {
                    self.context?.close(promise: nil)
                }
            }
        } else {
            partialMessageTimer?.cancel()
            partialMessageTimer = nil
        }
        let idle = !isBusy && queuedCount == 0
        if idle != reportedIdle, let connectionID {
            reportedIdle = idle
            server.connection(connectionID, isIdle: idle)
        }
        if idle && !decoder.hasPartialMessage, let idleTimeout = server.configuration.idleTimeout {
            if idleTimer == nil {
                idleTimer = loop.scheduleTask(in: idleTimeout) { self.context?.close(promise: nil) }
            }
        } else {
            idleTimer?.cancel()
            idleTimer = nil
        }
    }

    private func dequeue() -> Pending? {
        guard queueHead < queue.count else { return nil }
        let next = queue[queueHead]
        queueHead += 1
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        return next
    }

    private func startNextCall(context: ChannelHandlerContext) {
        guard !isBusy, !isClosing, let next = dequeue() else {
            closeIfDone(context: context)
            return
        }
        if readHeld && queuedCount < server.configuration.maxPipelinedCalls {
            readHeld = false
            context.read()
        }
        switch next {
        case .fatal(let error):
            isClosing = true
            cancelDeadlines()
            queue.removeAll()
            queueHead = 0
            write(VarlinkReply(error: error), context: context).assumeIsolated().whenComplete { _ in
                self.lingerThenClose()
            }
        case .call(let call):
            isBusy = true
            if !hasCalled, let connectionID {
                hasCalled = true
                server.connectionMadeItsFirstCall(connectionID)
            }
            switch server.dispatcher.route(call) {
            case .reply(let reply):
                answerDirectly(call, with: reply, context: context)
            case .interface(let name):
                guard let handler = server.handlers[name], let peer, let connectionID else {
                    answerDirectly(call, with: VarlinkReply(error: .methodNotImplemented(call.method)), context: context)
                    return
                }
                let callContext = VarlinkCallContext(connectionID: connectionID, peer: peer)
                if !call.more, let reply = handler.immediateReply(to: call, context: callContext) {
                    answerDirectly(call, with: reply, context: context)
                    return
                }
                let stream = handler.handle(call, context: callContext)
                runStream(stream, for: call, context: context)
            }
        }
    }

    private func answerDirectly(_ call: VarlinkCall, with reply: VarlinkReply, context: ChannelHandlerContext) {
        guard !call.oneway else {
            callFinished()
            return
        }
        write(reply, context: context).assumeIsolated().whenComplete { _ in self.callFinished() }
    }

    private func runStream(
        _ stream: AsyncThrowingStream<VarlinkReply, any Error>, for call: VarlinkCall, context: ChannelHandlerContext
    ) {
        let channel = context.channel
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let errorInterface = server.configuration.errorInterface
        let frames = server.frames
        runningCall = Task {
            await VarlinkReplyForwarder.forward(stream, for: call, to: channel, frames: frames, errorInterface: errorInterface)
            channel.eventLoop.execute { handler.value.callFinished() }
        }
    }

    private func callFinished() {
        isBusy = false
        runningCall = nil
        guard let context else { return }
        startNextCall(context: context)
        updateDeadlines(context: context)
    }

    private func cancelDeadlines() {
        partialMessageTimer?.cancel()
        partialMessageTimer = nil
        idleTimer?.cancel()
        idleTimer = nil
    }

    /// The error reply is out: shut our side down so the peer reads the reply and then the end
    /// of the stream, and keep reading (discarding) a moment. Closing at once with the peer's
    /// bytes unread would reset the connection, and a peer still sending would never see why.
    private func lingerThenClose() {
        guard let context, context.channel.isActive else { return }
        isLingering = true
        context.close(mode: .output, promise: nil)
        if inputClosed {
            context.close(promise: nil)
            return
        }
        if readHeld {
            readHeld = false
            context.read()
        }
        lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: server.configuration.closeLinger) {
            self.context?.close(promise: nil)
        }
    }

    private func closeIfDone(context: ChannelHandlerContext) {
        if inputClosed && !isBusy && queuedCount == 0 && !isClosing {
            isClosing = true
            context.close(promise: nil)
        }
    }

    private func refuse(with error: VarlinkError, context: ChannelHandlerContext) {
        isClosing = true
        write(VarlinkReply(error: error), context: context).assumeIsolated().whenComplete { _ in
            self.context?.close(promise: nil)
        }
    }

    private func write(_ reply: VarlinkReply, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        guard let frame = try? server.frames.frame(of: reply, allocator: context.channel.allocator) else {
            return context.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        return context.writeAndFlush(wrapOutboundOut(frame))
    }
}

enum VarlinkReplyForwarder {
    /// Writes the stream's replies one at a time, each only after the previous one reached the
    /// socket. Runs off the event loop; touches the connection only through the channel.
    /// A failure with no Varlink name becomes `InternalError` of `errorInterface`.
    static func forward(
        _ stream: AsyncThrowingStream<VarlinkReply, any Error>, for call: VarlinkCall, to channel: any Channel,
        frames: SharedReplyFrames, errorInterface: String
    ) async {
        var replies = stream.makeAsyncIterator()
        do {
            while let next = try await replies.next() {
                var reply = next
                // Only a `more` call may be answered with `continues`; an error always ends the call.
                if !call.more || reply.error != nil { reply.continues = false }
                if !call.oneway {
                    try await channel.writeAndFlush(try frames.frame(of: reply, allocator: channel.allocator)).get()
                }
                if !reply.continues { return }
            }
            if Task.isCancelled { return }
            let error = VarlinkConnectionError.internalError(message: "'\(call.method)' ended without a final reply")
            try await send(error.varlinkError(in: errorInterface), for: call, to: channel)
        } catch let error as VarlinkError {
            try? await send(error, for: call, to: channel)
        } catch is CancellationError {
            return
        } catch is ChannelError {
            // The connection is gone; nobody is left to tell.
            return
        } catch {
            let internalError = VarlinkConnectionError.internalError(message: "\(error)")
            try? await send(internalError.varlinkError(in: errorInterface), for: call, to: channel)
        }
    }

    static func send(_ error: VarlinkError, for call: VarlinkCall, to channel: any Channel) async throws {
        guard !call.oneway, !Task.isCancelled else { return }
        try await channel.writeAndFlush(try channel.allocator.frame(of: VarlinkReply(error: error))).get()
    }
}

extension ByteBufferAllocator {
    /// The reply's frame in one buffer: parameters a service encoded beforehand are copied
    /// once, straight in, never decoded or encoded again.
    func frame(of reply: VarlinkReply) throws -> ByteBuffer {
        let pieces = try reply.framePieces()
        var buffer = buffer(capacity: pieces.reduce(0) { $0 + $1.count })
        for piece in pieces { buffer.writeBytes(piece) }
        return buffer
    }
}
