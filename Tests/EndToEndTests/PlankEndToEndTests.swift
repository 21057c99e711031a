import Foundation
import TestSupport
import XCTest

/// A real dock. Tests/integration/plank-dock.py runs Debian's Plank under Xvfb
/// with the built qactd exporting the demo app, right-clicks the dock icon, reads the menu with
/// tesseract and clicks one quick action; here it runs in both modes (about 6 s each).
final class PlankEndToEndTests: XCTestCase {
    static let script = DaemonFixture.repository.appendingPathComponent("Tests/integration/plank-dock.py").path

    private func runDock(mode: String, choose title: String? = nil, more: [String] = []) throws -> [String: Any] {
        let result = DaemonFixture.run(
            "/usr/bin/python3",
            [Self.script, "--bin", DaemonFixture.binDirectory.path, "--mode", mode] + (title.map { ["--choose", $0] } ?? []) + more)
        if result.status == 77 { try QuicklistEndToEndTests.missing("plank-dock.py: \(result.stdout)") }
        let report = try XCTUnwrap(
            (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any], result.stdout + result.stderr)
        XCTAssertEqual(result.status, 0, "\(report)")
        return report
    }

    private func assertEachDisplayedActionOnceAndTheChosenOneTriggered(_ report: [String: Any], chosen: String, file: StaticString = #filePath, line: UInt = #line) {
        let expected = report["expected"] as? [String] ?? []
        XCTAssertEqual(expected.count, 4, "two static items and two favorites: \(report)", file: file, line: line)
        let found = report["found"] as? [String: Int] ?? [:]
        XCTAssertEqual(found, Dictionary(uniqueKeysWithValues: expected.map { ($0, 1) }), "\(report)", file: file, line: line)
        XCTAssertEqual((report["pending"] as? [String: Any])?["title"] as? String, chosen, "\(report)", file: file, line: line)
    }

    /// Favorites in the live quicklist (read by Plank through libdbusmenu), static items in the
    /// desktop entry: the menu shows each once, and a click on a favorite reaches the daemon over D-Bus.
    func testQuicklistModeShowsEachActionOnceAndAClickOnAFavoriteTriggersIt() throws {
        let report = try runDock(mode: "quicklist", choose: "Arnold Schönberg")
        assertEachDisplayedActionOnceAndTheChosenOneTriggered(report, chosen: "Arnold Schönberg")
    }

    /// The default, `DynamicItems=auto`, with the daemon started before the dock: the entry held
    /// the favorites until Plank took `com.canonical.Unity`, then only the quicklist does, and the
    /// menu shows each once as soon as Plank has read the rewritten entry (within about a second
    /// of its start; before that a menu opened at once may show a favorite twice).
    func testByDefaultPlankShowsEachActionOnceAndAClickOnAFavoriteTriggersIt() throws {
        let report = try runDock(mode: "auto", choose: "Arnold Schönberg")
        assertEachDisplayedActionOnceAndTheChosenOneTriggered(report, chosen: "Arnold Schönberg")
        print("Plank, DynamicItems=auto: each item once \(report["onceAfterSeconds"] ?? "?") s after the dock started")
    }

    /// Everything in the desktop entry: a click runs the action's Exec (qactl trigger).
    func testDesktopEntryModeShowsEachActionOnceAndAClickOnAFavoriteTriggersIt() throws {
        let report = try runDock(mode: "desktop-entry", choose: "Ada Lovelace")
        assertEachDisplayedActionOnceAndTheChosenOneTriggered(report, chosen: "Ada Lovelace")
    }

    /// An app's own items: the example app, running as the demo app, publishes three recent
    /// files; Plank's menu (the default, DynamicItems=auto: the live quicklist) shows each once
    /// beside the demo's static items and favorites, and a click on one reaches the running app,
    /// which opens that file and no other.
    func testTheExampleAppsOwnItemsShowOnceInThePlankMenuAndAClickReachesTheRunningApp() throws {
        let report = try runDock(mode: "auto", more: ["--app-items"])
        let titles = ["Open Notes", "Open Agenda", "Open Letter"]
        let expected = report["expected"] as? [String] ?? []
        XCTAssertEqual(expected.count, 9, "two static items, the four favorites and the app's three: \(report)")
        XCTAssertEqual(expected.filter(titles.contains), titles, "the app's items in its order: \(report)")
        let found = report["found"] as? [String: Int] ?? [:]
        XCTAssertEqual(found, Dictionary(uniqueKeysWithValues: expected.map { ($0, 1) }), "\(report)")
        XCTAssertEqual(report["appItems"] as? [String: Int], Dictionary(uniqueKeysWithValues: titles.map { ($0, 1) }), "\(report)")
        let picked = report["appPicked"] as? [String] ?? []
        XCTAssertEqual(picked.count, 1, "\(report)")
        XCTAssertTrue(picked.first?.hasSuffix("/Agenda") == true, "\(report)")
        XCTAssertNil(report["pending"], "a pick the running app takes is not kept as pending: \(report)")
    }

    /// `FavoriteFaces=yes`, read off the screen: in Plank's menu (the live quicklist's `icon-data`,
    /// drawn by libdbusmenu-gtk through GdkPixbuf) Ada Lovelace, whose card has a pure magenta
    /// photo, has a round patch of magenta beside her name, and Arnold Schönberg, who has no photo, his
    /// monogram's colour beside his. With `FavoriteFaces=no` neither colour is in either row.
    func testQuicklistFavoritesShowTheirFacesBesideTheirNames() throws {
        let on = try runDock(mode: "quicklist", more: ["--faces", "yes"])
        let faces = try XCTUnwrap(on["faces"] as? [String: [String: Int]], "\(on)")
        let monogram = try XCTUnwrap(on["monogramColour"] as? [Int], "\(on)")
        XCTAssertGreaterThanOrEqual(faces["Ada Lovelace"]?["magenta"] ?? 0, 30, "Ada's photo beside her name: \(faces)")
        XCTAssertLessThanOrEqual(faces["Ada Lovelace"]?["monogram"] ?? .max, 3, "not a monogram: \(faces)")
        XCTAssertGreaterThanOrEqual(faces["Arnold Schönberg"]?["monogram"] ?? 0, 30, "Arnold's monogram beside his name: \(faces)")
        XCTAssertLessThanOrEqual(faces["Arnold Schönberg"]?["magenta"] ?? .max, 3, "Ada's photo only in her row: \(faces)")
        // Round: in the box the magenta is drawn in, it covers the middle, not the corners.
        assertRoundFace(on["photoShape"] as? [String: Any], "\(on)")

        let colour = monogram.map { String(format: "%02x", $0) }.joined()
        let off = try runDock(mode: "quicklist", more: ["--faces", "no", "--monogram", colour])
        let plain = try XCTUnwrap(off["faces"] as? [String: [String: Int]], "\(off)")
        for title in ["Ada Lovelace", "Arnold Schönberg"] {
            XCTAssertLessThanOrEqual(plain[title]?["magenta"] ?? .max, 3, "FavoriteFaces=no: no photo beside \(title): \(plain)")
            XCTAssertLessThanOrEqual(plain[title]?["monogram"] ?? .max, 3, "FavoriteFaces=no: no monogram beside \(title): \(plain)")
        }
    }
}
