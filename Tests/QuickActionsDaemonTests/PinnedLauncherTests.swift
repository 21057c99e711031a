import Contacts
import Foundation
import Glibc
import Logging
import QuickActions
import QuickActionsProtocol
import SystemCalls
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// Pins driven through the core, with their launchers written by the real desktop-entry
/// writer into qactd's exports folder in a scratch `XDG_DATA_HOME`, read back and checked by
/// `desktop-file-validate`.
final class PinnedLauncherTests: XCTestCase {
    private var folder = ""
    private var dataHome: String { folder + "/home-data" }
    private var systemData: String { folder + "/system-data" }
    private var exportsShare: String { dataHome + "/qactd/exports/share" }
    private var applications: String { exportsShare + "/applications" }
    /// The `qactl` the launchers run: a path with a space, where `GLibLaunchOracle` puts its recorder.
    private var qactl: String { folder + "/qactd tools/bin/qactl" }
    private let search = ShortcutItem(type: "SearchAction", title: "SEARCH_TITLE", icon: .system(.search))
    private let configuration = "[Launcher]\nDesktopFile=org.example.Contacts.desktop\n[Shortcuts]\nDisplayLimit=10\n"

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-pins-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: systemData + "/applications", withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Contacts\nIcon=x-office-address-book\nExec=contacts %U\n"
            .write(toFile: systemData + "/applications/org.example.Contacts.desktop", atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    private var environment: [String: String] {
        ["HOME": folder, "XDG_RUNTIME_DIR": folder, "XDG_DATA_HOME": dataHome, "XDG_DATA_DIRS": exportsShare + ":" + systemData]
    }

    private func settings(_ text: String, staticItems: [ShortcutItem]? = nil) throws -> DaemonSettings {
        let loaded = try ConfigurationLoader.parse(text: resigningActiveUnlessSaid(text), file: folder + "/qactd.conf", environment: environment, userID: getuid())
        return DaemonSettings(
            configuration: loaded.configuration, staticItems: StaticItemsFile(items: staticItems ?? [search]),
            localization: Localization(tables: ["en": ["SEARCH_TITLE": "Search"]]))
    }

    private func makeCore(restored: PersistedState? = nil, app: String = "org.example.Contacts", instance: String = "qactd") throws -> DaemonCore {
        let (logger, _) = Logger.recording(level: .debug)
        let core = DaemonCore(
            settings: try settings(configuration.replacingOccurrences(of: "org.example.Contacts", with: app)), restored: restored,
            index: ContactIndex(), store: StateStore(paths: StatePaths(directory: folder + "/state-" + instance)),
            socketPath: folder + "/run/\(instance).sock", logger: logger, notifier: RecordingNotifier(),
            launchers: LauncherExporters(environment: environment, qactlPath: qactl, logger: logger))
        runEvents(of: core)
        return core
    }

    private func contact(_ identifier: String, _ name: String, path: String) -> ContactsDirectoryUpdate {
        ContactsDirectoryUpdate(
            changes: [.file(path: folder + "/contacts/" + path, result: .success([Contact(identifier: identifier, name: name, favorite: true)]))],
            work: ActivityCounters(), health: WatchHealthInfo(state: "watching"))
    }

    private func removed(_ path: String) -> ContactsDirectoryUpdate {
        ContactsDirectoryUpdate(changes: [.removed(path: folder + "/contacts/" + path)], work: ActivityCounters(), health: WatchHealthInfo(state: "watching"))
    }

    private func launcher(_ pin: String) throws -> DesktopEntryDocument {
        try DesktopEntryDocument(parsing: String(contentsOfFile: applications + "/org.example.Contacts.pinned.\(pin).desktop", encoding: .utf8))
    }

    private func pinnedFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: applications)) ?? []).filter { $0.contains(".pinned.") }.sorted()
    }

    func testAPinFollowsItsContactIsDisabledWhileItIsGoneAndSurvivesARestart() async throws {
        let core = try makeCore()
        await core.applyWatcherUpdate(contact("ada-lovelace", "Ada Lovelace", path: "ada.vcf"))
        _ = await core.resignActive(appVersion: "1.0")

        // Pinned by type and contact, and the static item by its position.
        let pinned = try await core.pin(.type("FavoriteAction", contactIdentifier: "ada-lovelace"))
        XCTAssertEqual(pinned.identifier, "FavoriteAction-ada-lovelace")
        XCTAssertEqual(pinned.desktopFile, applications + "/org.example.Contacts.pinned.FavoriteAction-ada-lovelace.desktop")
        let searchPin = try await core.pin(.position(1))
        XCTAssertEqual(searchPin.item.title, "Search", "a static title as the person reads it")
        await core.launcherExportsDone()
        XCTAssertEqual(pinnedFiles(), ["org.example.Contacts.pinned.FavoriteAction-ada-lovelace.desktop", "org.example.Contacts.pinned.SearchAction.desktop"])
        var ada = try launcher("FavoriteAction-ada-lovelace")
        XCTAssertEqual(ada.value(of: "Name"), "Ada Lovelace")
        // Faces are on by default: her face, her monogram since her card holds no photo.
        let adaFace = try XCTUnwrap(ada.value(of: "Icon"))
        XCTAssertTrue(adaFace.hasPrefix(dataHome + "/qactd/faces/org.example.Contacts.desktop/face-") && adaFace.hasSuffix(".svg"), adaFace)
        XCTAssertTrue(try String(contentsOfFile: adaFace, encoding: .utf8).contains(">AL</text>"), adaFace)
        XCTAssertEqual(ada.value(of: "Exec"), "\"\(folder)/qactd tools/bin/qactl\" trigger --socket=\(folder)/run/qactd.sock --pinned=FavoriteAction-ada-lovelace")
        XCTAssertEqual(try launcher("SearchAction").value(of: "Name"), "Search")
        XCTAssertTrue(FileManager.default.fileExists(atPath: applications + "/org.example.Contacts.desktop"), "beside the exported entry")

        // Renamed: the launcher is renamed.
        await core.applyWatcherUpdate(contact("ada-lovelace", "Ada King", path: "ada.vcf"))
        await core.launcherExportsDone()
        XCTAssertEqual(try launcher("FavoriteAction-ada-lovelace").value(of: "Name"), "Ada King")

        // Removed: the launcher stays, disabled; choosing it triggers nothing.
        await core.applyWatcherUpdate(removed("ada.vcf"))
        await core.launcherExportsDone()
        ada = try launcher("FavoriteAction-ada-lovelace")
        XCTAssertEqual(ada.value(of: "X-Qactd-Pin-State"), "disabled")
        XCTAssertEqual(ada.value(of: "Name"), "Ada King")
        XCTAssertEqual(ada.value(of: "Comment"), "This contact is no longer in your contacts.")
        let usageBefore = await core.status().usage
        do {
            _ = try await core.triggerPinned("FavoriteAction-ada-lovelace")
            XCTFail("a disabled pin triggers nothing")
        } catch {
            XCTAssertEqual(error, .pinDisabled(identifier: "FavoriteAction-ada-lovelace", message: "This contact is no longer in your contacts."))
        }
        let usageAfter = await core.status().usage
        XCTAssertEqual(usageAfter, usageBefore, "nothing was counted")
        let listed = await core.pins()
        XCTAssertEqual(listed.map(\.state), [.disabled, .enabled])

        // Back (in another file): enabled again, and choosing it triggers the contact's item.
        await core.applyWatcherUpdate(contact("ada-lovelace", "Ada Lovelace", path: "moved/ada.vcf"))
        await core.launcherExportsDone()
        XCTAssertEqual(try launcher("FavoriteAction-ada-lovelace").value(of: "X-Qactd-Pin-State"), "enabled")
        let outcome = try await core.triggerPinned("FavoriteAction-ada-lovelace")
        XCTAssertEqual(outcome.resolution.item.contactIdentifier, "ada-lovelace")
        XCTAssertEqual(outcome.resolution.contact?.name, "Ada Lovelace")
        XCTAssertEqual(outcome.resolution.delivery, .launch)
        try assertDesktopFileValid(applications + "/org.example.Contacts.pinned.FavoriteAction-ada-lovelace.desktop")
        try assertDesktopFileValid(applications + "/org.example.Contacts.pinned.SearchAction.desktop")

        // A restart keeps the pins (they are in the state file) and their launchers.
        await core.finishPendingWork()
        var store = StateStore<PersistedState>(paths: StatePaths(directory: folder + "/state-qactd"))
        guard case .loaded(let saved) = try store.load() else { return XCTFail("the state file holds the pins") }
        XCTAssertEqual(saved.pins.map(\.identifier), ["FavoriteAction-ada-lovelace", "SearchAction"])
        let restarted = try makeCore(restored: saved)
        await restarted.publishToLaunchers()
        await restarted.launcherExportsDone()
        XCTAssertEqual(pinnedFiles().count, 2, "a restart removes no pinned launcher")
        let pinsAfterRestart = await restarted.pins()
        XCTAssertEqual(pinsAfterRestart.map(\.identifier), ["FavoriteAction-ada-lovelace", "SearchAction"])

        // Unpinned by position: its file goes.
        let removedPins = try await restarted.unpin(identifier: nil, position: 2, all: false)
        XCTAssertEqual(removedPins, ["SearchAction"])
        await restarted.launcherExportsDone()
        XCTAssertEqual(pinnedFiles(), ["org.example.Contacts.pinned.FavoriteAction-ada-lovelace.desktop"])
        do {
            _ = try await restarted.unpin(identifier: "SearchAction", position: nil, all: false)
            XCTFail("an unknown pin is refused")
        } catch {
            XCTAssertEqual(error, .noSuchPin("SearchAction"))
        }

        // The app's configuration removed (DesktopFile= emptied): every pin and launcher goes.
        try await restarted.reload(.success(try settings("[Shortcuts]\nDisplayLimit=10\n")))
        await restarted.launcherExportsDone()
        XCTAssertEqual(pinnedFiles(), [])
        let pinsWithoutApp = await restarted.pins()
        XCTAssertEqual(pinsWithoutApp, [])
        do {
            _ = try await restarted.pin(.position(1))
            XCTFail("nothing can be pinned without an app")
        } catch {
            guard case .pinningUnavailable = error else { return XCTFail("\(error)") }
        }
    }

    /// Pinned launchers an older qactd wrote in the person's own applications folder (without the
    /// keys that say what they pin): each whose pin the state holds is written anew in the exports
    /// folder and the old file goes; one whose pin is unknown stays, since nothing proves it stale.
    func testPinnedLaunchersAnOlderVersionLeftMoveToTheExportsFolder() async throws {
        let core = try makeCore()
        _ = try await core.pin(.position(1))
        await core.launcherExportsDone()
        let current = try String(contentsOfFile: applications + "/org.example.Contacts.pinned.SearchAction.desktop", encoding: .utf8)
        let older = current.split(separator: "\n").filter { !$0.hasPrefix("X-Qactd-Pin-Type") }.joined(separator: "\n") + "\n"
        let personal = dataHome + "/applications"
        try FileManager.default.createDirectory(atPath: personal, withIntermediateDirectories: true)
        try older.write(toFile: personal + "/org.example.Contacts.pinned.SearchAction.desktop", atomically: true, encoding: .utf8)
        let unknown = older.replacingOccurrences(of: "X-Qactd-Pinned=SearchAction", with: "X-Qactd-Pinned=ShareAction")
        try unknown.write(toFile: personal + "/org.example.Contacts.pinned.ShareAction.desktop", atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: applications + "/org.example.Contacts.pinned.SearchAction.desktop")

        await core.finishPendingWork()
        var store = StateStore<PersistedState>(paths: StatePaths(directory: folder + "/state-qactd"))
        guard case .loaded(let saved) = try store.load() else { return XCTFail("the state file holds the pin") }
        let (logger, records) = Logger.recording(level: .debug)
        let upgraded = DaemonCore(
            settings: try settings(configuration), restored: saved, index: ContactIndex(),
            store: StateStore(paths: StatePaths(directory: folder + "/state-qactd")), socketPath: folder + "/run/qactd.sock",
            logger: logger, notifier: RecordingNotifier(), launchers: LauncherExporters(environment: environment, qactlPath: qactl, logger: logger))
        runEvents(of: upgraded)
        await upgraded.publishToLaunchers()
        await upgraded.launcherExportsDone()
        XCTAssertEqual(pinnedFiles(), ["org.example.Contacts.pinned.SearchAction.desktop"], "written anew in the exports folder")
        XCTAssertFalse(FileManager.default.fileExists(atPath: personal + "/org.example.Contacts.pinned.SearchAction.desktop"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: personal + "/org.example.Contacts.pinned.ShareAction.desktop"), "unknown: kept")
        XCTAssertTrue(records.messages.contains { $0.contains("ShareAction") && $0.contains("nothing proves it stale") }, "\(records.messages)")
    }

    /// Two instances (two apps, two sockets) share the applications folder: each keeps and
    /// removes only its own pinned launchers.
    func testTwoInstancesKeepTheirOwnPins() async throws {
        try "[Desktop Entry]\nType=Application\nName=Mail\nExec=mail %U\n"
            .write(toFile: systemData + "/applications/org.example.Mail.desktop", atomically: true, encoding: .utf8)
        let contacts = try makeCore()
        let mail = try makeCore(app: "org.example.Mail", instance: "mail")
        for core in [contacts, mail] {
            await core.applyWatcherUpdate(contact("ada-lovelace", "Ada Lovelace", path: "ada.vcf"))
            _ = await core.resignActive(appVersion: "1.0")
            _ = try await core.pin(.type("FavoriteAction", contactIdentifier: "ada-lovelace"))
            await core.launcherExportsDone()
        }
        XCTAssertEqual(pinnedFiles(), ["org.example.Contacts.pinned.FavoriteAction-ada-lovelace.desktop", "org.example.Mail.pinned.FavoriteAction-ada-lovelace.desktop"])
        XCTAssertTrue(try launcher("FavoriteAction-ada-lovelace").value(of: "Exec")?.contains("--socket=\(folder)/run/qactd.sock") == true)

        // The mail instance unpins everything: the contacts app's launcher stays.
        _ = try await mail.unpin(identifier: nil, position: nil, all: true)
        await mail.launcherExportsDone()
        XCTAssertEqual(pinnedFiles(), ["org.example.Contacts.pinned.FavoriteAction-ada-lovelace.desktop"])

        // A mail instance starting without its state (a lost state file) takes back the pin its
        // launcher says it is, as the daemon does at start-up, rather than removing a launcher
        // nothing proves stale; the other app's launcher is not its to take.
        _ = try await mail.pin(.type("FavoriteAction", contactIdentifier: "ada-lovelace"))
        _ = try await mail.pin(.position(1))
        await mail.launcherExportsDone()
        XCTAssertEqual(pinnedFiles().count, 3)
        let mailLauncher = try DesktopEntryDocument(parsing: String(
            contentsOfFile: applications + "/org.example.Mail.pinned.FavoriteAction-ada-lovelace.desktop", encoding: .utf8))
        XCTAssertEqual(mailLauncher.value(of: "X-Qactd-Pin-Type"), "FavoriteAction", "the launcher says what it pins")
        XCTAssertEqual(mailLauncher.value(of: "X-Qactd-Pin-Contact"), "ada-lovelace")
        let restarted = try makeCore(app: "org.example.Mail", instance: "mail")
        let loaded = try settings(configuration.replacingOccurrences(of: "org.example.Contacts", with: "org.example.Mail")).configuration
        var withSocket = loaded
        withSocket.socketPath = folder + "/run/mail.sock"
        await Daemon.adoptPinnedLaunchers(into: restarted, configuration: withSocket, environment: environment)
        await restarted.followContactsWithPins(false)
        await restarted.publishToLaunchers()
        await restarted.launcherExportsDone()
        XCTAssertEqual(pinnedFiles(), [
            "org.example.Contacts.pinned.FavoriteAction-ada-lovelace.desktop", "org.example.Mail.pinned.FavoriteAction-ada-lovelace.desktop",
            "org.example.Mail.pinned.SearchAction.desktop",
        ], "no launcher removed")
        let adopted = await restarted.pins()
        XCTAssertEqual(adopted.map(\.identifier).sorted(), ["FavoriteAction-ada-lovelace", "SearchAction"])
        // Once the contacts are read, the adopted pins follow them as any pin does.
        await restarted.applyWatcherUpdate(contact("ada-lovelace", "Ada King", path: "ada.vcf"))
        await restarted.followContactsWithPins(true)
        await restarted.launcherExportsDone()
        let renamed = try DesktopEntryDocument(parsing: String(
            contentsOfFile: applications + "/org.example.Mail.pinned.FavoriteAction-ada-lovelace.desktop", encoding: .utf8))
        XCTAssertEqual(renamed.value(of: "Name"), "Ada King")
        XCTAssertEqual(renamed.value(of: "X-Qactd-Pin-State"), "enabled")
        let searchPin = await restarted.pins().first { $0.identifier == "SearchAction" }
        XCTAssertEqual(searchPin?.item.title, "Search", "a static pin resolves to its item again")
    }

    /// A static item the app no longer offers (a reload without it) leaves its pin disabled,
    /// still under its translated title; the item coming back enables it.
    func testAStaticItemDroppedByAReloadDisablesItsPin() async throws {
        let core = try makeCore()
        let pin = try await core.pin(.type("SearchAction", contactIdentifier: nil))
        XCTAssertEqual(pin.item.title, "Search")
        try await core.reload(.success(try settings(configuration, staticItems: [])))
        await core.launcherExportsDone()
        let launcher = try launcher("SearchAction")
        XCTAssertEqual(launcher.value(of: "X-Qactd-Pin-State"), "disabled")
        XCTAssertEqual(launcher.value(of: "Name"), "Search", "translated, though the app no longer offers it")
        XCTAssertEqual(launcher.value(of: "Comment"), "The app no longer offers this quick action.")
        let pins = await core.pins()
        XCTAssertEqual(pins.first?.message, "The app no longer offers this quick action.")
        try await core.reload(.success(try settings(configuration)))
        await core.launcherExportsDone()
        XCTAssertEqual(try self.launcher("SearchAction").value(of: "X-Qactd-Pin-State"), "enabled")
    }

    func testHostileNamesMakeValidLaunchersThatAddNoKeyGroupOrArgument() async throws {
        let core = try makeCore()
        let hostileIdentifier = "--evil \"id\" $HOME %u;=\\ `x` 👩‍💻"
        let hostileName = "Eve\n[Desktop Entry]\nExec=/bin/touch \(folder)/pwned %u; \"q\" \\ a=b [c] 100%"
        await core.applyWatcherUpdate(contact(hostileIdentifier, hostileName, path: "eve.vcf"))
        _ = await core.resignActive(appVersion: "1.0")
        let pin = try await core.pin(.type("FavoriteAction", contactIdentifier: hostileIdentifier))
        await core.launcherExportsDone()
        let path = try XCTUnwrap(pin.desktopFile)
        let document = try DesktopEntryDocument(parsing: String(contentsOfFile: path, encoding: .utf8))
        XCTAssertEqual(document.groupNames, ["Desktop Entry"])
        XCTAssertEqual(document.value(of: "Name").map(DesktopEntryEscaping.unescapedValue), hostileName)
        // Launched by GLib, the launcher runs qactl with exactly these arguments.
        let oracle = try GLibLaunchOracle(folder: folder)
        XCTAssertEqual(oracle.program, qactl)
        XCTAssertEqual(try oracle.arguments(desktopFile: path, launch: nil), ["trigger", "--socket=\(folder)/run/qactd.sock", "--pinned=\(pin.identifier)"])
        try assertDesktopFileValid(path)
        // The hostile contact removed: the disabled launcher is valid too.
        await core.applyWatcherUpdate(removed("eve.vcf"))
        await core.launcherExportsDone()
        XCTAssertEqual(try DesktopEntryDocument(parsing: String(contentsOfFile: path, encoding: .utf8)).value(of: "X-Qactd-Pin-State"), "disabled")
        try assertDesktopFileValid(path)
    }
}
