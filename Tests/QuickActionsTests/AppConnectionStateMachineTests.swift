import XCTest
@testable import QuickActions

/// Drives the app connection / delivery state machine through every event in every
/// state it can be in, with no I/O.
final class AppConnectionStateMachineTests: XCTestCase {
    private func machine() -> AppConnectionStateMachine { AppConnectionStateMachine(tokenPrefix: "run") }

    func testWithNoAppEveryTriggerLaunchesAndLateEventsAreIgnored() {
        var machine = machine()
        XCTAssertFalse(machine.isAppConnected)
        XCTAssertEqual(machine.handle(.actionTriggered), .launch)
        XCTAssertEqual(machine.handle(.actionTriggered), .launch)
        XCTAssertEqual(machine.handle(.appDisconnected(AppSessionID(7))), .none)
        XCTAssertEqual(machine.handle(.responseTimedOut(token: "run-1")), .none)
        XCTAssertEqual(machine.handle(.deliveryRefused(token: "run-1")), .none)
        XCTAssertEqual(machine.handle(.completed(token: "run-1", handled: true)), .rejectCompletion(token: "run-1"))
        XCTAssertTrue(machine.actionsInFlight.isEmpty)
    }

    func testWarmDeliveryIsAnsweredOnceByComplete() {
        var machine = machine()
        XCTAssertEqual(machine.handle(.appConnected), .acceptApp(AppSessionID(1), replacing: nil, abandonedTokens: []))
        XCTAssertEqual(machine.connectedApp, AppSessionID(1))
        XCTAssertEqual(machine.handle(.actionTriggered), .deliver(token: "run-1", to: AppSessionID(1)))
        XCTAssertEqual(machine.handle(.actionTriggered), .deliver(token: "run-2", to: AppSessionID(1)))
        XCTAssertEqual(machine.actionsInFlight, ["run-1": AppSessionID(1), "run-2": AppSessionID(1)])
        // Answers may come in any order; each resumes its own trigger.
        XCTAssertEqual(machine.handle(.completed(token: "run-2", handled: false)), .resumeTrigger(token: "run-2", handled: false))
        XCTAssertEqual(machine.handle(.completed(token: "run-1", handled: true)), .resumeTrigger(token: "run-1", handled: true))
        // A second answer, or the timer firing after the answer, changes nothing.
        XCTAssertEqual(machine.handle(.completed(token: "run-1", handled: true)), .rejectCompletion(token: "run-1"))
        XCTAssertEqual(machine.handle(.responseTimedOut(token: "run-1")), .none)
        XCTAssertTrue(machine.actionsInFlight.isEmpty)
        XCTAssertTrue(machine.isAppConnected)
    }

    func testTimeoutFailsTheTriggerAndALateCompleteIsRejected() {
        var machine = machine()
        _ = machine.handle(.appConnected)
        XCTAssertEqual(machine.handle(.actionTriggered), .deliver(token: "run-1", to: AppSessionID(1)))
        XCTAssertEqual(machine.handle(.responseTimedOut(token: "run-1")), .failTrigger(token: "run-1", .notResponding))
        XCTAssertEqual(machine.handle(.completed(token: "run-1", handled: true)), .rejectCompletion(token: "run-1"))
        // The app stays connected: a slow answer is not a disconnect.
        XCTAssertEqual(machine.handle(.actionTriggered), .deliver(token: "run-2", to: AppSessionID(1)))
    }

    func testARefusedDeliveryFailsAsNotResponding() {
        var machine = machine()
        _ = machine.handle(.appConnected)
        _ = machine.handle(.actionTriggered)
        XCTAssertEqual(machine.handle(.deliveryRefused(token: "run-1")), .failTrigger(token: "run-1", .notResponding))
        XCTAssertEqual(machine.handle(.deliveryRefused(token: "run-1")), .none)
        XCTAssertEqual(machine.handle(.responseTimedOut(token: "run-1")), .none)
    }

    func testDisconnectAbandonsActionsInFlightAndFallsBackToLaunch() {
        var machine = machine()
        _ = machine.handle(.appConnected)
        for _ in 1...3 { _ = machine.handle(.actionTriggered) }
        _ = machine.handle(.completed(token: "run-2", handled: true))
        XCTAssertEqual(machine.handle(.appDisconnected(AppSessionID(1))), .releaseApp(AppSessionID(1), abandonedTokens: ["run-1", "run-3"]))
        XCTAssertFalse(machine.isAppConnected)
        XCTAssertTrue(machine.actionsInFlight.isEmpty)
        // Abandoned tokens are gone for good: a late answer or timer does nothing.
        XCTAssertEqual(machine.handle(.completed(token: "run-3", handled: true)), .rejectCompletion(token: "run-3"))
        XCTAssertEqual(machine.handle(.responseTimedOut(token: "run-1")), .none)
        XCTAssertEqual(machine.handle(.appDisconnected(AppSessionID(1))), .none, "a second end of the same stream")
        XCTAssertEqual(machine.handle(.actionTriggered), .launch)
    }

    func testTheNewestAppTakesOverAndTheReplacedSessionsEndIsIgnored() {
        var machine = machine()
        _ = machine.handle(.appConnected)
        _ = machine.handle(.actionTriggered)
        XCTAssertEqual(machine.handle(.appConnected), .acceptApp(AppSessionID(2), replacing: AppSessionID(1), abandonedTokens: ["run-1"]))
        XCTAssertEqual(machine.connectedApp, AppSessionID(2))
        // Ending the replaced stream reports its end later; the successor must stay connected.
        XCTAssertEqual(machine.handle(.appDisconnected(AppSessionID(1))), .none)
        XCTAssertEqual(machine.connectedApp, AppSessionID(2))
        XCTAssertEqual(machine.handle(.actionTriggered), .deliver(token: "run-2", to: AppSessionID(2)))
        XCTAssertEqual(machine.handle(.appConnected), .acceptApp(AppSessionID(3), replacing: AppSessionID(2), abandonedTokens: ["run-2"]))
        XCTAssertEqual(machine.handle(.appDisconnected(AppSessionID(3))), .releaseApp(AppSessionID(3), abandonedTokens: []))
        XCTAssertNil(machine.connectedApp)
    }

    func testTokensAndSessionsAreNeverReusedAndCarryThePrefix() {
        var machine = AppConnectionStateMachine(tokenPrefix: "a1b2")
        var tokens = Set<String>()
        var sessions = Set<AppSessionID>()
        for round in 0..<20 {
            guard case .acceptApp(let session, _, _) = machine.handle(.appConnected) else { return XCTFail("round \(round)") }
            sessions.insert(session)
            for _ in 0..<5 {
                guard case .deliver(let token, let to) = machine.handle(.actionTriggered) else { return XCTFail("round \(round)") }
                XCTAssertEqual(to, session)
                XCTAssertTrue(token.hasPrefix("a1b2-"), token)
                tokens.insert(token)
            }
            if round.isMultiple(of: 2) { _ = machine.handle(.appDisconnected(session)) }
        }
        XCTAssertEqual(tokens.count, 100)
        XCTAssertEqual(sessions.count, 20)
    }

    func testTheTokenOrderOfAbandonedActionsFollowsTriggerOrderPastTen() {
        var machine = machine()
        _ = machine.handle(.appConnected)
        for _ in 1...12 { _ = machine.handle(.actionTriggered) }
        guard case .releaseApp(_, let abandoned) = machine.handle(.appDisconnected(AppSessionID(1))) else { return XCTFail() }
        XCTAssertEqual(abandoned, (1...12).map { "run-\($0)" })
    }
}
