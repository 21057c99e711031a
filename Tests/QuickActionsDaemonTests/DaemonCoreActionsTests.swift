import Contacts
import Foundation
import Glibc
import Logging
import QuickActions
import QuickActionsProtocol
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// `[Actions]` in the core, driven directly: a command takes the place of the app and of the
/// pending launch item, a refusal changes nothing, and the command's end comes back as an event.
final class DaemonCoreActionsTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try makeTemporaryFolder("core-actions")
    }

    private func makeCore(_ configuration: String, staticItems: [ShortcutItem] = []) throws -> (DaemonCore, RecordingLogHandler.Store) {
        let loaded = try ConfigurationLoader.parse(
            text: resigningActiveUnlessSaid(configuration), file: folder + "/qactd.conf", environment: ["HOME": folder, "XDG_RUNTIME_DIR": folder], userID: getuid())
        let (logger, records) = Logger.recording(level: .debug)
        let core = DaemonCore(
            settings: DaemonSettings(configuration: loaded.configuration, staticItems: StaticItemsFile(items: staticItems)), restored: nil,
            index: ContactIndex(), store: StateStore(paths: StatePaths(directory: folder + "/state")),
            socketPath: folder + "/run/qactd.sock", logger: logger, notifier: RecordingNotifier())
        runEvents(of: core)
        return (core, records)
    }

    private func favorites(_ core: DaemonCore, _ contacts: [(Contact, String)]) async {
        let changes = contacts.map { ContactIndexChange.file(path: folder + "/contacts/" + $0.1, result: .success([$0.0])) }
        await core.applyWatcherUpdate(ContactsDirectoryUpdate(changes: changes, work: ActivityCounters(), health: WatchHealthInfo(state: "watching")))
        _ = await core.resignActive(appVersion: "1.0")
    }

    private func assertEventually(_ condition: () -> Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) async {
        let held = await waitUntil(timeout: 10) { condition() }
        XCTAssertTrue(held, message(), line: line)
    }

    func testACommandDeliversTheItemWithoutTouchingThePendingLaunchItem() async throws {
        let out = folder + "/out"
        let (core, records) = try makeCore("[Actions]\nFavoriteAction=/bin/sh -c 'printf %s \"$1|$QACTD_CONTACT_FILE\" > \(out)' sh {email}\n")
        let ada = Contact(identifier: "ada", name: "Ada", email: "ada@x.example", emails: ["ada@x.example"], favorite: true)
        await favorites(core, [(ada, "ada.vcf")])
        let outcome = try await core.trigger(.type("FavoriteAction", contactIdentifier: "ada"))
        XCTAssertEqual(outcome.resolution.delivery, .command)
        guard case .command(let command) = outcome.delivery else { return XCTFail("\(outcome.delivery)") }
        XCTAssertEqual(command.program, "/bin/sh")
        XCTAssertNotNil(command.pid)
        let status = await core.status()
        XCTAssertNil(status.pendingLaunchItem)
        XCTAssertEqual(status.usage["FavoriteAction/ada"], 1)
        await assertEventually({ records.messages.contains { $0.contains("of 'FavoriteAction'") && $0.contains("exited with status 0") } })
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "ada@x.example|" + folder + "/contacts/ada.vcf")
    }

    func testARefusedCommandCountsNothingAndRunsNothing() async throws {
        let (core, records) = try makeCore("[Actions]\nFavoriteAction=/bin/touch \(folder)/ran {name}\n")
        await favorites(core, [(Contact(identifier: "dash", name: "-rf", favorite: true), "dash.json")])
        do {
            _ = try await core.trigger(.type("FavoriteAction", contactIdentifier: "dash"))
            XCTFail("refused")
        } catch {
            XCTAssertEqual(error, .commandRefused(CommandTemplateExpansionError.leadingDash(field: .name, argument: "-rf").description))
        }
        let status = await core.status()
        XCTAssertEqual(status.usage, [:])
        XCTAssertTrue(records.messages.contains { $0.hasPrefix("Notice for the desktop: “-rf” did not work") }, "\(records.messages)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/ran"))
    }

    /// A JSON contact has no vCard of its own: `{file}` is a private copy beside the socket.
    func testAJSONContactsFileIsAPrivateCopy() async throws {
        let (core, records) = try makeCore("[Actions]\nFavoriteAction=/bin/cp {file} \(folder)/copied.vcf\n")
        await favorites(core, [(Contact(identifier: "m;h", name: "Margaret, H.", email: "mh@x.example", favorite: true), "m.json")])
        _ = try await core.trigger(.type("FavoriteAction", contactIdentifier: "m;h"))
        await assertEventually({ records.messages.contains { $0.contains("exited with status 0") } }, "\(records.messages)")
        let card = try String(contentsOfFile: folder + "/copied.vcf", encoding: .utf8)
        XCTAssertEqual(card, "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:m\\;h\r\nFN:Margaret\\, H.\r\nEMAIL:mh@x.example\r\nEND:VCARD\r\n")
        let copy = folder + "/run/cards/" + ContactCardCopies.fileName(for: "m;h")
        var info = stat()
        XCTAssertEqual(stat(copy, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(stat(folder + "/run/cards", &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
    }

    /// The apps' sockets share the runtime folder and their contacts may share identifiers, so
    /// an app's copies go to a folder of its own.
    func testAnAppsCopiesHaveAFolderOfTheirOwn() throws {
        let contact = Contact(identifier: "m;h", name: "Margaret", favorite: true)
        let mail = try ContactCardCopies.write(
            contact, besideSocket: folder + "/run/mail.sock", instance: .app(AppName(validating: "mail")))
        let plain = try ContactCardCopies.write(contact, besideSocket: folder + "/run/qactd.sock")
        XCTAssertEqual(mail, folder + "/run/mail.cards/" + ContactCardCopies.fileName(for: "m;h"))
        XCTAssertEqual(plain, folder + "/run/cards/" + ContactCardCopies.fileName(for: "m;h"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: mail))
        XCTAssertTrue(FileManager.default.fileExists(atPath: plain))
    }

    func testACommandThatFailsIsLoggedWithItsStderrAndShown() async throws {
        let (core, records) = try makeCore(
            "[Actions]\nSearchAction=/bin/sh -c 'echo oops >&2; exit 7'\n", staticItems: [ShortcutItem(type: "SearchAction", title: "Search")])
        _ = try await core.trigger(.type("SearchAction", contactIdentifier: nil))
        await assertEventually({
            records.messages.contains { $0.contains("exited with status 7; its stderr ended with: oops") }
        }, "\(records.messages)")
        await assertEventually({
            records.messages.contains { $0.hasPrefix("Notice for the desktop: “Search” did not work: The command “/bin/sh” failed: it exited with status 7. It said: oops") }
        }, "\(records.messages)")
    }
}
