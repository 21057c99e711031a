import Foundation
import TestSupport
import XCTest

/// The live contacts index as a user meets it: the built daemon watching a real folder.
final class WatchingEndToEndTests: XCTestCase {
    private func status(_ fixture: DaemonFixture) -> [String: Any] {
        (try? fixture.qactl(["status", "--json"]).json()) ?? [:]
    }

    private func card(_ name: String, uid: String, favorite: Bool = false) -> String {
        ContactCard.vCard(name, favorite: favorite, uid: uid, category: "favorite", lineEnding: "\n")
    }

    /// Plain open/write/close, no rename.
    private func put(_ url: URL, _ text: String) throws {
        try Data(text.utf8).write(to: url)
    }

    func testAnOverflowedEventQueueIsRescannedAndTheIndexConvergesToTheFolder() throws {
        let fixture = try DaemonFixture()
        let daemon = try fixture.start()
        let before = status(fixture)
        let contactsBefore = try XCTUnwrap(before["contacts"] as? Int)
        let favoritesBefore = try XCTUnwrap(before["favorites"] as? Int)
        XCTAssertEqual((before["watch"] as? [String: Any])?["state"] as? String, "watching")
        XCTAssertEqual(before["rescans"] as? Int, 0)

        let limitText = try String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8)
        let queueLimit = try XCTUnwrap(Int(limitText.trimmingCharacters(in: .whitespacesAndNewlines)))
        // Each new file raises at least IN_CREATE and IN_CLOSE_WRITE, so this is twice the queue.
        let created = queueLimit
        let bulk = fixture.contacts.appendingPathComponent("bulk")
        try FileManager.default.createDirectory(at: bulk, withIntermediateDirectories: true)
        // Once a card in the new folder is indexed, the folder is watched: its events will queue up.
        try put(bulk.appendingPathComponent("ready.vcf"), card("Ready", uid: "ready"))
        XCTAssertTrue(waitUntil(timeout: 10) { fixture.qactl(["contact", "ready"]).status == 0 })
        let eventsBefore = try XCTUnwrap(status(fixture)["eventsHandled"] as? Int)

        XCTAssertEqual(kill(daemon.processIdentifier, SIGSTOP), 0)
        var continued = false
        defer { if !continued { kill(daemon.processIdentifier, SIGCONT) } }
        // kill() returns before the stop takes effect. Writing before every thread has stopped
        // could catch the daemon holding a read lease on a file the loop writes next, and the
        // writer would then wait for the kernel's lease-break time (45 s) to open it.
        XCTAssertTrue(waitUntil(timeout: 10) { Self.everyThreadStopped(daemon.processIdentifier) }, "the daemon did not stop")
        for number in 0..<created {
            try put(bulk.appendingPathComponent("\(number).vcf"), card("Bulk \(number)", uid: "bulk-\(number)", favorite: number % 1000 == 0))
        }
        // Change some, delete some, and change and delete cards the daemon already knew.
        for number in stride(from: 0, to: created, by: 4) {
            try put(bulk.appendingPathComponent("\(number).vcf"), card("Changed \(number)", uid: "bulk-\(number)", favorite: number % 1000 == 0))
        }
        for number in stride(from: 1, to: created, by: 4) {
            try FileManager.default.removeItem(at: bulk.appendingPathComponent("\(number).vcf"))
        }
        try FileManager.default.removeItem(at: fixture.contacts.appendingPathComponent("personal/ada-lovelace.vcf"))
        let turing = fixture.contacts.appendingPathComponent("work/alan-turing.vcf")
        try put(turing, try String(contentsOf: turing, encoding: .utf8).replacingOccurrences(of: "FN:Alan Turing", with: "FN:Alan M. Turing"))
        let stillThere = created - created / 4
        let favoritesInBulk = (0..<created).filter { $0 % 1000 == 0 && $0 % 4 != 1 }.count
        XCTAssertEqual(kill(daemon.processIdentifier, SIGCONT), 0)
        continued = true

        let converged = waitUntil(timeout: 120) {
            let now = self.status(fixture)
            return (now["rescans"] as? Int ?? 0) >= 1 && now["contacts"] as? Int == contactsBefore + stillThere
        }
        let after = status(fixture)
        XCTAssertTrue(converged, "status after the overflow: \(after)")
        // About what the kernel kept (the queue, then IN_Q_OVERFLOW), far fewer than one per change:
        // the changes it dropped came back through the rescan.
        XCTAssertLessThan((after["eventsHandled"] as? Int ?? 0) - eventsBefore, queueLimit + 64)
        XCTAssertEqual(after["favorites"] as? Int, favoritesBefore - 1 + favoritesInBulk, "Ada was a favorite")
        XCTAssertEqual((after["invalidFiles"] as? [Any])?.count, 0)
        XCTAssertTrue(fixture.log().contains("the inotify queue overflowed"), "the rescan is logged")
        XCTAssertEqual((after["watch"] as? [String: Any])?["state"] as? String, "watching")

        XCTAssertEqual((try fixture.qactl(["contact", "bulk-4", "--json"]).json()["contact"] as? [String: Any])?["name"] as? String, "Changed 4")
        XCTAssertEqual((try fixture.qactl(["contact", "bulk-6", "--json"]).json()["contact"] as? [String: Any])?["name"] as? String, "Bulk 6")
        XCTAssertEqual((try fixture.qactl(["contact", "bulk-\(created - 1)", "--json"]).json()["contact"] as? [String: Any])?["name"] as? String, "Bulk \(created - 1)")
        XCTAssertEqual(fixture.qactl(["contact", "bulk-5"]).status, 1, "deleted while the daemon was stopped")
        XCTAssertEqual(fixture.qactl(["contact", "ada-lovelace"]).status, 1)
        XCTAssertEqual((try fixture.qactl(["contact", "alan-turing", "--json"]).json()["contact"] as? [String: Any])?["name"] as? String, "Alan M. Turing")

        // Watching still works after the rescan, folders included.
        try put(bulk.appendingPathComponent("after.vcf"), card("After", uid: "after"))
        XCTAssertTrue(waitUntil(timeout: 10) { fixture.qactl(["contact", "after"]).status == 0 })
    }

    func testRecomputeChangeFollowsTheIndexOnceABurstSettles() throws {
        let fixture = try DaemonFixture(extraConfiguration: "[Shortcuts]\nRecompute=change\nRecomputeSettleMSec=2500")
        try fixture.start()
        // Start-up counts as a change: the set follows the demo favorites without ResignActive.
        XCTAssertTrue(waitUntil(timeout: 10) { self.status(fixture)["dynamicItems"] as? Int == 4 }, "\(status(fixture))")
        let first = status(fixture)
        XCTAssertEqual(first["generation"] as? Int, 1)
        XCTAssertEqual(first["launched"] as? Bool, false, "a recompute on change is not a launch")

        // Ten new favorites in a burst much shorter than the settle delay: one new generation.
        for number in 0..<10 {
            try fixture.write(contact: "burst/\(number).vcf", card("Burst \(number)", uid: "burst-\(number)", favorite: true))
        }
        XCTAssertTrue(waitUntil(timeout: 20) { self.status(fixture)["dynamicItems"] as? Int == 14 }, "\(status(fixture))")
        XCTAssertEqual(status(fixture)["generation"] as? Int, 2, "the burst was coalesced into one recompute")
        let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: fixture.stateFile)) as? [String: Any]
        XCTAssertEqual((saved?["dynamicItems"] as? [Any])?.count, 14, "the new set is persisted")
        XCTAssertEqual(saved?["generation"] as? Int, 2)

        // A change that does not touch favorites makes no generation.
        try fixture.write(contact: "burst/plain.vcf", card("Plain", uid: "plain"))
        XCTAssertTrue(waitUntil(timeout: 10) { fixture.qactl(["contact", "plain"]).status == 0 })
        XCTAssertEqual(status(fixture)["generation"] as? Int, 2)
    }

    func testByDefaultIndexChangesAloneNeverChangeThePersistedSet() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        XCTAssertEqual(try fixture.qactl(["resign-active", "--json"]).json()["generation"] as? Int, 1)
        let written = try FileManager.default.attributesOfItem(atPath: fixture.stateFile.path)

        let parsedBefore = try XCTUnwrap(status(fixture)["filesParsed"] as? Int)
        // A plain write and close. (Foundation's atomic write renames before it closes, so its
        // IN_MOVED_TO and IN_CLOSE_WRITE may land in two batches and parse the file twice.)
        try put(fixture.contacts.appendingPathComponent("personal/new.vcf"), card("New Favorite", uid: "new-favorite", favorite: true))
        XCTAssertTrue(waitUntil(timeout: 10) { self.status(fixture)["favorites"] as? Int == 5 })
        XCTAssertEqual(status(fixture)["filesParsed"] as? Int, parsedBefore + 1, "one saved card, one file parsed, no rescan")
        XCTAssertEqual(status(fixture)["rescans"] as? Int, 0)
        try FileManager.default.removeItem(at: fixture.contacts.appendingPathComponent("personal/ada-lovelace.vcf"))
        XCTAssertTrue(waitUntil(timeout: 10) { self.status(fixture)["favorites"] as? Int == 4 })

        let now = status(fixture)
        XCTAssertEqual(now["generation"] as? Int, 1)
        XCTAssertEqual(now["dynamicItems"] as? Int, 4)
        let after = try FileManager.default.attributesOfItem(atPath: fixture.stateFile.path)
        XCTAssertEqual(after[.systemFileNumber] as? Int, written[.systemFileNumber] as? Int, "nothing was renamed into place")
        XCTAssertEqual(after[.modificationDate] as? Date, written[.modificationDate] as? Date)
        let listed = try fixture.qactl(["list", "--all", "--json"]).json()["items"] as? [[String: Any]] ?? []
        XCTAssertTrue(listed.contains { ($0["item"] as? [String: Any])?["title"] as? String == "Ada Lovelace" }, "still the old set")

        let resign = try fixture.qactl(["resign-active", "--json"]).json()
        XCTAssertEqual(resign["changed"] as? Bool, true)
        XCTAssertEqual(resign["generation"] as? Int, 2)
        let relisted = try fixture.qactl(["list", "--all", "--json"]).json()["items"] as? [[String: Any]] ?? []
        let titles = relisted.compactMap { ($0["item"] as? [String: Any])?["title"] as? String }
        XCTAssertTrue(titles.contains("New Favorite") && !titles.contains("Ada Lovelace"), "\(titles)")
    }

    func testReloadWithAnotherDirectoryWatchesTheNewOneOnly() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let other = fixture.root.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try put(other.appendingPathComponent("zed.vcf"), card("Zed", uid: "zed", favorite: true))
        try fixture.writeConfiguration("[Contacts]\nDirectory=other")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        let reloaded = status(fixture)
        XCTAssertEqual(reloaded["contacts"] as? Int, 1, "the reply comes after the new folder is indexed: \(reloaded)")
        XCTAssertEqual(reloaded["contactsDirectory"] as? String, other.path)

        try fixture.write(contact: "personal/ignored.vcf", card("Old Folder", uid: "old-folder"))
        try put(other.appendingPathComponent("yan.vcf"), card("Yan", uid: "yan"))
        XCTAssertTrue(waitUntil(timeout: 10) { self.status(fixture)["contacts"] as? Int == 2 })
        XCTAssertEqual(fixture.qactl(["contact", "old-folder"]).status, 1, "the old folder is no longer watched")
    }

    func testTheContactsFolderDeletedAndCreatedAgainWhileServing() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        XCTAssertGreaterThan(status(fixture)["contacts"] as? Int ?? 0, 0)
        try FileManager.default.removeItem(at: fixture.contacts)
        XCTAssertTrue(waitUntil(timeout: 10) {
            let now = self.status(fixture)
            return now["contacts"] as? Int == 0 && (now["watch"] as? [String: Any])?["state"] as? String == "reattaching"
        }, "\(status(fixture))")
        let human = fixture.qactl(["status"])
        XCTAssertEqual(human.status, 0, "the daemon keeps serving")
        XCTAssertTrue(human.stdout.contains("reattaching"), human.stdout)

        try fixture.write(contact: "new/grace.vcf", card("Grace Hopper", uid: "grace", favorite: true))
        XCTAssertTrue(waitUntil(timeout: 10) {
            let now = self.status(fixture)
            return now["contacts"] as? Int == 1 && (now["watch"] as? [String: Any])?["state"] as? String == "watching"
        }, "\(status(fixture))")
        try fixture.write(contact: "new/alan.vcf", card("Alan", uid: "alan"))
        XCTAssertTrue(waitUntil(timeout: 10) { self.status(fixture)["contacts"] as? Int == 2 })
        XCTAssertTrue(fixture.log().contains("is missing"), fixture.log())
    }

    /// Whether every thread of `pid` is in the stopped state (`T` in /proc/PID/task/TID/stat).
    static func everyThreadStopped(_ pid: Int32) -> Bool {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"), !threads.isEmpty else { return false }
        return threads.allSatisfy { thread in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
                  let afterName = stat.range(of: ") ", options: .backwards) else { return false }
            return stat[afterName.upperBound...].first == "T"
        }
    }
}
