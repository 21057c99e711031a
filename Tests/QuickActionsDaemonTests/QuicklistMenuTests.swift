import Foundation
@testable import QuickActionsDaemon
import XCTest

/// The dbusmenu tree the quicklist serves: ids that follow items, revisions that follow changes.
final class QuicklistMenuTests: XCTestCase {
    private func entry(_ label: String, contact: String? = nil) -> QuicklistEntry {
        QuicklistEntry(label: label, iconName: "starred", type: "FavoriteAction", contactIdentifier: contact ?? label.lowercased())
    }

    func testAnItemKeepsItsIdAcrossChangesAndANewItemGetsANewOne() {
        var menu = QuicklistMenu()
        XCTAssertTrue(menu.replace(with: [entry("Ada"), entry("Grace")]))
        XCTAssertEqual(menu.revision, 1)
        let ada = menu.items[0].id, grace = menu.items[1].id
        XCTAssertNotEqual(ada, grace)
        XCTAssertNotEqual(ada, QuicklistMenu.rootID)

        XCTAssertTrue(menu.replace(with: [entry("Grace"), entry("Alan")]))
        XCTAssertEqual(menu.revision, 2)
        XCTAssertEqual(menu.items[0].id, grace, "Grace keeps her id when she moves up")
        XCTAssertFalse([ada, grace].contains(menu.items[1].id), "Alan gets a fresh id, not Ada's")
        XCTAssertNil(menu.entry(id: ada), "a click on Ada's old row finds nothing, not a neighbour")
        XCTAssertEqual(menu.children(of: QuicklistMenu.rootID), menu.items.map(\.id))
        XCTAssertEqual(menu.children(of: grace), [])
    }

    func testTheSameItemsAgainChangeNothing() {
        var menu = QuicklistMenu()
        XCTAssertTrue(menu.replace(with: [entry("Ada")]))
        XCTAssertFalse(menu.replace(with: [entry("Ada")]))
        XCTAssertEqual(menu.revision, 1)
        XCTAssertTrue(menu.replace(with: [entry("Ada Lovelace", contact: "ada")]), "a new title is a change")
        XCTAssertEqual(menu.revision, 2)
    }

    func testPropertiesOfTheRootAndOfAnItemAndOnlyThoseAskedFor() throws {
        var menu = QuicklistMenu()
        _ = menu.replace(with: [entry("Snake_case")])
        let id = menu.items[0].id
        XCTAssertEqual(menu.properties(of: QuicklistMenu.rootID)?.map(\.key), ["children-display"])
        let properties = try XCTUnwrap(menu.properties(of: id))
        XCTAssertEqual(properties.map(\.key), ["label", "enabled", "visible", "icon-name"])
        XCTAssertEqual(properties[0].value, .string("Snake__case"), "an underscore is not taken for a mnemonic")
        XCTAssertEqual(properties[3].value, .string("starred"))
        XCTAssertEqual(menu.properties(of: id, only: ["label"])?.map(\.key), ["label"])
        XCTAssertNil(menu.properties(of: 99))
        XCTAssertFalse(menu.contains(id: 99))
        XCTAssertTrue(menu.contains(id: QuicklistMenu.rootID))
    }

    func testTheSessionBusAddressComesFromTheEnvironmentOrTheRuntimeFolder() throws {
        XCTAssertEqual(try QuicklistExporter.sessionBusAddress(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"]).get(), "unix:path=/x")
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: runtime) }
        guard case .failure(let missing) = QuicklistExporter.sessionBusAddress(environment: ["XDG_RUNTIME_DIR": runtime.path]) else {
            return XCTFail("no bus socket, yet an address")
        }
        XCTAssertTrue(missing.description.contains("\(runtime.path)/bus"), missing.description)
        _ = FileManager.default.createFile(atPath: runtime.appendingPathComponent("bus").path, contents: nil)
        XCTAssertEqual(try QuicklistExporter.sessionBusAddress(environment: ["XDG_RUNTIME_DIR": runtime.path]).get(), "unix:path=\(runtime.path)/bus")
        guard case .failure(let none) = QuicklistExporter.sessionBusAddress(environment: [:]) else { return XCTFail("an address from nothing") }
        XCTAssertTrue(none.description.hasPrefix("no session bus"), none.description)
    }
}
