import Foundation
import NIOConcurrencyHelpers
import Glibc
import Logging
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import TestSupport
import UnixSignals
import XCTest

@testable import QuickActionsDaemon

/// The daemon in this process, run as the `ServiceGroup` runs it: what systemd is told, and
/// when. ServiceLifecycle's test kit stands in for SIGTERM; SIGHUP is real.
final class DaemonLifecycleTests: XCTestCase {
    private var root = ""
    private var socketPath: String { root + "/run/qactd.sock" }

    override func setUpWithError() throws {
        root = try makeTemporaryFolder("lifecycle")
        try FileManager.default.createDirectory(atPath: root + "/contacts", withIntermediateDirectories: true)
        try ContactCard.vCard("Ann", favorite: true).write(toFile: root + "/contacts/ann.vcf", atomically: true, encoding: .utf8)
        try writeConfiguration("")
    }

    /// The daemon plays an app that resigns active, so nothing but a call recomputes and the
    /// generations in the notifications are the start-up's.
    private func writeConfiguration(_ extra: String) throws {
        try resigningActiveUnlessSaid("""
            [Contacts]
            Directory=contacts
            [Daemon]
            Socket=\(socketPath)
            \(extra)
            """).write(toFile: root + "/qactd.conf", atomically: true, encoding: .utf8)
    }

    private func makeDaemon(notifier: RecordingNotifier, logger: Logger) async -> Daemon {
        let options = DaemonOptions(
            configPath: root + "/qactd.conf", logLevel: .debug,
            environment: ["HOME": root, "XDG_STATE_HOME": root + "/state"])
        return Daemon(options: options, logger: logger, notifier: notifier, hangups: await UnixSignalsSequence(trapping: .sighup))
    }

    /// The start, reload and stop notifications, without the `STATUS=` updates in between.
    private func lifecycle(_ notifier: RecordingNotifier) -> [[ServiceNotification]] {
        notifier.calls.filter { call in call.contains { $0 == .ready || $0 == .reloading || $0 == .stopping } }
    }

    func testReadyAfterStartUpReloadingAroundASighupAndStoppingOnShutdown() async throws {
        let notifier = RecordingNotifier()
        let (logger, log) = Logger.recording(level: .debug)
        let daemon = await makeDaemon(notifier: notifier, logger: logger)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await daemon.run() }

                let ready = await waitUntil { !self.lifecycle(notifier).isEmpty }
                XCTAssertTrue(ready, log.messages.joined(separator: "\n"))
                XCTAssertEqual(self.lifecycle(notifier), [[.ready, .status("1 contacts, 1 favorites, generation 0")]])
                XCTAssertTrue(FileManager.default.fileExists(atPath: self.socketPath), "READY=1 only once the socket listens")

                XCTAssertEqual(kill(getpid(), SIGHUP), 0)
                let reloaded = await waitUntil { self.lifecycle(notifier).count == 3 }
                XCTAssertTrue(reloaded, "\(notifier.calls)")
                XCTAssertEqual(self.lifecycle(notifier).dropFirst(), [[.reloading], [.ready, .status("1 contacts, 1 favorites, generation 0")]])
                XCTAssertTrue(log.messages.contains("Reloaded \"\(self.root)/qactd.conf\": 0 static items."), "\(log.messages)")

                trigger.triggerGracefulShutdown()
                try await group.waitForAll()
            }
        }
        XCTAssertEqual(self.lifecycle(notifier).last, [.stopping])
        XCTAssertEqual(self.lifecycle(notifier).count, 4, "nothing after STOPPING=1")
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath), "the server closed and removed its socket")
        XCTAssertTrue(log.messages.contains("Stopping."), "\(log.messages)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: root + "/state/qactd/state.json"), "the state was written before the end")
    }

    func testAStopDuringStartUpFollowsReady() async throws {
        let notifier = RecordingNotifier()
        let daemon = await makeDaemon(notifier: notifier, logger: Logger.recording().0)
        try await testGracefulShutdown { trigger in
            // Asked for before the daemon even starts: start-up completes, then it stops.
            trigger.triggerGracefulShutdown()
            try await daemon.run()
        }
        XCTAssertEqual(lifecycle(notifier), [[.ready, .status("1 contacts, 1 favorites, generation 0")], [.stopping]])
        XCTAssertFalse(FileManager.default.fileExists(atPath: socketPath))
    }

    func testAnInvalidConfigurationRefusesToStartWithStatus78AndNoReady() async throws {
        try writeConfiguration("[Shortcuts]\nDisplayLimit=many")
        let notifier = RecordingNotifier()
        let daemon = await makeDaemon(notifier: notifier, logger: Logger.recording().0)
        do {
            try await daemon.run()
            XCTFail("started with an invalid configuration")
        } catch let error as DaemonStartupError {
            XCTAssertEqual(error.exitStatus, 78)
            XCTAssertTrue(error.description.contains("DisplayLimit"), error.description)
            guard case .configuration(.invalidValue(_, let line, "Shortcuts", "DisplayLimit", "many", _)) = error else {
                return XCTFail("not the invalid DisplayLimit value: \(error)")
            }
            XCTAssertEqual(line, 6, "the line of the value: four lines come before its section")
        }
        XCTAssertEqual(notifier.calls, [], "systemd hears nothing: no READY=1, no STOPPING=1")
    }
}

/// A clock the test advances by hand: each `sleep` lasts until the next `tick()`.
private final class ManualClock: Sendable {
    private struct State {
        var sleeper: CheckedContinuation<Void, any Error>?
        var sleeps = 0
        var cancelled = false
    }

    // NIO's pthread lock, which ThreadSanitizer sees: through a contended
    // `Synchronization.Mutex` (a futex) it reported races that are none.
    private let state = NIOLockedValueBox(State())

    /// How many sleeps have begun: the sleeper has come round its loop once more.
    var sleeps: Int { state.withLockedValue { $0.sleeps } }

    func sleep(for _: Duration) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLockedValue { state in
                    if state.cancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        state.sleeper = continuation
                        state.sleeps += 1
                    }
                }
            }
        } onCancel: {
            state.withLockedValue { state in
                state.cancelled = true
                state.sleeper?.resume(throwing: CancellationError())
                state.sleeper = nil
            }
        }
    }

    func tick() {
        state.withLockedValue { state in
            state.sleeper?.resume()
            state.sleeper = nil
        }
    }
}

final class WatchdogPingerTests: XCTestCase {
    func testPingsOnlyAfterAHealthyAnswerAndStopsOnShutdown() async throws {
        let clock = ManualClock()
        let notifier = RecordingNotifier()
        let healthy = Atomic<Bool>(false)
        let checks = Atomic<Int>(0)
        let pinger = WatchdogPinger(interval: .seconds(1), notifier: notifier, sleep: clock.sleep(for:)) {
            checks.add(1, ordering: .relaxed)
            return healthy.load(ordering: .relaxed)
        }
        await testGracefulShutdown { trigger in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await pinger.run() }
                let sleeping = await waitUntil { clock.sleeps == 1 }
                XCTAssertTrue(sleeping)
                XCTAssertEqual(checks.load(ordering: .relaxed), 0, "nothing before the first interval")

                // Wedged: the check does not pass, and no ping goes out. Seen once the pinger
                // is asleep again, not after some time.
                clock.tick()
                let roundOne = await waitUntil { clock.sleeps == 2 }
                XCTAssertTrue(roundOne)
                XCTAssertEqual(checks.load(ordering: .relaxed), 1)
                XCTAssertEqual(notifier.calls, [])

                healthy.store(true, ordering: .relaxed)
                clock.tick()
                let roundTwo = await waitUntil { clock.sleeps == 3 }
                XCTAssertTrue(roundTwo)
                XCTAssertEqual(notifier.calls, [[.watchdog]])

                trigger.triggerGracefulShutdown()
                await group.waitForAll()
            }
        }
        XCTAssertEqual(checks.load(ordering: .relaxed), 2, "the shutdown ended the sleep: no check, no ping after it")
        XCTAssertEqual(notifier.calls, [[.watchdog]])
    }
}
