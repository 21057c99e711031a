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
/// back-pressure. Every decision is `VarlinkConnectionStateMachine`'s; this handler feeds it the
/// channel's events and carries out its actions, and keeps only the I/O handles (the context,
/// the scheduled timers, the running call's task). All of it lives on the channel's event loop.
final class VarlinkConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let server: VarlinkServer
    private var machine: VarlinkConnectionStateMachine
    private var peer: VarlinkPeerCredentials?
    private var context: ChannelHandlerContext?
    private var runningCall: Task<Void, Never>?
    private var timers: [VarlinkConnectionStateMachine.Timer: Scheduled<Void>] = [:]
    private var isPerforming = false
    private var deferredActions: [VarlinkConnectionStateMachine.Action] = []

    init(server: VarlinkServer) {
        self.server = server
        self.machine = VarlinkConnectionStateMachine(limits: .init(server.configuration))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        guard let id = server.admit(context.channel) else {
            let error = server.named(.tooManyConnections(maxConnections: server.configuration.maxConnections))
            perform(machine.refuse(with: error), context: context)
            return
        }
        machine.admitted(as: id)
        guard let options = context.channel as? any SocketOptionProvider else {
            perform(machine.refuse(with: .permissionDenied), context: context)
            return
        }
        let credentials: EventLoopFuture<PeerCredentialsOption> = options.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(CLinux_SO_PEERCRED))
        credentials.assumeIsolated().whenComplete { result in
            guard let context = self.context, self.machine.isAdmitting else { return }
            guard case .success(let raw) = result else {
                self.perform(self.machine.refuse(with: .permissionDenied), context: context)
                return
            }
            let peer = VarlinkPeerCredentials(pid: raw.pid, uid: raw.uid, gid: raw.gid)
            guard self.server.configuration.allows(peer) else {
                self.server.configuration.peerRefused?(peer)
                self.perform(self.machine.refuse(with: .permissionDenied), context: context)
                return
            }
            self.peer = peer
            self.perform(self.machine.peerAccepted(), context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        perform(machine.channelInactive(), context: context)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        perform(machine.bytesRead(buffer.readableBytesView), context: context)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            perform(machine.inputClosed(), context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        perform(machine.errorCaught(), context: context)
    }

    func read(context: ChannelHandlerContext) {
        perform(machine.readRequested(), context: context)
    }

    // MARK: Carrying out the machine's actions

    /// Carries the actions out in the order the machine produced them. An event that arises
    /// while they are carried out (a write that completes at once, a close that makes the
    /// channel inactive) has its actions queued behind the ones still to do, since the machine
    /// computed those first.
    private func perform(_ actions: [VarlinkConnectionStateMachine.Action], context: ChannelHandlerContext) {
        guard !isPerforming else {
            deferredActions += actions
            return
        }
        isPerforming = true
        defer { isPerforming = false }
        var next = actions
        while !next.isEmpty {
            for action in next { carryOut(action, context: context) }
            next.removeAll(keepingCapacity: true)
            swap(&next, &deferredActions)
        }
    }

    private func carryOut(_ action: VarlinkConnectionStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .read:
            context.read()
        case .reportIdle(let idle):
            if let id = machine.connectionID { server.connection(id, isIdle: idle) }
        case .reportFirstCall:
            if let id = machine.connectionID { server.connectionMadeItsFirstCall(id) }
        case .arm(let timer):
            arm(timer, context: context)
        case .cancel(let timer):
            cancel(timer)
        case .startCall(let call):
            start(call, context: context)
        case .writeRefusal(let error):
            write(VarlinkReply(error: error), context: context).assumeIsolated().whenComplete { _ in
                self.event { $0.refusalWritten() }
            }
        case .writeFatalError(let error):
            write(VarlinkReply(error: error), context: context).assumeIsolated().whenComplete { _ in
                let isActive = self.context?.channel.isActive ?? false
                self.event { $0.errorReplyWritten(channelIsActive: isActive) }
            }
        case .shutOutput:
            context.close(mode: .output, promise: nil)
        case .close:
            context.close(promise: nil)
        case .cancelRunningCall:
            runningCall?.cancel()
            runningCall = nil
        case .cancelAllTimers:
            for timer in timers.keys { cancel(timer) }
        case .release(let id):
            server.release(connectionID: id)
        }
    }

    /// An event from a callback (a write completed, a timer fired, a call finished): dropped
    /// once the handler has left the pipeline.
    private func event(_ transition: (inout VarlinkConnectionStateMachine) -> [VarlinkConnectionStateMachine.Action]) {
        guard let context else { return }
        perform(transition(&machine), context: context)
    }

    private func arm(_ timer: VarlinkConnectionStateMachine.Timer, context: ChannelHandlerContext) {
        let configuration = server.configuration
        let delay: TimeAmount? = switch timer {
        case .partialMessage: configuration.partialMessageTimeout
        case .idle: configuration.idleTimeout
        case .linger: configuration.closeLinger
        }
        guard let delay else { return }
        timers[timer] = context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
            self.timers[timer] = nil
            self.event { $0.timerFired(timer) }
        }
    }

    private func cancel(_ timer: VarlinkConnectionStateMachine.Timer) {
        timers.removeValue(forKey: timer)?.cancel()
    }

    /// Routes the call: `org.varlink.service` and immediate replies are answered on the event
    /// loop; anything else runs as the handler's stream.
    private func start(_ call: VarlinkCall, context: ChannelHandlerContext) {
        switch server.dispatcher.route(call) {
        case .reply(let reply):
            answerDirectly(call, with: reply, context: context)
        case .interface(let name):
            guard let handler = server.handlers[name], let peer, let connectionID = machine.connectionID else {
                answerDirectly(call, with: VarlinkReply(error: .methodNotImplemented(call.method)), context: context)
                return
            }
            let callContext = VarlinkCallContext(connectionID: connectionID, peer: peer)
            if !call.more, let reply = handler.immediateReply(to: call, context: callContext) {
                answerDirectly(call, with: reply, context: context)
                return
            }
            runStream(handler.handle(call, context: callContext), for: call, context: context)
        }
    }

    private func answerDirectly(_ call: VarlinkCall, with reply: VarlinkReply, context: ChannelHandlerContext) {
        guard !call.oneway else {
            event { $0.callFinished() }
            return
        }
        write(reply, context: context).assumeIsolated().whenComplete { _ in self.event { $0.callFinished() } }
    }

    private func runStream(
        _ stream: AsyncThrowingStream<VarlinkReply, any Error>, for call: VarlinkCall, context: ChannelHandlerContext
    ) {
        let channel = context.channel
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let errorInterface = server.configuration.errorInterface
        // Unstructured: the call outlives this event-loop callback and no task of ours spans the
        // connection; the handler owns it and cancels it when the channel goes inactive.
        runningCall = Task(executorPreference: server.configuration.taskExecutor) {
            await VarlinkReplyForwarder.forward(stream, for: call, to: channel, errorInterface: errorInterface)
            channel.eventLoop.execute {
                handler.value.runningCall = nil
                handler.value.event { $0.callFinished() }
            }
        }
    }

    private func write(_ reply: VarlinkReply, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        guard let frame = try? context.channel.allocator.frame(of: reply) else {
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
        _ stream: AsyncThrowingStream<VarlinkReply, any Error>, for call: VarlinkCall, to channel: any Channel, errorInterface: String
    ) async {
        var replies = stream.makeAsyncIterator()
        do {
            while let next = try await replies.next() {
                var reply = next
                // Only a `more` call may be answered with `continues`; an error always ends the call.
                if !call.more || reply.error != nil { reply.continues = false }
                if !call.oneway {
                    try await channel.writeAndFlush(try channel.allocator.frame(of: reply)).get()
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
