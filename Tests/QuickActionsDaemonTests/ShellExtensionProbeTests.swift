import QuickActionsProtocol
import XCTest

@testable import QuickActionsDaemon

/// What `Status` says for each state GNOME Shell can report for the extension (the real shell's
/// active and disabled are checked by GnomeShellEndToEndTests and GnomeShell48EndToEndTests).
final class ShellExtensionProbeTests: XCTestCase {
    func testEachShellStateIsSaidWithWhatToDo() {
        let enable = "gnome-extensions enable quick-actions@qactd.io"
        let cases: [(Int?, String, String?)] = [
            (1, "active", nil), (2, "disabled", enable), (3, "error", nil), (4, "out-of-date", nil),
            (5, "other", enable), (6, "other", enable), (7, "other", enable), (8, "other", enable),
            (99, "not-installed", nil), (nil, "not-installed", nil),
        ]
        for (shellState, state, command) in cases {
            let info = ShellExtensionProbe.info(shellState: shellState, error: "TypeError: x is undefined")
            XCTAssertEqual(info.uuid, "quick-actions@qactd.io")
            XCTAssertEqual(info.state, state, "\(String(describing: shellState))")
            XCTAssertEqual(info.shellState, shellState)
            XCTAssertEqual(info.enable, command, "\(String(describing: shellState))")
        }
        XCTAssertEqual(ShellExtensionProbe.info(shellState: 3, error: "TypeError: x is undefined").message, "TypeError: x is undefined")
        XCTAssertNil(ShellExtensionProbe.info(shellState: 3, error: "").message)
        XCTAssertNotNil(ShellExtensionProbe.info(shellState: 4, error: "").message)
        XCTAssertNotNil(ShellExtensionProbe.info(shellState: nil, error: nil).message)
        XCTAssertNil(ShellExtensionProbe.info(shellState: 1, error: "").message)
    }

    /// Only a GNOME session's shell is asked; elsewhere `Status` stays the core's published reply.
    func testOnlyAGnomeSessionIsAsked() {
        for desktop in ["GNOME", "ubuntu:GNOME", "GNOME-Classic:GNOME", "gnome"] {
            XCTAssertTrue(ShellExtensionProbe(environment: ["XDG_CURRENT_DESKTOP": desktop]).applies, desktop)
        }
        for desktop in ["KDE", "XFCE", "X-Cinnamon", "GNOME-Flashback-nope", ""] {
            XCTAssertFalse(ShellExtensionProbe(environment: ["XDG_CURRENT_DESKTOP": desktop]).applies, desktop)
        }
        XCTAssertFalse(ShellExtensionProbe(environment: [:]).applies)
        XCTAssertNil(ShellExtensionProbe(environment: ["XDG_CURRENT_DESKTOP": "KDE"]).read())
        // A GNOME session whose bus has no shell on it: nothing to say, at once.
        XCTAssertNil(ShellExtensionProbe(environment: ["XDG_CURRENT_DESKTOP": "GNOME", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"]).read())
    }
}
