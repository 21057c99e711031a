import Contacts
import Foundation
import XCTest
@testable import QuickActions

final class UsageRankingTests: XCTestCase {
    private let day: Int64 = 86_400
    private let start: Int64 = 1_795_000_000
    private let ada = Contact(identifier: "ada", name: "Ada", favorite: true)
    private let bob = Contact(identifier: "bob", name: "Bob", favorite: true)
    private let cyd = Contact(identifier: "cyd", name: "Cyd", favorite: true)
    private let grace = Contact(identifier: "grace", name: "Grace", favorite: true)
    private var byName: [Contact] { [ada, bob, cyd, grace] }

    // MARK: The score

    func testAFreshTriggerCountsOneAndHalvesEveryHalfLife() {
        var history = UsageHistory()
        XCTAssertEqual(history.score(of: "FavoriteAction/ada", at: start), 0)
        history.record("FavoriteAction/ada", at: start)
        XCTAssertEqual(history.score(of: "FavoriteAction/ada", at: start), 1, accuracy: 1e-12)
        XCTAssertEqual(history.score(of: "FavoriteAction/ada", at: start + UsageHistory.halfLifeSeconds), 0.5, accuracy: 1e-12)
        XCTAssertEqual(history.score(of: "FavoriteAction/ada", at: start + 3 * UsageHistory.halfLifeSeconds), 0.125, accuracy: 1e-12)
        history.record("FavoriteAction/ada", at: start + UsageHistory.halfLifeSeconds)
        XCTAssertEqual(history.score(of: "FavoriteAction/ada", at: start + UsageHistory.halfLifeSeconds), 1.5, accuracy: 1e-12)
        XCTAssertEqual(UsageHistory.halfLifeSeconds, 14 * day, "the half-life qactd.conf(5) documents")
    }

    func testTheUsageShownIsTheScoreAtTheLastUseAndDecaysFromThere() throws {
        var history = UsageHistory()
        history.record("Search", at: start)
        history.record("Search", at: start + 14 * day)
        let usage = try XCTUnwrap(history.usage(of: "Search"))
        XCTAssertEqual(usage.lastUsed, start + 14 * day)
        XCTAssertEqual(usage.score, 1.5, accuracy: 1e-12)
        XCTAssertEqual(usage.score(at: start + 28 * day), history.score(of: "Search", at: start + 28 * day), accuracy: 1e-12)
        XCTAssertEqual(usage.score(at: start + 28 * day), 0.75, accuracy: 1e-12)
        XCTAssertNil(history.usage(of: "Other"))
    }

    func testOnlyTheMostRecentTriggersAreKeptInOrderEvenWithAClockSetBack() throws {
        var history = UsageHistory()
        for offset in 0..<40 { history.record("k", at: start + Int64(offset)) }
        let kept = try XCTUnwrap(history.times["k"])
        XCTAssertEqual(kept.count, UsageHistory.timesKept)
        XCTAssertEqual(kept.first, start + Int64(40 - UsageHistory.timesKept))
        XCTAssertEqual(kept.last, start + 39)
        history.record("k", at: start + 20)
        XCTAssertEqual(history.times["k"], history.times["k"].map { $0.sorted() }, "kept in order")
        XCTAssertEqual(history.times["k"]?.last, start + 39, "the newest stays last")
        XCTAssertEqual(UsageHistory(times: ["k": [5, 1, 3]]).times["k"], [1, 3, 5])
    }

    // MARK: The order

    func testRecentUseOutranksOlderUseAndTiesGoByName() {
        var history = UsageHistory()
        // Bob: three times a month ago; Cyd: twice this week; Ada and Grace never.
        for offset in 0..<3 { history.record("FavoriteAction/bob", at: start - 30 * day + Int64(offset)) }
        history.record("FavoriteAction/cyd", at: start - 2 * day)
        history.record("FavoriteAction/cyd", at: start - day)
        XCTAssertGreaterThan(history.score(of: "FavoriteAction/cyd", at: start), history.score(of: "FavoriteAction/bob", at: start))
        XCTAssertEqual(history.ordered(byName, by: .usage, favoriteType: "FavoriteAction").map(\.identifier), ["cyd", "bob", "ada", "grace"])
        XCTAssertEqual(history.ordered(byName, by: .name, favoriteType: "FavoriteAction").map(\.identifier), ["ada", "bob", "cyd", "grace"])
        // Another type's counts rank nothing: the favorites' items are counted under theirs.
        XCTAssertEqual(history.ordered(byName, by: .usage, favoriteType: "Call").map(\.identifier), ["ada", "bob", "cyd", "grace"])

        // Equal scores (one trigger each, at the same time) keep the order by name.
        var tied = UsageHistory()
        tied.record("FavoriteAction/grace", at: start)
        tied.record("FavoriteAction/bob", at: start)
        XCTAssertEqual(tied.ordered(byName, by: .usage, favoriteType: "FavoriteAction").map(\.identifier), ["bob", "grace", "ada", "cyd"])
    }

    /// Every trigger decays alike, so the order at any later time is the order `rank` gives,
    /// and `rank` stays finite for times far from 1970 either way.
    func testTheOrderByRankIsTheOrderByScoreAtAnyTime() throws {
        var history = UsageHistory()
        history.record("a", at: start - 40 * day)
        for offset in 0..<5 { history.record("a", at: start - 60 * day + Int64(offset)) }
        history.record("b", at: start - 3 * day)
        history.record("c", at: start)
        history.record("d", at: 4_000_000_000_000)
        for key in ["a", "b", "c", "d"] { XCTAssertTrue(try XCTUnwrap(history.rank(of: key)).isFinite, key) }
        for now in [start, start + 10 * day, start + 400 * day] {
            let byScore = ["a", "b", "c"].sorted { history.score(of: $0, at: now) > history.score(of: $1, at: now) }
            let byRank = try ["a", "b", "c"].sorted { try XCTUnwrap(history.rank(of: $0)) > XCTUnwrap(history.rank(of: $1)) }
            XCTAssertEqual(byScore, byRank, "at \(now)")
        }
    }

    func testTheCapKeepsTheFirstInOrderAndTheRestAreRankedOut() {
        var history = UsageHistory()
        history.record("FavoriteAction/grace", at: start)
        let usage = DynamicItemConfiguration(order: .usage, maxItems: 2)
        XCTAssertEqual(usage.chosen(from: byName, usage: history).map(\.identifier), ["grace", "ada"])
        let name = DynamicItemConfiguration(order: .name, maxItems: 2)
        XCTAssertEqual(name.chosen(from: byName, usage: history).map(\.identifier), ["ada", "bob"])
        XCTAssertEqual(DynamicItemConfiguration(order: .usage).chosen(from: byName, usage: history).count, 4, "no cap: every favorite")
    }

    // MARK: In the state

    /// Grace, last by name and cut by the cap, is chosen three times (a pinned launcher of
    /// hers counts as the menu does): the next derivation puts her first, though the favorites
    /// did not change, and the listing shows her score.
    func testAFavoriteChosenThreeTimesComesFirstAtTheNextDerivation() throws {
        let configuration = DynamicItemConfiguration(order: .usage, maxItems: 3)
        let contacts = Dictionary(uniqueKeysWithValues: byName.map { ($0.identifier, $0) })
        let version = ContactIndex().favoritesVersion
        var state = QuickActionsState()
        _ = state.resignActive(favorites: byName, favoritesVersion: version, appVersion: "1", configuration: configuration)
        XCTAssertEqual(state.dynamicItems.map(\.title), ["Ada", "Bob", "Cyd"], "by name until anything is chosen, cut at 3")

        _ = try state.trigger(.position(2), displayLimit: 4, contactLookup: { contacts[$0] }, appConnected: true, at: start).get()
        XCTAssertEqual(state.dynamicItems.map(\.title), ["Ada", "Bob", "Cyd"], "a choice reorders nothing until the next derivation")
        let graceItem = dynamicItem(for: grace, appVersion: "1", configuration: configuration)
        for offset in 1...3 {
            _ = state.triggerPinned(graceItem, contact: grace, appConnected: true, at: start + Int64(offset))
        }
        let outcome = state.resignActive(
            favorites: byName, favoritesVersion: version, appVersion: "1", configuration: configuration)
        XCTAssertTrue(outcome.changed, "the same favorites' version is derived again after a choice")
        XCTAssertEqual(state.dynamicItems.map(\.title), ["Grace", "Bob", "Ada"])
        let again = state.resignActive(favorites: byName, favoritesVersion: version, appVersion: "1", configuration: configuration)
        XCTAssertFalse(again.changed)

        let listing = state.listing(all: true, limit: nil, displayLimit: 4, usage: true)
        XCTAssertEqual(listing.map(\.item.title), ["Grace", "Bob", "Ada"])
        XCTAssertEqual(listing[0].usage?.lastUsed, start + 3)
        XCTAssertEqual(try XCTUnwrap(listing[0].usage?.score), 3, accuracy: 1e-5)
        XCTAssertEqual(try XCTUnwrap(listing[1].usage?.score), 1, accuracy: 1e-12)
        XCTAssertNil(listing[2].usage, "never chosen")
        XCTAssertTrue(state.listing(all: true, limit: nil, displayLimit: 4).allSatisfy { $0.usage == nil }, "the launchers' listing")
    }

    func testATriggerWithoutATimeIsCountedButRanksNothing() throws {
        var state = QuickActionsState()
        let configuration = DynamicItemConfiguration(order: .usage)
        _ = state.resignActive(favorites: byName, appVersion: "1", configuration: configuration)
        _ = try state.trigger(.position(4), displayLimit: 4, contactLookup: { [grace] _ in grace }, appConnected: true).get()
        XCTAssertEqual(state.usageCounts, ["FavoriteAction/grace": 1])
        XCTAssertTrue(state.usageHistory.isEmpty)
        XCTAssertEqual(state.usageVersion, 0)
    }

    // MARK: On disk

    /// The trigger times go to the state file and come back; a file written before them reads
    /// as it did (no times, so by name), and a state with none writes no `usageTimes` key.
    func testTriggerTimesRoundTripAndOlderFilesReadTheSame() throws {
        var state = QuickActionsState()
        _ = state.resignActive(favorites: byName, appVersion: "1", configuration: DynamicItemConfiguration(order: .usage))
        XCTAssertFalse(try text(PersistedState(state)).contains("usageTimes"))
        _ = try state.trigger(.position(3), displayLimit: 4, contactLookup: { [cyd] _ in cyd }, appConnected: true, at: start).get()
        _ = try state.trigger(.position(3), displayLimit: 4, contactLookup: { [cyd] _ in cyd }, appConnected: true, at: start + 9).get()
        _ = try state.trigger(.position(1), displayLimit: 4, contactLookup: { [ada] _ in ada }, appConnected: true, at: start + 5).get()
        let persisted = PersistedState(state)
        XCTAssertEqual(persisted.usageTimes, ["FavoriteAction/cyd": [start, start + 9], "FavoriteAction/ada": [start + 5]])
        for pretty in [true, false] {
            let written = try persisted.jsonText(pretty: pretty)
            XCTAssertEqual(try JSONDecoder().decode(PersistedState.self, from: Data(written)), persisted, String(decoding: written, as: UTF8.self))
        }
        XCTAssertEqual(try JSONDecoder().decode(PersistedState.self, from: JSONEncoder().encode(persisted)), persisted)
        let restored = QuickActionsState(restoring: persisted, staticItems: [])
        XCTAssertEqual(restored.usageHistory, state.usageHistory)

        let older = #"{"formatVersion":1,"generation":3,"launched":true,"appVersion":"1","dynamicItems":[],"usageCounts":{"FavoriteAction/cyd":4}}"#
        let decoded = try JSONDecoder().decode(PersistedState.self, from: Data(older.utf8))
        XCTAssertEqual(decoded.usageTimes, [:])
        XCTAssertEqual(decoded.usageCounts, ["FavoriteAction/cyd": 4])
        var fromOlder = QuickActionsState(restoring: decoded, staticItems: [])
        _ = fromOlder.resignActive(favorites: byName, appVersion: "1", configuration: DynamicItemConfiguration(order: .usage))
        XCTAssertEqual(fromOlder.dynamicItems.map(\.title), ["Ada", "Bob", "Cyd", "Grace"])
        XCTAssertFalse(try text(PersistedState(fromOlder)).contains("usageTimes"))
    }

    /// A row's usage on the wire: its score and last use, read back as they were; no `usage` key without one.
    func testARowsUsageIsOnTheWireAndReadsBack() throws {
        let row = ListedShortcut(
            item: ShortcutItem(type: "Search", title: "Search"), source: .static, displayed: true, position: 1,
            usage: ShortcutUsage(score: 2.5, lastUsed: start))
        let listing = QuickActionsListing(generation: 1, launched: true, items: [row])
        let written = String(decoding: try listing.jsonText(pretty: false), as: UTF8.self)
        XCTAssertTrue(written.contains(#""usage":{"lastUsed":1795000000,"score":2.5}"#), written)
        XCTAssertEqual(try JSONDecoder().decode(QuickActionsListing.self, from: Data(written.utf8)).items, [row])
        var plain = row
        plain.usage = nil
        let plainListing = QuickActionsListing(generation: 1, launched: true, items: [plain])
        XCTAssertFalse(String(decoding: try plainListing.jsonText(pretty: false), as: UTF8.self).contains("usage"))
    }

    private func text(_ persisted: PersistedState) throws -> String {
        String(decoding: try persisted.jsonText(pretty: true), as: UTF8.self)
    }
}
