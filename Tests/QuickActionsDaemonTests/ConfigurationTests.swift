import Foundation
import TestSupport
import Logging
import QuickActionsProtocol
import XCTest

import QuickActions
@testable import QuickActionsDaemon

final class ConfigurationTests: XCTestCase {
    let environment = ["HOME": "/home/ada", "XDG_RUNTIME_DIR": "/run/user/1000"]

    func parse(_ text: String, file: String? = "/etc/qactd/qactd.conf") throws -> LoadedConfiguration {
        try ConfigurationLoader.parse(text: text, file: file, environment: environment, userID: 1000)
    }

    func assertError(_ text: String, _ expected: String, line: UInt = #line) {
        XCTAssertThrowsError(try parse(text), line: line) { error in
            XCTAssertEqual("\(error)", expected, line: line)
        }
    }

    func testLaterAssignmentWins() throws {
        let loaded = try parse("[Shortcuts]\nDisplayLimit=2\n[Shortcuts]\nDisplayLimit=3\n")
        XCTAssertEqual(loaded.configuration.displayLimit, 3)
    }

    // MARK: Defaults and typed values

    func testBuiltInDefaults() throws {
        let loaded = try parse("", file: nil)
        let configuration = loaded.configuration
        XCTAssertEqual(configuration.source, .builtInDefaults)
        XCTAssertEqual(configuration.contactsDirectory, "/home/ada/.local/share/contacts")
        XCTAssertEqual(configuration.favoriteCategories, ["favorite", "favorites", "starred"])
        XCTAssertEqual(configuration.maxFileBytes, 1_048_576)
        XCTAssertEqual(configuration.staticItemsPath, "/home/ada/.config/qactd/shortcuts.plist")
        XCTAssertEqual(configuration.displayLimit, 4)
        XCTAssertEqual(configuration.favoriteType, "FavoriteAction")
        XCTAssertEqual(configuration.favoriteIcon, .symbol("star.fill"))
        XCTAssertNil(configuration.appVersion)
        XCTAssertEqual(configuration.recompute, .auto, "follow the contacts until an app speaks the socket")
        XCTAssertEqual(configuration.recomputeSettle, .milliseconds(50))
        XCTAssertEqual(configuration.evolution, .all, "GNOME Contacts' books with nothing to write")
        XCTAssertEqual(configuration.launcherDesktopFileSetting, .auto, "the person's mail app")
        XCTAssertEqual(configuration.launcherDesktopFile, "", "resolved by DefaultMailApp, which reads files")
        XCTAssertEqual(configuration.favoriteActionSource, .none)
        XCTAssertEqual(configuration.launchCommand, [])
        XCTAssertEqual(configuration.responseTimeout, .seconds(5))
        XCTAssertEqual(configuration.socketPath, "/run/user/1000/qactd/qactd.sock")
        XCTAssertEqual(configuration.maxConnections, 256)
        XCTAssertEqual(configuration.maxMessageBytes, 1_048_576)
        XCTAssertEqual(loaded.warnings, [])
    }

    func testEveryKeySet() throws {
        let configuration = try parse(
            """
            [Contacts]
            Directory=contacts
            FavoriteCategories= VIP , starred,,
            MaxFileBytes=2048
            [Shortcuts]
            StaticItems=/opt/app/Info.plist
            DisplayLimit=6
            FavoriteType=CallFavorite
            FavoriteIcon=file:icons/star.png
            AppVersion=2.1
            Recompute=change
            RecomputeSettleMSec=0
            [App]
            LaunchCommand=/usr/bin/contacts-app --open 'my shortcut'
            ResponseTimeoutSec=500ms
            [Daemon]
            Socket=~/qactd.sock
            MaxConnections=8
            MaxMessageBytes=4096
            """
        ).configuration
        XCTAssertEqual(configuration.source, .file("/etc/qactd/qactd.conf"))
        XCTAssertEqual(configuration.contactsDirectory, "/etc/qactd/contacts")
        XCTAssertEqual(configuration.favoriteCategories, ["VIP", "starred"])
        XCTAssertEqual(configuration.maxFileBytes, 2048)
        XCTAssertEqual(configuration.staticItemsPath, "/opt/app/Info.plist")
        XCTAssertEqual(configuration.displayLimit, 6)
        XCTAssertEqual(configuration.favoriteType, "CallFavorite")
        XCTAssertEqual(configuration.favoriteIcon, .templateFile("/etc/qactd/icons/star.png"))
        XCTAssertEqual(configuration.appVersion, "2.1")
        XCTAssertEqual(configuration.recompute, .change)
        XCTAssertEqual(configuration.recomputeSettle, .zero)
        XCTAssertEqual(configuration.launchCommand, ["/usr/bin/contacts-app", "--open", "my shortcut"])
        XCTAssertEqual(configuration.responseTimeout, .milliseconds(500))
        XCTAssertEqual(configuration.socketPath, "/home/ada/qactd.sock")
        XCTAssertEqual(configuration.maxConnections, 8)
        XCTAssertEqual(configuration.maxMessageBytes, 4096)
    }

    func testIconPrefixesAccepted() throws {
        let icons: [(String, ShortcutIcon)] = [
            ("symbol:heart", .symbol("heart")), ("type:favorite", .system(.favorite)), ("system:love", .system(.love)),
            // The kind is case-insensitive, as in the model's parser; the name keeps its case.
            ("Symbol:Star", .symbol("Star")), ("TYPE:favorite", .system(.favorite)), ("System:Love", .system(.love)),
            ("File:icons/star.png", .templateFile("/etc/qactd/icons/star.png")),
            ("file:~/star.png", .templateFile("/home/ada/star.png")),
        ]
        for (value, icon) in icons {
            XCTAssertEqual(try parse("[Shortcuts]\nFavoriteIcon=\(value)\n").configuration.favoriteIcon, icon, value)
        }
    }

    func testTimeoutSpellings() throws {
        XCTAssertEqual(try parse("[App]\nResponseTimeoutSec=2\n").configuration.responseTimeout, .seconds(2))
        XCTAssertEqual(try parse("[App]\nResponseTimeoutSec=1.5\n").configuration.responseTimeout, .milliseconds(1500))
        XCTAssertEqual(try parse("[App]\nResponseTimeoutSec=3s\n").configuration.responseTimeout, .seconds(3))
    }

    func testRuntimeDirectoryFallsBackToRunUser() throws {
        let configuration = try ConfigurationLoader.parse(
            text: "", file: nil, environment: ["HOME": "/home/ada"], userID: 1234
        ).configuration
        XCTAssertEqual(configuration.socketPath, "/run/user/1234/qactd/qactd.sock")
    }

    func testMissingHomeIsAClearError() {
        XCTAssertThrowsError(try ConfigurationLoader.parse(text: "", file: nil, environment: [:], userID: 0)) { error in
            XCTAssertEqual(error as? ConfigurationError, .homeDirectoryUnknown)
        }
    }

    // MARK: Malformed values

    func testMalformedValuesNameFileLineKeyAndValue() {
        assertError(
            "[Contacts]\n\n\n\n\n[Shortcuts]\nDisplayLimit=four\n",
            "/etc/qactd/qactd.conf:7: [Shortcuts] DisplayLimit: \"four\" is not a positive integer")
        assertError(
            "[Shortcuts]\nDisplayLimit=0\n",
            "/etc/qactd/qactd.conf:2: [Shortcuts] DisplayLimit: \"0\" is not a positive integer")
        assertError(
            "[Contacts]\nMaxFileBytes=-5\n",
            "/etc/qactd/qactd.conf:2: [Contacts] MaxFileBytes: \"-5\" is not a positive integer")
        assertError(
            "[Daemon]\nMaxConnections=1e3\n",
            "/etc/qactd/qactd.conf:2: [Daemon] MaxConnections: \"1e3\" is not a positive integer")
        assertError(
            "[Daemon]\nMaxMessageBytes=\n",
            "/etc/qactd/qactd.conf:2: [Daemon] MaxMessageBytes: \"\" is not a positive integer")
        assertError(
            "[Shortcuts]\nRecompute=sometimes\n",
            "/etc/qactd/qactd.conf:2: [Shortcuts] Recompute: \"sometimes\" is not one of \"auto\", \"resign-active\" or \"change\"")
        assertError(
            "[Shortcuts]\nFavoriteType=\n",
            "/etc/qactd/qactd.conf:2: [Shortcuts] FavoriteType: \"\" must not be empty")
        assertError(
            "[Shortcuts]\nRecomputeSettleMSec=-1\n",
            "/etc/qactd/qactd.conf:2: [Shortcuts] RecomputeSettleMSec: \"-1\" is not a non-negative integer")
        assertError(
            "[App]\nResponseTimeoutSec=0\n",
            "/etc/qactd/qactd.conf:2: [App] ResponseTimeoutSec: \"0\" is not a positive number of seconds (e.g. 5, 0.5, 500ms)")
        assertError(
            "[App]\nResponseTimeoutSec=soon\n",
            "/etc/qactd/qactd.conf:2: [App] ResponseTimeoutSec: \"soon\" is not a positive number of seconds (e.g. 5, 0.5, 500ms)")
        assertError(
            "[Shortcuts]\nFavoriteIcon=star.fill\n",
            "/etc/qactd/qactd.conf:2: [Shortcuts] FavoriteIcon: \"star.fill\" is not an icon: use \"symbol:NAME\", \"type:NAME\" (or \"system:NAME\") or \"file:PATH\"")
        assertError(
            "[Shortcuts]\nFavoriteIcon=symbol:\n",
            "/etc/qactd/qactd.conf:2: [Shortcuts] FavoriteIcon: \"symbol:\" names no icon after \"symbol:\"")
        assertError(
            "[Shortcuts]\nFavoriteIcon=Symbol:\n",
            "/etc/qactd/qactd.conf:2: [Shortcuts] FavoriteIcon: \"Symbol:\" names no icon after \"Symbol:\"")
        assertError(
            "[Shortcuts]\nFavoriteIcon=file:\n",
            "/etc/qactd/qactd.conf:2: [Shortcuts] FavoriteIcon: \"file:\" names no file after \"file:\"")
        assertError(
            "[Shortcuts]\nFavoriteIcon=emoji:x\n",
            "/etc/qactd/qactd.conf:2: [Shortcuts] FavoriteIcon: \"emoji:x\" has the unknown icon kind \"emoji\": use \"symbol:NAME\", \"type:NAME\" (or \"system:NAME\") or \"file:PATH\"")
        // An unknown icon type fails here, with its line, not later without one.
        assertError(
            "[Shortcuts]\n\nFavoriteIcon=type:nonsense\n",
            "/etc/qactd/qactd.conf:3: [Shortcuts] FavoriteIcon: \"type:nonsense\" names the unknown icon type \"nonsense\"; expected one of \(SystemIconType.allSpellings)")
        // An empty Directory= means no folder (contacts from Evolution= only).
        XCTAssertEqual(try parse("[Contacts]\nDirectory=\n").configuration.contactsDirectory, "")
        assertError(
            "[App]\nLaunchCommand=app --name 'unfinished\n",
            "/etc/qactd/qactd.conf:2: [App] LaunchCommand: \"app --name 'unfinished\" has an unterminated quote.")
        assertError(
            "[App]\nLaunchCommand=app \\\n",
            "/etc/qactd/qactd.conf:2: [App] LaunchCommand: \"app \\\" ends with a backslash that escapes nothing.")
    }

    func testUnknownSectionsAndKeysAreWarnings() throws {
        let loaded = try parse("[Shortcuts]\nDisplayLimt=3\n[Extras]\nColour=red\n[Extras]\n")
        XCTAssertEqual(loaded.configuration.displayLimit, 4)
        XCTAssertEqual(
            loaded.warnings,
            [
                ConfigurationWarning(file: "/etc/qactd/qactd.conf", line: 3, section: "Extras", key: nil),
                ConfigurationWarning(file: "/etc/qactd/qactd.conf", line: 2, section: "Shortcuts", key: "DisplayLimt"),
            ])
        XCTAssertEqual(
            loaded.warnings[1].description,
            "/etc/qactd/qactd.conf:2: [Shortcuts] unknown key \"DisplayLimt\", ignoring.")
    }

    /// The log line a person reads is the warning's sentence once, "ignoring." included.
    func testUnknownKeysAreLoggedOnce() throws {
        let root = try makeTemporaryFolder("config")
        try write("[Shortcuts]\nDisplayLimt=3\n", to: root + "/qactd.conf")
        let (logger, log) = Logger.recording(level: .warning)
        _ = try SettingsLoader(
            environment: ["HOME": root], explicitConfigPath: root + "/qactd.conf", systemCandidates: [], logger: logger,
            desktopDefaults: Daemon.desktopDefaults
        ).load()
        XCTAssertEqual(log.messages, ["\(root)/qactd.conf:2: [Shortcuts] unknown key \"DisplayLimt\", ignoring."])
    }

    // MARK: Lookup order and files

    func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    func testLookupOrder() throws {
        let root = try makeTemporaryFolder("config")
        let environment = ["HOME": root + "/home", "XDG_CONFIG_HOME": root + "/config"]
        let systemLocal = root + "/usr/local/etc/qactd/qactd.conf"
        let system = root + "/etc/qactd/qactd.conf"
        let candidates = [systemLocal, system]

        XCTAssertNil(try ConfigurationLoader.locate(explicitPath: nil, environment: environment, systemCandidates: candidates))
        let none = try ConfigurationLoader.load(explicitPath: nil, environment: environment, systemCandidates: candidates, userID: 1)
        XCTAssertEqual(none.configuration.source, .builtInDefaults)
        XCTAssertEqual(none.configuration.staticItemsPath, root + "/config/qactd/shortcuts.plist")

        try write("[Shortcuts]\nDisplayLimit=2\n", to: system)
        XCTAssertEqual(try ConfigurationLoader.locate(explicitPath: nil, environment: environment, systemCandidates: candidates), system)
        let fromSystem = try ConfigurationLoader.load(explicitPath: nil, environment: environment, systemCandidates: candidates, userID: 1)
        XCTAssertEqual(fromSystem.configuration.displayLimit, 2)
        XCTAssertEqual(fromSystem.configuration.staticItemsPath, root + "/etc/qactd/shortcuts.plist")

        try write("[Shortcuts]\nDisplayLimit=3\n", to: systemLocal)
        XCTAssertEqual(try ConfigurationLoader.locate(explicitPath: nil, environment: environment, systemCandidates: candidates), systemLocal)

        let user = root + "/config/qactd/qactd.conf"
        try write("[Shortcuts]\nDisplayLimit=5\n", to: user)
        XCTAssertEqual(try ConfigurationLoader.locate(explicitPath: nil, environment: environment, systemCandidates: candidates), user)

        let explicit = root + "/elsewhere/my.conf"
        try write("[Shortcuts]\nDisplayLimit=7\nStaticItems=../items.plist\n", to: explicit)
        let fromExplicit = try ConfigurationLoader.load(explicitPath: explicit, environment: environment, systemCandidates: candidates, userID: 1)
        XCTAssertEqual(fromExplicit.configuration.displayLimit, 7)
        XCTAssertEqual(fromExplicit.configuration.staticItemsPath, root + "/elsewhere/../items.plist")
        XCTAssertEqual(fromExplicit.configuration.source, .file(explicit))
    }

    func testXDGConfigHomeDefaultsToDotConfig() throws {
        let root = try makeTemporaryFolder("config")
        let user = root + "/.config/qactd/qactd.conf"
        try write("[Shortcuts]\nDisplayLimit=9\n", to: user)
        XCTAssertEqual(try ConfigurationLoader.locate(explicitPath: nil, environment: ["HOME": root], systemCandidates: []), user)
    }

    func testMissingExplicitConfigurationIsAnError() throws {
        let root = try makeTemporaryFolder("config")
        XCTAssertThrowsError(
            try ConfigurationLoader.load(explicitPath: root + "/nope.conf", environment: ["HOME": root], systemCandidates: [])
        ) { error in
            XCTAssertEqual(error as? ConfigurationError, .explicitFileMissing(path: root + "/nope.conf"))
            XCTAssertEqual("\(error)", "The configuration file \"\(root)/nope.conf\" given with --config does not exist.")
        }
    }

    /// `qactd --app NAME` reads NAME.conf in the user's folder and nothing else: no plain
    /// qactd.conf, no system default; its socket defaults to NAME.sock.
    func testAnAppReadsItsOwnFileAndListensOnItsOwnSocket() throws {
        let root = try makeTemporaryFolder("config")
        let environment = ["HOME": root + "/home", "XDG_CONFIG_HOME": root + "/config", "XDG_RUNTIME_DIR": "/run/user/1000"]
        let system = root + "/etc/qactd/qactd.conf"
        try write("[Shortcuts]\nDisplayLimit=2\n", to: system)
        try write("[Shortcuts]\nDisplayLimit=3\n", to: root + "/config/qactd/qactd.conf")
        let mail = InstanceName.app(try AppName(validating: "mail"))

        XCTAssertThrowsError(
            try ConfigurationLoader.load(explicitPath: nil, environment: environment, systemCandidates: [system], instance: mail, userID: 1)
        ) { error in
            XCTAssertEqual(error as? ConfigurationError, .appFileMissing(app: "mail", path: root + "/config/qactd/mail.conf"))
            XCTAssertEqual(
                "\(error)",
                "No configuration file \"\(root)/config/qactd/mail.conf\", and no installed app mail.desktop; write it (see qactd.conf(5)) before starting qactd@mail.")
            XCTAssertEqual(DaemonStartupError.configuration(error as! ConfigurationError).exitStatus, 78)
        }

        try write("[Shortcuts]\nDisplayLimit=5\nStaticItems=mail.plist\n", to: root + "/config/qactd/mail.conf")
        let loaded = try ConfigurationLoader.load(
            explicitPath: nil, environment: environment, systemCandidates: [system], instance: mail, userID: 1)
        XCTAssertEqual(loaded.configuration.source, .file(root + "/config/qactd/mail.conf"))
        XCTAssertEqual(loaded.configuration.displayLimit, 5)
        XCTAssertEqual(loaded.configuration.staticItemsPath, root + "/config/qactd/mail.plist")
        XCTAssertEqual(loaded.configuration.socketPath, "/run/user/1000/qactd/mail.sock")
        // The plain daemon beside it keeps its own file and socket.
        let plain = try ConfigurationLoader.load(explicitPath: nil, environment: environment, systemCandidates: [system], userID: 1)
        XCTAssertEqual(plain.configuration.displayLimit, 3)
        XCTAssertEqual(plain.configuration.socketPath, "/run/user/1000/qactd/qactd.sock")
        // A Socket= of the app's own still wins, and --config still names the file.
        try write("[Daemon]\nSocket=/tmp/elsewhere.sock\n", to: root + "/config/qactd/mail.conf")
        XCTAssertEqual(
            try ConfigurationLoader.load(explicitPath: nil, environment: environment, systemCandidates: [], instance: mail, userID: 1)
                .configuration.socketPath, "/tmp/elsewhere.sock")
        let explicit = try ConfigurationLoader.load(
            explicitPath: system, environment: environment, systemCandidates: [], instance: mail, userID: 1)
        XCTAssertEqual(explicit.configuration.source, .file(system))
        XCTAssertEqual(explicit.configuration.socketPath, "/run/user/1000/qactd/mail.sock")
    }

    /// An app installed under its instance's name needs no file: the instance serves the app's
    /// own items for its entry, and reads no contacts, no book and no plain static items.
    func testAnInstalledAppsInstanceNeedsNoFile() throws {
        let root = try makeTemporaryFolder("config")
        let environment = [
            "HOME": root + "/home", "XDG_CONFIG_HOME": root + "/config", "XDG_RUNTIME_DIR": "/run/user/1000",
            "XDG_DATA_HOME": root + "/data", "XDG_DATA_DIRS": root + "/share",
        ]
        let editor = InstanceName.app(try AppName(validating: "org.example.Editor"))
        XCTAssertThrowsError(try ConfigurationLoader.load(explicitPath: nil, environment: environment, systemCandidates: [], instance: editor, userID: 1))
        try write("[Desktop Entry]\nType=Application\nName=Editor\nExec=\"/opt/my editor/editor\" --new-window %U\n", to: root + "/share/applications/org.example.Editor.desktop")
        let configuration = try ConfigurationLoader.load(
            explicitPath: nil, environment: environment, systemCandidates: [], instance: editor, userID: 1).configuration
        XCTAssertEqual(configuration.source, .builtInDefaults)
        XCTAssertEqual(configuration.launcherDesktopFileSetting, .named("org.example.Editor.desktop"))
        XCTAssertEqual(configuration.contactsDirectory, "")
        XCTAssertEqual(configuration.evolution, .none)
        XCTAssertEqual(configuration.staticItemsPath, root + "/config/qactd/org.example.Editor.plist")
        XCTAssertEqual(configuration.socketPath, "/run/user/1000/qactd/org.example.Editor.sock")
        XCTAssertEqual(configuration.launchCommand, ["/opt/my editor/editor", "--new-window"], "the app's own Exec starts it for a pick")
        // A file, once written, is read instead.
        try write("[Shortcuts]\nDisplayLimit=2\n", to: root + "/config/qactd/org.example.Editor.conf")
        XCTAssertEqual(
            try ConfigurationLoader.load(explicitPath: nil, environment: environment, systemCandidates: [], instance: editor, userID: 1)
                .configuration.displayLimit, 2)
    }

    func testErrorsFromAFileNameThatFile() throws {
        let root = try makeTemporaryFolder("config")
        let path = root + "/qactd.conf"
        try write("[Daemon]\n# limit\nMaxConnections=lots\n", to: path)
        XCTAssertThrowsError(try ConfigurationLoader.load(explicitPath: path, environment: ["HOME": root], systemCandidates: [])) { error in
            XCTAssertEqual("\(error)", "\(path):3: [Daemon] MaxConnections: \"lots\" is not a positive integer")
        }
    }
}
