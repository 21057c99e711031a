import Foundation
import TestSupport
import XCTest

/// An app's own quick actions, as an app developer uses them: the library's example app
/// publishes its recent files through the real daemon, a pick reaches it while it runs and
/// starts it when it does not, the items outlive a restart, and a hostile client changes nothing.
final class AppItemsEndToEndTests: XCTestCase {
    static var exampleApp: String { DaemonFixture.binDirectory.appendingPathComponent("qactd-example-app").path }
    private let files = ["/tmp/qactd-notes.txt", "/tmp/qactd-todo.txt", "/tmp/qactd-ideas.txt"]

    private func dynamicTitles(_ fixture: DaemonFixture) throws -> [String] {
        let listing = try fixture.qactl(["list", "--json"]).json()
        let rows = listing["items"] as? [[String: Any]] ?? []
        return rows.filter { $0["source"] as? String == "dynamic" }.compactMap { ($0["item"] as? [String: Any])?["title"] as? String }
    }

    func testTheExampleAppPublishesItsItemsAndOpensThePickedOneRunningOrNot() throws {
        let fixture = try DaemonFixture()
        // The launched app's output goes to the daemon's log, which the test reads.
        try fixture.writeConfiguration("""
            [Shortcuts]
            DisplayLimit=10
            [App]
            LaunchCommand=\(Self.exampleApp) org.example.Editor \(files.joined(separator: " "))
            """)
        try fixture.start()
        let app = try BackgroundProcess(
            Self.exampleApp, ["org.example.Editor"] + files, environment: fixture.environment,
            outputFile: fixture.root.appendingPathComponent("app.out"))
        XCTAssertTrue(waitUntil(timeout: 15) { app.output.contains("published 3 items") }, app.output + fixture.log())
        XCTAssertEqual(try dynamicTitles(fixture), ["Open qactd-notes.txt", "Open qactd-todo.txt", "Open qactd-ideas.txt"])

        // Running: the pick reaches the app through its connection, with the item's userInfo.
        XCTAssertTrue(waitUntil(timeout: 15) { fixture.qactl(["status", "--json"]).stdout.contains(#""appConnected":true"#) })
        let warm = try fixture.qactl(["trigger", "--type", "recent-1", "--json"]).json()
        XCTAssertEqual(warm["delivery"] as? String, "running", fixture.log())
        XCTAssertEqual(warm["handled"] as? Bool, true)
        XCTAssertTrue(waitUntil(timeout: 15) { app.output.contains("opening /tmp/qactd-todo.txt\n") }, app.output)

        // Closed: a pick starts it (its LaunchCommand) and it receives the item at connect.
        app.process.terminate()
        XCTAssertNotNil(app.waitForExit())
        XCTAssertTrue(waitUntil(timeout: 15) { fixture.qactl(["status", "--json"]).stdout.contains(#""appConnected":false"#) })
        let cold = try fixture.qactl(["trigger", "--type", "recent-2", "--json"]).json()
        XCTAssertEqual(cold["delivery"] as? String, "launch")
        XCTAssertEqual(cold["launchStatus"] as? String, "started", fixture.log())
        XCTAssertTrue(waitUntil(timeout: 15) { fixture.log().contains("opening /tmp/qactd-ideas.txt (at launch)") }, fixture.log())
        if let pid = cold["launchPID"] as? Int { kill(-Int32(pid), SIGTERM) }

        // A restart keeps them.
        XCTAssertEqual(fixture.stop(), 0)
        try fixture.start()
        XCTAssertEqual(try dynamicTitles(fixture), ["Open qactd-notes.txt", "Open qactd-todo.txt", "Open qactd-ideas.txt"])
    }

    /// Wherever the favorites show, the app's own items show: the live quicklist, read with
    /// libdbusmenu's own client, where a click reaches the running app; and the exported
    /// desktop entry's actions.
    func testTheAppsItemsShowInTheQuicklistAndTheExportedEntry() throws {
        for tool in ["/usr/bin/dbus-daemon", "/usr/bin/python3"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw unavailable("\(tool) is missing (scripts/install-deps --test installs it)")
        }
        guard DaemonFixture.run("/usr/bin/python3", ["-c", "import gi; gi.require_version('Dbusmenu', '0.4')"]).status == 0 else {
            throw unavailable("gir1.2-dbusmenu-glib-0.4 is missing (scripts/install-deps --test installs it)")
        }
        let titles = ["Open qactd-notes.txt", "Open qactd-todo.txt", "Open qactd-ideas.txt"]
        for dynamicItems in ["quicklist", "desktop-entry"] {
            let fixture = try DaemonFixture(extraConfiguration: """
                [Launcher]
                DesktopFile=io.qactd.Test.desktop
                DynamicItems=\(dynamicItems)
                [Shortcuts]
                DisplayLimit=10
                """)
            let exported = try fixture.installAppEntry("[Desktop Entry]\nType=Application\nName=Test Editor\nExec=/bin/true\nIcon=accessories-text-editor\n")
            let bus = try PrivateSessionBus(in: fixture.root)
            fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            fixture.daemonEnvironment["XDG_RUNTIME_DIR"] = fixture.root.appendingPathComponent("runtime").path
            try fixture.start()
            let app = try BackgroundProcess(
                Self.exampleApp, ["io.qactd.Test"] + files, environment: fixture.environment,
                outputFile: fixture.root.appendingPathComponent("app.out"))
            XCTAssertTrue(waitUntil(timeout: 15) { app.output.contains("published 3 items") }, app.output + fixture.log())

            if dynamicItems == "desktop-entry" {
                // Each item is an action of the exported entry, after the static ones, in order.
                XCTAssertTrue(waitUntil(timeout: 15) {
                    let text = (try? String(contentsOfFile: exported, encoding: .utf8)) ?? ""
                    let names = text.split(separator: "\n").filter { $0.hasPrefix("Name=Open ") }.map { String($0.dropFirst("Name=".count)) }
                    return names == titles
                }, (try? String(contentsOfFile: exported, encoding: .utf8)) ?? "no export: \(fixture.log())")
                continue
            }
            let quicklist = { ((try? fixture.qactl(["status", "--json"]).json())?["quicklist"] as? [String: Any]) ?? [:] }
            XCTAssertTrue(waitUntil(timeout: 15) { quicklist()["items"] as? Int == 3 }, "\(quicklist())\n\(fixture.log())")
            let busName = try XCTUnwrap(quicklist()["busName"] as? String)
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            let menu = try BackgroundProcess(
                "/usr/bin/python3", [QuicklistEndToEndTests.clientScript, "follow", busName, QuicklistEndToEndTests.menuPath],
                environment: environment, outputFile: fixture.root.appendingPathComponent("menu.out"), withInput: true)
            XCTAssertTrue(waitUntil(timeout: 15) { menu.jsonLines.last { $0["labels"] != nil }?["labels"] as? [String] == titles }, menu.output)
            // A click in the dock reaches the running app with the item's userInfo.
            XCTAssertTrue(waitUntil(timeout: 15) { fixture.qactl(["status", "--json"]).stdout.contains(#""appConnected":true"#) })
            menu.send("click Open qactd-todo.txt")
            XCTAssertTrue(waitUntil(timeout: 15) { app.output.contains("opening /tmp/qactd-todo.txt\n") }, app.output + menu.output)
        }
    }

    /// The README's "For app developers" snippets: the Swift one is the example app's code
    /// (run by the test above; its lines, in order), the Python one runs as written against the daemon.
    func testTheReadmeSnippetsAreTheExampleAndRun() throws {
        let readme = try String(contentsOf: DaemonFixture.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try XCTUnwrap(readme.components(separatedBy: "## For app developers\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        let swift = try XCTUnwrap(ConfigurationExamplesEndToEndTests.fencedBlocks(section, language: "swift").first?.text)
        let example = try String(contentsOf: DaemonFixture.repository.appendingPathComponent("Examples/qactd-example-app/main.swift"), encoding: .utf8)
        // Line for line, in order, with the example's other lines between.
        var rest = example.split(separator: "\n", omittingEmptySubsequences: false)[...]
        for line in swift.split(separator: "\n") {
            guard let found = rest.firstIndex(of: line) else { return XCTFail("the README's line is not the example's next: \(line)") }
            rest = rest[(found + 1)...]
        }

        let python = try XCTUnwrap(ConfigurationExamplesEndToEndTests.fencedBlocks(section, language: "python").first?.text)
        let fixture = try DaemonFixture(extraConfiguration: "[Shortcuts]\nDisplayLimit=10")
        try fixture.start()
        let script = fixture.root.appendingPathComponent("snippet.py")
        try python.write(to: script, atomically: true, encoding: .utf8)
        var environment = fixture.environment
        environment["PYTHONPATH"] = DaemonFixture.repository.appendingPathComponent("python").path
        let app = try BackgroundProcess("/usr/bin/python3", [script.path], environment: environment, outputFile: fixture.root.appendingPathComponent("py.out"))
        XCTAssertTrue(waitUntil(timeout: 15) { (try? self.dynamicTitles(fixture).count) == 3 }, app.output + fixture.log())
        XCTAssertEqual(try dynamicTitles(fixture), ["Open notes.txt", "Open todo.txt", "Open ideas.txt"])
        XCTAssertTrue(waitUntil(timeout: 15) { fixture.qactl(["status", "--json"]).stdout.contains(#""appConnected":true"#) })
        let warm = try fixture.qactl(["trigger", "--type", "recent-1", "--json"]).json()
        XCTAssertEqual(warm["handled"] as? Bool, true, fixture.log())
        XCTAssertTrue(waitUntil(timeout: 15) { app.output.contains("opening /tmp/todo.txt\n") }, app.output)
    }

    /// The Python module's calls besides `set_items`, as an app makes them: a push puts an item
    /// first and replaces its type's, a removal takes items out, a reported use ranks an item, and
    /// a refusal is a `QuickActionsError` naming the Varlink error and the field.
    func testThePythonModulePushesRemovesReportsAndNamesRefusals() throws {
        let fixture = try DaemonFixture(extraConfiguration: "[Shortcuts]\nDisplayLimit=10\nMaxAppItems=3")
        try fixture.start()
        let script = fixture.root.appendingPathComponent("calls.py")
        try """
            import json, qactd
            app = qactd.QuickActionsApp("org.example.Editor", start_instance=False)
            app.set_items([qactd.item("a", "A"), qactd.item("b", "B")])
            app.push_item(qactd.item("c", "C", subtitle="sub", icon=("system", "compose")))
            app.push_item(qactd.item("a", "A again"))
            print("after pushes", json.dumps([i["type"] for i in app.items()]))
            reply = app.push_item(qactd.item("d", "D"))
            print("made room", json.dumps(reply["removed"]))
            app.remove_items(["c"])
            app.report_item_used("a")
            print("after removal", json.dumps([(i["type"], i["title"]) for i in app.items()]))
            for call, arguments in [(app.push_item, qactd.item("e", "")), (app.report_item_used, "zz"),
                                    (app.set_items, [qactd.item(str(n), "N") for n in range(4)])]:
                try:
                    call(arguments)
                    print("accepted", arguments)
                except qactd.QuickActionsError as error:
                    print("refused", error.name, json.dumps(error.parameters.get("field")))
            """.write(to: script, atomically: true, encoding: .utf8)
        var environment = fixture.environment
        environment["PYTHONPATH"] = DaemonFixture.repository.appendingPathComponent("python").path
        let result = DaemonFixture.run("/usr/bin/python3", [script.path], environment: environment)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertEqual(result.stdout.split(separator: "\n").map(String.init), [
            #"after pushes ["a", "c", "b"]"#,
            #"made room ["b"]"#,
            #"after removal [["d", "D"], ["a", "A again"]]"#,
            #"refused InvalidItem "item.title""#,
            #"refused NoSuchItem null"#,
            #"refused TooManyItems null"#,
        ], result.stderr)
    }

    /// The Python module's GTK 4 example, a real GTK app under Xvfb: it publishes its recent
    /// files, a pick opens one while it runs, and a pick starts it when it does not.
    func testTheGTKExampleAppPublishesAndOpensThePickedFile() throws {
        for tool in ["/usr/bin/xvfb-run", "/usr/bin/python3", "/usr/bin/dbus-run-session"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw unavailable("\(tool) is missing (scripts/install-deps --test installs it)")
        }
        guard DaemonFixture.run("/usr/bin/python3", ["-c", "import gi; gi.require_version('Gtk', '4.0'); from gi.repository import Gtk"]).status == 0 else {
            throw unavailable("GTK 4's introspection data is missing (gir1.2-gtk-4.0)")
        }
        let example = DaemonFixture.repository.appendingPathComponent("python/examples/recent_files.py").path
        let command = ["/usr/bin/dbus-run-session", "--", "/usr/bin/xvfb-run", "-a", "/usr/bin/python3", example, "org.example.Notes"] + files
        let fixture = try DaemonFixture()
        try fixture.writeConfiguration("""
            [Shortcuts]
            DisplayLimit=10
            [App]
            LaunchCommand=\(command.joined(separator: " "))
            """)
        try fixture.start()
        // Started as a process group of its own (as `Process` starts every child), so the app,
        // Xvfb and the bus end together.
        let app = try BackgroundProcess(command[0], Array(command.dropFirst()), environment: fixture.environment, outputFile: fixture.root.appendingPathComponent("gtk.out"))
        XCTAssertTrue(waitUntil(timeout: 30) { app.output.contains("published 3 items") }, app.output + fixture.log())
        XCTAssertEqual(try dynamicTitles(fixture), ["Open qactd-notes.txt", "Open qactd-todo.txt", "Open qactd-ideas.txt"])
        XCTAssertTrue(waitUntil(timeout: 15) { fixture.qactl(["status", "--json"]).stdout.contains(#""appConnected":true"#) })
        let warm = try fixture.qactl(["trigger", "--type", "recent-0", "--json"]).json()
        XCTAssertEqual(warm["handled"] as? Bool, true, fixture.log())
        XCTAssertTrue(waitUntil(timeout: 15) { app.output.contains("opening /tmp/qactd-notes.txt\n") }, app.output)

        kill(-app.process.processIdentifier, SIGTERM)
        XCTAssertNotNil(app.waitForExit())
        XCTAssertTrue(waitUntil(timeout: 15) { fixture.qactl(["status", "--json"]).stdout.contains(#""appConnected":false"#) }, app.output)
        let cold = try fixture.qactl(["trigger", "--type", "recent-2", "--json"]).json()
        XCTAssertEqual(cold["launchStatus"] as? String, "started", fixture.log())
        XCTAssertTrue(waitUntil(timeout: 30) { fixture.log().contains("opening /tmp/qactd-ideas.txt (at launch)") }, fixture.log())
        // The launched app runs in a session of its own (the daemon's children do).
        if let pid = cold["launchPID"] as? Int { kill(-Int32(pid), SIGTERM) }
    }

    /// Raw calls, as a hostile or careless client sends them: each gets an error and the items
    /// stay as they were.
    func testAHostileClientGetsAnErrorAndChangesNothing() throws {
        let fixture = try DaemonFixture(extraConfiguration: "[Shortcuts]\nDisplayLimit=10\nMaxAppItems=5")
        try fixture.start()
        let good = #"{"method":"io.qactd.QuickActions.SetItems","parameters":{"items":[{"type":"a","title":"A","icon":{"kind":"themed","name":"document-open"}}]}}"#
        XCTAssertTrue(try rawCall(fixture, Data(good.utf8)).contains(#""count":1"#))
        let itemsCall = Data(#"{"method":"io.qactd.QuickActions.Items"}"#.utf8)
        let before = try rawCall(fixture, itemsCall)

        let item = #"{"type":"b","title":"B"}"#
        // Icon files: a 10 MB PNG, a FIFO (which must not hang the daemon), a text file, one missing.
        let images = fixture.root.appendingPathComponent("icons")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        try (Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data(count: 10 << 20)).write(to: images.appendingPathComponent("big.png"))
        XCTAssertEqual(mkfifo(images.appendingPathComponent("fifo.png").path, 0o600), 0)
        try Data("not an image".utf8).write(to: images.appendingPathComponent("text.png"))
        func pushIcon(_ name: String) -> Data {
            Data(#"{"method":"io.qactd.QuickActions.PushItem","parameters":{"item":{"type":"b","title":"B","icon":{"kind":"file","name":"\#(images.path)/\#(name)"}}}}"#.utf8)
        }
        let cases: [(String, Data, String)] = [
            ("a 10 MB image file", pushIcon("big.png"), #"names an image of 10485768 bytes; an icon image may be at most 1048576 bytes"#),
            ("a FIFO as the image", pushIcon("fifo.png"), #""field":"item.icon.name""#),
            ("a text file as the image", pushIcon("text.png"), "not a PNG, JPEG or SVG image"),
            ("a missing image", pushIcon("missing.png"), #""field":"item.icon.name""#),
            ("empty title", Data(#"{"method":"io.qactd.QuickActions.SetItems","parameters":{"items":[{"type":"b","title":""}]}}"#.utf8),
             #""field":"items[0].title""#),
            ("too many", Data(#"{"method":"io.qactd.QuickActions.SetItems","parameters":{"items":[\#(Array(repeating: item, count: 6).joined(separator: ","))]}}"#.utf8),
             "io.qactd.QuickActions.TooManyItems"),
            ("bad icon", Data(#"{"method":"io.qactd.QuickActions.PushItem","parameters":{"item":{"type":"b","title":"B","icon":{"kind":"themed","name":"../x"}}}}"#.utf8),
             #""field":"item.icon.name""#),
            ("unknown icon kind", Data(#"{"method":"io.qactd.QuickActions.PushItem","parameters":{"item":{"type":"b","title":"B","icon":{"kind":"emoji","name":"x"}}}}"#.utf8),
             "org.varlink.service.InvalidParameter"),
            ("a 10 MB image", Data(#"{"method":"io.qactd.QuickActions.PushItem","parameters":{"item":{"type":"b","title":"B","userInfo":{"image":""#.utf8)
                + Data(repeating: UInt8(ascii: "A"), count: 10 << 20) + Data(#""}}}}"#.utf8),
             "MessageTooLarge"),
            ("invalid UTF-8", Data(#"{"method":"io.qactd.QuickActions.PushItem","parameters":{"item":{"type":"b","title":""#.utf8)
                + Data([0xC3, 0x28, 0xFF]) + Data(#""}}}"#.utf8),
             "error"),
        ]
        for (label, call, expected) in cases {
            let reply = try rawCall(fixture, call)
            XCTAssertTrue(reply.contains(expected), "\(label): \(reply)")
        }
        XCTAssertEqual(try rawCall(fixture, itemsCall), before, "a refused call changes nothing")
        // A flood of pushes stays within MaxAppItems=.
        let flood = (0..<1000).map { #"{"method":"io.qactd.QuickActions.PushItem","parameters":{"item":{"type":"f\#($0)","title":"F"}}}"# }
        let replies = try rawCall(fixture, Data(flood.joined(separator: "\0").utf8))
        XCTAssertEqual(replies.components(separatedBy: #""count":5"#).count - 1, 997, "every push is answered, the list at its cap")
        let items = try rawCall(fixture, itemsCall)
        XCTAssertEqual(items.components(separatedBy: #""type":"#).count - 1, 5, items)
        XCTAssertTrue(items.contains(#""type":"f999""#), items)
    }

    func testAnotherUserCannotSetTheItems() throws {
        let fixture = try DaemonFixture.startedReachableByAnotherUser()
        let call = #"{"method":"io.qactd.QuickActions.SetItems","parameters":{"items":[{"type":"x","title":"Intruder"}]}}"#
        let reply = try rawCall(fixture, Data(call.utf8), asUser: 65534)
        XCTAssertTrue(reply.contains("org.varlink.service.PermissionDenied"), reply)
        XCTAssertEqual(try rawCall(fixture, Data(#"{"method":"io.qactd.QuickActions.Items"}"#.utf8)), #"{"parameters":{"items":[]}}"#)
    }

    /// Sends the calls' bytes (NUL between calls) on one connection and returns the replies'
    /// text, NUL between replies (what came before the daemon closed, if it did).
    private func rawCall(_ fixture: DaemonFixture, _ call: Data, asUser uid: Int? = nil) throws -> String {
        let file = fixture.root.appendingPathComponent("call-\(UUID().uuidString.prefix(8))")
        try call.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            calls = open(sys.argv[2], "rb").read() + b"\\0"
            try:
                s.sendall(calls)
            except OSError:
                pass
            reply = b""
            while reply.count(b"\\0") < calls.count(b"\\0"):
                try:
                    chunk = s.recv(65536)
                except OSError:
                    break
                if not chunk:
                    break
                reply += chunk
            sys.stdout.buffer.write(reply.rstrip(b"\\0"))
            """
        let python = ["/usr/bin/python3", "-c", script, fixture.socketPath, file.path]
        let command = uid.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] + python } ?? python
        let result = DaemonFixture.run(command[0], Array(command.dropFirst()))
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }
}
