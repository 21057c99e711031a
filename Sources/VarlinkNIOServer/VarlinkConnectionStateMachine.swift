import NIOCore
import Varlink

/// Every decision of one Varlink connection, with no I/O: `VarlinkConnectionHandler` feeds it
/// what happened (an event: bytes read, a call finished, a timer fired, …) and carries out the
/// `Action`s it returns, in order. The handler keeps only the I/O handles (its context, the
/// scheduled timers, the running call's task).
///
/// A connection goes `admitting` → `open` → (`replyingError` → `lingering`) → `closing` →
/// `closed`, or `admitting` → `refusing` → `closing` when its peer is turned away:
/// - `admitting`: the server has not checked the peer yet; bytes are buffered, not decoded.
/// - `open`: calls are decoded and run strictly one after another, so pipelined calls are
///   answered in order. Reading pauses while `maxPipelinedCalls` wait behind the running one,
///   so a peer that pipelines without end is held back by the kernel's socket buffer.
/// - `refusing`: the refusal (`TooManyConnections`, `PermissionDenied`) is being written; then close.
/// - `replyingError`: the stream became unusable (a message too large or not a call): its error
///   reply is being written, after the calls before it were answered.
/// - `lingering`: the error reply is out and our side is shut for writing; the peer's input is
///   discarded until it closes or the linger timer fires. Closing at once with the peer's bytes
///   unread would reset the connection, and a peer still sending would never see why.
/// - `closing`: we asked the channel to close and wait for it to go inactive.
/// - `closed`: the channel is inactive; every later event is ignored.
///
/// The actions of one event assume those of the events before were carried out; the handler
/// carries them out in the order they were produced.
struct VarlinkConnectionStateMachine {
    /// What the decisions depend on, from `VarlinkServerConfiguration`.
    struct Limits: Sendable {
        var maxMessageBytes: Int
        var maxPipelinedCalls: Int
        /// Whether an idle connection is closed after a while at all.
        var closesIdleConnections: Bool
        /// Names the connection-level errors (`MessageTooLarge`, `InvalidMessage`).
        var errorInterface: String
    }

    enum State: Hashable {
        case admitting
        case open(Serving)
        case refusing
        /// `readHeld`: reading was paused in `open` and is resumed once lingering starts.
        case replyingError(inputClosed: Bool, readHeld: Bool)
        case lingering
        case closing
        case closed
    }

    /// What an open connection keeps track of.
    struct Serving: Hashable {
        var callRunning = false
        /// The peer shut its sending side: close once the calls it sent are answered.
        var inputClosed = false
        /// A read was asked for and not passed on because the queue is full.
        var readHeld = false
        /// What the server was last told (it evicts the connection idle the longest). Idle
        /// from the start: the server registers a new connection as idle.
        var reportedIdle = true
        var hasCalled = false
        var partialMessageTimerArmed = false
        var idleTimerArmed = false
    }

    enum Timer: Hashable, Sendable {
        /// A message must be complete this long after its first byte arrived.
        case partialMessage
        /// Runs while the connection has no call running or queued and no half message.
        case idle
        /// How long input is discarded after an error reply.
        case linger
    }

    enum Action: Hashable {
        /// Pass a read on to the channel (also: resume reading that was held).
        case read
        /// Tell the server whether the connection has no call running or queued.
        case reportIdle(Bool)
        /// Tell the server the first complete call arrived (it evicts such connections last).
        case reportFirstCall
        case arm(Timer)
        case cancel(Timer)
        /// Route and run the call; report `callFinished()` when its last reply is written.
        case startCall(VarlinkCall)
        /// Write this error; report `refusalWritten()` when done.
        case writeRefusal(VarlinkError)
        /// Write this error reply; report `errorReplyWritten(channelIsActive:)` when done.
        case writeFatalError(VarlinkError)
        /// Shut the output down, keep reading.
        case shutOutput
        case close
        /// The channel went inactive: cancel the running call's task (which ends its stream, so
        /// the service learns that a streaming peer went away).
        case cancelRunningCall
        /// The channel went inactive: cancel whatever timer is still scheduled.
        case cancelAllTimers
        /// Give the connection's slot back to the server.
        case release(connectionID: UInt64)
    }

    private enum Pending {
        case call(VarlinkCall)
        /// The stream is unusable from here on: answer with this error, then linger and close.
        case fatal(VarlinkError)
    }

    let limits: Limits
    private(set) var state: State = .admitting
    var isAdmitting: Bool { state == .admitting }
    private(set) var connectionID: UInt64?
    private var decoder: VarlinkFrameDecoder
    /// Calls decoded and not started yet; empty outside `open`.
    private var queue = CircularBuffer<Pending>()

    init(limits: Limits) {
        self.limits = limits
        self.decoder = VarlinkFrameDecoder(maxMessageBytes: limits.maxMessageBytes)
    }

    /// Calls waiting behind the running one.
    var queuedCount: Int { queue.count }

    // MARK: Admission

    /// The server gave the connection a slot.
    mutating func admitted(as connectionID: UInt64) {
        self.connectionID = connectionID
    }

    /// The server has no slot, or the peer may not connect.
    mutating func refuse(with error: VarlinkError) -> [Action] {
        guard case .admitting = state else { return [] }
        state = .refusing
        return [.writeRefusal(error)]
    }

    mutating func refusalWritten() -> [Action] {
        guard case .refusing = state else { return [] }
        state = .closing
        return [.close]
    }

    /// The peer's credentials passed: the bytes it sent so far are decoded and served.
    mutating func peerAccepted() -> [Action] {
        guard case .admitting = state else { return [] }
        state = .open(Serving())
        return decodeAndServe()
    }

    // MARK: Input

    mutating func bytesRead(_ bytes: some Sequence<UInt8>) -> [Action] {
        switch state {
        case .admitting:
            decoder.receive(bytes)
            return []
        case .open:
            decoder.receive(bytes)
            return decodeAndServe()
        case .refusing, .replyingError, .lingering, .closing, .closed:
            // Discarded: nothing more is served on this connection.
            return []
        }
    }

    /// The channel wants to read more: held back while the queue is full.
    mutating func readRequested() -> [Action] {
        guard queuedCount >= limits.maxPipelinedCalls else { return [.read] }
        if case .open(var serving) = state {
            serving.readHeld = true
            state = .open(serving)
        }
        return []
    }

    /// The peer shut its sending side down.
    mutating func inputClosed() -> [Action] {
        switch state {
        case .admitting:
            state = .closing
            return [.close]
        case .open(var serving):
            serving.inputClosed = true
            state = .open(serving)
            return closeIfDone()
        case .replyingError(_, let readHeld):
            state = .replyingError(inputClosed: true, readHeld: readHeld)
            return []
        case .lingering:
            state = .closing
            return [.close]
        case .refusing, .closing, .closed:
            return []
        }
    }

    // MARK: Calls and replies

    /// The running call's last reply was written (or the call was oneway, or failed).
    mutating func callFinished() -> [Action] {
        guard case .open(var serving) = state else { return [] }
        serving.callRunning = false
        state = .open(serving)
        return serveNext()
    }

    /// The error reply of `writeFatalError` was written, or failed to be. `channelIsActive`:
    /// whether the channel is still open (a failed write may come from it closing).
    mutating func errorReplyWritten(channelIsActive: Bool) -> [Action] {
        guard case .replyingError(let inputClosed, let readHeld) = state, channelIsActive else { return [] }
        if inputClosed {
            state = .closing
            return [.shutOutput, .close]
        }
        state = .lingering
        return [.shutOutput] + (readHeld ? [.read] : []) + [.arm(.linger)]
    }

    // MARK: Timers and closing

    /// A timer fired: the connection closes if the timer is still armed; one that is not any
    /// more changes nothing.
    mutating func timerFired(_ timer: Timer) -> [Action] {
        let armed = switch (timer, state) {
        case (.partialMessage, .open(let serving)): serving.partialMessageTimerArmed
        case (.idle, .open(let serving)): serving.idleTimerArmed
        case (.linger, .lingering): true
        default: false
        }
        guard armed else { return [] }
        state = .closing
        return [.close]
    }

    /// Something failed in the pipeline.
    mutating func errorCaught() -> [Action] {
        switch state {
        case .closed: return []
        default:
            state = .closing
            return [.close]
        }
    }

    mutating func channelInactive() -> [Action] {
        guard state != .closed else { return [] }
        state = .closed
        queue.removeAll()
        return [.cancelRunningCall, .cancelAllTimers] + (connectionID.map { [.release(connectionID: $0)] } ?? [])
    }

    // MARK: Serving

    private mutating func decodeAndServe() -> [Action] {
        decoding: while true {
            if case .fatal? = queue.last { break }
            switch decoder.nextCall() {
            case .call(let call): queue.append(.call(call))
            case .needMoreData: break decoding
            case .replyErrorAndClose(let error): queue.append(.fatal(error.varlinkError(in: limits.errorInterface)))
            }
        }
        return serveNext()
    }

    /// Starts the next queued call if none is running, then brings the deadlines and what the
    /// server knows up to date.
    private mutating func serveNext() -> [Action] {
        guard case .open(var serving) = state else { return [] }
        guard !serving.callRunning, let next = queue.popFirst() else {
            return closeIfDone() + updateDeadlines()
        }
        var actions: [Action] = []
        if serving.readHeld && queuedCount < limits.maxPipelinedCalls {
            serving.readHeld = false
            actions.append(.read)
        }
        switch next {
        case .fatal(let error):
            if serving.partialMessageTimerArmed { actions.append(.cancel(.partialMessage)) }
            if serving.idleTimerArmed { actions.append(.cancel(.idle)) }
            queue.removeAll()
            state = .replyingError(inputClosed: serving.inputClosed, readHeld: serving.readHeld)
            return actions + [.writeFatalError(error)]
        case .call(let call):
            serving.callRunning = true
            if !serving.hasCalled {
                serving.hasCalled = true
                actions.append(.reportFirstCall)
            }
            state = .open(serving)
            return actions + updateDeadlines() + [.startCall(call)]
        }
    }

    /// Arms or disarms the two deadlines after anything that changes what the connection holds,
    /// and tells the server whether the connection is idle (which makes it evictable).
    private mutating func updateDeadlines() -> [Action] {
        guard case .open(var serving) = state else { return [] }
        var actions: [Action] = []
        let partial = decoder.hasPartialMessage
        if partial != serving.partialMessageTimerArmed {
            serving.partialMessageTimerArmed = partial
            actions.append(partial ? .arm(.partialMessage) : .cancel(.partialMessage))
        }
        let idle = !serving.callRunning && queuedCount == 0
        if idle != serving.reportedIdle {
            serving.reportedIdle = idle
            actions.append(.reportIdle(idle))
        }
        let idleTimer = idle && !partial && limits.closesIdleConnections
        if idleTimer != serving.idleTimerArmed {
            serving.idleTimerArmed = idleTimer
            actions.append(idleTimer ? .arm(.idle) : .cancel(.idle))
        }
        state = .open(serving)
        return actions
    }

    /// The peer sent its last byte and every call it sent is answered.
    private mutating func closeIfDone() -> [Action] {
        guard case .open(let serving) = state, serving.inputClosed, !serving.callRunning, queuedCount == 0 else {
            return []
        }
        state = .closing
        return [.close]
    }
}

extension VarlinkConnectionStateMachine.Limits {
    init(_ configuration: VarlinkServerConfiguration) {
        self.init(
            maxMessageBytes: configuration.maxMessageBytes, maxPipelinedCalls: configuration.maxPipelinedCalls,
            closesIdleConnections: configuration.idleTimeout != nil, errorInterface: configuration.errorInterface)
    }
}
