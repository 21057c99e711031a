import QuickActions
import XCTest

/// `mimeapps.list` as the freedesktop MIME Applications specification reads it, and its choice
/// of the default application, tested without files.
final class MimeAppsTests: XCTestCase {
    func testParsing() {
        let list = MimeAppsList(path: "/h/.config/mimeapps.list", text: """
            # comment
            [Default Applications]
            x-scheme-handler/mailto=missing.desktop;thunderbird.desktop;
            text/html = firefox.desktop
            garbage line
            X-Scheme-Handler/MAILTO=later.desktop;
            [Added Associations]
            x-scheme-handler/mailto=evolution.desktop;geary.desktop
            [Removed Associations]
            x-scheme-handler/mailto=geary.desktop;
            """)
        XCTAssertEqual(list.identifiers(in: MimeAppsList.defaultApplications, for: "x-scheme-handler/mailto"), ["later.desktop"], "the last key wins, in any case")
        XCTAssertEqual(list.identifiers(in: MimeAppsList.defaultApplications, for: "text/html"), ["firefox.desktop"])
        XCTAssertEqual(list.identifiers(in: MimeAppsList.addedAssociations, for: "x-scheme-handler/mailto"), ["evolution.desktop", "geary.desktop"])
        XCTAssertEqual(list.identifiers(in: MimeAppsList.removedAssociations, for: "x-scheme-handler/mailto"), ["geary.desktop"])
    }

    func testLocationsInTheSpecificationsOrder() {
        let environment = [
            "HOME": "/home/ada", "XDG_CURRENT_DESKTOP": "ubuntu:GNOME", "XDG_CONFIG_DIRS": "/etc/xdg/xdg-ubuntu:/etc/xdg:relative",
            "XDG_DATA_DIRS": "/usr/share/ubuntu:/usr/share",
        ]
        XCTAssertEqual(MimeAppsList.locations(environment: environment), [
            "/home/ada/.config/ubuntu-mimeapps.list", "/home/ada/.config/gnome-mimeapps.list", "/home/ada/.config/mimeapps.list",
            "/etc/xdg/xdg-ubuntu/ubuntu-mimeapps.list", "/etc/xdg/xdg-ubuntu/gnome-mimeapps.list", "/etc/xdg/xdg-ubuntu/mimeapps.list",
            "/etc/xdg/ubuntu-mimeapps.list", "/etc/xdg/gnome-mimeapps.list", "/etc/xdg/mimeapps.list",
            "/home/ada/.local/share/applications/ubuntu-mimeapps.list", "/home/ada/.local/share/applications/gnome-mimeapps.list",
            "/home/ada/.local/share/applications/mimeapps.list",
            "/usr/share/ubuntu/applications/ubuntu-mimeapps.list", "/usr/share/ubuntu/applications/gnome-mimeapps.list",
            "/usr/share/ubuntu/applications/mimeapps.list",
            "/usr/share/applications/ubuntu-mimeapps.list", "/usr/share/applications/gnome-mimeapps.list", "/usr/share/applications/mimeapps.list",
        ])
        XCTAssertEqual(
            MimeAppsList.locations(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": "/d"]),
            ["/c/mimeapps.list", "/etc/xdg/mimeapps.list", "/d/applications/mimeapps.list",
             "/usr/local/share/applications/mimeapps.list", "/usr/share/applications/mimeapps.list"])
    }

    func testTheChoice() {
        let mailto = "x-scheme-handler/mailto"
        let user = MimeAppsList(path: "/user", text: "[Default Applications]\n\(mailto)=gone.desktop;\n[Removed Associations]\n\(mailto)=geary.desktop\n")
        let system = MimeAppsList(path: "/system", text: "[Default Applications]\n\(mailto)=gone2.desktop;thunderbird.desktop\n")
        let added = MimeAppsList(path: "/added", text: "[Added Associations]\n\(mailto)=geary.desktop;evolution.desktop\n")
        let installed: Set<String> = ["thunderbird.desktop", "evolution.desktop", "geary.desktop", "kmail.desktop"]

        // A default whose entry does not exist is skipped, and the next list is read.
        XCTAssertEqual(
            MimeAppsChoice.choose(mailto, lists: [user, system, added], isInstalled: installed.contains),
            MimeAppsChoice(desktopFileID: "thunderbird.desktop", reason: .defaultApplication(list: "/system")))
        // No default installed: the added associations, less those a more preferred list removed.
        XCTAssertEqual(
            MimeAppsChoice.choose(mailto, lists: [user, added], isInstalled: installed.contains),
            MimeAppsChoice(desktopFileID: "evolution.desktop", reason: .addedAssociation(list: "/added")))
        // Nothing in the lists: an entry that declares the type, unless removed.
        XCTAssertEqual(
            MimeAppsChoice.choose(mailto, lists: [user], isInstalled: installed.contains, declaring: { ["geary.desktop", "kmail.desktop"] }),
            MimeAppsChoice(desktopFileID: "kmail.desktop", reason: .declaredByEntry))
        XCTAssertNil(MimeAppsChoice.choose(mailto, lists: [user], isInstalled: installed.contains))
        XCTAssertNil(MimeAppsChoice.choose(mailto, lists: [system], isInstalled: { _ in false }))
    }
}
