import Contacts
import Foundation
import XCTest
@testable import QuickActions

final class DynamicItemsTests: XCTestCase {
    /// A set recomputed as the app's version changes back and forth (every item changed each
    /// time), or after one favorite is edited (one item derived anew, the others kept), is the
    /// set derived in one go, and the state file's text reads back as the state.
    func testARecomputedSetIsTheSetDerivedInOneGo() throws {
        let configuration = DynamicItemConfiguration()
        for count in [1, 15, 1000] {
            var favorites = (0..<count).map {
                Contact(identifier: "id\($0)", name: $0 == 5 ? "Zoë \"Z\"\n" : "N\($0)", email: $0 % 3 == 0 ? nil : "n\($0)@example.org", favorite: true)
            }
            var state = QuickActionsState()
            for version in ["1", "2", "1"] {
                _ = state.resignActive(favorites: favorites, appVersion: version, configuration: configuration)
                let label = "\(count) favorites, version \(version)"
                XCTAssertEqual(state.dynamicItems, dynamicItems(for: favorites, appVersion: version, configuration: configuration), label)
                let persisted = PersistedState(state)
                XCTAssertEqual(try JSONDecoder().decode(PersistedState.self, from: Data(persisted.jsonText(pretty: true))), persisted, label)
            }
            favorites[0].name = "Edited"
            _ = state.resignActive(favorites: favorites, appVersion: "1", configuration: configuration)
            XCTAssertEqual(state.dynamicItems, dynamicItems(for: favorites, appVersion: "1", configuration: configuration), "\(count) favorites, edited")
        }
    }

    func testOneItemPerFavoriteInGivenOrder() {
        let favorites = [
            Contact(identifier: "z", name: "Zed", email: "zed@example.org", favorite: true),
            Contact(identifier: "a", name: "Ada", favorite: true),
        ]
        let items = dynamicItems(for: favorites, appVersion: "1.2", configuration: DynamicItemConfiguration())
        XCTAssertEqual(items, [
            ShortcutItem(type: "FavoriteAction", title: "Zed", subtitle: "zed@example.org", icon: .symbol("star.fill"),
                         userInfo: ["contactIdentifier": .string("z"), "appVersion": .string("1.2")]),
            ShortcutItem(type: "FavoriteAction", title: "Ada", subtitle: nil, icon: .symbol("star.fill"),
                         userInfo: ["contactIdentifier": .string("a"), "appVersion": .string("1.2")]),
        ])
        XCTAssertEqual(items.map(\.contactIdentifier), ["z", "a"])
        XCTAssertEqual(items.map(\.usageKey), ["FavoriteAction/z", "FavoriteAction/a"])
    }

    func testConfigurationAndNoCap() {
        let favorites = (0..<50).map { Contact(identifier: "id\($0)", name: "N\($0)", favorite: true) }
        let configuration = DynamicItemConfiguration(favoriteType: "Call", favoriteIcon: .system(.contact))
        let items = dynamicItems(for: favorites, appVersion: "", configuration: configuration)
        XCTAssertEqual(items.count, 50)
        XCTAssertTrue(items.allSatisfy { $0.type == "Call" && $0.icon == .system(.contact) })
        XCTAssertNil(dynamicItems(for: favorites, appVersion: "", configuration: .init(favoriteIcon: nil)).first?.icon)
        XCTAssertEqual(ShortcutItem(type: "SearchAction", title: "S").usageKey, "SearchAction")
    }
}

final class QuickActionsStateTests: XCTestCase {
    let search = ShortcutItem(type: "SearchAction", title: "Search", icon: .system(.search))
    let share = ShortcutItem(type: "ShareAction", title: "Share", icon: .system(.share))
    let ada = Contact(identifier: "ada", name: "Ada", email: "ada@example.org", favorite: true)
    let bob = Contact(identifier: "bob", name: "Bob", favorite: true)
    let cy = Contact(identifier: "cy", name: "Cy", favorite: true)
    let configuration = DynamicItemConfiguration()

    private func launchedState(favorites: [Contact], version: String = "1.0") -> QuickActionsState {
        var state = QuickActionsState(staticItems: [search, share])
        _ = state.resignActive(favorites: favorites, appVersion: version, configuration: configuration)
        return state
    }

    private func lookup(_ contacts: [Contact]) -> (String) -> Contact? {
        { identifier in contacts.first { $0.identifier == identifier } }
    }

    // MARK: Recompute

    func testAnUnchangedFavoritesVersionSkipsDerivingAndAChangedOneDerivesAgain() {
        var index = ContactIndex()
        index.apply(path: "/c/ada.vcf", result: .success([ada]))
        var state = QuickActionsState(staticItems: [search])
        var favoritesRead = 0
        func favorites() -> [Contact] {
            favoritesRead += 1
            return index.favorites
        }
        let first = state.resignActive(favorites: favorites(), favoritesVersion: index.favoritesVersion, appVersion: "1.0", configuration: configuration)
        XCTAssertEqual(first, RecomputeOutcome(changed: true, generation: 1, dynamicCount: 1))
        let unchanged = state.resignActive(favorites: favorites(), favoritesVersion: index.favoritesVersion, appVersion: "1.0", configuration: configuration)
        XCTAssertEqual(unchanged, RecomputeOutcome(changed: false, generation: 1, dynamicCount: 1))
        XCTAssertEqual(favoritesRead, 1, "the same favorites version, app version and configuration: nothing is derived")

        index.apply(path: "/c/bob.vcf", result: .success([bob]))
        let added = state.resignActive(favorites: favorites(), favoritesVersion: index.favoritesVersion, appVersion: "1.0", configuration: configuration)
        XCTAssertEqual(added, RecomputeOutcome(changed: true, generation: 2, dynamicCount: 2))
        let newVersion = state.resignActive(favorites: favorites(), favoritesVersion: index.favoritesVersion, appVersion: "2.0", configuration: configuration)
        XCTAssertEqual(newVersion, RecomputeOutcome(changed: true, generation: 3, dynamicCount: 2), "a new app version derives again")
        let otherType = state.recompute(
            favorites: favorites(), favoritesVersion: index.favoritesVersion, configuration: DynamicItemConfiguration(favoriteType: "Call"))
        XCTAssertEqual(otherType, RecomputeOutcome(changed: true, generation: 4, dynamicCount: 2), "a new configuration derives again")
        XCTAssertEqual(favoritesRead, 4)

        // Another index with the same favorites has another version: never mistaken for this one.
        var other = ContactIndex()
        other.apply(path: "/d/cy.vcf", result: .success([cy]))
        XCTAssertNotEqual(other.favoritesVersion, index.favoritesVersion)
        let fromOther = state.recompute(
            favorites: other.favorites, favoritesVersion: other.favoritesVersion, configuration: DynamicItemConfiguration(favoriteType: "Call"))
        XCTAssertEqual(fromOther.dynamicCount, 1)

        // What was derived from is no part of the state's value.
        var fresh = QuickActionsState(staticItems: [search])
        _ = fresh.resignActive(favorites: [ada], appVersion: "1.0", configuration: configuration)
        var memoized = QuickActionsState(staticItems: [search])
        _ = memoized.resignActive(favorites: [ada], favoritesVersion: ContactIndex().favoritesVersion, appVersion: "1.0", configuration: configuration)
        XCTAssertEqual(fresh, memoized)
    }

    func testResignActiveRecomputesOnlyOnChange() {
        var state = QuickActionsState(staticItems: [search])
        XCTAssertFalse(state.launched)
        XCTAssertEqual(state.generation, 0)

        let first = state.resignActive(favorites: [ada, bob], appVersion: "1.0", configuration: configuration)
        XCTAssertEqual(first, RecomputeOutcome(changed: true, generation: 1, dynamicCount: 2))
        XCTAssertTrue(state.launched)
        XCTAssertEqual(state.appVersion, "1.0")
        XCTAssertEqual(state.dynamicItems.map(\.title), ["Ada", "Bob"])

        let unchanged = state.resignActive(favorites: [ada, bob], appVersion: nil, configuration: configuration)
        XCTAssertEqual(unchanged, RecomputeOutcome(changed: false, generation: 1, dynamicCount: 2))
        XCTAssertEqual(state.appVersion, "1.0")

        let reordered = state.resignActive(favorites: [bob, ada], appVersion: nil, configuration: configuration)
        XCTAssertEqual(reordered, RecomputeOutcome(changed: true, generation: 2, dynamicCount: 2))
        XCTAssertEqual(state.dynamicItems.map(\.title), ["Bob", "Ada"])

        var renamed = ada
        renamed.email = "ada@new.example"
        XCTAssertTrue(state.resignActive(favorites: [bob, renamed], appVersion: nil, configuration: configuration).changed)
        XCTAssertEqual(state.generation, 3)

        // A new app version changes every item's userInfo, so the set is replaced.
        XCTAssertEqual(state.resignActive(favorites: [bob, renamed], appVersion: "2.0", configuration: configuration),
                       RecomputeOutcome(changed: true, generation: 4, dynamicCount: 2))
        XCTAssertEqual(state.resignActive(favorites: [], appVersion: nil, configuration: configuration),
                       RecomputeOutcome(changed: true, generation: 5, dynamicCount: 0))
        XCTAssertEqual(state.resignActive(favorites: [], appVersion: nil, configuration: configuration),
                       RecomputeOutcome(changed: false, generation: 5, dynamicCount: 0))
    }

    /// Items kept from the last derivation (for favorites that did not change) give exactly
    /// the set a fresh derivation gives, across edits, additions, removals, moves, duplicates,
    /// a new app version and a new configuration; the generation moves only when the set does.
    func testKeptItemsMatchAFreshDerivationThroughEveryKindOfChange() {
        var generator = SystemRandomNumberGenerator()
        var state = QuickActionsState(staticItems: [search])
        var favorites = (0..<12).map { Contact(identifier: "c\($0)", name: "Person \($0)", email: "p\($0)@example.org", favorite: true) }
        var appVersion = "1.0"
        var itemConfiguration = configuration
        var previous: [ShortcutItem] = []
        for round in 0..<400 {
            switch Int.random(in: 0..<8, using: &generator) {
            case 0 where !favorites.isEmpty:
                let index = Int.random(in: 0..<favorites.count, using: &generator)
                favorites[index].name += " e\(round)"
            case 1:
                favorites.insert(Contact(identifier: "n\(round)", name: "New \(round)", favorite: true),
                                 at: Int.random(in: 0...favorites.count, using: &generator))
            case 2 where !favorites.isEmpty:
                favorites.remove(at: Int.random(in: 0..<favorites.count, using: &generator))
            case 3 where favorites.count > 1:
                favorites.swapAt(Int.random(in: 0..<favorites.count, using: &generator), Int.random(in: 0..<favorites.count, using: &generator))
            case 4 where !favorites.isEmpty:
                favorites.append(favorites[Int.random(in: 0..<favorites.count, using: &generator)])
            case 5 where round % 5 == 0:
                appVersion = "1.\(round)"
            case 6 where round % 7 == 0:
                itemConfiguration = DynamicItemConfiguration(favoriteType: "T\(round)", favoriteIcon: round % 2 == 0 ? nil : .symbol("s"))
            default:  // two neighbours change places, or nothing changes
                if favorites.count > 1 && round % 2 == 0 {
                    let first = Int.random(in: 0..<favorites.count - 1, using: &generator)
                    favorites[first...first + 1].reverse()
                }
            }
            let generation = state.generation
            let outcome = state.resignActive(favorites: favorites, appVersion: appVersion, configuration: itemConfiguration)
            let fresh = dynamicItems(for: favorites, appVersion: appVersion, configuration: itemConfiguration)
            XCTAssertEqual(state.dynamicItems, fresh, "round \(round)")
            XCTAssertEqual(outcome.changed, fresh != previous, "round \(round)")
            XCTAssertEqual(state.generation, generation + (outcome.changed ? 1 : 0), "round \(round)")
            previous = fresh
        }
    }

    func testEmptyFirstRecomputeIsUnchangedButMarksLaunched() {
        var state = QuickActionsState(staticItems: [search])
        XCTAssertEqual(state.resignActive(favorites: [], appVersion: nil, configuration: configuration),
                       RecomputeOutcome(changed: false, generation: 0, dynamicCount: 0))
        XCTAssertTrue(state.launched)
    }

    func testRecomputeWithoutLaunchDoesNotMarkLaunched() {
        var state = QuickActionsState(staticItems: [search])
        XCTAssertTrue(state.recompute(favorites: [ada], configuration: configuration).changed)
        XCTAssertFalse(state.launched)
        XCTAssertEqual(state.listing(all: false, limit: nil, displayLimit: 4).map(\.item), [search])
    }

    func testLifecycleMessage() {
        var state = QuickActionsState()
        state.recordLifecycleMessage(appVersion: nil)
        XCTAssertTrue(state.launched)
        XCTAssertEqual(state.appVersion, "")
        state.recordLifecycleMessage(appVersion: "3.1")
        XCTAssertEqual(state.appVersion, "3.1")
        state.recordLifecycleMessage(appVersion: nil)
        XCTAssertEqual(state.appVersion, "3.1")
    }

    func testReplaceStaticItemsKeepsDynamicSet() {
        var state = launchedState(favorites: [ada])
        state.replaceStaticItems([share])
        XCTAssertEqual(state.staticItems, [share])
        XCTAssertEqual(state.generation, 1)
        XCTAssertEqual(state.listing(all: true, limit: nil, displayLimit: 4).map(\.item.title), ["Share", "Ada"])
    }

    // MARK: Listing

    func testListingPrefixPositionsAndSources() {
        let state = launchedState(favorites: [ada, bob, cy])
        let all = state.listing(all: true, limit: nil, displayLimit: 4)
        XCTAssertEqual(all.map(\.item.title), ["Search", "Share", "Ada", "Bob", "Cy"])
        XCTAssertEqual(all.map(\.position), [1, 2, 3, 4, 5])
        XCTAssertEqual(all.map(\.source), [.static, .static, .dynamic, .dynamic, .dynamic])
        XCTAssertEqual(all.map(\.displayed), [true, true, true, true, false])

        XCTAssertEqual(state.listing(all: false, limit: nil, displayLimit: 4).map(\.item.title), ["Search", "Share", "Ada", "Bob"])
        XCTAssertEqual(state.listing(all: false, limit: 1, displayLimit: 4).map(\.item.title), ["Search"])
        XCTAssertEqual(state.listing(all: false, limit: 10, displayLimit: 4).count, 5)
        XCTAssertEqual(state.listing(all: false, limit: nil, displayLimit: 0), [])
        XCTAssertEqual(state.listing(all: false, limit: -3, displayLimit: 4), [])
        XCTAssertEqual(state.listing(all: true, limit: 2, displayLimit: 4).map(\.displayed), [true, true, false, false, false])
    }

    func testBeforeFirstLaunchOnlyStaticItemsAreDisplayed() {
        let restored = QuickActionsState(
            staticItems: [search, share],
            dynamicItems: dynamicItems(for: [ada], appVersion: "1.0", configuration: configuration))
        let all = restored.listing(all: true, limit: nil, displayLimit: 4)
        XCTAssertEqual(all.map(\.displayed), [true, true, false])
        XCTAssertEqual(all.last?.position, 3)
        XCTAssertEqual(restored.listing(all: false, limit: nil, displayLimit: 4).map(\.item), [search, share])
    }

    // MARK: Trigger

    func testTriggerByDisplayedPosition() throws {
        var state = launchedState(favorites: [ada, bob, cy])
        let first = try state.trigger(.position(1), displayLimit: 4, contactLookup: lookup([ada, bob, cy]), appConnected: true).get()
        XCTAssertEqual(first, TriggerResolution(item: search, contact: nil, stale: false, delivery: .running))

        let third = try state.trigger(.position(3), displayLimit: 4, contactLookup: lookup([ada, bob, cy]), appConnected: true).get()
        XCTAssertEqual(third.item.title, "Ada")
        XCTAssertEqual(third.contact, ada)
        XCTAssertFalse(third.stale)

        // Cy is the fifth item: listed, but not displayed with a limit of 4.
        XCTAssertEqual(state.trigger(.position(5), displayLimit: 4, contactLookup: lookup([cy]), appConnected: true),
                       .failure(.noSuchShortcut("No shortcut is displayed at position 5; displayed positions are 1 to 4.")))
        XCTAssertEqual(try state.trigger(.position(5), displayLimit: 5, contactLookup: lookup([cy]), appConnected: true).get().contact, cy)
        for position in [0, -1, 99] {
            guard case .failure(.noSuchShortcut) = state.trigger(.position(position), displayLimit: 4, contactLookup: lookup([]), appConnected: true)
            else { return XCTFail("position \(position) should not resolve") }
        }
    }

    func testTriggerByPositionBeforeLaunchSeesOnlyStaticItems() {
        var state = QuickActionsState(staticItems: [search], dynamicItems: dynamicItems(for: [ada], appVersion: "", configuration: configuration))
        XCTAssertEqual(state.trigger(.position(2), displayLimit: 4, contactLookup: lookup([ada]), appConnected: true),
                       .failure(.noSuchShortcut("No shortcut is displayed at position 2; displayed positions are 1 to 1.")))
        XCTAssertEqual(state.trigger(.type("FavoriteAction", contactIdentifier: nil), displayLimit: 4, contactLookup: lookup([ada]), appConnected: true),
                       .failure(.noSuchShortcut("No shortcut of type \"FavoriteAction\" is available.")))
        var empty = QuickActionsState()
        XCTAssertEqual(empty.trigger(.position(1), displayLimit: 4, contactLookup: lookup([]), appConnected: true),
                       .failure(.noSuchShortcut("No shortcut is displayed at position 1; no shortcuts are displayed.")))
    }

    func testTriggerByTypeIgnoresTheLimitAndSelectsByContact() throws {
        var state = launchedState(favorites: [ada, bob, cy])
        let contacts = lookup([ada, bob, cy])
        XCTAssertEqual(try state.trigger(.type("ShareAction", contactIdentifier: nil), displayLimit: 1, contactLookup: contacts, appConnected: true).get().item, share)
        XCTAssertEqual(try state.trigger(.type("FavoriteAction", contactIdentifier: nil), displayLimit: 1, contactLookup: contacts, appConnected: true).get().contact, ada)
        XCTAssertEqual(try state.trigger(.type("FavoriteAction", contactIdentifier: "cy"), displayLimit: 1, contactLookup: contacts, appConnected: true).get().contact, cy)
        XCTAssertEqual(state.trigger(.type("FavoriteAction", contactIdentifier: "zoe"), displayLimit: 4, contactLookup: contacts, appConnected: true),
                       .failure(.noSuchShortcut("No shortcut of type \"FavoriteAction\" for contact \"zoe\" is available.")))
        XCTAssertEqual(state.trigger(.type("Nope", contactIdentifier: nil), displayLimit: 4, contactLookup: contacts, appConnected: true),
                       .failure(.noSuchShortcut("No shortcut of type \"Nope\" is available.")))
    }

    func testRemovedContactIsAnError() {
        var state = launchedState(favorites: [ada, bob])
        let result = state.trigger(.type("FavoriteAction", contactIdentifier: "bob"), displayLimit: 4, contactLookup: lookup([ada]), appConnected: false)
        XCTAssertEqual(result, .failure(.contactRemoved("bob")))
        XCTAssertEqual(TriggerError.contactRemoved("bob").description, "This contact is no longer available")
        XCTAssertEqual(state.trigger(.position(4), displayLimit: 4, contactLookup: lookup([ada]), appConnected: true), .failure(.contactRemoved("bob")))
        // Failed triggers neither count nor become the pending launch item.
        XCTAssertEqual(state.usageCounts, [:])
        XCTAssertNil(state.pendingLaunchItem)
    }

    func testStaleWhenAppVersionChanged() throws {
        var state = launchedState(favorites: [ada], version: "1.0")
        let contacts = lookup([ada])
        XCTAssertFalse(try state.trigger(.position(3), displayLimit: 4, contactLookup: contacts, appConnected: true).get().stale)
        state.recordLifecycleMessage(appVersion: "2.0")
        let resolution = try state.trigger(.position(3), displayLimit: 4, contactLookup: contacts, appConnected: true).get()
        XCTAssertTrue(resolution.stale)
        XCTAssertEqual(resolution.contact, ada)
        // Static items carry no version and are never stale.
        XCTAssertFalse(try state.trigger(.position(1), displayLimit: 4, contactLookup: contacts, appConnected: true).get().stale)
        // Recomputing under the new version makes the item fresh again.
        XCTAssertTrue(state.resignActive(favorites: [ada], appVersion: nil, configuration: configuration).changed)
        XCTAssertFalse(try state.trigger(.position(3), displayLimit: 4, contactLookup: contacts, appConnected: true).get().stale)
    }

    func testUnknownCurrentVersionIsNotStale() throws {
        var state = QuickActionsState(staticItems: [], dynamicItems: dynamicItems(for: [ada], appVersion: "1.0", configuration: configuration), launched: true)
        XCTAssertFalse(try state.trigger(.position(1), displayLimit: 4, contactLookup: lookup([ada]), appConnected: true).get().stale)
    }

    func testPendingLaunchItemIsReplacedAndHandedOverOnce() throws {
        var state = launchedState(favorites: [ada])
        let contacts = lookup([ada])
        XCTAssertEqual(try state.trigger(.position(1), displayLimit: 4, contactLookup: contacts, appConnected: false).get().delivery, .launch)
        XCTAssertEqual(state.pendingLaunchItem, search)
        XCTAssertEqual(try state.trigger(.position(3), displayLimit: 4, contactLookup: contacts, appConnected: false).get().delivery, .launch)
        XCTAssertEqual(state.pendingLaunchItem?.contactIdentifier, "ada")
        // A delivery to a running app leaves the pending item alone.
        XCTAssertEqual(try state.trigger(.position(2), displayLimit: 4, contactLookup: contacts, appConnected: true).get().delivery, .running)
        XCTAssertEqual(state.pendingLaunchItem?.contactIdentifier, "ada")

        XCTAssertEqual(state.takePendingLaunchItem()?.title, "Ada")
        XCTAssertNil(state.takePendingLaunchItem())
        XCTAssertNil(state.pendingLaunchItem)
        // An item taken for an app that vanished goes back, unless a newer one was chosen meanwhile.
        state.restorePendingLaunchItem(search)
        XCTAssertEqual(state.pendingLaunchItem, search)
        state.restorePendingLaunchItem(share)
        XCTAssertEqual(state.pendingLaunchItem, search, "the newer choice stays")
    }

    func testUsageCounts() throws {
        var state = launchedState(favorites: [ada, bob])
        let contacts = lookup([ada, bob])
        for target: TriggerTarget in [.position(1), .position(1), .position(3), .type("FavoriteAction", contactIdentifier: "bob"), .type("SearchAction", contactIdentifier: nil)] {
            _ = try state.trigger(target, displayLimit: 4, contactLookup: contacts, appConnected: true).get()
        }
        XCTAssertEqual(state.usageCounts, ["SearchAction": 3, "FavoriteAction/ada": 1, "FavoriteAction/bob": 1])
    }

    // MARK: Persistence

    func testPersistedStateRoundTripsThroughJSON() throws {
        var state = launchedState(favorites: [ada, bob], version: "1.0")
        _ = try state.trigger(.position(3), displayLimit: 4, contactLookup: lookup([ada, bob]), appConnected: false).get()
        let persisted = PersistedState(state)
        XCTAssertEqual(persisted.formatVersion, 1)
        let data = try JSONEncoder().encode(persisted)
        let decoded = try JSONDecoder().decode(PersistedState.self, from: data)
        XCTAssertEqual(decoded, persisted)

        let restored = QuickActionsState(restoring: decoded, staticItems: [share])
        XCTAssertEqual(restored.staticItems, [share])
        XCTAssertEqual(restored.dynamicItems, state.dynamicItems)
        XCTAssertEqual(restored.generation, 1)
        XCTAssertTrue(restored.launched)
        XCTAssertEqual(restored.appVersion, "1.0")
        XCTAssertEqual(restored.pendingLaunchItem?.contactIdentifier, "ada")
        XCTAssertEqual(restored.usageCounts, ["FavoriteAction/ada": 1])

        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(Set(object.keys), ["formatVersion", "generation", "launched", "appVersion", "dynamicItems", "pendingLaunchItem", "usageCounts"])
    }

    func testPersistedStateRejectsOtherFormatVersionsAndToleratesOptionalFields() throws {
        let future = #"{"formatVersion":2,"generation":1,"launched":true,"appVersion":"","dynamicItems":[]}"#
        XCTAssertThrowsError(try JSONDecoder().decode(PersistedState.self, from: Data(future.utf8))) { error in
            XCTAssertTrue("\(error)".contains("Unsupported state format version 2"), "\(error)")
        }
        let minimal = #"{"formatVersion":1,"generation":7,"launched":false,"appVersion":"1","dynamicItems":[]}"#
        let decoded = try JSONDecoder().decode(PersistedState.self, from: Data(minimal.utf8))
        XCTAssertEqual(decoded.generation, 7)
        XCTAssertNil(decoded.pendingLaunchItem)
        XCTAssertEqual(decoded.usageCounts, [:])
    }
}
