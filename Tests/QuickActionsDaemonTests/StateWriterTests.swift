import Contacts
import Foundation
import Logging
import NIOCore
import NIOPosix
import QuickActions
import QuickActionsProtocol
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// The state file is written by the writer's thread, off the core actor: the core driven
/// directly, with a real state folder, and a store made slow where the test needs a write
/// that is surely still under way.
final class StateWriterTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-writer-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func makeCore(writeDelay: Duration?, logger: Logger = Logger.recording(level: .debug).0) throws -> DaemonCore {
        // Every favorite an item: these tests add more than the default cap.
        let loaded = try ConfigurationLoader.parse(
            text: resigningActiveUnlessSaid("[Shortcuts]\nMaxDynamicItems=1000\n"), file: folder + "/qactd.conf", environment: ["HOME": folder, "XDG_RUNTIME_DIR": folder], userID: getuid())
        var store = StateStore<PersistedState>(paths: StatePaths(directory: folder + "/state"))
        store.delayBeforeWriting = writeDelay
        let core = DaemonCore(
            settings: DaemonSettings(configuration: loaded.configuration, staticItems: StaticItemsFile(items: [])),
            restored: nil, index: ContactIndex(), store: store,
            socketPath: folder + "/qactd.sock", logger: logger, notifier: RecordingNotifier())
        runEvents(of: core)
        return core
    }

    private func addFavorite(_ number: Int, to core: DaemonCore) async {
        let contact = Contact(identifier: "fav-\(number)", name: "Favorite \(number)", favorite: true)
        await core.applyWatcherUpdate(ContactsDirectoryUpdate(
            changes: [.file(path: folder + "/contacts/\(number).vcf", result: .success([contact]))],
            work: ActivityCounters(eventsHandled: 1), health: WatchHealthInfo(state: "watching")))
    }

    /// The generation the state file holds now; nil when there is no file.
    private func generationOnDisk() throws -> Int? {
        guard let data = FileManager.default.contents(atPath: folder + "/state/state.json") else { return nil }
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try XCTUnwrap(object["generation"] as? Int)
    }

    func testManyRapidChangesAreWrittenAsFewerWritesAndTheFileEndsWithTheLastGeneration() async throws {
        let (logger, log) = Logger.recording(level: .debug)
        // Each write takes at least 30 ms, the changes come as fast as the actor takes them.
        let core = try makeCore(writeDelay: .milliseconds(30), logger: logger)
        let changes = 40
        for number in 1...changes {
            await addFavorite(number, to: core)
            await core.recomputeAfterIndexChange()
        }
        let listed = try await core.listing(all: true)
        XCTAssertEqual(listed.generation, UInt64(changes))

        let lastSaved = "Saved state, generation \(changes)."
        let written = await waitUntil(timeout: 20) { log.messages.contains(lastSaved) }
        XCTAssertTrue(written, "the last generation must be written: \(log.messages)")
        XCTAssertEqual(try generationOnDisk(), changes, "the file ends holding the last generation")
        let writes = log.messages.filter { $0.hasPrefix("Saved state, generation") }
        XCTAssertLessThan(writes.count, changes, "states that came while a write was under way are not each written: \(writes)")
        XCTAssertEqual(writes.last, lastSaved)
        let status = await core.status()
        XCTAssertTrue(status.persisted)
        XCTAssertNil(status.stateError)
        XCTAssertNil(status.savedGeneration)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder + "/state").filter { $0.contains(".tmp-") }
        XCTAssertEqual(leftovers, [])
    }

    func testAResignActiveAnsweredPersistedMeansTheFileAlreadyHoldsItsGeneration() async throws {
        let core = try makeCore(writeDelay: .milliseconds(200))
        for round in 1...3 {
            await addFavorite(round, to: core)
            let outcome = await core.resignActive(appVersion: "1.0")
            XCTAssertTrue(outcome.changed)
            XCTAssertTrue(outcome.persisted)
            // Read straight after the reply: a write still under way would show the previous generation.
            XCTAssertEqual(try generationOnDisk(), Int(outcome.generation), "round \(round)")
        }
        // Unchanged: answered at once, and the file still holds the set.
        let unchanged = await core.resignActive(appVersion: "1.0")
        XCTAssertEqual(unchanged, RecomputeOutcome(changed: false, generation: 3, dynamicCount: 3, persisted: true))
    }

    func testAResignActiveWaitingOnAnEventLoopIsAnsweredOnThatLoop() async throws {
        let core = try makeCore(writeDelay: .milliseconds(20))
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        // Resumed from the writer's thread through the executor, a task went to the next loop
        // in turn: over a few rounds some would land elsewhere when there are several loops.
        for round in 1...4 {
            await addFavorite(round, to: core)
            let (persisted, onTheLoop): (Bool, Bool) = await withCheckedContinuation { done in
                // Started on the loop with the daemon's executor, as a connection's call is.
                loop.execute {
                    Task(executorPreference: EventLoopExecution.executor) {
                        let outcome = await core.resignActive(appVersion: "1.0")
                        done.resume(returning: (outcome.persisted, loop.inEventLoop))
                    }
                }
            }
            XCTAssertTrue(persisted, "round \(round)")
            XCTAssertTrue(onTheLoop, "round \(round): the reply goes on from the loop the call waited on")
        }
    }

    func testASlowWriteDelaysNeitherAWatchEventNorAListNorTheNextContactChange() async throws {
        // Far longer than anything below may take, so all of it happens while the write is under way.
        let core = try makeCore(writeDelay: .seconds(3))
        let (listings, continuation) = AsyncStream<QuickActionsListing>.makeStream(bufferingPolicy: WatchBroadcaster.bufferingPolicy)
        await core.watch(continuation)
        var events = listings.makeAsyncIterator()
        let first = await events.next()
        XCTAssertEqual(first?.generation, 0)

        await addFavorite(1, to: core)
        let resigned = Task { await core.resignActive(appVersion: "1.0") }

        let event = await events.next()
        XCTAssertEqual(event?.generation, 1, "the watcher hears of the new set")
        XCTAssertNil(try generationOnDisk(), "the watcher heard of it before the slow write ended")
        let listing = try await core.listing(all: true)
        XCTAssertEqual(listing.generation, 1)
        await addFavorite(2, to: core)
        let favorites = await core.status().favorites
        XCTAssertEqual(favorites, 2, "the next contact change was applied")
        let status = await core.status()
        XCTAssertFalse(status.persisted, "while the write is under way the file does not hold the current state")
        XCTAssertNil(status.stateError)
        XCTAssertNil(try generationOnDisk(), "List, Status and the contact change were answered before the slow write ended")

        let outcome = await resigned.value
        XCTAssertTrue(outcome.persisted)
        XCTAssertEqual(try generationOnDisk(), 1)
        let after = await core.status()
        XCTAssertTrue(after.persisted)
    }

    func testShutdownWritesAPendingStateBeforeItReturns() async throws {
        let core = try makeCore(writeDelay: .milliseconds(300))
        await addFavorite(1, to: core)
        await core.recomputeAfterIndexChange()
        await addFavorite(2, to: core)
        await core.recomputeAfterIndexChange()
        XCTAssertNotEqual(try generationOnDisk(), 2, "the writes are still under way")

        await core.finishPendingWork()
        XCTAssertEqual(try generationOnDisk(), 2, "the last state is on disk once shutdown's flush returns")
    }

    func testARepeatedResignActiveIsAnsweredWithoutTheCoreOnlyWhileNothingChangedAndItsStateIsOnDisk() async throws {
        let core = try makeCore(writeDelay: .milliseconds(300))
        await addFavorite(1, to: core)
        XCTAssertNil(core.unchangedResignActive(appVersion: "1.0"), "no ResignActive yet")
        let resigned = Task { await core.resignActive(appVersion: "1.0") }
        let published = await waitUntil(timeout: 10) { () async -> Bool in await core.status().generation == 1 }
        XCTAssertTrue(published)
        XCTAssertNil(core.unchangedResignActive(appVersion: "1.0"), "its state is not on disk yet: persisted cannot be answered")
        let first = await resigned.value
        XCTAssertEqual(first, RecomputeOutcome(changed: true, generation: 1, dynamicCount: 1, persisted: true))

        let again = await core.resignActive(appVersion: "1.0")
        XCTAssertEqual(again, RecomputeOutcome(changed: false, generation: 1, dynamicCount: 1, persisted: true))
        XCTAssertEqual(core.unchangedResignActive(appVersion: "1.0"), again)
        XCTAssertNil(core.unchangedResignActive(appVersion: "2.0"), "another app version is a change")
        XCTAssertNil(core.unchangedResignActive(appVersion: nil))

        await addFavorite(2, to: core)
        XCTAssertNil(core.unchangedResignActive(appVersion: "1.0"), "a contact change may change the set: the core decides")
        let changed = await core.resignActive(appVersion: "1.0")
        XCTAssertEqual(changed, RecomputeOutcome(changed: true, generation: 2, dynamicCount: 2, persisted: true))
        XCTAssertEqual(try generationOnDisk(), 2)
    }

    func testAFailedWriteIsReportedAndTheWaiterToldItIsNotSaved() async throws {
        let (logger, log) = Logger.recording(level: .debug)
        var store = StateStore<PersistedState>(paths: StatePaths(directory: folder + "/state"))
        store.injectedFailure = .replace(.rename)
        let writer = StateWriter(store: store, logger: logger, onOutcome: {})
        var state = PersistedState(QuickActionsState(staticItems: []))
        state.generation = 7
        let ticket = writer.submit(state)
        let written = await writer.waitUntilWritten(ticket)
        XCTAssertFalse(written)
        XCTAssertEqual(writer.outcome.writtenTicket, 0)
        XCTAssertNil(writer.outcome.savedGeneration)
        XCTAssertTrue(writer.outcome.error?.contains("rename") == true, String(describing: writer.outcome.error))
        // Waiting again makes a new attempt at once; failing the same way, it is not logged again.
        let again = await writer.waitUntilWritten(ticket)
        XCTAssertFalse(again)
        XCTAssertEqual(log.messages.filter { $0.hasPrefix("Could not save the state") }.count, 1, "\(log.messages)")
        XCTAssertNil(try generationOnDisk())
    }
}
