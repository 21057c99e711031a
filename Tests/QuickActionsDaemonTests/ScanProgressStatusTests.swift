import Contacts
import Foundation
import Glibc
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import QuickActions
import QuickActionsProtocol
import Synchronization
import TestSupport
import Varlink
import VarlinkNIOServer
import XCTest

@testable import QuickActionsDaemon

/// A long scan shows in `Status` and in `qactl status` while it runs: the
/// real watcher rescans a real folder on its thread (as `Reload` and an overflow do), the
/// scanner's progress is held at two points, and a real socket answers meanwhile.
final class ScanProgressStatusTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = "/tmp/qactd-scan-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder + "/contacts", withIntermediateDirectories: true)
        for number in 1...150 {
            try ContactCard.vCard("Person \(number)").write(toFile: folder + "/contacts/\(number).vcf", atomically: false, encoding: .utf8)
        }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Holds the scan's thread at chosen progress reports until the test lets it go on.
    /// Its lock is NIO's pthread mutex, which ThreadSanitizer sees: a contended
    /// `Synchronization.Mutex` (a futex) shows it races that are none.
    private final class ProgressGate: Sendable {
        private let state = NIOLockedValueBox((heldAt: ContactsScanProgress?.none, released: 0))

        var heldAt: ContactsScanProgress? { state.withLockedValue { $0.heldAt } }

        func hold(_ progress: ContactsScanProgress) {
            let ticket = state.withLockedValue { state -> Int in
                state.heldAt = progress
                return state.released
            }
            _ = waitUntil(timeout: 20) { state.withLockedValue { $0.released > ticket } }
            state.withLockedValue { $0.heldAt = nil }
        }

        func release() { state.withLockedValue { $0.released += 1 } }
    }

    func testAScanUnderWayShowsInStatusAndInQactlStatusUntilItIsDone() async throws {
        let loaded = try ConfigurationLoader.parse(
            text: "[Contacts]\nDirectory=\(folder)/contacts\n", file: folder + "/qactd.conf",
            environment: ["HOME": folder, "XDG_RUNTIME_DIR": folder], userID: getuid())
        let settings = DaemonSettings(configuration: loaded.configuration, staticItems: StaticItemsFile(items: []))
        let (logger, _) = Logger.recording(level: .debug)
        let core = DaemonCore(
            settings: settings, restored: nil, index: ContactIndex(), store: StateStore(paths: StatePaths(directory: folder + "/state")),
            socketPath: folder + "/qactd.sock", logger: logger, notifier: RecordingNotifier())
        runEvents(of: core)
        let watcher = DirectoryWatcher(scanner: ContactsScan.scanner(for: settings.configuration), logger: logger)
        await core.applyWatcherUpdate(watcher.attach())
        watcher.run { update in await core.applyWatcherUpdate(update) }

        let handler = QuickActionsHandler(core: core, reload: { () async throws(QuickActionsCallError) -> ReloadReply in
            throw .invalidConfiguration("not in this test")
        })
        let server = VarlinkServer(
            info: VarlinkServiceInfo(vendor: "qactd", product: "qactd", version: "test", url: "https://example.invalid",
                                     interfaces: [QuickActionsInterface.varlinkInterface]),
            handlers: [QuickActionsInterface.name: handler],
            configuration: VarlinkServerConfiguration(errorInterface: QuickActionsInterface.name),
            group: MultiThreadedEventLoopGroup.singleton)
        try await server.listen(unixSocketPath: folder + "/qactd.sock")
        let client = try VarlinkClient(unixSocketPath: folder + "/qactd.sock")
        func status() throws -> JSONValue {
            try client.call(QuickActionsInterface.Method.status.qualifiedName)
        }
        func qactlStatus() -> String {
            let qactl = linkBuiltClient(in: URL(fileURLWithPath: try! FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                .deletingLastPathComponent().path)
            let run = runCommand([qactl, "status", "--socket", folder + "/qactd.sock"], environment: ["NO_COLOR": "1"])
            XCTAssertEqual(run.status, 0, run.output)
            return run.output
        }
        func row(_ output: String) -> String? {
            output.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("scanning ") }
                .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") }
        }
        XCTAssertNil(try status()["watch"]?["scan"], "no scan under way")
        XCTAssertEqual(try status()["contacts"], 150)

        // The daemon's own scanner (progress to STATUS=, the log and `Status`), reporting at
        // once rather than after a second, held while listing and while reading.
        let notifier = RecordingNotifier()
        var scanner = ContactsScan.scanner(for: settings.configuration, notifier: notifier, logger: logger, replies: core.replies)
        scanner.progressInterval = .zero
        let publish = try XCTUnwrap(scanner.progress)
        let gate = ProgressGate()
        scanner.progress = { progress in
            publish(progress)
            if progress.listingDone || progress.filesFound == 100 { gate.hold(progress) }
        }
        let rescan = Task { await watcher.reload(scanner) }

        let tree = folder + "/contacts"
        let heldWhileListing = await waitUntil { gate.heldAt != nil }
        XCTAssertTrue(heldWhileListing)
        XCTAssertEqual(gate.heldAt, ContactsScanProgress(tree: tree, filesFound: 100, filesRead: 0, listingDone: false))
        let listing = try XCTUnwrap(try status()["watch"]?["scan"], "the cached Status reply was dropped for the progress")
        XCTAssertEqual(listing, ["tree": .string(tree), "phase": "listing", "filesFound": 100, "filesRead": 0])
        XCTAssertEqual(row(qactlStatus()), "scanning listing '\(tree)': 100 files found so far")
        gate.release()

        let heldWhileReading = await waitUntil { gate.heldAt?.listingDone == true }
        XCTAssertTrue(heldWhileReading)
        let reading = try XCTUnwrap(try status()["watch"]?["scan"])
        XCTAssertEqual(reading, ["tree": .string(tree), "phase": "reading", "filesFound": 150, "filesRead": 150, "filesTotal": 150])
        XCTAssertEqual(row(qactlStatus()), "scanning 150 of 150 files read in '\(tree)'")
        XCTAssertTrue(notifier.calls.joined().contains(.status("Reading contacts in '\(tree)': 150 of 150 files read")), "STATUS= too")
        gate.release()

        await rescan.value
        XCTAssertNil(try status()["watch"]?["scan"], "gone once the scan is done")
        XCTAssertNil(row(qactlStatus()))
        XCTAssertEqual(try status()["rescans"], 1)

        await server.stop()
        await watcher.stop()
    }
}
