import Foundation
import TestSupport
import XCTest

/// Triggering and delivering actions to the app, end to end: the built qactd, the built qactl
/// as the app, and the reference Python Varlink client as the app.
final class AppDeliveryEndToEndTests: XCTestCase {
    private func appConnected(_ fixture: DaemonFixture) -> Bool {
        ((try? fixture.qactl(["status", "--json"]).json())?["appConnected"] as? Bool) == true
    }

    /// The app printed its first line, so its `Connect` was served: it is the connected app now.
    private func waitForConnected(_ app: BackgroundProcess) -> Bool {
        waitUntil(timeout: 10) { app.jsonLines.first?["event"] as? String == "connected" }
    }

    private func startApp(_ fixture: DaemonFixture, _ name: String, _ arguments: [String] = []) throws -> BackgroundProcess {
        try BackgroundProcess(
            DaemonFixture.qactl, ["app", "--json"] + arguments, environment: fixture.environment,
            outputFile: fixture.root.appendingPathComponent("\(name).out"))
    }

    func testWarmDeliveryReachesTheRunningAppAndItsAnswerComesBack() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let app = try startApp(fixture, "app")
        XCTAssertTrue(waitForConnected(app), app.output)
        XCTAssertEqual(app.jsonLines.first?["event"] as? String, "connected")

        let favorite = try fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "grace-hopper", "--json"]).json()
        XCTAssertEqual(favorite["delivery"] as? String, "running")
        XCTAssertEqual(favorite["handled"] as? Bool, true)
        let token = try XCTUnwrap(favorite["token"] as? String)
        XCTAssertTrue(waitUntil(timeout: 10) { app.jsonLines.contains { $0["token"] as? String == token } }, app.output)
        let delivered = try XCTUnwrap(app.jsonLines.first { $0["token"] as? String == token })
        XCTAssertEqual((delivered["contact"] as? [String: Any])?["identifier"] as? String, "grace-hopper")
        XCTAssertEqual((delivered["item"] as? [String: Any])?["type"] as? String, "FavoriteAction")
        XCTAssertEqual(delivered["handled"] as? Bool, true)

        let human = fixture.qactl(["trigger", "1"])
        XCTAssertEqual(human.status, 0)
        XCTAssertTrue(human.stdout.contains("to the running app, handled"), human.stdout)

        // Complete with a token nobody waits for names the token.
        let python = pythonCall(fixture, "Complete", #"{"token": "no-such-token", "handled": true}"#)
        let answer = python.stdout + python.stderr
        XCTAssertTrue(answer.contains("io.qactd.QuickActions.NoSuchAction"), answer)
        XCTAssertTrue(answer.contains("no-such-token"), answer)

        let status = try fixture.qactl(["status", "--json"]).json()
        XCTAssertEqual(status["launched"] as? Bool, true)
        XCTAssertEqual((status["usage"] as? [String: Int])?["SearchAction"], 1)
    }

    func testTheVersionAnAppConnectsWithMakesOlderFavoritesStaleUntilItResignsActive() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active", "--app-version", "1.0"]).status, 0)
        // The updated app connects with 2.0 and resigns active after its first action.
        let updated = try startApp(fixture, "updated", ["--app-version", "2.0", "--resign-after", "1"])
        XCTAssertTrue(waitForConnected(updated), updated.output)
        let stale = try fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "ada-lovelace", "--json"]).json()
        XCTAssertEqual(stale["stale"] as? Bool, true)
        XCTAssertEqual(stale["handled"] as? Bool, true)
        XCTAssertEqual(updated.waitForExit(), 0, updated.output)
        let events = updated.jsonLines
        XCTAssertEqual(events.first { $0["event"] as? String == "action" }?["stale"] as? Bool, true, updated.output)
        let resigned = try XCTUnwrap(events.first { $0["event"] as? String == "resignActive" }?["resignActive"] as? [String: Any])
        XCTAssertEqual(resigned["changed"] as? Bool, true, "the app's ResignActive recomputed the set for 2.0")
        XCTAssertTrue(waitUntil(timeout: 10) { !self.appConnected(fixture) })
        let fresh = try fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "ada-lovelace", "--json"]).json()
        XCTAssertEqual(fresh["stale"] as? Bool, false)
        XCTAssertEqual(fresh["delivery"] as? String, "launch", "the app exited")
    }

    func testTheNewestAppTakesOverAndAnswersNotHandled() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let first = try startApp(fixture, "first")
        XCTAssertTrue(waitForConnected(first), first.output)
        let second = try startApp(fixture, "second", ["--not-handled"])
        // The older app's stream ends with AppReplaced and it exits 1, naming the error.
        XCTAssertEqual(first.waitForExit(), 1, first.output)
        XCTAssertTrue(first.output.contains("io.qactd.QuickActions.AppReplaced"), first.output)
        XCTAssertTrue(waitUntil(timeout: 10) { second.jsonLines.first?["event"] as? String == "connected" }, second.output)

        let reply = try fixture.qactl(["trigger", "1", "--json"]).json()
        XCTAssertEqual(reply["delivery"] as? String, "running")
        XCTAssertEqual(reply["handled"] as? Bool, false)
        XCTAssertTrue(second.jsonLines.contains { $0["event"] as? String == "action" && $0["handled"] as? Bool == false }, second.output)
        XCTAssertFalse(first.jsonLines.contains { $0["event"] as? String == "action" })
        XCTAssertTrue(appConnected(fixture))
        second.process.terminate()
        XCTAssertTrue(waitUntil(timeout: 10) { !self.appConnected(fixture) }, "a closed Connect stream disconnects the app")
    }

    func testASilentAppYieldsAppNotRespondingAndADisconnectFailsTheActionInFlight() throws {
        let fixture = try DaemonFixture(extraConfiguration: "[App]\nResponseTimeoutSec=60")
        try fixture.start()
        let silent = try startApp(fixture, "silent", ["--no-answer"])
        XCTAssertTrue(waitForConnected(silent), silent.output)
        let waiting = try BackgroundProcess(
            DaemonFixture.qactl, ["trigger", "1", "--json"], environment: fixture.environment,
            outputFile: fixture.root.appendingPathComponent("trigger.out"))
        XCTAssertTrue(waitUntil(timeout: 10) { silent.jsonLines.contains { $0["event"] as? String == "action" } }, silent.output)
        // While that trigger waits for the app, everyone else is served.
        XCTAssertEqual(fixture.qactl(["status"]).status, 0)
        XCTAssertEqual(fixture.qactl(["list"]).status, 0)
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertTrue(waiting.process.isRunning, "the trigger still waits for the app's answer")

        // The app goes away mid-action: the trigger fails at once with AppDisconnected and the token.
        silent.process.terminate()
        XCTAssertEqual(waiting.waitForExit(), 1, waiting.output)
        let failure = try XCTUnwrap(waiting.jsonLines.first)
        XCTAssertEqual(failure["error"] as? String, "io.qactd.QuickActions.AppDisconnected")
        XCTAssertNotNil((failure["parameters"] as? [String: Any])?["token"] as? String)

        // With a short timeout a silent app yields AppNotResponding.
        fixture.stop()
        try fixture.writeConfiguration("[App]\nResponseTimeoutSec=300ms")
        try fixture.start()
        let stillSilent = try startApp(fixture, "silent2", ["--no-answer"])
        XCTAssertTrue(waitForConnected(stillSilent), stillSilent.output)
        let timedOut = fixture.qactl(["trigger", "1", "--json"])
        XCTAssertEqual(timedOut.status, 1)
        XCTAssertEqual(try timedOut.json()["error"] as? String, "io.qactd.QuickActions.AppNotResponding")
        XCTAssertTrue(fixture.qactl(["trigger", "1"]).stderr.contains("did not answer within 1 s"))
        XCTAssertTrue(appConnected(fixture), "a slow app stays connected")

        // An app that answers after the timeout is told so and keeps running.
        let late = try startApp(fixture, "late", ["--answer-delay", "1500"])
        XCTAssertTrue(waitForConnected(late), late.output)
        XCTAssertEqual(stillSilent.waitForExit(), 1, "replaced")
        let tooLate = fixture.qactl(["trigger", "2", "--json"])
        XCTAssertEqual(try tooLate.json()["error"] as? String, "io.qactd.QuickActions.AppNotResponding")
        XCTAssertTrue(waitUntil(timeout: 10) { late.output.contains("no longer waits for action") }, late.output)
        XCTAssertTrue(late.process.isRunning, late.output)
        XCTAssertTrue(appConnected(fixture))
    }

    func testColdDeliveryLaunchesTheAppWhichGetsThePendingItemExactlyOnce() throws {
        let fixture = try DaemonFixture()
        // The launched app's output goes to the daemon's log; qactl finds the daemon through QACTD_SOCKET.
        try fixture.writeConfiguration("[App]\nLaunchCommand=\(DaemonFixture.qactl) app --json --resign-after 1")
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)

        let cold = try fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "ada-lovelace", "--json"]).json()
        XCTAssertEqual(cold["delivery"] as? String, "launch")
        XCTAssertEqual(cold["launchStatus"] as? String, "started")
        XCTAssertEqual(cold["handled"] as? Bool, false)
        let pid = try XCTUnwrap(cold["launchPID"] as? Int)
        // The app connects, is handed the item, reports resign-active and exits; the daemon reaps it.
        XCTAssertTrue(waitUntil(timeout: 15) { fixture.log().contains("The launch command (pid \(pid)) exited with status 0") }, fixture.log())
        XCTAssertTrue(waitUntil(timeout: 5) { !FileManager.default.fileExists(atPath: "/proc/\(pid)") }, "no zombie is left behind")
        let launchItems = fixture.log().split(separator: "\n").filter { $0.contains(#""event":"launchItem""#) }
        XCTAssertEqual(launchItems.count, 1, fixture.log())
        XCTAssertTrue(launchItems.first?.contains(#""identifier":"ada-lovelace""#) == true, fixture.log())

        // The pending item was consumed: the next app that connects gets none.
        let later = try startApp(fixture, "later", ["--resign-after", "1"])
        XCTAssertTrue(waitForConnected(later), later.output)
        let triggered = try fixture.qactl(["trigger", "1", "--json"]).json()
        XCTAssertEqual(triggered["delivery"] as? String, "running")
        XCTAssertEqual(later.waitForExit(), 0, later.output)
        XCTAssertEqual(later.jsonLines.map { $0["event"] as? String }, ["connected", "action", "resignActive"], later.output)
    }

    func testThePendingLaunchItemSurvivesARestartAndTheNewestTriggerWins() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let first = try fixture.qactl(["trigger", "1", "--json"]).json()
        XCTAssertEqual(first["delivery"] as? String, "launch")
        XCTAssertEqual(first["launchStatus"] as? String, "notConfigured")
        XCTAssertEqual(try fixture.qactl(["trigger", "2", "--json"]).json()["delivery"] as? String, "launch")
        XCTAssertTrue(fixture.qactl(["trigger", "2"]).stdout.contains("no LaunchCommand configured"))
        XCTAssertEqual(fixture.stop(), 0)
        try fixture.start()
        let waiting = try fixture.qactl(["status", "--json"]).json()
        XCTAssertEqual((waiting["pendingLaunchItem"] as? [String: Any])?["type"] as? String, "ShareAction", "status shows the restored pending item")
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("Share (ShareAction), for the app's next launch"))

        // The reference Python client is the app: the first Connect reply carries the newest item.
        let connectTwice = """
            import json, varlink, sys
            client = varlink.Client(address="unix:" + sys.argv[1])
            for attempt in range(2):
                with client.open("io.qactd.QuickActions") as app:
                    first = next(app.Connect(appVersion="9.9", _more=True))
                    print(json.dumps(first, sort_keys=True))
            """
        let result = DaemonFixture.run("/usr/bin/env", ["python3", "-c", connectTwice, fixture.socketPath], environment: fixture.environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let replies = result.stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        XCTAssertEqual(replies.count, 2, result.stdout)
        XCTAssertEqual((replies.first?["pendingItem"] as? [String: Any])?["type"] as? String, "ShareAction", result.stdout)
        XCTAssertNil(replies.last?["pendingItem"] as? [String: Any], "handed over exactly once: \(result.stdout)")
        let status = try fixture.qactl(["status", "--json"]).json()
        XCTAssertEqual(status["launched"] as? Bool, true)
        XCTAssertEqual(status["appVersion"] as? String, "9.9")
        XCTAssertNil(status["pendingLaunchItem"] as? [String: Any], "consumed by the first Connect")
        // The handover is persisted: a restart does not bring the item back.
        XCTAssertEqual(fixture.stop(), 0)
        let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.stateFile)) as? [String: Any]
        XCTAssertNil(saved?["pendingLaunchItem"] as? [String: Any])
        XCTAssertEqual(saved?["launched"] as? Bool, true)
    }

    func testTheLaunchCommandGetsTheItemOnlyThroughItsEnvironmentNeverAShell() throws {
        let fixture = try DaemonFixture()
        let marker = fixture.root.appendingPathComponent("pwned")
        // A favorite whose identifier and name are shell syntax: quotes, $(), backticks, a newline.
        let evilIdentifier = "x'\"; touch \(marker.path); $(touch \(marker.path))`touch \(marker.path)`\nline2"
        let evilName = "Eve $(touch \(marker.path)) \"quoted\" 'single'\nSecond line"
        let card: [String: Any] = ["identifier": evilIdentifier, "name": evilName, "favorite": true]
        try fixture.write(contact: "personal/eve.json", String(decoding: try JSONSerialization.data(withJSONObject: card), as: UTF8.self))
        let dump = fixture.root.appendingPathComponent("dump.py")
        let dumpFile = fixture.root.appendingPathComponent("dump.json")
        try """
            import json, os, sys
            inherited = {}
            for name in os.listdir("/proc/self/fd"):
                try: inherited[name] = os.readlink("/proc/self/fd/" + name)
                except OSError: pass  # the listing's own descriptor, closed by now
            ignored = next(l for l in open("/proc/self/status") if l.startswith("SigIgn:")).split()[1]
            json.dump({"argv": sys.argv[1:], "sigign": int(ignored, 16), "fds": inherited,
                       "env": {k: v for k, v in os.environ.items() if k.startswith("QACTD_") or k in ("NOTIFY_SOCKET", "LISTEN_FDS")}},
                      open(sys.argv[1], "w"))
            """.write(to: dump, atomically: true, encoding: .utf8)
        try fixture.writeConfiguration(#"""
            [App]
            LaunchCommand=python3 \#(dump.path) \#(dumpFile.path) 'two words' "$(touch \#(marker.path))" plain\ escaped
            """#)
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let list = try fixture.qactl(["list", "--all", "--json"]).json()
        let items = try XCTUnwrap(list["items"] as? [[String: Any]])
        // The name's newline folds to a space; the rest of it is kept verbatim in the title.
        XCTAssertTrue(items.contains { (($0["item"] as? [String: Any])?["title"] as? String)?.hasPrefix("Eve $(touch \(marker.path)) \"quoted\"") == true }, "\(items)")

        let reply = fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", evilIdentifier, "--json"])
        XCTAssertEqual(reply.status, 0, reply.stderr)
        XCTAssertEqual(try reply.json()["launchStatus"] as? String, "started", reply.stdout)
        XCTAssertTrue(waitUntil(timeout: 15) { (try? Data(contentsOf: dumpFile))?.isEmpty == false }, fixture.log())
        XCTAssertTrue(waitUntil(timeout: 10) { fixture.log().contains("exited with status 0") }, fixture.log())
        let dumped = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: dumpFile)) as? [String: Any])
        // argv is the configured command split once, with no expansion of any kind.
        XCTAssertEqual(dumped["argv"] as? [String], [dumpFile.path, "two words", "$(touch \(marker.path))", "plain escaped"])
        let environment = try XCTUnwrap(dumped["env"] as? [String: String])
        XCTAssertEqual(environment["QACTD_SHORTCUT_TYPE"], "FavoriteAction")
        XCTAssertEqual(environment["QACTD_CONTACT_IDENTIFIER"], evilIdentifier)
        XCTAssertEqual(environment["QACTD_SOCKET"], fixture.socketPath)
        XCTAssertNil(environment["NOTIFY_SOCKET"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker.path), "nothing reached a shell")
        // Nothing of the daemon's leaks into the app: no client connection (the trigger's own was
        // open while it spawned), no listening socket, no event-loop descriptor.
        let descriptors = try XCTUnwrap(dumped["fds"] as? [String: String])
        let leaked = descriptors.filter { (Int($0.key) ?? 0) > 2 && ($0.value.hasPrefix("socket:") || $0.value.hasPrefix("anon_inode:")) }
        XCTAssertEqual(leaked, [:], "descriptors the launched app inherited: \(descriptors)")
        // The daemon ignores SIGTERM/SIGHUP/SIGINT itself; the app must get them back.
        let ignored = try XCTUnwrap(dumped["sigign"] as? Int)
        for signalNumber in [SIGHUP, SIGINT, SIGTERM] {
            XCTAssertEqual(ignored & (1 << (Int(signalNumber) - 1)), 0, "signal \(signalNumber) is ignored in the launched app")
        }

        // A command that cannot be started is reported, and the item still waits for the app.
        fixture.stop()
        try fixture.writeConfiguration("[App]\nLaunchCommand=/nonexistent/qactd-app --flag")
        try fixture.start()
        let failed = try fixture.qactl(["trigger", "1", "--json"]).json()
        XCTAssertEqual(failed["launchStatus"] as? String, "failed")
        XCTAssertTrue((failed["launchError"] as? String)?.contains("/nonexistent/qactd-app") == true, "\(failed)")
    }

    func testASecondColdTriggerWhileTheLaunchedAppStartsDoesNotLaunchTwice() throws {
        let fixture = try DaemonFixture()
        let gate = fixture.root.appendingPathComponent("gate")
        // An "app" that takes its time to connect: it waits for the gate file, then runs qactl app.
        let slowApp = fixture.root.appendingPathComponent("slow-app.py")
        try """
            import os, sys, time
            deadline = time.monotonic() + 30  # never outlive a failed test for long
            while not os.path.exists(sys.argv[1]):
                if time.monotonic() > deadline:
                    sys.exit(1)
                time.sleep(0.01)
            os.execv(sys.argv[2], [sys.argv[2], "app", "--json", "--resign-after", "1"])
            """.write(to: slowApp, atomically: true, encoding: .utf8)
        try fixture.writeConfiguration("[App]\nLaunchCommand=python3 \(slowApp.path) \(gate.path) \(DaemonFixture.qactl)")
        try fixture.start()
        let first = try fixture.qactl(["trigger", "1", "--json"]).json()
        XCTAssertEqual(first["launchStatus"] as? String, "started")
        let second = try fixture.qactl(["trigger", "2", "--json"]).json()
        XCTAssertEqual(second["launchStatus"] as? String, "alreadyRunning")
        XCTAssertEqual(second["launchPID"] as? Int, first["launchPID"] as? Int)
        _ = FileManager.default.createFile(atPath: gate.path, contents: nil)
        // The one launched app gets the newer item.
        XCTAssertTrue(waitUntil(timeout: 15) { fixture.log().contains("exited with status 0") }, fixture.log())
        let launchItems = fixture.log().split(separator: "\n").filter { $0.contains(#""event":"launchItem""#) }
        XCTAssertEqual(launchItems.count, 1, fixture.log())
        XCTAssertTrue(launchItems.first?.contains(#""type":"ShareAction""#) == true, fixture.log())
        // Once that app has connected (and gone), a cold trigger launches again.
        XCTAssertTrue(waitUntil(timeout: 10) { !self.appConnected(fixture) })
        XCTAssertEqual(try fixture.qactl(["trigger", "1", "--json"]).json()["launchStatus"] as? String, "started")
    }

    func testThePythonReferenceClientIsTheAppForWarmDelivery() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        // Connect on one connection; answer each action with Complete on another, handled false for Search.
        let app = """
            import json, varlink, sys
            client = varlink.Client(address="unix:" + sys.argv[1])
            with client.open("io.qactd.QuickActions") as stream, client.open("io.qactd.QuickActions") as answers:
                for reply in stream.Connect(appVersion="1.0", _more=True):
                    print(json.dumps(reply, sort_keys=True), flush=True)
                    if reply.get("token"):
                        answers.Complete(token=reply["token"], handled=reply["action"]["type"] != "SearchAction")
            """
        let python = try BackgroundProcess(
            "/usr/bin/env", ["python3", "-c", app, fixture.socketPath], environment: fixture.environment,
            outputFile: fixture.root.appendingPathComponent("python-app.out"))
        XCTAssertTrue(waitUntil(timeout: 10) { self.appConnected(fixture) }, python.output)
        let search = try fixture.qactl(["trigger", "1", "--json"]).json()
        XCTAssertEqual(search["delivery"] as? String, "running")
        XCTAssertEqual(search["handled"] as? Bool, false)
        let share = try fixture.qactl(["trigger", "2", "--json"]).json()
        XCTAssertEqual(share["handled"] as? Bool, true)
        let delivered = python.jsonLines.compactMap { ($0["action"] as? [String: Any])?["type"] as? String }
        XCTAssertEqual(delivered, ["SearchAction", "ShareAction"], python.output)
        XCTAssertEqual(try fixture.qactl(["status", "--json"]).json()["appVersion"] as? String, "1.0")

        // The interface description still parses in the reference client, new errors included.
        let help = DaemonFixture.run("/usr/bin/env", ["python3", "-m", "varlink.cli", "help", "unix:\(fixture.socketPath)/io.qactd.QuickActions"])
        XCTAssertEqual(help.status, 0, help.stderr)
        for name in ["method Connect", "method Complete", "error AppReplaced", "error AppDisconnected", "error NoSuchAction", "launchStatus"] {
            XCTAssertTrue(help.stdout.contains(name), "\(name) missing from:\n\(help.stdout)")
        }
    }

    func testWatchPrintsTheSetThenEachChangeInGenerationOrder() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let watcher = try BackgroundProcess(
            DaemonFixture.qactl, ["watch", "--json"], environment: fixture.environment,
            outputFile: fixture.root.appendingPathComponent("watch.out"))
        XCTAssertTrue(waitUntil(timeout: 10) { watcher.jsonLines.count == 1 }, watcher.output)
        XCTAssertEqual(watcher.jsonLines.first?["launched"] as? Bool, false)
        // The first lifecycle message shows the (still empty) dynamic set... and every changed set follows.
        XCTAssertEqual(fixture.qactl(["resign-active", "--app-version", "1"]).status, 0)
        XCTAssertEqual(fixture.qactl(["resign-active", "--app-version", "1"]).status, 0, "unchanged: nothing is sent")
        XCTAssertEqual(fixture.qactl(["resign-active", "--app-version", "2"]).status, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { (watcher.jsonLines.last?["generation"] as? Int) == 2 }, watcher.output)
        let generations = watcher.jsonLines.compactMap { $0["generation"] as? Int }
        XCTAssertEqual(generations, [0, 1, 2], watcher.output)
        let last = try XCTUnwrap(watcher.jsonLines.last)
        XCTAssertEqual(last["launched"] as? Bool, true)
        let items = try XCTUnwrap(last["items"] as? [[String: Any]])
        XCTAssertTrue(items.contains { $0["source"] as? String == "dynamic" && $0["displayed"] as? Bool != nil })
        let human = fixture.root.appendingPathComponent("watch-human.out")
        let humanWatcher = try BackgroundProcess(DaemonFixture.qactl, ["watch"], environment: fixture.environment, outputFile: human)
        XCTAssertTrue(waitUntil(timeout: 10) { humanWatcher.output.contains("generation 2") }, humanWatcher.output)
        XCTAssertTrue(humanWatcher.output.contains("SHOWN"), humanWatcher.output)
        XCTAssertEqual(try fixture.qactl(["status", "--json"]).json()["watchers"] as? Int, 2, "both watch streams are counted")
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("generation 2, 2 watchers"))
    }

    func testAWatcherThatNeverReadsNeitherBlocksOthersNorGrowsTheDaemon() throws {
        let fixture = try DaemonFixture()
        // Many favorites make every set large, so unsent sets would add up quickly.
        for number in 0..<400 {
            try fixture.write(contact: "bulk/\(number).vcf", """
                BEGIN:VCARD
                VERSION:4.0
                UID:bulk-\(number)
                FN:Bulk Contact Number \(number) With A Rather Long Name
                EMAIL:bulk\(number)@example.org
                CATEGORIES:favorite
                END:VCARD
                """)
        }
        let daemon = try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active", "--app-version", "0"]).status, 0)
        // Reading the first reply proves the watcher is registered; after that it reads nothing.
        let stuck = try RawWatchSocket(path: fixture.socketPath)
        XCTAssertEqual(try stuck.readGenerations(until: 1), [1])
        let baseline = try XCTUnwrap(residentKilobytes(pid: daemon.processIdentifier))

        // Each ResignActive with a new app version changes every dynamic item: a new set per call.
        let changes = 150
        let loop = """
            import varlink, sys
            client = varlink.Client(address="unix:" + sys.argv[1])
            with client.open("io.qactd.QuickActions") as service:
                for version in range(1, int(sys.argv[2]) + 1):
                    reply = service.ResignActive(appVersion=str(version))
                    assert reply["changed"], reply
                print(reply["generation"])
            """
        let result = DaemonFixture.run("/usr/bin/env", ["python3", "-c", loop, fixture.socketPath, String(changes)], environment: fixture.environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let finalGeneration = try XCTUnwrap(Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertEqual(finalGeneration, changes + 1)
        XCTAssertEqual(fixture.qactl(["status"]).status, 0, "others are still served")
        // Every set is ~100 KB on the wire and several times that as a reply in memory: keeping
        // all unsent ones grew the daemon by ~90 MB when tried; bounded, it grows by ~4 MB
        // (allocator caches), whatever the number of changes.
        let after = try XCTUnwrap(residentKilobytes(pid: daemon.processIdentifier))
        XCTAssertLessThan(after - baseline, 24 * 1024, "RSS grew from \(baseline) kB to \(after) kB")

        // When the watcher finally reads, it skips to the latest generation.
        let generations = try stuck.readGenerations(until: finalGeneration)
        XCTAssertEqual(generations.last, finalGeneration)
        XCTAssertEqual(generations, generations.sorted(), "in generation order")
        XCTAssertLessThan(generations.count, changes, "intermediate generations were skipped")
    }

    private func pythonCall(_ fixture: DaemonFixture, _ method: String, _ parameters: String) -> DaemonFixture.Result {
        DaemonFixture.run(
            "/usr/bin/env",
            ["python3", "-m", "varlink.cli", "call", "unix:\(fixture.socketPath)/io.qactd.QuickActions.\(method)", parameters],
            environment: fixture.environment)
    }
}
