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

/// These tests were written for an app that resigns active: unless the configuration they
/// give says otherwise, `Recompute=resign-active` is added after it (so its line numbers stay),
/// rather than the default `auto`, whose settle timer would recompute on its own.
func resigningActiveUnlessSaid(_ configuration: String) -> String {
    configuration.contains("Recompute=") ? configuration : configuration + "\n[Shortcuts]\nRecompute=resign-active\n"
}
