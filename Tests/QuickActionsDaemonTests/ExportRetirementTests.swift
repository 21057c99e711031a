import QuickActions
import XCTest

@testable import QuickActionsDaemon

/// What becomes of a copy qactd no longer exports, without I/O; the real shells keeping a running
/// app's one icon through it are GnomeShellEndToEndTests and GnomeShell48EndToEndTests.
final class ExportRetirementTests: XCTestCase {
    func testEachReasonForEachShell() {
        let app = "org.example.Mail.desktop"
        let shells: [ExportRetirement.Shell] = [
            .noGnomeShell, .gnomeShell(runningApps: nil), .gnomeShell(runningApps: [app, "other.desktop"]), .gnomeShell(runningApps: ["other.desktop"]),
        ]
        // For each shell above: without one nothing can be detached; without the extension any
        // app may have a window; with it, only the apps it says run.
        let expected: [(ExportRetirement.Reason, [ExportRetirement.Disposal])] = [
            (.noLongerExported, [.delete, .retire, .retire, .delete]),
            (.alreadyRetired, [.delete, .keep, .keep, .delete]),
            (.appEntryGone, [.delete, .delete, .delete, .delete]),
            (.personalEntryInFront, [.delete, .delete, .delete, .delete]),
        ]
        for (reason, disposals) in expected {
            XCTAssertEqual(shells.map { ExportRetirement.disposal(of: app, reason, shell: $0) }, disposals, "\(reason)")
        }
        XCTAssertTrue(ExportRetirement.asksTheShell(.noLongerExported))
        XCTAssertTrue(ExportRetirement.asksTheShell(.alreadyRetired))
        XCTAssertFalse(ExportRetirement.asksTheShell(.appEntryGone))
        XCTAssertFalse(ExportRetirement.asksTheShell(.personalEntryInFront))
    }

    /// The first export waits only while the extension says the app runs.
    func testTheFirstExportWaitsOnlyForAnAppTheExtensionSaysRuns() {
        let app = "org.example.Mail.desktop"
        XCTAssertEqual(ExportRetirement.firstExport(of: app, shell: .noGnomeShell), .write)
        XCTAssertEqual(ExportRetirement.firstExport(of: app, shell: .gnomeShell(runningApps: nil)), .write)
        XCTAssertEqual(ExportRetirement.firstExport(of: app, shell: .gnomeShell(runningApps: ["other.desktop"])), .write)
        XCTAssertEqual(ExportRetirement.firstExport(of: app, shell: .gnomeShell(runningApps: [app])), .wait)
    }

    /// The retired copy is the app's own entry, every line of it (its own actions and
    /// DBusActivatable=true included), with only qactd's marks added: every key GNOME Shell
    /// compares is the same as in the live copy it replaces, so the shell keeps the app.
    func testTheRetiredCopyIsTheAppsOwnEntryMarked() throws {
        let own = """
            [Desktop Entry]
            Type=Application
            Name=Mail
            Exec=mail %u
            Icon=mail
            Actions=compose;
            DBusActivatable=true

            [Desktop Action compose]
            Name=Compose
            Exec=mail --compose
            """ + "\n"
        let source = try DesktopEntryDocument(parsing: own)
        let live = DesktopEntryExport.compose(
            source: source, sourcePath: "/usr/share/applications/mail.desktop", socketPath: "/run/q.sock",
            actions: [DesktopQuickAction(identifier: "ada", name: "Ada", icon: nil, command: ["qactl", "trigger"])])
        let retired = DesktopEntryExport.composeRetired(source: source, sourcePath: "/usr/share/applications/mail.desktop", socketPath: "/run/q.sock")
        let retiredDocument = try DesktopEntryDocument(parsing: retired)
        XCTAssertTrue(DesktopEntryExport.isRetired(retiredDocument))
        XCTAssertFalse(DesktopEntryExport.isRetired(try DesktopEntryDocument(parsing: live)))
        XCTAssertEqual(retiredDocument.actionIdentifiers, ["compose"])
        XCTAssertEqual(retiredDocument.value(of: "DBusActivatable"), "true")
        XCTAssertFalse(retired.contains("qactl"), retired)
        // Every line of the app's, none other (Actions= is rewritten in one place, after the last key).
        let withoutMarks = retired.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("X-Qactd-") }
        XCTAssertEqual(withoutMarks.sorted(), own.split(separator: "\n", omittingEmptySubsequences: false).sorted())
        let liveDocument = try DesktopEntryDocument(parsing: live)
        for key in DesktopEntryExport.keysLaunchersCompare {
            XCTAssertEqual(retiredDocument.value(of: key), liveDocument.value(of: key), key)
        }
        // Composed again from a retired copy (as a daemon retiring a leftover may), nothing doubles.
        XCTAssertEqual(DesktopEntryExport.composeRetired(source: retiredDocument, sourcePath: "/usr/share/applications/mail.desktop", socketPath: "/run/q.sock"), retired)
    }
}
