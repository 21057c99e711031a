import Foundation
import TestSupport
import XCTest

/// A real notification server: Debian's dunst under Xvfb on a private session bus, with the
/// built qactd; what it displayed is read back with `dunstctl history` (after `close-all`,
/// which moves what is on screen there). One test per failure a person should see, one that
/// nothing is shown when all goes well, bursts, no bus, and `Notifications=off`.
final class NotificationEndToEndTests: XCTestCase {
    static let appName = "Test Contacts"
    /// A 4×4 PNG, so dunst shows the app's icon by path and its history names it.
    static let iconPNG = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg=="

    /// One X server for the whole class (dunst needs a display); each test has its own bus and dunst.
    nonisolated(unsafe) static var xvfb: Process?
    nonisolated(unsafe) static var display = ""

    override class func setUp() {
        super.setUp()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb") else { return }
        for number in (200..<260).shuffled() where !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
            process.arguments = [":\(number)", "-screen", "0", "800x600x24", "-nolisten", "tcp"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { continue }
            if waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") || !process.isRunning }),
               process.isRunning {
                xvfb = process
                display = ":\(number)"
                return
            }
        }
    }

    override class func tearDown() {
        if let xvfb, xvfb.isRunning {
            xvfb.terminate()
            xvfb.waitUntilExit()
        }
        xvfb = nil
        super.tearDown()
    }

    struct Shown: Equatable {
        var appName: String
        var summary: String
        var body: String
        /// What dunst rendered: the summary in bold, then the body with its markup read.
        var message: String
        var iconPath: String
    }

    private var bus: PrivateSessionBus?
    private var dunst: BackgroundProcess?
    var fixture: DaemonFixture!

    override func setUpWithError() throws {
        for tool in ["/usr/bin/dunst", "/usr/bin/dunstctl", "/usr/bin/dbus-daemon", "/usr/bin/Xvfb"]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            try QuicklistEndToEndTests.missing("\(tool) is missing (apt-get install dunst dbus-daemon xvfb)")
        }
        guard Self.xvfb != nil else { return try QuicklistEndToEndTests.missing("Xvfb could not start a display") }
    }

    /// The daemon, with `configuration`, on a private bus that dunst serves; the app's desktop
    /// entry names it "Test Contacts" with an icon file.
    func start(_ configuration: String, withBus: Bool = true) throws {
        fixture = try DaemonFixture()
        let icon = fixture.root.appendingPathComponent("icon.png")
        try XCTUnwrap(Data(base64Encoded: Self.iconPNG)).write(to: icon)
        try fixture.installAppEntry("[Desktop Entry]\nType=Application\nName=\(Self.appName)\nExec=/bin/true\nIcon=\(icon.path)\n")
        try fixture.writeConfiguration("[Launcher]\nDesktopFile=io.qactd.Test.desktop\n" + configuration)
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(fixture.root.path)/no-bus"
        if withBus {
            let bus = try PrivateSessionBus(in: fixture.root)
            self.bus = bus
            let rc = fixture.root.appendingPathComponent("dunstrc")
            // Long timeouts: what was shown stays on screen until close-all moves it to the history.
            try "[global]\nmarkup = full\n[urgency_normal]\ntimeout = 600\n".write(to: rc, atomically: true, encoding: .utf8)
            dunst = try BackgroundProcess(
                "/usr/bin/dunst", ["-config", rc.path], environment: dunstEnvironment,
                outputFile: fixture.root.appendingPathComponent("dunst.log"))
            guard waitUntil(timeout: 10, { self.dunstctl(["count", "history"]).status == 0 }) else {
                throw unavailable("dunst did not take the notifications name on the private bus: \(dunst?.output ?? "")")
            }
            fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        }
        try fixture.start()
    }

    override func tearDown() {
        fixture?.stop()
        dunst = nil
        bus?.stop()
        super.tearDown()
    }

    private var dunstEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = Self.display
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus?.address
        environment["WAYLAND_DISPLAY"] = nil
        return environment
    }

    private func dunstctl(_ arguments: [String]) -> DaemonFixture.Result {
        DaemonFixture.run("/usr/bin/dunstctl", arguments, environment: dunstEnvironment)
    }

    /// Everything dunst displayed so far, oldest first (close-all first moves it into the history).
    func shown() throws -> [Shown] {
        XCTAssertEqual(dunstctl(["close-all"]).status, 0)
        let history = dunstctl(["history"])
        XCTAssertEqual(history.status, 0, history.stderr)
        let object = try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [String: Any]
        let rows = ((object?["data"] as? [Any])?.first as? [[String: Any]]) ?? []
        func text(_ row: [String: Any], _ key: String) -> String { (row[key] as? [String: Any])?["data"] as? String ?? "" }
        return rows.reversed().map {
            Shown(appName: text($0, "appname"), summary: text($0, "summary"), body: text($0, "body"), message: text($0, "message"), iconPath: text($0, "icon_path"))
        }
    }

    /// Waits until the daemon's notifications thread has shown `count` notifications.
    func waitForNotified(_ count: Int = 1, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(waitUntil(timeout: 15) {
            self.fixture.log().components(separatedBy: "Notified: ").count - 1 >= count
        }, "the daemon notified; its log:\n\(fixture.log().suffix(3000))", file: file, line: line)
    }

    /// The one notification a failure shows: the app's name and icon, what was chosen, what went wrong.
    func assertOneNotification(
        chosen: String, saying expected: [String], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        waitForNotified(file: file, line: line)
        let notifications = try shown()
        XCTAssertEqual(notifications.count, 1, "\(notifications)", file: file, line: line)
        guard let notification = notifications.first else { return }
        XCTAssertEqual(notification.appName, Self.appName, file: file, line: line)
        XCTAssertEqual(notification.summary, "“\(chosen)” did not work", file: file, line: line)
        XCTAssertEqual(notification.iconPath, fixture.root.appendingPathComponent("icon.png").path, file: file, line: line)
        for part in expected {
            XCTAssertTrue(notification.message.contains(part), "“\(part)” in “\(notification.message)”", file: file, line: line)
        }
    }

    private func resignAndTriggerAda(expectStatus: Int32 = 0, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0, file: file, line: line)
        let result = fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "ada-lovelace"])
        XCTAssertEqual(result.status, expectStatus, result.stdout + result.stderr, file: file, line: line)
    }

    // MARK: One test per failure

    func testACommandThatIsNotInstalled() throws {
        try start("[Actions]\nFavoriteAction=/nonexistent/qactd-mailer {email}\n")
        resignAndTriggerAda()
        try assertOneNotification(chosen: "Ada Lovelace", saying: ["“/nonexistent/qactd-mailer”", "is not installed"])
        let notifications = try fixture.qactl(["status", "--json"]).json()["notifications"] as? [String: Any]
        XCTAssertEqual(notifications?["state"] as? String, "on")
        XCTAssertEqual(notifications?["shown"] as? Int, 1)
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("notifications  on: 1 shown"), fixture.qactl(["status"]).stdout)
    }

    func testACommandThatIsNotExecutable() throws {
        try start("")
        let program = fixture.root.appendingPathComponent("mailer").path
        try "#!/bin/sh\n".write(toFile: program, atomically: true, encoding: .utf8)
        try fixture.writeConfiguration("[Launcher]\nDesktopFile=io.qactd.Test.desktop\n[Actions]\nFavoriteAction=\(program) {email}\n")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        resignAndTriggerAda()
        try assertOneNotification(chosen: "Ada Lovelace", saying: ["cannot be run (it is not executable)"])
    }

    func testACommandThatFails() throws {
        try start("[Actions]\nFavoriteAction=/bin/sh -c 'echo \"warming up\" >&2; echo \"no mail account <is> set up\" >&2; exit 3' mailer {email}\n")
        resignAndTriggerAda()
        try assertOneNotification(
            chosen: "Ada Lovelace", saying: ["“/bin/sh” failed: it exited with status 3.", "It said: no mail account &lt;is&gt; set up"])
        // dunst announces body-markup (which renders that as "<is>"): the text was escaped for it.
        XCTAssertTrue(fixture.log().contains("exited with status 3; its stderr ended with: warming up\nno mail account <is> set up"), fixture.log())
    }

    func testALaunchCommandThatIsNotInstalled() throws {
        try start("[App]\nLaunchCommand=/nonexistent/qactd-app\n")
        resignAndTriggerAda()
        try assertOneNotification(chosen: "Ada Lovelace", saying: ["launch command “/nonexistent/qactd-app” is not installed"])
    }

    func testALaunchCommandThatExitsBeforeTheAppConnects() throws {
        try start("[App]\nLaunchCommand=/bin/sh -c 'exit 4'\n")
        resignAndTriggerAda()
        try assertOneNotification(chosen: "Ada Lovelace", saying: ["launch command “/bin/sh” exited with status 4 before the app opened"])
    }

    func testAnAppThatDoesNotAnswerInTime() throws {
        try start("[App]\nResponseTimeoutSec=300ms\n")
        let app = try BackgroundProcess(
            DaemonFixture.qactl, ["app", "--json", "--no-answer"], environment: fixture.environment,
            outputFile: fixture.root.appendingPathComponent("app.out"))
        XCTAssertTrue(waitUntil(timeout: 10) { app.jsonLines.first?["event"] as? String == "connected" }, app.output)
        resignAndTriggerAda(expectStatus: 1)
        try assertOneNotification(chosen: "Ada Lovelace", saying: ["The app did not answer within 1 s."])
    }

    func testAnAppThatAnswersNotHandled() throws {
        try start("")
        let app = try BackgroundProcess(
            DaemonFixture.qactl, ["app", "--json", "--not-handled"], environment: fixture.environment,
            outputFile: fixture.root.appendingPathComponent("app.out"))
        XCTAssertTrue(waitUntil(timeout: 10) { app.jsonLines.first?["event"] as? String == "connected" }, app.output)
        resignAndTriggerAda()
        try assertOneNotification(chosen: "Ada Lovelace", saying: ["it answered that it did not handle"])
    }

    func testAContactThatWasRemoved() throws {
        try start("")
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        try FileManager.default.removeItem(at: fixture.contacts.appendingPathComponent("personal/ada-lovelace.vcf"))
        XCTAssertTrue(waitUntil(timeout: 10) { self.fixture.qactl(["contact", "ada-lovelace"]).status != 0 })
        let result = fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "ada-lovelace", "--json"])
        XCTAssertTrue(result.stdout.contains("ContactRemoved"), result.stdout)
        try assertOneNotification(chosen: "Ada Lovelace", saying: ["no longer in your contacts"])
    }

    func testACommandRefusedForAValueThatWouldBeAnOption() throws {
        try start("[Actions]\nFavoriteAction=/bin/true {name}\n")
        try fixture.write(contact: "work/dash.json", #"{"identifier": "dash", "name": "--output=/tmp/x", "favorite": true}"#)
        XCTAssertTrue(waitUntil(timeout: 10) { self.fixture.qactl(["contact", "dash"]).status == 0 })
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertEqual(fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "dash"]).status, 1)
        try assertOneNotification(chosen: "--output=/tmp/x", saying: ["Nothing was run", "{name}", "option"])
    }

    // MARK: Bursts, success, no bus, off

    /// `dbus-monitor` on the private bus, printing each `Notify` call with its arguments.
    private func monitorNotifyCalls() throws -> BackgroundProcess {
        let monitor = try BackgroundProcess(
            "/usr/bin/dbus-monitor",
            ["--address", bus?.address ?? "", "type='method_call',interface='org.freedesktop.Notifications',member='Notify'"],
            environment: dunstEnvironment, outputFile: fixture.root.appendingPathComponent("monitor.out"))
        // It prints its own NameAcquired once it is a monitor.
        guard waitUntil(timeout: 10, { monitor.output.contains("NameAcquired") || monitor.output.contains("NameLost") }) else {
            throw unavailable("dbus-monitor did not start: \(monitor.output)")
        }
        return monitor
    }

    /// The `Notify` calls the monitor saw: each call's lines of arguments.
    private func notifyCalls(_ monitor: BackgroundProcess) -> [[String]] {
        var calls: [[String]] = []
        for line in monitor.output.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("method call") { calls.append([]); continue }
            if !calls.isEmpty { calls[calls.count - 1].append(line) }
        }
        return calls
    }

    /// Five failures in a row: one notification on screen, the latest, never a stack. On the wire
    /// each `Notify` after the first replaces the previous one (`replaces_id`), with the hints
    /// `desktop-entry` and `urgency`.
    func testABurstOfFailuresIsCollapsedIntoOneNotification() throws {
        try start("[Actions]\nFavoriteAction=/nonexistent/qactd-mailer {email}\n")
        if !FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-monitor") {
            try QuicklistEndToEndTests.missing("/usr/bin/dbus-monitor is missing (apt-get install dbus-bin)")
        }
        let monitor = try monitorNotifyCalls()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let contacts = ["ada-lovelace", "grace-hopper", "arnold-schoenberg", "margaret-hamilton", "ada-lovelace"]
        for contact in contacts {
            XCTAssertEqual(fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", contact]).status, 0)
        }
        XCTAssertTrue(waitUntil(timeout: 15) { self.fixture.log().contains("Notified: “Ada Lovelace” did not work") && self.fixture.log().components(separatedBy: "Notice for the desktop").count - 1 == contacts.count }, fixture.log())
        // Whatever the thread sent last must be on screen, alone.
        XCTAssertTrue(waitUntil(timeout: 10) { self.dunstctl(["count", "displayed"]).stdout.contains("1") })
        let notifications = try shown()
        XCTAssertEqual(notifications.count, 1, "\(notifications)")
        XCTAssertEqual(notifications.last?.summary, "“Ada Lovelace” did not work")

        let calls = notifyCalls(monitor)
        XCTAssertGreaterThanOrEqual(calls.count, 1, monitor.output)
        XCTAssertLessThanOrEqual(calls.count, contacts.count)
        for (number, call) in calls.enumerated() {
            XCTAssertEqual(call.first, "string \"\(Self.appName)\"", "app_name")
            // replaces_id: 0 for the first, then the id the server gave.
            XCTAssertEqual(call.dropFirst().first == "uint32 0", number == 0, "replaces_id of call \(number): \(call)")
            let text = call.joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
            XCTAssertTrue(text.contains("string \"desktop-entry\" variant string \"io.qactd.Test\""), text)
            XCTAssertTrue(text.contains("string \"urgency\" variant byte 1"), text)
        }
    }

    /// A command that succeeds and an app that handles the action: nothing is shown. A failure
    /// afterwards, which is shown, proves the server was listening all along.
    func testNothingIsShownWhenAllGoesWell() throws {
        try start("[Actions]\nSearchAction=/bin/sh -c 'exit 0' search {name}\n")
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertEqual(fixture.qactl(["trigger", "--type", "SearchAction"]).status, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { self.fixture.log().contains("of 'SearchAction'") && self.fixture.log().contains("exited with status 0") })
        let app = try BackgroundProcess(
            DaemonFixture.qactl, ["app", "--json"], environment: fixture.environment,
            outputFile: fixture.root.appendingPathComponent("app.out"))
        XCTAssertTrue(waitUntil(timeout: 10) { app.jsonLines.first?["event"] as? String == "connected" }, app.output)
        let handled = try fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "ada-lovelace", "--json"]).json()
        XCTAssertEqual(handled["handled"] as? Bool, true)
        XCTAssertFalse(fixture.log().contains("Notice for the desktop"), fixture.log())
        XCTAssertEqual(try shown(), [])
        // The sentinel.
        try FileManager.default.removeItem(at: fixture.contacts.appendingPathComponent("personal/grace-hopper.vcf"))
        XCTAssertTrue(waitUntil(timeout: 10) { self.fixture.qactl(["contact", "grace-hopper"]).status != 0 })
        XCTAssertEqual(fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "grace-hopper"]).status, 1)
        try assertOneNotification(chosen: "Grace Hopper", saying: ["no longer in your contacts"])
        XCTAssertEqual(fixture.log().components(separatedBy: "Notice for the desktop").count - 1, 1)
    }

    /// No session bus: the failure is logged, the trigger answers as usual, nothing fails.
    func testWithoutABusTheFailureIsOnlyLogged() throws {
        try start("[Actions]\nFavoriteAction=/nonexistent/qactd-mailer {email}\n", withBus: false)
        resignAndTriggerAda()
        XCTAssertTrue(waitUntil(timeout: 10) { self.fixture.log().contains("No desktop notification (the session bus at") }, fixture.log())
        let notifications = try fixture.qactl(["status", "--json"]).json()["notifications"] as? [String: Any]
        XCTAssertEqual(notifications?["state"] as? String, "unavailable")
        XCTAssertTrue((notifications?["message"] as? String ?? "").contains("/no-bus' cannot be reached"), "\(notifications ?? [:])")
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("failures are logged only"))
        resignAndTriggerAda()
        XCTAssertEqual(fixture.log().components(separatedBy: "No desktop notification").count - 1, 1, "logged once")
    }

    func testNotificationsOffShowsNothing() throws {
        try start("[Feedback]\nNotifications=off\n[Actions]\nFavoriteAction=/nonexistent/qactd-mailer {email}\n")
        resignAndTriggerAda()
        XCTAssertTrue(waitUntil(timeout: 10) { self.fixture.log().contains("Could not start the command '/nonexistent/qactd-mailer'") })
        XCTAssertFalse(fixture.log().contains("Notice for the desktop"))
        XCTAssertEqual(try shown(), [])
        XCTAssertEqual((try fixture.qactl(["status", "--json"]).json()["notifications"] as? [String: Any])?["state"] as? String, "off")
    }
}
