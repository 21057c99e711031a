import Foundation
import Glibc
import Logging
import QuickActions
@testable import QuickActionsDaemon
import XCTest

/// The dbusmenu tree the quicklist serves: ids that follow items, revisions that follow changes.
final class QuicklistMenuTests: XCTestCase {
    private func entry(_ label: String, contact: String? = nil) -> QuicklistEntry {
        QuicklistEntry(label: label, iconName: "starred", type: "FavoriteAction", contactIdentifier: contact ?? label.lowercased())
    }

    func testAnItemKeepsItsIdAcrossChangesAndANewItemGetsANewOne() {
        var menu = QuicklistMenu()
        XCTAssertEqual(menu.replace(with: [entry("Ada"), entry("Grace")]), .layout)
        XCTAssertEqual(menu.revision, 1)
        let ada = menu.items[0].id, grace = menu.items[1].id
        XCTAssertNotEqual(ada, grace)
        XCTAssertNotEqual(ada, QuicklistMenu.rootID)

        XCTAssertEqual(menu.replace(with: [entry("Grace"), entry("Alan")]), .layout)
        XCTAssertEqual(menu.revision, 2)
        XCTAssertEqual(menu.items[0].id, grace, "Grace keeps her id when she moves up")
        XCTAssertFalse([ada, grace].contains(menu.items[1].id), "Alan gets a fresh id, not Ada's")
        XCTAssertNil(menu.entry(id: ada), "a click on Ada's old row finds nothing, not a neighbour")
        XCTAssertEqual(menu.children(of: QuicklistMenu.rootID), menu.items.map(\.id))
        XCTAssertEqual(menu.children(of: grace), [])
    }

    func testTheSameItemsAgainChangeNothing() {
        var menu = QuicklistMenu()
        XCTAssertEqual(menu.replace(with: [entry("Ada")]), .layout)
        XCTAssertNil(menu.replace(with: [entry("Ada")]))
        XCTAssertEqual(menu.revision, 1)
        let id = menu.items[0].id
        XCTAssertEqual(menu.replace(with: [entry("Ada Lovelace", contact: "ada")]), .properties(updated: [id], removed: [:]),
                       "a new title for the same item is new properties, not a new layout")
        XCTAssertEqual(menu.revision, 2)
        var iconless = entry("Ada Lovelace", contact: "ada")
        iconless.iconName = nil
        XCTAssertEqual(menu.replace(with: [iconless]), .properties(updated: [id], removed: [id: ["icon-name"]]))
    }

    func testPropertiesOfTheRootAndOfAnItemAndOnlyThoseAskedFor() throws {
        var menu = QuicklistMenu()
        XCTAssertNotNil(menu.replace(with: [entry("Snake_case")]))
        let id = menu.items[0].id
        XCTAssertEqual(menu.properties(of: QuicklistMenu.rootID)?.map(\.key), ["children-display"])
        let properties = try XCTUnwrap(menu.properties(of: id))
        XCTAssertEqual(properties.map(\.key), ["type", "label", "enabled", "visible", "icon-name"])
        XCTAssertEqual(properties[0].value, .string("standard"), "said, although the default: Dash to Dock draws icons only then")
        XCTAssertEqual(properties[1].value, .string("Snake__case"), "an underscore is not taken for a mnemonic")
        XCTAssertEqual(properties[4].value, .string("starred"))
        XCTAssertEqual(menu.properties(of: id, only: ["label"])?.map(\.key), ["label"])
        XCTAssertNil(menu.properties(of: 99))
        XCTAssertFalse(menu.contains(id: 99))
        XCTAssertTrue(menu.contains(id: QuicklistMenu.rootID))
    }

    /// A favorite's face goes as its image (`icon-data`, the face file's bytes) instead of its icon
    /// name; a face that comes or changes alone is new properties, with the name removed.
    func testAFaceIsTheFavoritesImageAndAChangeOfFaceAloneIsNewProperties() throws {
        let content = QuicklistContent(
            applicationURI: "application://demo.desktop",
            entries: [entry("Ada", contact: "ada"), QuicklistEntry(label: "Search", iconName: "system-search", type: "search")])
        var menu = QuicklistMenu()
        XCTAssertEqual(menu.replace(with: content.entries), .layout)
        let ada = menu.items[0].id, search = menu.items[1].id
        let face = Array("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8)
        let withFace = content.showing(faces: ["ada": face, "search": [1, 2, 3]])
        XCTAssertNil(withFace.entries[1].iconData, "an item without a contact has no face, whatever the faces hold")
        XCTAssertEqual(menu.replace(with: withFace.entries), .properties(updated: [ada], removed: [ada: ["icon-name"]]))
        let properties = try XCTUnwrap(menu.properties(of: ada))
        XCTAssertEqual(properties.map(\.key), ["type", "label", "enabled", "visible", "icon-data"])
        XCTAssertEqual(properties[4].value, .bytes(face))
        XCTAssertEqual(try XCTUnwrap(menu.properties(of: search)).last?.value, .string("system-search"), "the static item keeps its icon name")

        let newFace = Array("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\"/>".utf8)
        XCTAssertEqual(menu.replace(with: content.showing(faces: ["ada": newFace]).entries), .properties(updated: [ada], removed: [:]))
        XCTAssertNil(menu.replace(with: content.showing(faces: ["ada": newFace]).entries))
        XCTAssertEqual(menu.replace(with: content.showing(faces: [:]).entries), .properties(updated: [ada], removed: [ada: ["icon-data"]]),
                       "without faces (FavoriteFaces=no) the icon name is back")
        XCTAssertEqual(try XCTUnwrap(menu.properties(of: ada)).last?.value, .string("starred"))
    }

    /// The quicklist's image of a face is the face's own file, the one the desktop entry names:
    /// a photo's PNG picture (what dbusmenu's `icon-data` is), whatever the photo's size, since
    /// the picture is 128 pixels square: a photo near the 1 MiB a card's photo may have (noise,
    /// which PNG cannot compress) gives a face far below `maxIconDataBytes`, which stays a bound
    /// for safety (a larger face would go as the monogram).
    func testTheQuicklistGetsTheFaceFileItselfAPNGFarBelowItsBound() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-faces-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<(450 * 450)).flatMap { _ in [UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator), UInt8.random(in: 0...255, using: &generator), 255] }
        let photos = [
            "small": try TestPhoto.png(width: 64, height: 64, rgb: [0xE0, 0x1B, 0x24]),
            "large": try FacePicture.encodePNG(FacePicture.Pixels(width: 450, height: 450, rgba: noise)),
        ]
        XCTAssertGreaterThan(photos["large"]?.count ?? 0, 2 * QuicklistMenu.maxIconDataBytes)
        XCTAssertLessThanOrEqual(photos["large"]?.count ?? .max, FaceImage.maxBytes)
        func card(_ name: String) throws -> FaceRequest {
            let photo = Data(try XCTUnwrap(photos[name])).base64EncodedString()
            let path = folder + "/\(name).vcf"
            try "BEGIN:VCARD\nVERSION:3.0\nUID:\(name)\nFN:\(name.capitalized) Hopper\nPHOTO;ENCODING=b;TYPE=PNG:\(photo)\nEND:VCARD\n"
                .write(toFile: path, atomically: true, encoding: .utf8)
            return FaceRequest(identifier: name, name: "\(name.capitalized) Hopper", card: .file(path))
        }
        var faces = FaceFiles(dataHome: folder)
        let files = faces.sync([try card("small"), try card("large")], appDesktopFileID: "org.example.Contacts.desktop", logger: Logger(label: "test"))
        for name in ["small", "large"] {
            let face = try XCTUnwrap(files[name], name)
            XCTAssertTrue(face.path.hasSuffix(".png"), face.path)
            XCTAssertEqual(face.quicklistImage, Array(try Data(contentsOf: URL(fileURLWithPath: face.path))), "\(name): the face file itself")
            XCTAssertEqual(Array(face.quicklistImage.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "\(name): a PNG")
            XCTAssertLessThanOrEqual(face.quicklistImage.count, QuicklistMenu.maxIconDataBytes / 2, name)
        }
        XCTAssertEqual(try TestPhoto.middleAndCorner(ofFace: try XCTUnwrap(files["small"]).path).middle, [0xE0, 0x1B, 0x24, 255])
    }

    func testTheSessionBusAddressComesFromTheEnvironmentOrTheRuntimeFolder() throws {
        XCTAssertEqual(try SessionBus.address(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"]).get(), "unix:path=/x")
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: runtime) }
        guard case .failure(let missing) = SessionBus.address(environment: ["XDG_RUNTIME_DIR": runtime.path]) else {
            return XCTFail("no bus socket, yet an address")
        }
        XCTAssertTrue(missing.description.contains("\(runtime.path)/bus"), missing.description)
        _ = FileManager.default.createFile(atPath: runtime.appendingPathComponent("bus").path, contents: nil)
        XCTAssertEqual(try SessionBus.address(environment: ["XDG_RUNTIME_DIR": runtime.path]).get(), "unix:path=\(runtime.path)/bus")
        guard case .failure(let none) = SessionBus.address(environment: [:]) else { return XCTFail("an address from nothing") }
        XCTAssertTrue(none.description.hasPrefix("no session bus"), none.description)
    }

    private func publication(_ launcher: String, displayed rows: [ListedShortcut]) throws -> LauncherPublication {
        let configuration = try ConfigurationLoader.parse(
            text: "[Launcher]\n" + launcher, file: "/tmp/qactd.conf", environment: ["HOME": "/tmp", "XDG_RUNTIME_DIR": "/tmp"],
            userID: getuid()
        ).configuration
        let listing = QuickActionsListing(generation: 1, launched: true, items: rows)
        return LauncherPublication(
            displayed: listing, untranslated: listing, localization: Localization(), configuration: configuration, socketPath: "/tmp/q.sock")
    }

    func testTheQuicklistHoldsTheDisplayedFavoritesOnlyAndSaysWhyItIsOff() throws {
        let search = ShortcutItem(type: "Search", title: "Search", icon: .system(.search))
        let ada = ShortcutItem(type: "FavoriteAction", title: "Ada", icon: .symbol("star.fill"), userInfo: ["contactIdentifier": .string("ada")])
        let grace = ShortcutItem(type: "FavoriteAction", title: "Grace", userInfo: ["contactIdentifier": .string("grace")])
        let rows = [
            ListedShortcut(item: search, source: .static, displayed: true, position: 1),
            ListedShortcut(item: ada, source: .dynamic, displayed: true, position: 2),
            ListedShortcut(item: grace, source: .dynamic, displayed: false, position: 3),
        ]
        let wanted = QuicklistExporter.wanted(for: try publication("DesktopFile=org.example.Contacts.desktop\nDynamicItems=quicklist\n", displayed: rows))
        XCTAssertEqual(wanted, .on(QuicklistContent(
            applicationURI: "application://org.example.Contacts.desktop",
            entries: [QuicklistEntry(label: "Ada", iconName: "starred", type: "FavoriteAction", contactIdentifier: "ada")])),
            "static items go to the desktop entry; a favorite beyond the display limit nowhere")

        let byPath = QuicklistExporter.wanted(for: try publication("DesktopFile=/opt/app/org.example.Contacts.desktop\nDynamicItems=quicklist\n", displayed: rows))
        guard case .on(let content) = byPath else { return XCTFail("\(byPath)") }
        XCTAssertEqual(content.applicationURI, "application://org.example.Contacts.desktop", "docks match the file's name")

        XCTAssertEqual(QuicklistExporter.wanted(for: try publication("DesktopFile=org.example.Contacts.desktop\nDynamicItems=desktop-entry\n", displayed: rows)),
                       .off(reason: "DynamicItems=desktop-entry: the favorites are in the desktop entry"))
        // The default, auto: the quicklist is served as with quicklist (the desktop-entry writer
        // decides whether the entry holds them too).
        XCTAssertEqual(QuicklistExporter.wanted(for: try publication("DesktopFile=org.example.Contacts.desktop\n", displayed: rows)), wanted)
        XCTAssertEqual(QuicklistExporter.wanted(for: try publication("DynamicItems=quicklist\n", displayed: rows)),
                       .off(reason: "DesktopFile= is empty"))
    }
}
