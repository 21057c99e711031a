import Contacts
import Foundation
import Glibc
import Logging
import Synchronization
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// The table of running commands and its cap, without I/O; the names and statuses the user
/// manager's units are read with; how a file of several cards is cut into cards; and the one
/// reaper of the daemon's own children.
final class RunningCommandsTests: XCTestCase {
    func testTheCapAdmitsUpToTheLimitAndAnEndMakesRoom() {
        var table = RunningCommands()
        XCTAssertEqual(table.handle(.requested(program: "a", type: "T", limit: 2)), .start(id: 1))
        XCTAssertEqual(table.handle(.requested(program: "b", type: "T", limit: 2)), .start(id: 2))
        XCTAssertEqual(table.handle(.requested(program: "c", type: "T", limit: 2)), .refuse(running: 2, limit: 2))
        XCTAssertEqual(table.handle(.started(id: 1, .unit("app-qactd-a@1.service"))), .none)
        XCTAssertEqual(table.handle(.ended(id: 1)), .forget(.init(program: "a", type: "T", place: .unit("app-qactd-a@1.service"))))
        XCTAssertEqual(table.handle(.ended(id: 1)), .none, "an end reported twice counts once")
        XCTAssertEqual(table.count, 1)
        XCTAssertEqual(table.handle(.requested(program: "c", type: "T", limit: 2)), .start(id: 3))
        XCTAssertEqual(table.handle(.couldNotStart(id: 3)), .forget(.init(program: "c", type: "T", place: nil)))
        // A lower cap after a reload applies to the next request; running commands stay.
        XCTAssertEqual(table.handle(.requested(program: "d", type: "T", limit: 1)), .refuse(running: 1, limit: 1))
        XCTAssertEqual(table.handle(.started(id: 99, .process(pid: 5))), .none, "an unknown command is not added")
        XCTAssertEqual(table.count, 1)
    }

    func testUnitNamesFollowTheDesktopConventionAndEscapeTheProgram() {
        let name = UserManagerCommands.unitName(program: "/usr/bin/xdg-open")
        XCTAssertTrue(name.hasPrefix("app-qactd-xdg\\x2dopen@"), name)
        XCTAssertTrue(name.hasSuffix(".service"), name)
        XCTAssertEqual(name.count, "app-qactd-xdg\\x2dopen@".count + 16 + ".service".count)
        XCTAssertNotEqual(name, UserManagerCommands.unitName(program: "xdg-open"), "each start has a unit of its own")
        XCTAssertTrue(UserManagerCommands.unitName(program: ".hidden ü").hasPrefix("app-qactd-\\x2ehidden\\x20\\xc3\\xbc@"))
        XCTAssertTrue(UserManagerCommands.unitName(program: "thunderbird").hasPrefix("app-qactd-thunderbird@"))
    }

    func testTheManagersExitCodesBecomeWaitStatuses() {
        XCTAssertEqual(UserManagerCommands.waitStatus(code: 1, status: 0), 0)
        XCTAssertEqual(UserManagerCommands.waitStatus(code: 1, status: 3).map { LaunchCommandRunner.describe(waitStatus: $0) }, "exited with status 3")
        XCTAssertEqual(UserManagerCommands.waitStatus(code: 2, status: 9).map { LaunchCommandRunner.describe(waitStatus: $0) }, "was killed by signal 9")
        XCTAssertEqual(UserManagerCommands.waitStatus(code: 3, status: 11).map { LaunchCommandRunner.describe(waitStatus: $0) }, "was killed by signal 11")
        XCTAssertNil(UserManagerCommands.waitStatus(code: 0, status: 0), "not exited yet")
    }

    func testAFileOfSeveralCardsIsCutAtItsBeginAndEndLines() {
        let text = "BEGIN:VCARD\r\nUID:a\r\nAGENT:\r\nBEGIN:VCARD\r\nEND:VCARD\r\nEND:VCARD\r\n\r\nbegin:vcard\nUID:b\nend:VCARD \n"
        let bytes = Array(text.utf8)
        let cards = VCardSplitting.cardRanges(in: bytes).map { String(decoding: bytes[$0], as: UTF8.self) }
        XCTAssertEqual(cards, ["BEGIN:VCARD\r\nUID:a\r\nAGENT:\r\nBEGIN:VCARD\r\nEND:VCARD\r\nEND:VCARD\r\n", "begin:vcard\nUID:b\nend:VCARD \n"])
        let nested = Array("BEGIN:VCARD\nBEGIN:VCARD\nEND:VCARD\nEND:VCARD".utf8)
        XCTAssertEqual(VCardSplitting.cardRanges(in: nested), [0..<nested.count], "a card inside a card stays in it; no LF at the end")
        XCTAssertEqual(VCardSplitting.cardRanges(in: Array("BEGIN:VCARD\nUID:x\n".utf8)), [], "a card never closed is no card")
    }

    /// Many children at once on the one reaper thread: each end is reported once, with its
    /// status and stderr, and none is left a zombie; a child that never ends holds no thread.
    func testOneReaperReapsManyChildrenWithTheirStatusAndStderr() throws {
        let (logger, _) = Logger.recording(level: .debug)
        let reaperThreads = { () -> Int in
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
                .filter { $0.hasPrefix("qactd-reaper") }.count
        }
        let threadsBefore = reaperThreads()
        let starter = CommandStarter.direct(logger: logger)
        let ends = Mutex<[Int32: CommandEnd]>([:])
        var pids: [Int32] = []
        for number in 0..<20 {
            let request = LaunchRequest(command: [], shortcutType: "T", contactIdentifier: nil, socketPath: "/s")
            let started = starter.start(
                ["/bin/sh", "-c", "echo said-\(number) >&2; exit \(number % 3)"], request: request, description: "test",
                readingStandardError: true
            ) { place, end in ends.withLock { $0[place.pid ?? -1] = end } }
            pids.append(try XCTUnwrap(try started.get().pid))
        }
        let sleeper = starter.start(["/bin/sleep", "60"], request: LaunchRequest(command: [], shortcutType: "T", contactIdentifier: nil, socketPath: "/s"),
                                    description: "test", readingStandardError: false) { _, _ in }
        let sleeperPID = try XCTUnwrap(try sleeper.get().pid)
        defer { kill(sleeperPID, SIGKILL) }
        XCTAssertTrue(waitUntil(timeout: 10) { ends.withLock { $0.count } == 20 })
        for (number, pid) in pids.enumerated() {
            let end = try XCTUnwrap(ends.withLock { $0[pid] })
            XCTAssertEqual(end.waitStatus.map { LaunchCommandRunner.describe(waitStatus: $0) }, "exited with status \(number % 3)")
            XCTAssertEqual(end.standardErrorTail, "said-\(number)\n")
            XCTAssertTrue(waitUntil(timeout: 5) { kill(pid, 0) != 0 && errno == ESRCH }, "pid \(pid) is reaped")
        }
        XCTAssertEqual(starter.reaper.count, 1, "only the sleeper is still watched")
        // One thread for them all.
        XCTAssertEqual(reaperThreads() - threadsBefore, 1)
        kill(sleeperPID, SIGKILL)
        XCTAssertTrue(waitUntil(timeout: 10) { starter.reaper.count == 0 })
    }
}
