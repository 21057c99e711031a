import Contacts
import Foundation
import Glibc
import Logging
import QuickActions
import QuickActionsProtocol
import TestSupport
import Varlink
import VarlinkNIOServer
import XCTest

@testable import QuickActionsDaemon

/// The core driven directly, with no socket and no watcher: its rules as a specification.
final class DaemonCoreTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-core-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func settings(_ configurationText: String, staticItems: [ShortcutItem] = []) throws -> DaemonSettings {
        let loaded = try ConfigurationLoader.parse(
            text: resigningActiveUnlessSaid(configurationText), file: folder + "/qactd.conf", environment: ["HOME": folder, "XDG_RUNTIME_DIR": folder], userID: getuid())
        return DaemonSettings(configuration: loaded.configuration, staticItems: StaticItemsFile(items: staticItems))
    }

    private func makeCore(_ settings: DaemonSettings, notifier: RecordingNotifier = RecordingNotifier()) -> DaemonCore {
        let core = DaemonCore(
            settings: settings, restored: nil, index: ContactIndex(), store: StateStore(paths: StatePaths(directory: folder + "/state")),
            socketPath: folder + "/qactd.sock", logger: Logger.recording(level: .debug).0, notifier: notifier)
        runEvents(of: core)
        return core
    }

    private func favorite(_ number: Int) -> ContactIndexChange {
        let contact = Contact(identifier: "fav-\(number)", name: "Favorite \(number)", favorite: true)
        return .file(path: folder + "/contacts/\(number).vcf", result: .success([contact]))
    }

    private func update(_ changes: [ContactIndexChange]) -> ContactsDirectoryUpdate {
        ContactsDirectoryUpdate(changes: changes, work: ActivityCounters(eventsHandled: changes.count), health: WatchHealthInfo(state: "watching"))
    }

    private func stateFileIdentity() -> ino_t? {
        var info = stat()
        return stat(folder + "/state/state.json", &info) == 0 ? info.st_ino : nil
    }

    func testAQuicklistClickTakesTheTriggerPathAndAGoneItemChangesNothing() async throws {
        let core = makeCore(try settings(""))
        await core.applyWatcherUpdate(update([favorite(1), favorite(2)]))
        _ = await core.resignActive(appVersion: "1.0")

        await core.triggerFromLauncher(.type("FavoriteAction", contactIdentifier: "fav-2"))
        let status = await core.status()
        XCTAssertEqual(status.pendingLaunchItem?.contactIdentifier, "fav-2", "no app connected: the item waits for its launch")
        XCTAssertEqual(status.usage, ["FavoriteAction/fav-2": 1])

        // A row clicked just before its contact went away: logged, nothing triggered or counted.
        await core.applyWatcherUpdate(update([.removed(path: folder + "/contacts/1.vcf")]))
        await core.triggerFromLauncher(.type("FavoriteAction", contactIdentifier: "fav-1"))
        let after = await core.status()
        XCTAssertEqual(after.pendingLaunchItem?.contactIdentifier, "fav-2")
        XCTAssertEqual(after.usage, ["FavoriteAction/fav-2": 1])
    }

    /// While an address book's other contacts are indexed after start-up, `GetContact` of one
    /// not indexed yet answers once it is; one that is not there at all, once that is known.
    func testGetContactWaitsForTheAddressBooksOtherContactsAfterStartUp() async throws {
        let core = makeCore(try settings(""))
        func book(indexing: Bool?) -> EvolutionSourcesInfo {
            EvolutionSourcesInfo(selection: "all", folder: folder, problem: nil, books: [
                AddressBookInfo(uid: "system-address-book", database: folder + "/contacts.db", contacts: 1, favorites: 1,
                                invalidCards: 0, problem: nil, indexing: indexing)])
        }
        let star = Contact(identifier: "star", name: "Star", favorite: true)
        await core.applyEvolutionUpdate(EvolutionUpdate(changes: [.file(path: "eds:system-address-book/star", result: .success([star]))],
                                                        info: book(indexing: true)))
        let isIndexing = await core.isIndexingAddressBooks
        XCTAssertTrue(isIndexing)
        let indexed = try await core.contact(identifier: "star")
        XCTAssertEqual(indexed.name, "Star", "a contact indexed already answers at once")
        async let plain = core.contact(identifier: "plain")
        async let nobody: QuickActionsCallError? = { () async -> QuickActionsCallError? in
            do throws(QuickActionsCallError) {
                _ = try await core.contact(identifier: "nobody")
                return nil
            } catch {
                return error
            }
        }()
        // Both calls are waiting before the rest comes (the core holds them, it did not answer).
        let bothWait = await waitUntil { await core.contactWaiters.count == 2 }
        XCTAssertTrue(bothWait)
        let other = Contact(identifier: "plain", name: "Plain", favorite: false)
        await core.applyEvolutionUpdate(EvolutionUpdate(changes: [.file(path: "eds:system-address-book/plain", result: .success([other]))],
                                                        info: book(indexing: nil)))
        let found = try await plain
        XCTAssertEqual(found.name, "Plain")
        let notFound = await nobody
        guard case .contactNotFound(let identifier)? = notFound else { return XCTFail("\(String(describing: notFound))") }
        XCTAssertEqual(identifier, "nobody")
    }

    func testAnUnchangedRecomputeWritesNothing() async throws {
        let core = makeCore(try settings(""))
        await core.applyWatcherUpdate(update([favorite(1), favorite(2)]))
        let first = await core.resignActive(appVersion: "1.0")
        XCTAssertEqual(first, RecomputeOutcome(changed: true, generation: 1, dynamicCount: 2))
        let written = try XCTUnwrap(stateFileIdentity(), "the new set is persisted")

        let again = await core.resignActive(appVersion: "1.0")
        XCTAssertEqual(again, RecomputeOutcome(changed: false, generation: 1, dynamicCount: 2))
        XCTAssertEqual(stateFileIdentity(), written, "an unchanged set is not written: the file is the same one")
        let listing = try await core.listing(all: true)
        XCTAssertEqual(listing.generation, 1)
        XCTAssertEqual(listing.items.map(\.item.title), ["Favorite 1", "Favorite 2"])
    }

    func testAFailedReloadKeepsEveryOldSettingAndAGoodOneReplacesThemWhole() async throws {
        let search = ShortcutItem(type: "Search", title: "Search")
        let share = ShortcutItem(type: "Share", title: "Share")
        let notifier = RecordingNotifier()
        let core = makeCore(try settings("[Shortcuts]\nDisplayLimit=1\n", staticItems: [search, share]), notifier: notifier)
        let before = try await core.listing(all: false)
        XCTAssertEqual(before.items.map(\.item), [search])

        let failure = DaemonStartupError.configuration(.invalidValue(
            file: "qactd.conf", line: 2, section: "Shortcuts", key: "DisplayLimit", value: "x", expectation: "is not a positive integer"))
        XCTAssertEqual(failure.description, "qactd.conf:2: [Shortcuts] DisplayLimit: \"x\" is not a positive integer", "the same text as before")
        XCTAssertEqual(failure.exitStatus, 78)
        do {
            try await core.reload(.failure(failure))
            XCTFail("a failed reload is an error for the caller")
        } catch {
            XCTAssertEqual(error, .invalidConfiguration(failure.description))
        }
        let kept = await core.settings
        XCTAssertEqual(kept.configuration.displayLimit, 1)
        XCTAssertEqual(kept.staticItems.items, [search, share])
        let served = try await core.listing(all: false)
        XCTAssertEqual(served.items.map(\.item), [search], "still served with the old settings")

        try await core.reload(.success(try settings("[Shortcuts]\nDisplayLimit=4\n", staticItems: [share])))
        let replaced = try await core.listing(all: false)
        XCTAssertEqual(replaced.items.map(\.item), [share])
        let newLimit = await core.settings.configuration.displayLimit
        XCTAssertEqual(newLimit, 4)
    }

    func testWithRecomputeChangeABurstOfFavoriteChangesMakesOneGeneration() async throws {
        // A settle delay far longer than the burst takes, so the whole burst falls in it.
        let core = makeCore(try settings("[Shortcuts]\nRecompute=change\nRecomputeSettleMSec=400\nMaxDynamicItems=20\n"))
        for number in 1...20 {
            await core.applyWatcherUpdate(update([favorite(number)]))
        }
        let during = try await core.listing(all: true)
        XCTAssertEqual(during.generation, 0, "nothing before the contacts settle")
        let recomputed = await waitUntil(timeout: 20) { () async -> Bool in
            (try? await core.listing(all: true).generation) != 0
        }
        XCTAssertTrue(recomputed, "the set follows the contacts once they settle")
        let listing = try await core.listing(all: true)
        XCTAssertEqual(listing.generation, 1, "twenty changes, one recompute once they settled")
        XCTAssertEqual(listing.items.count, 20, "made from the index as it was at the end of the burst")
        XCTAssertFalse(listing.launched, "following the contacts is not a launch")
    }

    func testWithResignActiveIndexChangesAloneChangeNothing() async throws {
        let core = makeCore(try settings("[Shortcuts]\nRecompute=resign-active\n"))
        await core.applyWatcherUpdate(update([favorite(1)]))
        // The only timer the core could have started is the settle timer; with this
        // policy none is started, so finishing pending work settles everything now.
        await core.finishPendingWork()
        let listing = try await core.listing(all: true)
        XCTAssertEqual(listing.generation, 0)
        let status = await core.status()
        XCTAssertEqual(status.favorites, 1, "the index follows the contacts")
        XCTAssertEqual(status.dynamicItems, 0, "the set waits for the app to resign active")
    }

    /// The default `Recompute=auto`: an app that never speaks the socket never resigns active,
    /// so the daemon stands in for it and its favorites follow the contacts, displayed; once an
    /// app speaks (here a lifecycle message), it is the app's `ResignActive` again.
    func testWithRecomputeAutoTheSetFollowsTheContactsUntilAnAppSpeaks() async throws {
        let core = makeCore(try settings("[Shortcuts]\nRecompute=auto\n"))
        let following = await core.followsContacts
        XCTAssertTrue(following)
        await core.applyWatcherUpdate(update([favorite(1)]))
        let followed = await waitUntil(timeout: 20) { () async -> Bool in
            (try? await core.listing(all: false).items.map(\.item.contactIdentifier)) == ["fav-1"]
        }
        XCTAssertTrue(followed, "the favorite is displayed with no ResignActive")
        let first = try await core.listing(all: true)
        XCTAssertTrue(first.launched, "the daemon resigned active for the app, so the set is displayed")
        let status = await core.status()
        XCTAssertTrue(status.followsContacts)
        XCTAssertEqual(ChoicesInfo(status.configuration, followingContacts: status.followsContacts).recompute, "auto")

        await core.recordLifecycleMessage(appVersion: "2.0")
        let stillFollowing = await core.followsContacts
        XCTAssertFalse(stillFollowing, "an app spoke: from now on its ResignActive decides")
        await core.applyWatcherUpdate(update([favorite(2)]))
        let pending = await core.pendingRecompute
        XCTAssertNil(pending, "no settle timer once the app speaks")
        let unchanged = try await core.listing(all: true)
        XCTAssertEqual(unchanged.generation, first.generation)
        let outcome = await core.resignActive(appVersion: "2.0")
        XCTAssertTrue(outcome.changed)
        let after = try await core.listing(all: false)
        XCTAssertEqual(after.items.compactMap(\.item.contactIdentifier), ["fav-1", "fav-2"])
    }

    func testANegativeLimitIsAnInvalidParameterNamedLimit() async throws {
        let core = makeCore(try settings(""))
        do {
            _ = try await core.listing(all: false, limit: -1)
            XCTFail("a negative limit is refused")
        } catch {
            XCTAssertEqual(error, .invalidParameter(name: "limit"))
        }
    }

    func testListingsAreTranslatedPerCallAndWatchUsesTheDaemonsLanguage() async throws {
        var base = try settings("", staticItems: [ShortcutItem(type: "SearchAction", title: "SEARCH", subtitle: "SEARCH_SUB")])
        base.localization = Localization(tables: ["fr": ["SEARCH": "Rechercher", "SEARCH_SUB": "Un élément"], "en": ["SEARCH": "Search"]])
        base.language = LanguagePreference(environment: ["LANG": "fr_FR.UTF-8"])
        let core = makeCore(base)
        let french = try await core.listing(all: true)
        XCTAssertEqual(french.items.map(\.item.title), ["Rechercher"])
        XCTAssertEqual(french.items.map(\.item.subtitle), ["Un élément"])
        let german = try await core.listing(all: true, language: "de_DE.UTF-8")
        XCTAssertEqual(german.items.map(\.item.title), ["Search"], "no German: en, then the key")
        XCTAssertEqual(german.items.map(\.item.subtitle), ["SEARCH_SUB"])

        let (listings, continuation) = AsyncStream<QuickActionsListing>.makeStream(bufferingPolicy: WatchBroadcaster.bufferingPolicy)
        await core.watch(continuation)
        var iterator = listings.makeAsyncIterator()
        let first = await iterator.next()
        XCTAssertEqual(first?.items.map(\.item.title), ["Rechercher"])

        // A reload with new strings reaches the watchers; the key itself is untouched.
        var reloaded = base
        reloaded.localization = Localization(tables: ["fr": ["SEARCH": "Chercher"]])
        try await core.reload(.success(reloaded))
        let second = await iterator.next()
        XCTAssertEqual(second?.items.map(\.item.title), ["Chercher"])
        continuation.finish()
        // The caller and the app get the item as `List` shows it (iOS's `localizedTitle`); the
        // model keeps the key, so the pending launch item is translated when it is handed over.
        let triggered = try await core.trigger(.type("SearchAction", contactIdentifier: nil))
        XCTAssertEqual(triggered.resolution.item.title, "Chercher")
        XCTAssertEqual(triggered.resolution.item.type, "SearchAction")
        let pendingInTheModel = await core.status().pendingLaunchItem
        XCTAssertEqual(pendingInTheModel?.title, "SEARCH", "the model keeps the key")
        let (messages, appContinuation) = AsyncThrowingStream<AppMessage, any Error>.makeStream()
        await core.connectApp(appVersion: nil, messages: appContinuation)
        var appMessages = messages.makeAsyncIterator()
        guard case .connected(let pending?, _, _)? = try await appMessages.next() else { return XCTFail("no pending item handed over") }
        XCTAssertEqual(pending.title, "Chercher")
        XCTAssertEqual(pending.subtitle, "SEARCH_SUB", "no translation of the subtitle in the new strings: the key")
        let delivered = try await core.trigger(.type("SearchAction", contactIdentifier: nil))
        guard case .perform(let performed, _, _, _)? = try await appMessages.next() else { return XCTFail("not delivered to the app") }
        XCTAssertEqual(performed.title, "Chercher")
        XCTAssertEqual(delivered.resolution.item, performed)
        appContinuation.finish()
    }

    // MARK: Replies published for the event loop

    private func onlyReply(_ stream: AsyncThrowingStream<VarlinkReply, any Error>) async throws -> VarlinkReply {
        var replies: [VarlinkReply] = []
        for try await reply in stream { replies.append(reply) }
        XCTAssertEqual(replies.count, 1)
        return try XCTUnwrap(replies.first)
    }

    func testReadOnlyRepliesAreEncodedOnceAndNeverServedStale() async throws {
        let core = makeCore(try settings("", staticItems: [ShortcutItem(type: "SearchAction", title: "Search")]))
        let handler = QuickActionsHandler(core: core, reload: { () async throws(QuickActionsCallError) -> ReloadReply in
            throw .invalidConfiguration("not in this test")
        })
        let context = VarlinkCallContext(connectionID: 1, peer: VarlinkPeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))
        let list = VarlinkCall(method: QuickActionsInterface.Method.list.qualifiedName, parameters: ["all": true])
        XCTAssertNil(handler.immediateReply(to: list, context: context), "nothing is published before the first call")
        let first = try await onlyReply(handler.handle(list, context: context))
        let published = try XCTUnwrap(handler.immediateReply(to: list, context: context))
        XCTAssertEqual(published.encodedParameters, first.encodedParameters, "the same bytes, encoded once")
        XCTAssertEqual(first.parameters["generation"], 0)

        await core.applyWatcherUpdate(update([favorite(1)]))
        XCTAssertNotNil(handler.immediateReply(to: list, context: context), "a new contact alone changes no listing")
        _ = await core.resignActive(appVersion: "1.0")
        XCTAssertNil(handler.immediateReply(to: list, context: context), "a new generation makes the published listing stale")
        let second = try await onlyReply(handler.handle(list, context: context))
        XCTAssertEqual(second.parameters["generation"], 1)
        XCTAssertEqual(second.parameters["items"]?.arrayValue?.count, 2)
        XCTAssertEqual(handler.immediateReply(to: list, context: context), second)
        _ = await core.resignActive(appVersion: "1.0")
        XCTAssertEqual(handler.immediateReply(to: list, context: context), second, "an unchanged recompute keeps it")

        let displayedOnly = VarlinkCall(method: QuickActionsInterface.Method.list.qualifiedName, parameters: ["limit": 1])
        let limited = try await onlyReply(handler.handle(displayedOnly, context: context))
        XCTAssertEqual(limited.parameters["items"]?.arrayValue?.count, 1)
        XCTAssertEqual(handler.immediateReply(to: displayedOnly, context: context), limited, "each request is kept apart")
        XCTAssertEqual(handler.immediateReply(to: list, context: context), second)
        let badLimit = VarlinkCall(method: QuickActionsInterface.Method.list.qualifiedName, parameters: ["limit": -1])
        XCTAssertNil(handler.immediateReply(to: badLimit, context: context), "an invalid call goes the full way to its error")

        let status = VarlinkCall(method: QuickActionsInterface.Method.status.qualifiedName)
        let statusBefore = try await onlyReply(handler.handle(status, context: context))
        XCTAssertEqual(statusBefore.parameters["contacts"], 1)
        XCTAssertEqual(handler.immediateReply(to: status, context: context), statusBefore)
        await core.applyWatcherUpdate(update([favorite(2)]))
        XCTAssertNil(handler.immediateReply(to: status, context: context), "any change Status shows makes it stale")
        let statusAfter = try await onlyReply(handler.handle(status, context: context))
        XCTAssertEqual(statusAfter.parameters["contacts"], 2)
    }

    /// A repeated `ResignActive` is answered on the event loop with the full path's reply, for
    /// the everyday parameters only: a wrong type, an extra key or an oversized version goes
    /// the full way, which names the problem.
    func testARepeatedResignActiveOnTheEventLoopAnswersAsTheFullPathAndOnlyForPlainParameters() async throws {
        let core = makeCore(try settings(""))
        let handler = QuickActionsHandler(core: core, reload: { () async throws(QuickActionsCallError) -> ReloadReply in
            throw .invalidConfiguration("not in this test")
        })
        let context = VarlinkCallContext(connectionID: 1, peer: VarlinkPeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()))
        func resign(_ parameters: [String: JSONValue]) -> VarlinkCall {
            VarlinkCall(method: QuickActionsInterface.Method.resignActive.qualifiedName, parameters: parameters)
        }
        await core.applyWatcherUpdate(update([favorite(1)]))
        let first = try await onlyReply(handler.handle(resign(["appVersion": "1.0"]), context: context))
        XCTAssertEqual(first.parameters["changed"], true)
        let full = try await onlyReply(handler.handle(resign(["appVersion": "1.0"]), context: context))
        XCTAssertEqual(full.parameters["changed"], false)
        XCTAssertEqual(handler.immediateReply(to: resign(["appVersion": "1.0"]), context: context)?.parameters, full.parameters)
        XCTAssertNil(handler.immediateReply(to: resign([:]), context: context), "no version is another call than version 1.0")
        for odd: [String: JSONValue] in [["appVersion": 1], ["appVersion": "1.0", "extra": true],
                                          ["appVersion": .string(String(repeating: "9", count: 100_000))]] {
            XCTAssertNil(handler.immediateReply(to: resign(odd), context: context), "\(odd.keys.sorted())")
        }
        do {
            _ = try await onlyReply(handler.handle(resign(["appVersion": 1]), context: context))
            XCTFail("a number as the version was accepted")
        } catch {
            XCTAssertTrue("\(error)".contains("InvalidParameter") && "\(error)".contains("appVersion"), "\(error)")
        }
        // Without a version, and with a null one, the same call.
        _ = try await onlyReply(handler.handle(resign([:]), context: context))
        let none = try XCTUnwrap(handler.immediateReply(to: resign([:]), context: context))
        XCTAssertEqual(handler.immediateReply(to: resign(["appVersion": .null]), context: context), none)
        XCTAssertEqual(none.parameters["generation"], first.parameters["generation"])
    }
}
