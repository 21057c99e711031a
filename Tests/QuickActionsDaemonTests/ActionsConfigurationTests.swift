import QuickActions
import XCTest

@testable import QuickActionsDaemon

/// `[Actions] ITEM-TYPE=COMMAND` and `[Feedback] Notifications=`: read at start-up and reload by
/// the one loader, every problem an error naming file, line and key.
final class ActionsConfigurationTests: XCTestCase {
    let environment = ["HOME": "/home/ada", "XDG_RUNTIME_DIR": "/run/user/1000"]
    let file = "/home/ada/.config/qactd/qactd.conf"

    func parse(_ text: String) throws -> LoadedConfiguration {
        try ConfigurationLoader.parse(text: text, file: file, environment: environment, userID: 1000)
    }

    func testActionsAreTemplatesByItemType() throws {
        let loaded = try parse("""
            [Actions]
            FavoriteAction=thunderbird -compose "to='{email}',subject=Hello {name}"
            SearchAction=gnome-contacts --search ""
            io.qactd.Demo.share = xdg-open {file}
            [Feedback]
            Notifications=off
            """)
        XCTAssertEqual(loaded.warnings, [])
        let actions = loaded.configuration.actions
        XCTAssertEqual(actions.keys.sorted(), ["FavoriteAction", "SearchAction", "io.qactd.Demo.share"])
        XCTAssertEqual(actions["FavoriteAction"], try CommandTemplate(arguments: ["thunderbird", "-compose", "to='{email}',subject=Hello {name}"]))
        XCTAssertEqual(actions["SearchAction"], try CommandTemplate(arguments: ["gnome-contacts", "--search", ""]))
        XCTAssertEqual(loaded.configuration.notifications, .off)
        XCTAssertEqual(try parse("").configuration.notifications, .auto)
        XCTAssertEqual(try parse("").configuration.actions, [:])
    }

    func testBadCommandsNameFileLineAndKey() {
        let cases: [(String, String)] = [
            ("[Actions]\nFavoriteAction=mail {nmae}\n", "\(file):2: [Actions] FavoriteAction: \"mail {nmae}\" names the unknown field \"{nmae}\""),
            ("[Actions]\n\nX=mail {name\n", "\(file):3: [Actions] X: \"mail {name\" has an unbalanced brace in \"{name\""),
            ("[Actions]\nX=\n", "\(file):2: [Actions] X: \"\" is an empty command"),
            ("[Actions]\nX=mail 'to\n", "\(file):2: [Actions] X: \"mail 'to\" has an unterminated quote."),
            ("[Actions]\nX={file}\n", "\(file):2: [Actions] X: \"{file}\" has a field in its program"),
            ("[Feedback]\nNotifications=loud\n", "\(file):2: [Feedback] Notifications: \"loud\" is not one of \"auto\" or \"off\""),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try parse(text), text) { error in
                XCTAssertTrue("\(error)".hasPrefix(expected), "\(error)\n  expected: \(expected)")
            }
        }
    }

    /// With several bad commands the first in the file is reported.
    func testTheFirstBadCommandIsReported() {
        XCTAssertThrowsError(try parse("[Actions]\nB=x {b}\nA=x {a}\n")) { error in
            XCTAssertTrue("\(error)".contains(":2: [Actions] B:"), "\(error)")
        }
    }

    func testTheEnvironmentCarriesTheItem() {
        let request = LaunchRequest(
            command: ["x"], shortcutType: "FavoriteAction", contactIdentifier: "ada", socketPath: "/run/q.sock",
            shortcutTitle: "Ada Lovelace", contactName: "Ada; $(id)", contactEmail: "ada@x.example", contactFile: "/c/ada.vcf")
        let environment = LaunchCommandRunner.environment(for: request, inheriting: ["PATH=/bin", "QACTD_CONTACT_NAME=stale"])
        XCTAssertEqual(environment, [
            "PATH=/bin", "QACTD_SHORTCUT_TYPE=FavoriteAction", "QACTD_CONTACT_IDENTIFIER=ada", "QACTD_SOCKET=/run/q.sock",
            "QACTD_SHORTCUT_TITLE=Ada Lovelace", "QACTD_CONTACT_NAME=Ada; $(id)", "QACTD_CONTACT_EMAIL=ada@x.example",
            "QACTD_CONTACT_FILE=/c/ada.vcf",
        ])
    }
}
