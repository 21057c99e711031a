import Foundation
import TestSupport
import XCTest

/// A real dock. Tests/integration/plank-dock.py runs Debian's Plank under Xvfb
/// with the built qactd exporting the demo app, right-clicks the dock icon, reads the menu with
/// tesseract and clicks one quick action; here it runs in both modes (about 6 s each).
final class PlankEndToEndTests: XCTestCase {
    static let script = DaemonFixture.repository.appendingPathComponent("Tests/integration/plank-dock.py").path

    private func runDock(mode: String, choose title: String) throws -> [String: Any] {
        let result = DaemonFixture.run(
            "/usr/bin/python3", [Self.script, "--bin", DaemonFixture.binDirectory.path, "--mode", mode, "--choose", title])
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

    /// Everything in the desktop entry: a click runs the action's Exec (qactl trigger).
    func testDesktopEntryModeShowsEachActionOnceAndAClickOnAFavoriteTriggersIt() throws {
        let report = try runDock(mode: "desktop-entry", choose: "Ada Lovelace")
        assertEachDisplayedActionOnceAndTheChosenOneTriggered(report, chosen: "Ada Lovelace")
    }
}
