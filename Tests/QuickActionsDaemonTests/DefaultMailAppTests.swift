import Foundation
import Logging
import QuickActions
import QuickActionsProtocol
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// `DesktopFile=auto` read from real `mimeapps.list` files and desktop entries in temporary XDG
/// folders, through the daemon's own `SettingsLoader`: which app, why, and the favorites' command.
final class DefaultMailAppTests: XCTestCase {
    private var root = ""
    private var environment: [String: String] = [:]

    override func setUpWithError() throws {
        root = try makeTemporaryFolder("mail-app")
        environment = [
            "HOME": root + "/home", "XDG_CONFIG_HOME": root + "/home/.config", "XDG_DATA_HOME": root + "/home/.local/share",
            "XDG_CONFIG_DIRS": root + "/etc/xdg", "XDG_DATA_DIRS": root + "/usr/share", "XDG_RUNTIME_DIR": root,
        ]
        for folder in ["/home/.config", "/home/.local/share/applications", "/etc/xdg", "/usr/share/applications"] {
            try FileManager.default.createDirectory(atPath: root + folder, withIntermediateDirectories: true)
        }
    }

    private func write(_ text: String, to path: String) throws {
        try text.write(toFile: root + path, atomically: true, encoding: .utf8)
    }

    private func entry(exec: String, mimeTypes: String = "x-scheme-handler/mailto;", extra: String = "") -> String {
        "[Desktop Entry]\nType=Application\nName=Mail\nIcon=mail-client\nExec=\(exec)\nMimeType=\(mimeTypes)\n\(extra)"
    }

    private func load(_ configuration: String? = nil) throws -> DaemonConfiguration {
        var path: String?
        if let configuration {
            path = root + "/qactd.conf"
            try configuration.write(toFile: path!, atomically: true, encoding: .utf8)
        }
        let loader = SettingsLoader(
            environment: environment, explicitConfigPath: path, systemCandidates: [], logger: Logger.recording(level: .debug).0,
            desktopDefaults: Daemon.desktopDefaults)
        return try loader.load().configuration
    }

    func testWithNoFileTheDefaultMailAppIsServedWithItsOwnExec() throws {
        try write(entry(exec: "thunderbird %u"), to: "/usr/share/applications/org.mozilla.Thunderbird.desktop")
        try write(entry(exec: "evolution %U"), to: "/usr/share/applications/org.gnome.Evolution.desktop")
        // The user's list names an app that is not installed first: it is skipped.
        try write(
            "[Default Applications]\nx-scheme-handler/mailto=gone.desktop;org.mozilla.Thunderbird.desktop;\n",
            to: "/home/.config/mimeapps.list")
        try write("[Default Applications]\nx-scheme-handler/mailto=org.gnome.Evolution.desktop\n", to: "/usr/share/applications/mimeapps.list")

        let configuration = try load()
        XCTAssertEqual(configuration.source, .builtInDefaults)
        XCTAssertEqual(configuration.launcherDesktopFile, "org.mozilla.Thunderbird.desktop")
        XCTAssertEqual(configuration.bundleIdentifier, "org.mozilla.Thunderbird", "follows the chosen app")
        XCTAssertEqual(
            configuration.defaultApp?.choice,
            MimeAppsChoice(desktopFileID: "org.mozilla.Thunderbird.desktop", reason: .defaultApplication(list: root + "/home/.config/mimeapps.list")))
        XCTAssertEqual(configuration.defaultApp?.entryPath, root + "/usr/share/applications/org.mozilla.Thunderbird.desktop")
        XCTAssertNil(configuration.defaultApp?.problem)
        XCTAssertEqual(configuration.favoriteActionSource, .appExec(entryPath: root + "/usr/share/applications/org.mozilla.Thunderbird.desktop"))
        XCTAssertEqual(
            try configuration.actions["FavoriteAction"]?.expand(CommandTemplateValues(email: "a&b@example.org")).get(),
            ["thunderbird", "mailto:a%26b@example.org"])
        XCTAssertEqual(configuration.evolution, .all)
        XCTAssertEqual(configuration.recompute, .auto)

        let choices = ChoicesInfo(configuration, followingContacts: true)
        XCTAssertEqual(choices.desktopFile, "auto")
        XCTAssertEqual(choices.app, "org.mozilla.Thunderbird.desktop")
        XCTAssertEqual(choices.chosenBy, ChoicesInfo.ChosenBy.defaultApplication.rawValue)
        XCTAssertEqual(choices.mimeappsList, root + "/home/.config/mimeapps.list")
        XCTAssertEqual(choices.favoriteAction, "thunderbird mailto:{email:uri}")
        XCTAssertEqual(choices.favoriteActionFrom, ChoicesInfo.FavoriteActionFrom.appExec.rawValue)
        XCTAssertEqual(choices.evolution, "all")
    }

    func testTheCurrentDesktopsListComesFirstAndAddedAssociationsAndMimeTypeAreFallbacks() throws {
        try write(entry(exec: "geary %U"), to: "/usr/share/applications/org.gnome.Geary.desktop")
        try write(entry(exec: "kmail %u"), to: "/usr/share/applications/org.kde.kmail2.desktop")
        try write("[Default Applications]\nx-scheme-handler/mailto=org.kde.kmail2.desktop\n", to: "/etc/xdg/kde-mimeapps.list")
        environment["XDG_CURRENT_DESKTOP"] = "KDE"
        XCTAssertEqual(try load().launcherDesktopFile, "org.kde.kmail2.desktop")

        environment["XDG_CURRENT_DESKTOP"] = "GNOME"
        try write("[Added Associations]\nx-scheme-handler/mailto=org.gnome.Geary.desktop;\n", to: "/home/.config/mimeapps.list")
        let added = try load()
        XCTAssertEqual(added.defaultApp?.choice?.reason, .addedAssociation(list: root + "/home/.config/mimeapps.list"))

        try FileManager.default.removeItem(atPath: root + "/home/.config/mimeapps.list")
        let declared = try load()
        XCTAssertEqual(declared.defaultApp?.choice, MimeAppsChoice(desktopFileID: "org.gnome.Geary.desktop", reason: .declaredByEntry))
    }

    /// The default mail app whose `Exec` takes no URL is served, and `Status` says why a favorite
    /// has no command, naming its entry.
    func testAMailAppWhoseExecTakesNoURLIsNamedWithWhyAFavoriteHasNoCommand() throws {
        try write(entry(exec: "oldmail --compose"), to: "/usr/share/applications/oldmail.desktop")
        try write("[Default Applications]\nx-scheme-handler/mailto=oldmail.desktop\n", to: "/home/.config/mimeapps.list")
        let configuration = try load()
        XCTAssertEqual(configuration.launcherDesktopFile, "oldmail.desktop")
        XCTAssertNil(configuration.actions["FavoriteAction"])
        XCTAssertEqual(configuration.favoriteActionSource, .none)
        XCTAssertEqual(
            configuration.defaultApp?.problem,
            root + "/usr/share/applications/oldmail.desktop: its Exec \"oldmail --compose\" takes no URL (no %u or %U), so a favorite has no command")
    }

    func testTheConfiguredCommandAndAppWinAndANamedMailAppGetsItsExec() throws {
        try write(entry(exec: "thunderbird %u"), to: "/usr/share/applications/thunderbird.desktop")
        try write("[Default Applications]\nx-scheme-handler/mailto=thunderbird.desktop\n", to: "/home/.config/mimeapps.list")
        try write(entry(exec: "contacts", mimeTypes: "text/vcard;"), to: "/usr/share/applications/org.gnome.Contacts.desktop")

        let configured = try load("[Actions]\nFavoriteAction=xdg-email mailto:{email:uri}\n")
        XCTAssertEqual(configured.launcherDesktopFile, "thunderbird.desktop")
        XCTAssertEqual(configured.favoriteActionSource, .configured)
        XCTAssertEqual(configured.actions["FavoriteAction"]?.text, "xdg-email mailto:{email:uri}")

        let contacts = try load("[Launcher]\nDesktopFile=org.gnome.Contacts.desktop\n")
        XCTAssertNil(contacts.defaultApp)
        XCTAssertEqual(contacts.favoriteActionSource, .none, "an app that takes no mailto: gets no command")
        XCTAssertNil(contacts.actions["FavoriteAction"])

        let named = try load("[Launcher]\nDesktopFile=thunderbird.desktop\n")
        XCTAssertEqual(named.favoriteActionSource, .appExec(entryPath: root + "/usr/share/applications/thunderbird.desktop"))

        // An app's instance serves the app its own file names, never the mail app.
        try FileManager.default.createDirectory(atPath: root + "/home/.config/qactd", withIntermediateDirectories: true)
        try write("[Contacts]\nDirectory=\n", to: "/home/.config/qactd/alpha.conf")
        let instance = try SettingsLoader(
            environment: environment, explicitConfigPath: nil, systemCandidates: [], logger: Logger.recording(level: .debug).0,
            desktopDefaults: Daemon.desktopDefaults, instance: .app(try AppName(validating: "alpha"))
        ).load().configuration
        XCTAssertEqual(instance.launcherDesktopFile, "")
        XCTAssertNil(instance.actions["FavoriteAction"])
        XCTAssertTrue(instance.defaultApp?.problem?.contains("an app's instance") ?? false)

        let none = try load("[Launcher]\nDesktopFile=none\n")
        XCTAssertEqual(none.launcherDesktopFile, "")
        XCTAssertNil(none.actions["FavoriteAction"])
    }

    func testNoMailAppOrOneWhoseExecTakesNoURLIsSaidWhy() throws {
        let nothing = try load()
        XCTAssertEqual(nothing.launcherDesktopFile, "")
        XCTAssertNil(nothing.defaultApp?.choice)
        XCTAssertTrue(nothing.defaultApp?.problem?.contains("x-scheme-handler/mailto") ?? false, "\(String(describing: nothing.defaultApp))")

        // Hidden=true is as good as not installed.
        try write(entry(exec: "hidden %u", extra: "Hidden=true\n"), to: "/usr/share/applications/hidden.desktop")
        try write(entry(exec: "filer %f"), to: "/usr/share/applications/filer.desktop")
        try write("[Default Applications]\nx-scheme-handler/mailto=hidden.desktop;filer.desktop\n", to: "/home/.config/mimeapps.list")
        let noURL = try load()
        XCTAssertEqual(noURL.launcherDesktopFile, "filer.desktop")
        XCTAssertEqual(noURL.favoriteActionSource, .none)
        XCTAssertTrue(noURL.defaultApp?.problem?.contains("takes no URL") ?? false, "\(String(describing: noURL.defaultApp))")
    }

    /// What the mail app's watcher follows: the folder of every mimeapps.list the choice reads
    /// (only those names there), and every applications folder's desktop entries, but never
    /// qactd's own exports folder, even when the session puts it on XDG_DATA_DIRS.
    func testTheWatcherFollowsEveryMimeappsListAndTheApplicationsFoldersButNotTheExports() {
        environment["XDG_CURRENT_DESKTOP"] = "GNOME"
        let exports = root + "/home/.local/share/qactd/exports/share"
        environment["XDG_DATA_DIRS"] = exports + ":" + root + "/usr/share"
        let inputs = DefaultMailAppInputs(environment: environment)
        let applications = [root + "/home/.local/share/applications", root + "/usr/share/applications"]
        XCTAssertEqual(
            inputs.folders,
            [root + "/home/.config": false, root + "/etc/xdg": false, applications[0]: true, applications[1]: true])
        XCTAssertEqual(inputs.mimeappsNames, ["gnome-mimeapps.list", "mimeapps.list"])
        XCTAssertTrue(inputs.matters("mimeapps.list", in: root + "/home/.config"))
        XCTAssertTrue(inputs.matters("gnome-mimeapps.list", in: root + "/etc/xdg"))
        XCTAssertFalse(inputs.matters("monitors.xml", in: root + "/home/.config"))
        XCTAssertFalse(inputs.matters("geary.desktop", in: root + "/home/.config"), "not an applications folder")
        XCTAssertTrue(inputs.matters("org.gnome.Geary.desktop", in: applications[1]))
        XCTAssertTrue(inputs.matters("mimeapps.list", in: applications[0]), "the deprecated place is read too")
        XCTAssertFalse(inputs.matters("org.gnome.Geary.desktop.tmp", in: applications[1]))
        XCTAssertFalse(inputs.matters("org.gnome.Geary.desktop", in: exports + "/applications"), "qactd's own writes choose nothing")
    }

    /// A new choice reloads only when it differs from the running one in what it chose.
    func testOnlyAnotherChoiceCountsAsAChange() throws {
        try write("[Default Applications]\nx-scheme-handler/mailto=geary.desktop;\n", to: "/home/.config/mimeapps.list")
        try write(entry(exec: "geary %U"), to: "/usr/share/applications/geary.desktop")
        let geary = try load()
        XCTAssertTrue(DefaultMailAppFollower.sameChoice(try load(), geary))
        try write(entry(exec: "thunderbird %u"), to: "/usr/share/applications/thunderbird.desktop")
        XCTAssertTrue(DefaultMailAppFollower.sameChoice(try load(), geary), "another app installed, the choice the same")
        try write("[Default Applications]\nx-scheme-handler/mailto=thunderbird.desktop;\n", to: "/home/.config/mimeapps.list")
        let thunderbird = try load()
        XCTAssertEqual(thunderbird.launcherDesktopFile, "thunderbird.desktop")
        XCTAssertFalse(DefaultMailAppFollower.sameChoice(thunderbird, geary))
        try write(entry(exec: "thunderbird --compose %u"), to: "/usr/share/applications/thunderbird.desktop")
        XCTAssertFalse(DefaultMailAppFollower.sameChoice(try load(), thunderbird), "the app's command changed")
    }
}
