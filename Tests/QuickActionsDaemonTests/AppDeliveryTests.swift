import Foundation
import Glibc
import Logging
import QuickActions
import QuickActionsProtocol
import TestSupport
import Varlink
import XCTest

@testable import QuickActionsDaemon

final class WatchBroadcasterTests: XCTestCase {
    private func listing(_ generation: UInt64, launched: Bool = true) -> QuickActionsListing {
        QuickActionsListing(generation: generation, launched: launched, items: [
            ListedShortcut(item: ShortcutItem(type: "T\(generation)", title: "Item \(generation)"), source: .dynamic, displayed: true, position: 1),
        ])
    }

    private func makeWatcher() -> (AsyncStream<QuickActionsListing>, WatchBroadcaster.Listings) {
        AsyncStream<QuickActionsListing>.makeStream(bufferingPolicy: WatchBroadcaster.bufferingPolicy)
    }

    private func generations(_ stream: AsyncStream<QuickActionsListing>) async -> [UInt64] {
        var seen: [UInt64] = []
        for await listing in stream { seen.append(listing.generation) }
        return seen
    }

    func testAWatcherThatDoesNotReadKeepsOnlyTheLatestUnsentSet() async throws {
        var broadcaster = WatchBroadcaster()
        let (stream, continuation) = makeWatcher()
        XCTAssertNotNil(broadcaster.add(continuation, current: listing(0)))
        for generation in 1...10_000 { broadcaster.announce(listing(UInt64(generation))) }
        continuation.finish()
        // Ten thousand announcements, one buffered set: the newest.
        let seen = await generations(stream)
        XCTAssertEqual(seen, [10_000])
        broadcaster.announce(listing(10_001))
        XCTAssertEqual(broadcaster.count, 0, "a watcher whose stream ended is dropped")
    }

    func testAReadingWatcherGetsTheCurrentSetThenEachChangeInOrderAndNoRepeats() async throws {
        var broadcaster = WatchBroadcaster()
        let (stream, continuation) = makeWatcher()
        var listings = stream.makeAsyncIterator()
        XCTAssertNotNil(broadcaster.add(continuation, current: listing(3)))
        let first = await listings.next()
        XCTAssertEqual(first?.generation, 3)
        broadcaster.announce(listing(3))  // unchanged: nothing is sent
        broadcaster.announce(listing(3, launched: false))  // a change without a new generation is still a change
        let launchedChange = await listings.next()
        XCTAssertEqual(launchedChange?.launched, false)
        XCTAssertEqual(launchedChange?.generation, 3)
        for generation in 4...6 {
            broadcaster.announce(listing(UInt64(generation)))
            let next = await listings.next()
            XCTAssertEqual(next?.generation, UInt64(generation))
        }
        continuation.finish()
        let end = await listings.next()
        XCTAssertNil(end)
    }

    func testEndedWatchersAreDroppedAndOthersStillServed() async throws {
        var broadcaster = WatchBroadcaster()
        let (gone, goneContinuation) = makeWatcher()
        let (kept, keptContinuation) = makeWatcher()
        XCTAssertNotNil(broadcaster.add(goneContinuation, current: listing(1)))
        XCTAssertNotNil(broadcaster.add(keptContinuation, current: listing(1)))
        goneContinuation.finish()
        _ = gone
        broadcaster.announce(listing(2))
        XCTAssertEqual(broadcaster.count, 1, "a watcher whose stream ended is dropped at the next announcement")
        keptContinuation.finish()
        let seen = await generations(kept)
        XCTAssertEqual(seen, [2], "the unread first set was superseded by the newest")

        // A watcher that is gone before it is registered is not registered at all.
        let (_, lateContinuation) = makeWatcher()
        lateContinuation.finish()
        XCTAssertNil(broadcaster.add(lateContinuation, current: listing(2)))
        XCTAssertEqual(broadcaster.count, 1)
    }
}

final class LaunchCommandRunnerTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = URL(fileURLWithPath: try makeTemporaryFolder("launch"))
    }

    func testTheEnvironmentCarriesTheItemVerbatimAndWithholdsSystemdVariables() {
        let request = LaunchRequest(
            command: ["app"], shortcutType: "Favorite$(x)", contactIdentifier: "a'b\"c\nd", socketPath: "/run/q.sock")
        let environment = LaunchCommandRunner.environment(for: request, inheriting: [
            "PATH=/usr/bin", "NOTIFY_SOCKET=/run/systemd/notify", "LISTEN_FDS=1", "QACTD_CONTACT_IDENTIFIER=stale",
            "QACTD_SOCKETS_EXTRA=kept", "WATCHDOG_USEC=1000", "EMPTY=",
        ])
        XCTAssertEqual(environment, [
            "PATH=/usr/bin", "QACTD_SOCKETS_EXTRA=kept", "EMPTY=",
            "QACTD_SHORTCUT_TYPE=Favorite$(x)", "QACTD_CONTACT_IDENTIFIER=a'b\"c\nd", "QACTD_SOCKET=/run/q.sock",
        ])
        let staticItem = LaunchCommandRunner.environment(
            for: LaunchRequest(command: ["app"], shortcutType: "Search", contactIdentifier: nil, socketPath: "/s"),
            inheriting: ["QACTD_CONTACT_IDENTIFIER=inherited"])
        XCTAssertEqual(staticItem, ["QACTD_SHORTCUT_TYPE=Search", "QACTD_SOCKET=/s"], "no stale identifier for a static item")
    }

    func testALaunchIsReapedAndAStartingAppIsNotLaunchedTwice() throws {
        let (logger, log) = Logger.recording(level: .debug)
        let runner = LaunchCommandRunner(logger: logger)
        let gate = folder.appendingPathComponent("gate").path
        let request = LaunchRequest(
            // Bounded (about 30 s) so a failed test never leaves it looping, holding the test's output open.
            command: ["/bin/sh", "-c", "i=0; while [ ! -e \"$1\" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done", "app", gate],
            shortcutType: "Search", contactIdentifier: nil, socketPath: "/s")

        let first = runner.launch(request)
        XCTAssertEqual(first.status, .started)
        let pid = try XCTUnwrap(first.pid)
        XCTAssertEqual(runner.launch(request), LaunchOutcome(status: .alreadyRunning, pid: pid))
        _ = FileManager.default.createFile(atPath: gate, contents: nil)
        XCTAssertTrue(waitUntil(timeout: 10) { runner.running == nil }, log.messages.joined(separator: "\n"))
        // Reaped: no zombie remains under that pid.
        XCTAssertTrue(waitUntil(timeout: 5) { kill(pid, 0) != 0 && errno == ESRCH })
        XCTAssertTrue(log.messages.contains("The launch command (pid \(pid)) exited with status 0."), "\(log.messages)")

        // A process that is still running but whose app has connected does not block the next launch.
        try? FileManager.default.removeItem(atPath: gate)
        let third = runner.launch(request)
        XCTAssertEqual(third.status, .started)
        runner.noteAppConnected()
        let fourth = runner.launch(request)
        XCTAssertEqual(fourth.status, .started)
        XCTAssertNotEqual(fourth.pid, third.pid)
        _ = FileManager.default.createFile(atPath: gate, contents: nil)
        XCTAssertTrue(waitUntil(timeout: 10) { runner.running == nil })
        // Both children have seen the gate and been reaped before tearDown removes it.
        for child in [third.pid, fourth.pid].compactMap({ $0 }) {
            XCTAssertTrue(waitUntil(timeout: 10) { kill(child, 0) != 0 && errno == ESRCH }, "pid \(child)")
        }
    }

    func testAFailedLaunchNamesTheCommandAndAnEmptyCommandIsNotConfigured() {
        let runner = LaunchCommandRunner(logger: Logger.recording(level: .debug).0)
        let failed = runner.launch(LaunchRequest(command: ["/nonexistent/app"], shortcutType: "T", contactIdentifier: nil, socketPath: "/s"))
        XCTAssertEqual(failed.status, .failed)
        XCTAssertNil(failed.pid)
        XCTAssertTrue(failed.error?.contains("posix_spawnp(\"/nonexistent/app\")") == true, failed.error ?? "")
        XCTAssertTrue(failed.error?.contains("errno \(ENOENT)") == true, failed.error ?? "")
        XCTAssertEqual(runner.launch(LaunchRequest(command: [], shortcutType: "T", contactIdentifier: nil, socketPath: "/s")).status, .notConfigured)
        XCTAssertEqual(LaunchCommandRunner.describe(waitStatus: 3 << 8), "exited with status 3")
        XCTAssertEqual(LaunchCommandRunner.describe(waitStatus: 9), "was killed by signal 9")
    }
}
