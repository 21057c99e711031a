import Varlink
import XCTest

@testable import VarlinkNIOServer

/// Drives the connection's state machine with no socket: each test feeds events and checks the
/// actions the handler would carry out, and the state the machine ends in.
final class VarlinkConnectionStateMachineTests: XCTestCase {
    typealias Machine = VarlinkConnectionStateMachine
    typealias Action = Machine.Action

    private static let errorInterface = "org.example.test"
    private let id: UInt64 = 7

    private func makeMachine(
        maxMessageBytes: Int = 1024, maxPipelinedCalls: Int = 64, closesIdleConnections: Bool = true
    ) -> Machine {
        Machine(limits: .init(
            maxMessageBytes: maxMessageBytes, maxPipelinedCalls: maxPipelinedCalls,
            closesIdleConnections: closesIdleConnections, errorInterface: Self.errorInterface))
    }

    /// A machine whose peer was admitted and accepted, with nothing sent yet.
    private func openMachine(
        maxMessageBytes: Int = 1024, maxPipelinedCalls: Int = 64, closesIdleConnections: Bool = true
    ) -> Machine {
        var machine = makeMachine(
            maxMessageBytes: maxMessageBytes, maxPipelinedCalls: maxPipelinedCalls,
            closesIdleConnections: closesIdleConnections)
        machine.admitted(as: id)
        let actions = machine.peerAccepted()
        XCTAssertEqual(actions, closesIdleConnections ? [.arm(.idle)] : [])
        return machine
    }

    private func call(_ name: String) -> VarlinkCall {
        VarlinkCall(method: "org.example.test.\(name)")
    }

    private func bytes(_ calls: VarlinkCall...) -> [UInt8] {
        calls.flatMap { try! $0.frameBytes() }
    }

    private func serving(_ machine: Machine) -> Machine.Serving? {
        guard case .open(let serving) = machine.state else { return nil }
        return serving
    }

    private func tooLarge(_ maxBytes: Int) -> VarlinkError {
        VarlinkConnectionError.messageTooLarge(maxBytes: maxBytes).varlinkError(in: Self.errorInterface)
    }

    /// A machine in `lingering` after a message too large (the peer's reading held or not).
    private func lingeringMachine() -> Machine {
        var machine = openMachine(maxMessageBytes: 16)
        XCTAssertEqual(
            machine.bytesRead(Array(repeating: UInt8(ascii: "x"), count: 17)),
            [.cancel(.idle), .writeFatalError(tooLarge(16))])
        XCTAssertEqual(machine.errorReplyWritten(channelIsActive: true), [.shutOutput, .arm(.linger)])
        XCTAssertEqual(machine.state, .lingering)
        return machine
    }

    // MARK: Admission

    func testBytesSentBeforeThePeerIsAcceptedAreServedOnceItIs() {
        var machine = makeMachine()
        machine.admitted(as: id)
        XCTAssertEqual(machine.bytesRead(bytes(call("A"))), [], "nothing is decoded before the peer is checked")
        XCTAssertTrue(machine.isAdmitting)
        XCTAssertEqual(machine.peerAccepted(), [.reportFirstCall, .reportIdle(false), .startCall(call("A"))])
        XCTAssertEqual(serving(machine)?.callRunning, true)
    }

    func testAnAcceptedPeerThatSentNothingIsIdle() {
        var machine = openMachine()
        XCTAssertEqual(serving(machine)?.idleTimerArmed, true)
        XCTAssertEqual(serving(machine)?.reportedIdle, true, "the server registers a new connection as idle")
        XCTAssertEqual(machine.peerAccepted(), [], "accepted once")
        machine = openMachine(closesIdleConnections: false)
        XCTAssertEqual(serving(machine)?.idleTimerArmed, false, "no idle timer without an idle timeout")
    }

    func testARefusedPeerGetsTheErrorThenTheConnectionCloses() {
        var machine = makeMachine()
        let error = VarlinkError.permissionDenied
        machine.admitted(as: id)
        XCTAssertEqual(machine.refuse(with: error), [.writeRefusal(error)])
        XCTAssertEqual(machine.state, .refusing)
        XCTAssertEqual(machine.bytesRead(bytes(call("A"))), [], "a refused peer's calls are not served")
        XCTAssertEqual(machine.peerAccepted(), [])
        XCTAssertEqual(machine.refuse(with: error), [], "refused once")
        XCTAssertEqual(machine.inputClosed(), [])
        XCTAssertEqual(machine.refusalWritten(), [.close])
        XCTAssertEqual(machine.state, .closing)
        XCTAssertEqual(machine.channelInactive(), [.cancelRunningCall, .cancelAllTimers, .release(connectionID: id)])
    }

    func testAConnectionRefusedWithoutASlotReleasesNone() {
        var machine = makeMachine()
        let error = VarlinkConnectionError.tooManyConnections(maxConnections: 1).varlinkError(in: Self.errorInterface)
        XCTAssertEqual(machine.refuse(with: error), [.writeRefusal(error)])
        XCTAssertEqual(machine.refusalWritten(), [.close])
        XCTAssertEqual(machine.channelInactive(), [.cancelRunningCall, .cancelAllTimers])
        XCTAssertEqual(machine.state, .closed)
    }

    func testAPeerCheckThatEndsAfterTheConnectionClosedIsIgnored() {
        var machine = makeMachine()
        machine.admitted(as: id)
        XCTAssertEqual(machine.inputClosed(), [.close], "input closed before the peer was checked")
        XCTAssertFalse(machine.isAdmitting)
        XCTAssertEqual(machine.peerAccepted(), [])
        XCTAssertEqual(machine.refuse(with: .permissionDenied), [])
    }

    // MARK: Calls in order, busy while running

    func testPipelinedCallsRunOneAfterAnotherInOrder() {
        var machine = openMachine()
        XCTAssertEqual(
            machine.bytesRead(bytes(call("A"), call("B"), call("C"))),
            [.reportFirstCall, .reportIdle(false), .cancel(.idle), .startCall(call("A"))])
        XCTAssertEqual(machine.queuedCount, 2)
        XCTAssertEqual(machine.callFinished(), [.startCall(call("B"))], "still busy: nothing to report")
        XCTAssertEqual(machine.callFinished(), [.startCall(call("C"))])
        XCTAssertEqual(machine.callFinished(), [.reportIdle(true), .arm(.idle)])
        XCTAssertEqual(machine.queuedCount, 0)
        XCTAssertEqual(
            machine.bytesRead(bytes(call("D"))), [.reportIdle(false), .cancel(.idle), .startCall(call("D"))],
            "the first call is reported once")
    }

    func testACallArrivingWhileOneRunsWaitsForIt() {
        var machine = openMachine()
        _ = machine.bytesRead(bytes(call("A")))
        XCTAssertEqual(machine.bytesRead(bytes(call("B"))), [], "queued behind the running call")
        XCTAssertEqual(serving(machine)?.callRunning, true)
        XCTAssertEqual(serving(machine)?.idleTimerArmed, false)
        XCTAssertEqual(machine.callFinished(), [.startCall(call("B"))])
    }

    func testACallSplitAcrossReadsStartsWhenItsLastByteArrives() {
        var machine = openMachine()
        let frame = bytes(call("A"))
        XCTAssertEqual(machine.bytesRead(frame.prefix(5)), [.arm(.partialMessage), .cancel(.idle)])
        XCTAssertEqual(machine.bytesRead(frame.dropFirst(5).dropLast()), [], "the deadline counts from the first byte")
        XCTAssertEqual(
            machine.bytesRead(frame.suffix(1)),
            [.reportFirstCall, .cancel(.partialMessage), .reportIdle(false), .startCall(call("A"))])
    }

    // MARK: The idle timer

    func testTheIdleTimerRunsOnlyWhenNothingRunsIsQueuedOrHalfRead() {
        var machine = openMachine()
        let second = bytes(call("B"))
        // Running, a call queued and a half message behind it.
        XCTAssertEqual(
            machine.bytesRead(bytes(call("A")) + second + second.prefix(3)),
            [.reportFirstCall, .arm(.partialMessage), .reportIdle(false), .cancel(.idle), .startCall(call("A"))])
        // Running B, half message: still busy, no idle timer.
        XCTAssertEqual(machine.callFinished(), [.startCall(call("B"))])
        // Nothing runs or is queued, but a half message is: idle for the server, no idle timer.
        XCTAssertEqual(machine.callFinished(), [.reportIdle(true)])
        XCTAssertEqual(serving(machine)?.idleTimerArmed, false)
        // The half message completes: it runs.
        XCTAssertEqual(
            machine.bytesRead(second.dropFirst(3)), [.cancel(.partialMessage), .reportIdle(false), .startCall(call("B"))])
        XCTAssertEqual(machine.callFinished(), [.reportIdle(true), .arm(.idle)])
    }

    func testTheIdleTimerClosesAnIdleConnection() {
        var machine = openMachine()
        XCTAssertEqual(machine.timerFired(.idle), [.close])
        XCTAssertEqual(machine.state, .closing)
        XCTAssertEqual(machine.bytesRead(bytes(call("A"))), [], "nothing more is served")
        XCTAssertEqual(machine.channelInactive(), [.cancelRunningCall, .cancelAllTimers, .release(connectionID: id)])
    }

    func testAnIdleTimerThatFiresWhileACallRunsIsIgnored() {
        var machine = openMachine()
        _ = machine.bytesRead(bytes(call("A")))
        XCTAssertEqual(machine.timerFired(.idle), [], "it was cancelled when the call started")
        XCTAssertEqual(serving(machine)?.callRunning, true)
    }

    // MARK: Half messages

    func testAHalfMessageIsDroppedAtItsDeadline() {
        var machine = openMachine()
        XCTAssertEqual(machine.bytesRead(Array(#"{"method":"#.utf8)), [.arm(.partialMessage), .cancel(.idle)])
        XCTAssertEqual(machine.timerFired(.partialMessage), [.close])
        XCTAssertEqual(machine.state, .closing)
        XCTAssertEqual(machine.bytesRead(Array(#""a.B"}"#.utf8) + [0]), [], "its end comes too late")
    }

    func testAHalfMessageDeadlineThatFiresWhenNoneIsPendingIsIgnored() {
        var machine = openMachine()
        XCTAssertEqual(machine.timerFired(.partialMessage), [])
        XCTAssertEqual(serving(machine)?.idleTimerArmed, true)
    }

    // MARK: Back-pressure

    func testReadingIsHeldWhileTheQueueIsFullAndResumedAsItDrains() {
        var machine = openMachine(maxPipelinedCalls: 2)
        XCTAssertEqual(machine.readRequested(), [.read])
        _ = machine.bytesRead(bytes(call("A"), call("B"), call("C"), call("D")))
        XCTAssertEqual(machine.queuedCount, 3)
        XCTAssertEqual(machine.readRequested(), [], "three calls wait behind the running one")
        XCTAssertEqual(serving(machine)?.readHeld, true)
        XCTAssertEqual(machine.callFinished(), [.startCall(call("B"))], "still two waiting: reading stays held")
        XCTAssertEqual(machine.callFinished(), [.read, .startCall(call("C"))], "one waiting: reading resumes")
        XCTAssertEqual(serving(machine)?.readHeld, false)
        XCTAssertEqual(machine.readRequested(), [.read])
    }

    // MARK: Protocol errors: reply, then linger

    func testAMessageTooLargeIsAnsweredAfterTheCallsBeforeItThenLingers() {
        var machine = openMachine(maxMessageBytes: 64)
        let oversized = Array(repeating: UInt8(ascii: "x"), count: 65) + [0]
        XCTAssertEqual(
            machine.bytesRead(bytes(call("A")) + oversized + bytes(call("B"))),
            [.reportFirstCall, .reportIdle(false), .cancel(.idle), .startCall(call("A"))])
        XCTAssertEqual(machine.queuedCount, 1, "the error waits its turn; nothing after it is decoded")
        XCTAssertEqual(machine.callFinished(), [.writeFatalError(tooLarge(64))])
        XCTAssertEqual(machine.state, .replyingError(inputClosed: false, readHeld: false))
        XCTAssertEqual(machine.bytesRead(bytes(call("C"))), [], "input after the error is discarded")
        XCTAssertEqual(machine.readRequested(), [.read], "reading goes on, to discard")
        XCTAssertEqual(machine.errorReplyWritten(channelIsActive: true), [.shutOutput, .arm(.linger)])
        XCTAssertEqual(machine.state, .lingering)
        XCTAssertEqual(machine.bytesRead(bytes(call("D"))), [])
        XCTAssertEqual(machine.callFinished(), [])
        XCTAssertEqual(machine.inputClosed(), [.close], "the peer read the reply and closed")
        XCTAssertEqual(machine.state, .closing)
    }

    func testAnInvalidMessageIsAnsweredAndCancelsTheDeadlines() {
        var machine = openMachine()
        let garbage = Array("not json".utf8) + [0]
        let reason = "the message is not valid JSON"
        let error = VarlinkConnectionError.invalidMessage(reason: reason).varlinkError(in: Self.errorInterface)
        XCTAssertEqual(machine.bytesRead(garbage + Array("{".utf8)), [.cancel(.idle), .writeFatalError(error)])
        XCTAssertEqual(machine.state, .replyingError(inputClosed: false, readHeld: false))
        XCTAssertEqual(machine.timerFired(.idle), [])
        XCTAssertEqual(machine.timerFired(.partialMessage), [])
    }

    func testAnErrorQueuedBehindARunningCallCancelsTheHalfMessageDeadline() {
        var machine = openMachine(maxMessageBytes: 64)
        XCTAssertEqual(
            machine.bytesRead(bytes(call("A")) + Array("nope".utf8) + [0] + Array("{".utf8)),
            [.reportFirstCall, .arm(.partialMessage), .reportIdle(false), .cancel(.idle), .startCall(call("A"))])
        let error = VarlinkConnectionError.invalidMessage(reason: "the message is not valid JSON")
            .varlinkError(in: Self.errorInterface)
        XCTAssertEqual(machine.callFinished(), [.cancel(.partialMessage), .writeFatalError(error)])
    }

    func testTheLingerTimerClosesTheConnection() {
        var machine = lingeringMachine()
        XCTAssertEqual(machine.timerFired(.linger), [.close])
        XCTAssertEqual(machine.state, .closing)
        XCTAssertEqual(machine.timerFired(.linger), [])
    }

    func testReadingHeldWhenTheErrorCameResumesWhileLingering() {
        var machine = openMachine(maxMessageBytes: 64, maxPipelinedCalls: 1)
        let oversized = Array(repeating: UInt8(ascii: "x"), count: 65) + [0]
        _ = machine.bytesRead(bytes(call("A"), call("B")) + oversized)
        XCTAssertEqual(machine.readRequested(), [], "two wait behind A")
        XCTAssertEqual(machine.callFinished(), [.startCall(call("B"))], "the error still waits: held")
        XCTAssertEqual(machine.callFinished(), [.read, .writeFatalError(tooLarge(64))])
        XCTAssertEqual(machine.errorReplyWritten(channelIsActive: true), [.shutOutput, .arm(.linger)])

        machine = openMachine(maxMessageBytes: 64, maxPipelinedCalls: 1)
        _ = machine.bytesRead(bytes(call("A")) + oversized + bytes(call("B")))
        XCTAssertEqual(machine.queuedCount, 1)
        XCTAssertEqual(machine.readRequested(), [], "held with the error queued")
        XCTAssertEqual(machine.callFinished(), [.read, .writeFatalError(tooLarge(64))])
        XCTAssertEqual(machine.state, .replyingError(inputClosed: false, readHeld: false))

        // With no room for pipelined calls at all, reading stays held until lingering starts.
        machine = openMachine(maxMessageBytes: 64, maxPipelinedCalls: 0)
        XCTAssertEqual(machine.readRequested(), [])
        XCTAssertEqual(machine.bytesRead(oversized), [.cancel(.idle), .writeFatalError(tooLarge(64))])
        XCTAssertEqual(machine.state, .replyingError(inputClosed: false, readHeld: true))
        XCTAssertEqual(machine.errorReplyWritten(channelIsActive: true), [.shutOutput, .read, .arm(.linger)])
    }

    func testAPeerThatClosedItsInputBeforeTheErrorReplyIsClosedRightAfterIt() {
        var machine = openMachine(maxMessageBytes: 16)
        _ = machine.bytesRead(Array(repeating: UInt8(ascii: "x"), count: 17))
        XCTAssertEqual(machine.inputClosed(), [], "the error reply still goes out")
        XCTAssertEqual(machine.state, .replyingError(inputClosed: true, readHeld: false))
        XCTAssertEqual(machine.errorReplyWritten(channelIsActive: true), [.shutOutput, .close])
        XCTAssertEqual(machine.state, .closing)
    }

    func testAnErrorReplyThatFailedOnAClosedChannelDoesNotLinger() {
        var machine = openMachine(maxMessageBytes: 16)
        _ = machine.bytesRead(Array(repeating: UInt8(ascii: "x"), count: 17))
        XCTAssertEqual(machine.errorReplyWritten(channelIsActive: false), [])
        XCTAssertEqual(machine.channelInactive(), [.cancelRunningCall, .cancelAllTimers, .release(connectionID: id)])
        XCTAssertEqual(machine.errorReplyWritten(channelIsActive: true), [])
    }

    // MARK: The peer's input closing

    func testInputClosedWhileACallRunsClosesAfterTheCallsItSent() {
        var machine = openMachine()
        _ = machine.bytesRead(bytes(call("A"), call("B")))
        XCTAssertEqual(machine.inputClosed(), [], "its calls are still answered")
        XCTAssertEqual(serving(machine)?.inputClosed, true)
        XCTAssertEqual(machine.callFinished(), [.startCall(call("B"))])
        XCTAssertEqual(machine.callFinished(), [.close])
        XCTAssertEqual(machine.state, .closing)
    }

    func testInputClosedWhenIdleClosesAtOnceEvenWithAHalfMessage() {
        var machine = openMachine()
        XCTAssertEqual(machine.inputClosed(), [.close])
        machine = openMachine()
        _ = machine.bytesRead(Array("{".utf8))
        XCTAssertEqual(machine.inputClosed(), [.close], "the half message can never complete")
    }

    // MARK: Closing

    func testChannelInactiveCancelsTheRunningCallAndGivesTheSlotBack() {
        var machine = openMachine()
        _ = machine.bytesRead(bytes(call("A"), call("B")))
        XCTAssertEqual(machine.channelInactive(), [.cancelRunningCall, .cancelAllTimers, .release(connectionID: id)])
        XCTAssertEqual(machine.state, .closed)
        XCTAssertEqual(machine.queuedCount, 0)
        XCTAssertEqual(machine.channelInactive(), [], "released once")
    }

    func testAPipelineErrorClosesTheConnection() {
        var machine = openMachine()
        XCTAssertEqual(machine.errorCaught(), [.close])
        XCTAssertEqual(machine.state, .closing)
        _ = machine.channelInactive()
        XCTAssertEqual(machine.errorCaught(), [])
    }

    func testEveryEventAfterCloseIsIgnored() {
        var machines = [openMachine(), lingeringMachine()]
        var running = openMachine()
        _ = running.bytesRead(bytes(call("A")) + Array("{".utf8))
        machines.append(running)
        for var machine in machines {
            _ = machine.channelInactive()
            XCTAssertEqual(machine.timerFired(.idle), [])
            XCTAssertEqual(machine.timerFired(.partialMessage), [])
            XCTAssertEqual(machine.timerFired(.linger), [])
            XCTAssertEqual(machine.callFinished(), [])
            XCTAssertEqual(machine.bytesRead(bytes(call("B"))), [])
            XCTAssertEqual(machine.inputClosed(), [])
            XCTAssertEqual(machine.errorCaught(), [])
            XCTAssertEqual(machine.errorReplyWritten(channelIsActive: true), [])
            XCTAssertEqual(machine.refusalWritten(), [])
            XCTAssertEqual(machine.peerAccepted(), [])
            XCTAssertEqual(machine.refuse(with: .permissionDenied), [])
            XCTAssertEqual(machine.state, .closed)
        }
    }

    func testTimersThatFireOutOfTheirStateAreIgnored() {
        var machine = openMachine()
        XCTAssertEqual(machine.timerFired(.linger), [], "no linger while open")
        machine = lingeringMachine()
        XCTAssertEqual(machine.timerFired(.idle), [])
        XCTAssertEqual(machine.timerFired(.partialMessage), [])
        XCTAssertEqual(machine.state, .lingering)
    }
}
