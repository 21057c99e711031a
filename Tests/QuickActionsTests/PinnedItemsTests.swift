import Contacts
import Foundation
import QuickActions
import TestSupport
import XCTest

/// The pin board (events in, actions out), the pins' identifiers, how pins resolve against the
/// state, and a pinned launcher's text: values only, no I/O.
final class PinnedItemsTests: XCTestCase {
    private let configuration = DynamicItemConfiguration(favoriteType: "FavoriteAction", favoriteIcon: .system(.favorite))
    private let search = ShortcutItem(type: "SearchAction", title: "SEARCH_TITLE", icon: .system(.search))

    private func favorite(_ identifier: String, _ name: String) -> ShortcutItem {
        dynamicItem(for: Contact(identifier: identifier, name: name, favorite: true), appVersion: "1.0", configuration: configuration)
    }

    private func actions(_ board: inout PinBoard, _ event: PinBoard.Event) throws -> [PinBoard.Action] {
        try board.handle(event).get()
    }

    // MARK: Identifiers

    func testAPinsIdentifierComesFromTypeAndContactOnlyAndIsSafeInAFileName() {
        let ada = favorite("ada-lovelace", "Ada Lovelace")
        XCTAssertEqual(PinnedItem.identifier(for: ada), "FavoriteAction-ada-lovelace")
        XCTAssertEqual(PinnedItem.identifier(for: favorite("ada-lovelace", "Ada King")), "FavoriteAction-ada-lovelace", "a rename keeps it")
        XCTAssertEqual(PinnedItem.identifier(for: search), "SearchAction")
        let hostile = favorite("--evil \"id\" $HOME %u;=\\ `x`\n[Desktop Entry] 👩‍💻", "Eve")
        let identifier = PinnedItem.identifier(for: hostile)
        XCTAssertTrue(identifier.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-" }, identifier)
        XCTAssertEqual(identifier, PinnedItem.identifier(for: hostile), "the same in every run")
        XCTAssertNotEqual(identifier, PinnedItem.identifier(for: favorite("--evil \"id\" $HOME %u;=\\ `x`\n[Desktop Entry] 👩‍💻!", "Eve")),
                          "folding never makes two contacts share a pin")
        XCTAssertEqual(PinnedDesktopEntry.fileName(appDesktopFileID: "org.example.Contacts.desktop", pin: identifier),
                       "org.example.Contacts.pinned.\(identifier).desktop")
        XCTAssertNil(PinnedDesktopEntry.fileName(appDesktopFileID: "no-suffix", pin: identifier))
    }

    // MARK: The board's transitions

    func testPinRenameRemoveComeBackAndUnpin() throws {
        var board = PinBoard()
        let ada = favorite("ada-lovelace", "Ada Lovelace")
        let id = PinnedItem.identifier(for: ada)

        // Pinned: one launcher written, enabled.
        XCTAssertEqual(try actions(&board, .pin(ada)), [.write(PinnedItem(identifier: id, item: ada, state: .enabled))])
        XCTAssertEqual(try actions(&board, .pin(ada)), [], "pinning the same item again changes nothing")
        XCTAssertEqual(try actions(&board, .itemsResolved([id: ada])), [], "nothing changed: nothing to write")

        // Renamed: the launcher is rewritten with the new title.
        let renamed = favorite("ada-lovelace", "Ada King")
        XCTAssertEqual(try actions(&board, .itemsResolved([id: renamed])), [.write(PinnedItem(identifier: id, item: renamed, state: .enabled))])

        // Removed: disabled, keeping the last title it had.
        XCTAssertEqual(try actions(&board, .itemsResolved([:])), [.write(PinnedItem(identifier: id, item: renamed, state: .disabled))])
        XCTAssertEqual(try actions(&board, .itemsResolved([:])), [], "still gone: nothing to write")
        XCTAssertEqual(board.pin(identifier: id)?.disabledMessage, "This contact is no longer in your contacts.")

        // Back: enabled again.
        XCTAssertEqual(try actions(&board, .itemsResolved([id: renamed])), [.write(PinnedItem(identifier: id, item: renamed, state: .enabled))])

        // Unpinned: its launcher goes; an unknown pin is refused.
        XCTAssertEqual(try actions(&board, .unpin(identifier: id)), [.remove(identifier: id)])
        XCTAssertTrue(board.pins.isEmpty)
        XCTAssertEqual(board.handle(.unpin(identifier: id)), .failure(.noSuchPin(id)))
    }

    func testUnpinAllRemovesEveryLauncherAndAStaticPinSaysTheAppNoLongerOffersIt() throws {
        var board = PinBoard()
        let ada = favorite("ada-lovelace", "Ada Lovelace")
        _ = try actions(&board, .pin(search))
        _ = try actions(&board, .pin(ada))
        XCTAssertEqual(board.pins.map(\.identifier), ["SearchAction", "FavoriteAction-ada-lovelace"], "in the order pinned")
        XCTAssertEqual(try actions(&board, .itemsResolved(["FavoriteAction-ada-lovelace": ada])),
                       [.write(PinnedItem(identifier: "SearchAction", item: search, state: .disabled))])
        XCTAssertEqual(board.pin(identifier: "SearchAction")?.disabledMessage, "The app no longer offers this quick action.")
        XCTAssertEqual(try actions(&board, .unpinAll), [.remove(identifier: "SearchAction"), .remove(identifier: "FavoriteAction-ada-lovelace")])
        XCTAssertEqual(try actions(&board, .unpinAll), [])
    }

    // MARK: Against the state

    func testPinsResolveAgainstTheContactsAndStaticItemsAndArePersisted() throws {
        var state = QuickActionsState(staticItems: [search], appVersion: "1.0")
        let ada = Contact(identifier: "ada-lovelace", name: "Ada Lovelace", email: "ada@example.org", favorite: true)
        _ = state.resignActive(favorites: [ada], appVersion: "1.0", configuration: configuration)
        let pinned = try state.select(.type("FavoriteAction", contactIdentifier: "ada-lovelace"), displayLimit: 4).get().item
        _ = try state.pinBoard.handle(.pin(pinned)).get()
        _ = try state.pinBoard.handle(.pin(try state.select(.position(1), displayLimit: 4).get().item)).get()

        // No longer a favorite, renamed: still resolved (a pin outlives the displayed set), with the new name.
        let renamed = Contact(identifier: "ada-lovelace", name: "Ada King", favorite: false)
        let resolved = state.resolvedPins(contactLookup: { $0 == "ada-lovelace" ? renamed : nil }, configuration: configuration)
        XCTAssertEqual(resolved["FavoriteAction-ada-lovelace"]?.item.title, "Ada King")
        XCTAssertEqual(resolved["FavoriteAction-ada-lovelace"]?.contact, renamed)
        XCTAssertEqual(resolved["SearchAction"]?.item, search)
        XCTAssertNil(state.resolvedPins(contactLookup: { _ in nil }, configuration: configuration)["FavoriteAction-ada-lovelace"], "removed: unresolved")

        // Triggering a pin counts it as a trigger does.
        var next = state
        let resolution = next.triggerPinned(resolved["SearchAction"]!.item, contact: nil, appConnected: false)
        XCTAssertEqual(resolution.delivery, .launch)
        XCTAssertEqual(next.pendingLaunchItem, search)
        XCTAssertEqual(next.usageCounts["SearchAction"], 1)

        // Saved and restored with the state.
        let data = try JSONEncoder().encode(PersistedState(state))
        let restored = QuickActionsState(restoring: try JSONDecoder().decode(PersistedState.self, from: data), staticItems: [search])
        XCTAssertEqual(restored.pinBoard, state.pinBoard)
        XCTAssertEqual(restored.pinBoard.pins.count, 2)
        // The state file's own writer writes what Codable reads back.
        let written = try PersistedState(state).jsonText(pretty: true)
        XCTAssertEqual(try JSONDecoder().decode(PersistedState.self, from: Data(written)), PersistedState(state))
        XCTAssertEqual(try JSONDecoder().decode(PersistedState.self, from: Data(written)).pins.map(\.state), [.enabled, .enabled])
    }

    // MARK: The launcher's text

    func testAPinnedLauncherHasOneGroupItsKeysAndAnExecNoNameCanExtend() throws {
        let hostileName = "Eve\n[Desktop Entry]\nExec=/bin/touch /tmp/pwned %u; \"quoted\" \\ back=slash [x] 100%"
        let hostileContact = "--evil \"id\" $HOME %u;=\\ `x`\n[Desktop Action x]"
        let item = ShortcutItem(type: "FavoriteAction", title: hostileName, subtitle: "e=ve;@example.org\n[X]", userInfo: [
            DynamicItemUserInfoKey.contactIdentifier: .string(hostileContact),
        ])
        let pin = PinnedItem(identifier: PinnedItem.identifier(for: item), item: item)
        // GLib reads and launches the launcher: its program is a recorder (a path with a space).
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-pin-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let oracle = try GLibLaunchOracle(folder: folder)
        let arguments = ["trigger", "--socket=/run/user/1000/qactd %s.sock", "--pinned=\(pin.identifier)"]
        let command = [oracle.program] + arguments
        for state in [PinnedItem.State.enabled, .disabled] {
            var shown = pin
            shown.state = state
            let text = PinnedDesktopEntry.compose(pin: shown, name: hostileName, icon: "starred", command: command, socketPath: "/run/user/1000/qactd %s.sock")
            let document = try DesktopEntryDocument(parsing: text)
            XCTAssertEqual(document.groupNames, ["Desktop Entry"], text)
            let keys = document.lines.compactMap { if case .entry(let key, _, _) = $0 { key } else { nil } }
            XCTAssertEqual(keys, ["Type", "Name", "Comment", "Icon", "Exec", "Terminal", "StartupNotify",
                                  "X-Qactd-Generated", "X-Qactd-Socket", "X-Qactd-Pinned", "X-Qactd-Pin-State",
                                  "X-Qactd-Pin-Type", "X-Qactd-Pin-Contact"], text)
            // The launcher says what it pins: read back, it is the same pin.
            let read = try XCTUnwrap(PinnedDesktopEntry.pin(from: document))
            XCTAssertEqual(read.identifier, pin.identifier)
            XCTAssertEqual(read.item.type, "FavoriteAction")
            XCTAssertEqual(read.item.contactIdentifier, hostileContact)
            XCTAssertEqual(read.item.title, hostileName)
            XCTAssertEqual(read.state, state)
            XCTAssertEqual(document.value(of: "Name").map(DesktopEntryEscaping.unescapedValue), hostileName)
            try text.write(toFile: folder + "/pin.desktop", atomically: true, encoding: .utf8)
            XCTAssertEqual(try oracle.arguments(desktopFile: folder + "/pin.desktop", launch: nil), arguments)
            XCTAssertEqual(document.value(of: "X-Qactd-Pin-State"), state.rawValue)
            XCTAssertEqual(document.value(of: "Comment").map(DesktopEntryEscaping.unescapedValue),
                           state == .enabled ? "e=ve;@example.org\n[X]" : "This contact is no longer in your contacts.")
            XCTAssertTrue(DesktopEntryExport.isGenerated(document))
        }
    }

    // MARK: Adoption

    /// A daemon without its state takes back the pins its launchers say they are: each new one is
    /// added (and rewritten), one already on the board or whose identifier does not match its
    /// type and contact (a hand-edited file) is not.
    func testAdoptionAddsThePinsLaunchersSayTheyAreAndNothingElse() throws {
        let search = ShortcutItem(type: "SearchAction", title: "Search")
        let ada = ShortcutItem(type: "FavoriteAction", title: "Ada", userInfo: [DynamicItemUserInfoKey.contactIdentifier: .string("ada")])
        var board = PinBoard()
        XCTAssertEqual(try board.handle(.pin(search)).get(), [.write(PinnedItem(identifier: "SearchAction", item: search))])
        let adoptedAda = PinnedItem(identifier: PinnedItem.identifier(for: ada), item: ada, state: .disabled)
        let forged = PinnedItem(identifier: "SearchAction-2", item: search)
        let again = PinnedItem(identifier: "SearchAction", item: ShortcutItem(type: "SearchAction", title: "Old title"))
        XCTAssertEqual(try board.handle(.adopt([adoptedAda, forged, again])).get(), [.write(adoptedAda)])
        XCTAssertEqual(board.pins.map(\.identifier), ["SearchAction", "FavoriteAction-ada"])
        XCTAssertEqual(board.pin(identifier: "SearchAction")?.item.title, "Search", "the board's own pin wins")
        XCTAssertEqual(try board.handle(.adopt([adoptedAda])).get(), [], "adopting twice changes nothing")
        // Resolved afterwards as any pin is: the contact is back, the pin is enabled.
        XCTAssertEqual(try board.handle(.itemsResolved(["SearchAction": search, "FavoriteAction-ada": ada])).get().count, 1)
        XCTAssertEqual(board.pin(identifier: "FavoriteAction-ada")?.state, .enabled)
    }
}
