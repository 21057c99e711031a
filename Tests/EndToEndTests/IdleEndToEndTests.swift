import Foundation
import TestSupport
import XCTest

/// A per-user daemon sits in every session: with no client, no change and no watchdog, its
/// threads sleep until something happens. Counted as the kernel counts them: the sum of
/// `voluntary_ctxt_switches` over `/proc/PID/task/*/status`, before and after a quiet window
/// (the window is the measurement itself, not a wait for something to happen).
final class IdleEndToEndTests: XCTestCase {
    static let window: Duration = .seconds(10)
    /// "A handful a minute": over the window, at most this many wake-ups of all threads together.
    static let allowedWakeUps = 2

    func testAnIdleDaemonSleepsAfterServingClientsAndChanges() throws {
        let fixture = try DaemonFixture()
        // Enough cards that the start-up scan reads them on several threads at once.
        for number in 0..<300 {
            try fixture.write(contact: "many/\(number).vcf", "BEGIN:VCARD\nVERSION:3.0\nUID:many-\(number)\nFN:Person \(number)\nEND:VCARD\n")
        }
        let daemon = try fixture.start()
        // Everything a session does at first: a scan of many cards, calls (each runs as a task), a watcher that comes
        // and goes, a contact edited (the watcher and the state writer wake), a trigger.
        XCTAssertEqual(fixture.qactl(["status"]).status, 0)
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertEqual(fixture.qactl(["list", "--all"]).status, 0)
        XCTAssertEqual(fixture.qactl(["trigger", "1"]).status, 0)
        try fixture.write(contact: "idle.vcf", "BEGIN:VCARD\nVERSION:3.0\nUID:idle\nFN:Idle Person\nCATEGORIES:starred\nEND:VCARD\n")
        XCTAssertTrue(waitUntil(timeout: 10, every: .milliseconds(50)) { fixture.qactl(["status"]).stdout.contains("307 (5 favorites)") }, fixture.qactl(["status"]).stdout)
        XCTAssertTrue(
            waitUntil(timeout: 10, every: .milliseconds(50)) { (try? fixture.qactl(["status", "--json"]).json()["persisted"] as? Bool) ?? false },
            "the state reached the disk before the quiet window")

        let before = try Self.voluntarySwitches(of: daemon.processIdentifier)
        // The measurement window: nothing is awaited, the daemon is watched while nothing happens.
        Thread.sleep(forTimeInterval: TimeInterval(Self.window.components.seconds))
        let after = try Self.voluntarySwitches(of: daemon.processIdentifier)
        var wakeUps: [String: Int] = [:]
        for (thread, count) in after { wakeUps[thread] = count - (before[thread] ?? 0) }
        let total = wakeUps.values.reduce(0, +)
        print("idle: \(total) wake-ups in \(Self.window) (\(wakeUps.filter { $0.value > 0 }))")
        XCTAssertLessThanOrEqual(total, Self.allowedWakeUps, "threads that woke while idle: \(wakeUps.filter { $0.value > 0 })")
        XCTAssertEqual(fixture.stop(), 0)
    }

    /// Each thread's `voluntary_ctxt_switches`, keyed by "tid name".
    static func voluntarySwitches(of pid: Int32) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for thread in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            let folder = "/proc/\(pid)/task/\(thread)"
            guard let status = try? String(contentsOfFile: folder + "/status", encoding: .utf8) else { continue }
            let name = ((try? String(contentsOfFile: folder + "/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                counts["\(thread) \(name)"] = Int(line.split(separator: "\t").last.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
            }
        }
        return counts
    }
}
