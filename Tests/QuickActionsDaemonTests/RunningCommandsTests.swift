import CSdBus
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
        XCTAssertEqual(table.handle(.requested(limit: 2)), .start(id: 1))
        XCTAssertEqual(table.handle(.requested(limit: 2)), .start(id: 2))
        XCTAssertEqual(table.handle(.requested(limit: 2)), .refuse(running: 2, limit: 2))
        XCTAssertEqual(table.handle(.ended(id: 1)), .none)
        XCTAssertEqual(table.count, 1)
        XCTAssertEqual(table.handle(.ended(id: 1)), .none)
        XCTAssertEqual(table.count, 1, "an end reported twice counts once")
        XCTAssertEqual(table.handle(.requested(limit: 2)), .start(id: 3))
        XCTAssertEqual(table.handle(.couldNotStart(id: 3)), .none)
        XCTAssertEqual(table.count, 1)
        // A lower cap after a reload applies to the next request; running commands stay.
        XCTAssertEqual(table.handle(.requested(limit: 1)), .refuse(running: 1, limit: 1))
        XCTAssertEqual(table.handle(.ended(id: 99)), .none)
        XCTAssertEqual(table.count, 1, "an unknown command changes nothing")
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

    /// The call the user manager gets has `StartTransientUnit`'s signature, with each property
    /// the unit needs.
    func testStartTransientUnitIsWrittenInItsSignature() throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { close(pair[1]) }
        var created: OpaquePointer?
        XCTAssertGreaterThanOrEqual(sd_bus_new(&created), 0)
        let bus = try XCTUnwrap(created)
        // Nobody answers on the other end: closed without a flush, which would wait for it.
        defer { sd_bus_close_unref(bus) }
        XCTAssertGreaterThanOrEqual(sd_bus_set_fd(bus, pair[0], pair[0]), 0)
        XCTAssertGreaterThanOrEqual(sd_bus_start(bus), 0)
        var message: OpaquePointer?
        XCTAssertGreaterThanOrEqual(sd_bus_message_new_method_call(
            bus, &message, "org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "StartTransientUnit"), 0)
        defer { sd_bus_message_unref(message) }
        let request = UserManagerCommands.Request(
            unit: "app-qactd-sh@0123456789abcdef.service", argv: ["sh", "-c", "exit 0"], environment: ["QACTD_SHORTCUT_TYPE=T"],
            description: "Quick action “T” (sh)") { _ in }
        try ManagerConnection.appendStartTransientUnit(request, program: "/bin/sh", to: SdBusMessageWriter(message: try XCTUnwrap(message)))
        XCTAssertGreaterThanOrEqual(sd_bus_message_seal(message, 1, 0), 0)
        XCTAssertEqual(sd_bus_message_get_signature(message, 1).map { String(cString: $0) }, "ssa(sv)a(sa(sv))")
        XCTAssertGreaterThanOrEqual(sd_bus_message_rewind(message, 1), 0)
        let reader = SdBusMessageReader(message: try XCTUnwrap(message))
        XCTAssertEqual(try reader.readString(), "app-qactd-sh@0123456789abcdef.service")
        XCTAssertEqual(try reader.readString(), "fail")
        var names: [String] = []
        try reader.readArray(ofEntries: "sv", asStructs: true) { reader, name throws(SdBusError) in
            names.append(name)
            try reader.skip("v")
        }
        XCTAssertEqual(names, ["Description", "Type", "ExitType", "CollectMode", "Slice", "Environment", "ExecStart"])
    }
}
