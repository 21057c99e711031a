import Foundation
import TestSupport
import Varlink
import XCTest

/// Two apps' daemons side by side (`qactd --app alpha`, `qactd --app beta`), each finding its
/// configuration, state folder and socket from its name alone under one scratch home's XDG
/// folders, as `qactd@NAME.service` does; `qactl --app`, `QACTD_APP` and `qactl apps` find them.
final class AppInstancesEndToEndTests: XCTestCase {
    private var root: URL!
    private var daemons: [String: Process] = [:]

    private var configFolder: URL { root.appendingPathComponent("config/qactd") }
    private var runtimeFolder: URL { root.appendingPathComponent("run/qactd") }
    private func socket(_ app: String) -> String { runtimeFolder.appendingPathComponent("\(app).sock").path }
    private func log(_ app: String) -> String {
        (try? String(contentsOf: root.appendingPathComponent("\(app).log"), encoding: .utf8)) ?? ""
    }

    override func setUpWithError() throws {
        root = URL(fileURLWithPath: try makeTemporaryFolder("apps"))
        try FileManager.default.createDirectory(at: configFolder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for process in daemons.values where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// The environment of a person's session: every path of an instance follows from these.
    private var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID",
                     "JOURNAL_STREAM", "STATE_DIRECTORY", "INVOCATION_ID", "QACTD_SOCKET", "QACTD_APP"] {
            environment[name] = nil
        }
        environment["HOME"] = root.path
        environment["XDG_CONFIG_HOME"] = root.appendingPathComponent("config").path
        environment["XDG_STATE_HOME"] = root.appendingPathComponent("state").path
        environment["XDG_RUNTIME_DIR"] = root.appendingPathComponent("run").path
        environment["XDG_DATA_HOME"] = root.appendingPathComponent("data").path
        // qactd's exports folder first, as its environment generator puts it for a session.
        environment["XDG_DATA_DIRS"] = root.appendingPathComponent("data/qactd/exports/share").path + ":" + root.appendingPathComponent("share").path
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(root.path)/no-session-bus"
        environment["NO_COLOR"] = "1"
        return environment
    }

    private func qactl(_ arguments: [String], environment extra: [String: String] = [:]) -> DaemonFixture.Result {
        DaemonFixture.run(DaemonFixture.qactl, arguments, environment: environment.merging(extra) { $1 })
    }

    private func json(_ result: DaemonFixture.Result, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        return try result.json()
    }

    /// An app of its own: a contacts folder with one favorite, a static item, a source desktop
    /// entry and `NAME.conf` naming them (relative paths start at the configuration's folder).
    private func writeApp(_ app: String, favorite: String, staticType: String) throws {
        let contacts = root.appendingPathComponent("contacts-\(app)")
        try FileManager.default.createDirectory(at: contacts, withIntermediateDirectories: true)
        try ContactCard.vCard(favorite, favorite: true, uid: "\(app)-1")
            .write(to: contacts.appendingPathComponent("\(app)-1.vcf"), atomically: true, encoding: .utf8)
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><array><dict>
            <key>UIApplicationShortcutItemType</key><string>\(staticType)</string>
            <key>UIApplicationShortcutItemTitle</key><string>\(staticType) title</string>
            </dict></array></plist>
            """.write(to: configFolder.appendingPathComponent("\(app).plist"), atomically: true, encoding: .utf8)
        let applications = root.appendingPathComponent("share/applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=\(app)\nExec=/bin/true\n"
            .write(to: applications.appendingPathComponent("io.qactd.\(app).desktop"), atomically: true, encoding: .utf8)
        try """
            [Contacts]
            Directory=\(contacts.path)
            [Shortcuts]
            StaticItems=\(app).plist
            [Launcher]
            DesktopFile=io.qactd.\(app).desktop
            """.write(to: configFolder.appendingPathComponent("\(app).conf"), atomically: true, encoding: .utf8)
    }

    private func start(_ app: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonFixture.qactd)
        process.arguments = ["--app", app, "--log-level", "debug"]
        process.environment = environment
        let logURL = root.appendingPathComponent("\(app).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let handle = try FileHandle(forWritingTo: logURL)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        daemons[app] = process
        let answered = waitUntil(timeout: 15) { self.qactl(["--app", app, "status"]).status == 0 || !process.isRunning }
        XCTAssertTrue(answered && process.isRunning, "qactd --app \(app) did not start:\n\(log(app))", file: file, line: line)
    }

    private func titles(_ listing: [String: Any]) -> [String] {
        (listing["items"] as? [[String: Any]] ?? []).compactMap { ($0["item"] as? [String: Any])?["title"] as? String }
    }

    func testTwoAppsRunSideBySideEachOnItsOwnPaths() throws {
        try writeApp("alpha", favorite: "Ada Alpha", staticType: "AlphaAction")
        try writeApp("beta", favorite: "Bob Beta", staticType: "BetaAction")
        try start("alpha")
        try start("beta")

        // Each daemon found its own configuration, state folder and socket from its name.
        let alpha = try json(qactl(["--app", "alpha", "status", "--json"]))
        let beta = try json(qactl(["status", "--json"], environment: ["QACTD_APP": "beta"]))
        XCTAssertEqual(alpha["app"] as? String, "alpha")
        XCTAssertEqual(beta["app"] as? String, "beta")
        XCTAssertEqual(alpha["configFile"] as? String, configFolder.appendingPathComponent("alpha.conf").path)
        XCTAssertEqual(beta["configFile"] as? String, configFolder.appendingPathComponent("beta.conf").path)
        XCTAssertEqual(alpha["socket"] as? String, socket("alpha"))
        XCTAssertEqual(beta["socket"] as? String, socket("beta"))
        XCTAssertEqual(alpha["stateFile"] as? String, root.appendingPathComponent("state/qactd/alpha/state.json").path)
        XCTAssertEqual(beta["stateFile"] as? String, root.appendingPathComponent("state/qactd/beta/state.json").path)
        XCTAssertTrue(qactl(["--app", "alpha", "status"]).stdout.hasPrefix("qactd@alpha "), qactl(["--app", "alpha", "status"]).stdout)
        XCTAssertTrue(log("alpha").contains("qactd@alpha["), "stderr lines name the app:\n\(log("alpha"))")

        // GetInfo names the instance too.
        let info = try VarlinkClient(unixSocketPath: socket("beta")).call("org.varlink.service.GetInfo")
        XCTAssertEqual(info.objectValue?["product"]?.stringValue, "qactd@beta")

        // Each lists its own contacts and static items, and persists into its own folder.
        XCTAssertEqual(qactl(["--app", "alpha", "resign-active"]).status, 0)
        XCTAssertEqual(qactl(["resign-active"], environment: ["QACTD_APP": "beta"]).status, 0)
        XCTAssertEqual(titles(try json(qactl(["--app", "alpha", "list", "--json"]))), ["AlphaAction title", "Ada Alpha"])
        XCTAssertEqual(titles(try json(qactl(["list", "--app", "beta", "--json"]))), ["BetaAction title", "Bob Beta"])
        for app in ["alpha", "beta"] {
            let state = root.appendingPathComponent("state/qactd/\(app)/state.json")
            XCTAssertTrue(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: state.path) }, "no \(state.path)")
        }

        // Each exports its own desktop entry, whose actions trigger through its own socket.
        for app in ["alpha", "beta"] {
            let exported = root.appendingPathComponent("data/qactd/exports/share/applications/io.qactd.\(app).desktop").path
            XCTAssertTrue(waitUntil(timeout: 10) {
                ((try? String(contentsOfFile: exported, encoding: .utf8)) ?? "").contains("--socket=\(self.socket(app))")
            }, "the export of \(app) does not trigger through its own socket")
            let other = app == "alpha" ? "beta" : "alpha"
            XCTAssertFalse(((try? String(contentsOfFile: exported, encoding: .utf8)) ?? "").contains(socket(other)))
        }

        // A trigger reaches only its own app: each app's stand-in is connected to its own daemon.
        let alphaApp = try BackgroundProcess(
            DaemonFixture.qactl, ["--app", "alpha", "app", "--json"], environment: environment,
            outputFile: root.appendingPathComponent("alpha-app.out"))
        let betaApp = try BackgroundProcess(
            DaemonFixture.qactl, ["app", "--json"], environment: environment.merging(["QACTD_APP": "beta"]) { $1 },
            outputFile: root.appendingPathComponent("beta-app.out"))
        for (name, app) in [("alpha", alphaApp), ("beta", betaApp)] {
            XCTAssertTrue(waitUntil(timeout: 10) { app.jsonLines.first?["event"] as? String == "connected" }, "\(name): \(app.output)")
        }
        let triggered = try json(qactl(["--app", "alpha", "trigger", "2", "--json"]))
        XCTAssertEqual((triggered["item"] as? [String: Any])?["title"] as? String, "Ada Alpha")
        let actions: (BackgroundProcess) -> [String] = { app in
            app.jsonLines.filter { $0["event"] as? String == "action" }.compactMap { ($0["item"] as? [String: Any])?["title"] as? String }
        }
        XCTAssertEqual(actions(alphaApp), ["Ada Alpha"])
        XCTAssertEqual(actions(betaApp), [])
        XCTAssertEqual(try json(qactl(["--app", "beta", "trigger", "1", "--json"]))["handled"] as? Bool, true)
        XCTAssertEqual(actions(betaApp), ["BetaAction title"])
        XCTAssertEqual(actions(alphaApp), ["Ada Alpha"])
        let usage = { (app: String) in try self.json(self.qactl(["--app", app, "status", "--json"]))["usage"] as? [String: Int] ?? [:] }
        XCTAssertEqual(try usage("alpha"), ["FavoriteAction/alpha-1": 1])
        XCTAssertEqual(try usage("beta"), ["BetaAction": 1])

        // qactl apps asks each over its socket.
        var listed = try json(qactl(["apps", "--json"]))["apps"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.map { $0["app"] as? String }, ["alpha", "beta"])
        XCTAssertEqual(listed.map { $0["unit"] as? String }, ["qactd@alpha.service", "qactd@beta.service"])
        XCTAssertEqual(listed.map { $0["answering"] as? Bool }, [true, true])
        XCTAssertEqual(listed.map { $0["items"] as? Int }, [2, 2])
        XCTAssertEqual(listed.map { $0["desktopEntry"] as? String }, ["alpha", "beta"].map {
            root.appendingPathComponent("data/qactd/exports/share/applications/io.qactd.\($0).desktop").path
        })
        let table = qactl(["apps"]).stdout
        XCTAssertTrue(table.contains("alpha  serving  2"), table)

        // Stopping one leaves the other serving; its socket goes, and so does its row.
        daemons["alpha"]?.terminate()
        daemons["alpha"]?.waitUntilExit()
        XCTAssertEqual(daemons["alpha"]?.terminationStatus, 0)
        XCTAssertEqual(qactl(["--app", "alpha", "list"]).status, 69)
        XCTAssertTrue(qactl(["--app", "alpha", "list"]).stderr.contains("systemctl --user start qactd@alpha.socket"))
        XCTAssertEqual(titles(try json(qactl(["--app", "beta", "list", "--json"]))), ["BetaAction title", "Bob Beta"])
        listed = try json(qactl(["apps", "--json"]))["apps"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.map { $0["app"] as? String }, ["beta"])
    }

    /// A socket that accepts connections and never answers (as a socket unit does whose service
    /// cannot start) and one nobody listens on are listed as not answering, in bounded time.
    func testAppsListsASilentSocketAsNotAnsweringWithoutHanging() throws {
        try writeApp("beta", favorite: "Bob Beta", staticType: "BetaAction")
        try start("beta")
        // A socket that listens and never accepts, and the file a daemon killed with SIGKILL leaves.
        let silent = try boundUnixSocket(at: socket("silent"), backlog: 8)
        defer { close(silent) }
        close(try boundUnixSocket(at: socket("stale"), backlog: 8))
        let started = Date()
        let result = qactl(["apps", "--json", "--timeout", "0.5"])
        let elapsed = Date().timeIntervalSince(started)
        let listed = try json(result)["apps"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.map { $0["app"] as? String }, ["beta", "silent", "stale"])
        XCTAssertEqual(listed.map { $0["answering"] as? Bool }, [true, false, false])
        XCTAssertTrue((listed[1]["problem"] as? String ?? "").contains("did not answer within 500 ms"), "\(listed[1])")
        XCTAssertTrue((listed[2]["problem"] as? String ?? "").contains("Cannot connect"), "\(listed[2])")
        // The silent one costs its timeout, once: nothing waits longer.
        XCTAssertLessThan(elapsed, 10, "qactl apps took \(elapsed) s")
        XCTAssertTrue(qactl(["apps"]).stdout.contains("silent  not answering"), qactl(["apps"]).stdout)
    }

    func testANameThatIsNotOneAndAMissingConfigurationAreRefused() throws {
        for name in ["../alpha", ".hidden", "-x", "a b", "qactd", ""] {
            let daemon = DaemonFixture.run(DaemonFixture.qactd, ["--app=\(name)"], environment: environment)
            XCTAssertEqual(daemon.status, 64, "qactd --app '\(name)': \(daemon.stderr)")
            // An empty one is swift-argument-parser's "Missing value".
            XCTAssertTrue(daemon.stderr.contains(name.isEmpty ? "--app" : "The app name \"\(name)\""), daemon.stderr)
            XCTAssertEqual(qactl(["--app=\(name)", "list"]).status, 64, "qactl --app '\(name)'")
        }
        let fromEnvironment = qactl(["list"], environment: ["QACTD_APP": "a/b"])
        XCTAssertEqual(fromEnvironment.status, 64)
        XCTAssertTrue(fromEnvironment.stderr.contains("QACTD_APP: The app name \"a/b\""), fromEnvironment.stderr)
        XCTAssertEqual(qactl(["list", "--app", "alpha", "--socket", "/x"]).status, 64)

        // An app with no NAME.conf does not fall back to the plain daemon's configuration.
        try "[Shortcuts]\nDisplayLimit=2\n".write(to: configFolder.appendingPathComponent("qactd.conf"), atomically: true, encoding: .utf8)
        let missing = DaemonFixture.run(DaemonFixture.qactd, ["--app", "gamma"], environment: environment)
        XCTAssertEqual(missing.status, 78, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("App \"gamma\": No configuration file \"\(configFolder.path)/gamma.conf\""), missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: socket("gamma")))
    }

    /// Removing an app's configuration takes its launchers with it: the daemon that finds no
    /// NAME.conf removes the exported entry and the pinned launchers naming its socket (and
    /// nothing else) before it refuses to start; with the file back, they come back, pins included.
    func testAnAppWhoseConfigurationIsRemovedTakesItsLaunchersWithIt() throws {
        try writeApp("delta", favorite: "Dora Delta", staticType: "DeltaAction")
        try writeApp("beta", favorite: "Bob Beta", staticType: "BetaAction")
        try start("delta")
        try start("beta")
        XCTAssertEqual(qactl(["--app", "delta", "resign-active"]).status, 0)
        XCTAssertEqual(qactl(["--app", "beta", "resign-active"]).status, 0)
        let pinned = qactl(["--app", "delta", "pin", "--type", "DeltaAction"])
        XCTAssertEqual(pinned.status, 0, pinned.stderr)
        XCTAssertEqual(qactl(["--app", "beta", "pin", "--type", "BetaAction"]).status, 0)
        let applications = root.appendingPathComponent("data/qactd/exports/share/applications").path
        func launchers(_ app: String) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: applications)) ?? [])
                .filter { $0.hasPrefix("io.qactd.\(app).") }.sorted()
        }
        XCTAssertTrue(waitUntil(timeout: 10) { launchers("delta").count == 2 && launchers("beta").count == 2 },
                      "exported entry and pinned launcher of each app: \(launchers("delta")) \(launchers("beta"))")
        let delta = launchers("delta")
        let mine = applications + "/io.qactd.delta.notes.desktop"
        try "[Desktop Entry]\nType=Application\nName=Mine\nExec=/bin/true\n".write(toFile: mine, atomically: true, encoding: .utf8)

        daemons["delta"]?.terminate()
        daemons["delta"]?.waitUntilExit()
        let configuration = configFolder.appendingPathComponent("delta.conf")
        let saved = try String(contentsOf: configuration, encoding: .utf8)
        try FileManager.default.removeItem(at: configuration)
        let refused = DaemonFixture.run(DaemonFixture.qactd, ["--app", "delta"], environment: environment)
        XCTAssertEqual(refused.status, 78, refused.stderr)
        XCTAssertEqual(launchers("delta"), ["io.qactd.delta.notes.desktop"], "only the file qactd did not write stays")
        XCTAssertEqual(launchers("beta").count, 2, "another app's launchers stay")
        XCTAssertEqual(qactl(["--app", "beta", "status"]).status, 0, "the other app keeps serving")

        try saved.write(to: configuration, atomically: true, encoding: .utf8)
        try start("delta")
        XCTAssertTrue(waitUntil(timeout: 10) { launchers("delta") == (delta + ["io.qactd.delta.notes.desktop"]).sorted() },
                      "back with the configuration: \(launchers("delta"))")
        XCTAssertEqual((try json(qactl(["--app", "delta", "pins", "--json"])))["pins"].map { ($0 as? [Any])?.count }, 1)
    }
}
