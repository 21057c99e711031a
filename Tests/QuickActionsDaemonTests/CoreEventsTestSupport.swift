import XCTest

@testable import QuickActionsDaemon

extension XCTestCase {
    /// Runs the core's event queue (timers, streams ending, launcher clicks) for this test, as
    /// the daemon's `CoreEventService` does; it ends with the test.
    func runEvents(of core: DaemonCore) {
        let pump = Task { await core.runEvents() }
        addTeardownBlock { pump.cancel() }
    }
}
