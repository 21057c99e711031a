import Contacts
import Foundation
import XCTest
@testable import QuickActions

/// An app's own dynamic items: the rules they are checked by, the list's changes, where they
/// stand among the static items and the favorites, and the state file.
final class AppItemsTests: XCTestCase {
    private let rules = AppItemRules(maxItems: 3)

    private func item(_ type: String, _ title: String? = nil, icon: ShortcutIcon? = nil, userInfo: [String: PropertyListValue] = [:]) -> ShortcutItem {
        ShortcutItem(type: type, title: title ?? "Open \(type)", subtitle: nil, icon: icon, userInfo: userInfo)
    }

    private func refusal(_ items: [ShortcutItem], rules: AppItemRules? = nil) -> AppItemError? {
        do throws(AppItemError) {
            try (rules ?? self.rules).validate(items, field: "items")
            return nil
        } catch {
            return error
        }
    }

    func testEachRuleNamesTheField() {
        let cases: [(ShortcutItem, String)] = [
            (item("open", ""), "items[0].title"),
            (item("open", " \t"), "items[0].title"),
            (item("", "Open"), "items[0].type"),
            (item("open", "Line\nbreak"), "items[0].title"),
            (ShortcutItem(type: "open", title: "Open", subtitle: "nul\u{0}"), "items[0].subtitle"),
            (item("open", String(repeating: "é", count: 600)), "items[0].title"),
            (item("open", icon: .themed("../../etc/passwd")), "items[0].icon.name"),
            (item("open", icon: .themed("")), "items[0].icon.name"),
            (item("open", icon: .templateFile("relative.png")), "items[0].icon.name"),
            (item("open", userInfo: ["image": .data(Data(count: 10 << 20))]), "items[0].userInfo"),
            (item("open", userInfo: ["contactIdentifier": .string("ada")]), "items[0].userInfo.contactIdentifier"),
        ]
        for (refused, field) in cases {
            guard case .invalid(let named, _)? = refusal([refused]) else {
                XCTFail("\(refused) was accepted")
                continue
            }
            XCTAssertEqual(named, field, "\(refused)")
        }
        var deep: PropertyListValue = .string("x")
        for _ in 0..<100 { deep = .array([deep]) }
        guard case .invalid("items[0].userInfo", _)? = refusal([item("open", userInfo: ["deep": deep])]) else {
            return XCTFail("a userInfo nested 100 deep was accepted")
        }
    }

    func testValidItemsPassAndTheListIsBoundedWithDistinctTypes() {
        let valid = [
            item("a", icon: .themed("document-open-recent")), item("b", icon: .system(.compose)),
            item("c", icon: .templateFile("/usr/share/icons/hicolor/48x48/apps/x.png"), userInfo: ["path": .string("/home/u/a.txt")]),
        ]
        XCTAssertNil(refusal(valid))
        XCTAssertEqual(refusal(valid + [item("d")]), .tooMany(count: 4, maxItems: 3))
        guard case .invalid("items[2].type", _)? = refusal([item("a"), item("b"), item("a")]) else {
            return XCTFail("two items of one type were accepted")
        }
    }

    func testPushPutsFirstReplacesItsTypeAndDropsTheOldestAtTheLimit() throws {
        var list = AppItemList()
        try list.set([item("a"), item("b")], rules: rules)
        XCTAssertEqual(try list.push(item("b", "New b"), rules: rules), [])
        XCTAssertEqual(list.items.map(\.title), ["New b", "Open a"])
        XCTAssertEqual(try list.push(item("c"), rules: rules), [])
        XCTAssertEqual(try list.push(item("d"), rules: rules), ["a"])
        XCTAssertEqual(list.items.map(\.type), ["d", "c", "b"])
        XCTAssertEqual(list.remove(types: ["c", "zzz"]), ["c"])
        XCTAssertEqual(list.items.map(\.type), ["d", "b"])
        XCTAssertThrowsError(try list.push(item("e", ""), rules: rules))
        XCTAssertEqual(list.items.map(\.type), ["d", "b"], "a refused push changes nothing")
    }

    func testTheOrderIsStaticThenTheAppsOwnThenFavoritesUnderOneLimit() throws {
        var state = QuickActionsState(staticItems: [item("static")])
        let favorites = [Contact(identifier: "ada", name: "Ada", favorite: true), Contact(identifier: "bob", name: "Bob", favorite: true)]
        _ = state.resignActive(favorites: favorites, appVersion: "1", configuration: DynamicItemConfiguration())
        let before = state.generation
        let made = try state.changeAppItems { (list: inout AppItemList) throws(AppItemError) in try list.set([item("x"), item("y")], rules: rules) }
        XCTAssertTrue(made.changed)
        XCTAssertEqual(state.generation, before + 1)
        let rows = state.listing(all: true, limit: nil, displayLimit: 4)
        XCTAssertEqual(rows.map(\.item.title), ["Open static", "Open x", "Open y", "Ada", "Bob"])
        XCTAssertEqual(rows.map(\.displayed), [true, true, true, true, false])
        XCTAssertEqual(rows.map(\.source), [.static, .dynamic, .dynamic, .dynamic, .dynamic])

        let unchanged = try state.changeAppItems { (list: inout AppItemList) throws(AppItemError) in try list.set([item("x"), item("y")], rules: rules) }
        XCTAssertFalse(unchanged.changed)
        XCTAssertEqual(state.generation, before + 1, "the same list again is no new generation")
        let kept = state
        XCTAssertThrowsError(try state.changeAppItems { (list: inout AppItemList) throws(AppItemError) in try list.set([item("z", "")], rules: rules) })
        XCTAssertEqual(state, kept, "a refused list changes nothing")

        // A pick of the app's item is delivered as any item: with nothing connected it waits
        // for the app's launch; it has no contact.
        let resolution = try state.trigger(.type("y", contactIdentifier: nil), displayLimit: 4, contactLookup: { _ in nil }, appConnected: false).get()
        XCTAssertEqual(resolution.item.type, "y")
        XCTAssertNil(resolution.contact)
        XCTAssertEqual(resolution.delivery, .launch)
        XCTAssertEqual(state.takePendingLaunchItem()?.type, "y")

        try state.reportAppItemUsed(type: "x", at: 1000)
        XCTAssertEqual(state.usageCounts["x"], 1)
        XCTAssertThrowsError(try state.reportAppItemUsed(type: "nope", at: 1000)) { XCTAssertEqual($0 as? AppItemError, .noSuchItem(type: "nope")) }
    }

    func testTheAppsItemsMarkItLaunched() throws {
        var state = QuickActionsState(staticItems: [item("static")])
        _ = try state.changeAppItems { (list: inout AppItemList) throws(AppItemError) in try list.set([item("x")], rules: rules) }
        XCTAssertTrue(state.launched)
        XCTAssertEqual(state.listing(all: false, limit: nil, displayLimit: 4).map(\.item.type), ["static", "x"])
    }

    func testTheStateFileKeepsThemAndReadsOlderFiles() throws {
        var state = QuickActionsState()
        _ = try state.changeAppItems { (list: inout AppItemList) throws(AppItemError) in
            try list.set([item("x", icon: .themed("document-open"), userInfo: ["path": .string("/a")])], rules: rules)
        }
        let text = try PersistedState(state).jsonText(pretty: true)
        XCTAssertTrue(String(decoding: text, as: UTF8.self).contains(#""kind" : "themed""#))
        let read = try JSONDecoder().decode(PersistedState.self, from: Data(text))
        XCTAssertEqual(QuickActionsState(restoring: read, staticItems: []).appItems, state.appItems)

        let older = #"{"formatVersion":1,"generation":3,"launched":true,"appVersion":"1","dynamicItems":[],"usageCounts":{}}"#
        XCTAssertEqual(try JSONDecoder().decode(PersistedState.self, from: Data(older.utf8)).appItems, [])
        let none = String(decoding: try PersistedState(QuickActionsState()).jsonText(pretty: false), as: UTF8.self)
        XCTAssertFalse(none.contains("appItems"), "a state without the app's items is written as before")
    }

    /// An icon image file: PNG, JPEG or SVG by its first bytes, at most 1 MiB.
    func testAnIconImageIsAPNGJPEGOrSVGOfAtMostOneMebibyte() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]
        XCTAssertNil(AppItemRules.imageProblem(size: 1 << 20, head: png, field: "item.icon.name"))
        XCTAssertNil(AppItemRules.imageProblem(size: 900, head: [0xFF, 0xD8, 0xFF, 0xE0], field: "item.icon.name"))
        XCTAssertNil(AppItemRules.imageProblem(size: 300, head: Array(#"<?xml version="1.0"?> <svg xmlns="http://www.w3.org/2000/svg"/>"#.utf8), field: "f"))
        XCTAssertEqual(AppItemRules.imageProblem(size: (1 << 20) + 1, head: png, field: "items[2].icon.name"),
                       .invalid(field: "items[2].icon.name", reason: "names an image of 1048577 bytes; an icon image may be at most 1048576 bytes"))
        XCTAssertEqual(AppItemRules.imageProblem(size: 12, head: Array("GIF89a......".utf8), field: "item.icon.name"),
                       .invalid(field: "item.icon.name", reason: "names a file that is not a PNG, JPEG or SVG image"))
        XCTAssertNotNil(AppItemRules.imageProblem(size: 0, head: [], field: "item.icon.name"), "an empty file is no image")
        XCTAssertNotNil(AppItemRules.imageProblem(size: 4, head: [0x89, 0x50, 0x4E, 0x47], field: "f"), "a PNG's signature is eight bytes")
    }
}
