import Foundation
import Logging
import NIOConcurrencyHelpers
import SystemCalls
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// The one mailbox thread every room's thread is made of: a real thread, a real wake-up
/// socket and real pipes; the thread is held busy by a pipe it reads until the test writes.
final class MailboxThreadTests: XCTestCase {
    private let logger = Logger.recording(level: .debug).0

    /// A pipe the thread blocks on until the test writes a byte (`open`).
    private final class Gate: Sendable {
        let reader: Int32
        let writer: Int32

        init() throws {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
            reader = ends[0]
            writer = ends[1]
        }

        func pass() {
            var byte: UInt8 = 0
            _ = read(reader, &byte, 1)
        }

        func open() {
            var byte: UInt8 = 1
            _ = write(writer, &byte, 1)
        }

        func close() {
            Glibc.close(reader)
            Glibc.close(writer)
        }
    }

    /// The body every test's thread runs: the newest mail taken each round, `work` done with it.
    private func runRounds<Mail>(_ thread: MailboxThread<Mail>, take: @escaping @Sendable (inout Mail) -> Mail, work: @escaping @Sendable (Mail) -> Void) throws {
        try thread.start {
            while true {
                let stopping = thread.isStopping
                work(thread.withMail(take))
                if stopping { break }
                var none: [pollfd] = []
                thread.sleep(polling: &none, timeoutMilliseconds: -1)
            }
        }
    }

    func testAQueueIsHandledInTheOrderItWasPosted() async throws {
        let thread = MailboxThread<[Int]>(named: "qactd-test", for: "the test thread", mail: [], logger: logger)
        let handled = NIOLockedValueBox<[Int]>([])
        try runRounds(thread, take: { queue in defer { queue = [] }; return queue }) { batch in
            handled.withLockedValue { $0 += batch }
        }
        for number in 1...500 { XCTAssertTrue(thread.post { $0.append(number) }) }
        let all = await waitUntil { handled.withLockedValue { $0.count } == 500 }
        XCTAssertTrue(all, "handled \(handled.withLockedValue { $0.count }) of 500")
        XCTAssertEqual(handled.withLockedValue { $0 }, Array(1...500))
        await thread.stop()
        XCTAssertFalse(thread.isRunning)
    }

    func testValuesPostedWhileTheThreadIsBusyCoalesceIntoTheNewest() async throws {
        let gate = try Gate()
        defer { gate.close() }
        let thread = MailboxThread<Int?>(named: "qactd-test", for: "the test thread", mail: nil, logger: logger)
        let seen = NIOLockedValueBox<[Int]>([])
        try runRounds(thread, take: { newest in defer { newest = nil }; return newest }) { value in
            guard let value else { return }
            seen.withLockedValue { $0.append(value) }
            if value == 1 { gate.pass() }
        }
        thread.withMail { $0 = 1 }
        thread.wake()
        let busy = await waitUntil { seen.withLockedValue { $0 } == [1] }
        XCTAssertTrue(busy)
        for value in 2...50 { XCTAssertTrue(thread.post { $0 = value }) }
        gate.open()
        let newest = await waitUntil { seen.withLockedValue { $0.last } == 50 }
        XCTAssertTrue(newest, "seen \(seen.withLockedValue { $0 })")
        XCTAssertEqual(seen.withLockedValue { $0 }, [1, 50], "the burst made one round, of the newest value")
        await thread.stop()
    }

    func testAStopWhileBusyEndsAfterTheRoundAndAnswersWhoStillWaits() async throws {
        let gate = try Gate()
        defer { gate.close() }
        struct Mail: Sendable {
            var value: Int?
            /// Kept and never answered by the body: the thread's end answers it.
            var forgotten: [MailboxReply<String>] = []
        }
        let thread = MailboxThread<Mail>(named: "qactd-test", for: "the test thread", mail: Mail(), logger: logger)
        let rounds = NIOLockedValueBox<[(value: Int?, stopping: Bool)]>([])
        try thread.start {
            while true {
                let stopping = thread.isStopping
                let value = thread.withMail { mail in defer { mail.value = nil }; return mail.value }
                rounds.withLockedValue { $0.append((value, stopping)) }
                if value == 1 { gate.pass() }
                if stopping { break }
                var none: [pollfd] = []
                thread.sleep(polling: &none, timeoutMilliseconds: -1)
            }
        }
        XCTAssertTrue(thread.post { $0.value = 1 })
        let busy = await waitUntil { rounds.withLockedValue { $0.contains { $0.value == 1 } } }
        XCTAssertTrue(busy)

        async let answer = thread.ask { mail, reply -> String? in
            mail.forgotten.append(reply)
            return nil
        }
        let queued = await waitUntil { thread.withMail { $0.forgotten.count } == 1 }
        XCTAssertTrue(queued)
        XCTAssertTrue(thread.post { $0.value = 2 }, "posted before the stop: the last round sees it")
        let stopped = NIOLockedValueBox(false)
        async let stopping: Void = { await thread.stop(); stopped.withLockedValue { $0 = true } }()
        let stopAsked = await waitUntil { thread.isStopping }
        XCTAssertTrue(stopAsked)
        XCTAssertFalse(stopped.withLockedValue { $0 }, "the round under way is not cut short")
        gate.open()
        await stopping
        let unanswered = await answer
        XCTAssertNil(unanswered, "a reply the thread did not answer is answered by its end")
        let last = try XCTUnwrap(rounds.withLockedValue { $0.last })
        XCTAssertEqual(last.value, 2)
        XCTAssertTrue(last.stopping)

        XCTAssertFalse(thread.isRunning)
        XCTAssertFalse(thread.post { $0.value = 3 }, "nothing is posted to an ended thread")
        let late = await thread.ask { _, _ -> String? in "answered" }
        XCTAssertNil(late, "an ended thread takes no request")
        let roundsBefore = rounds.withLockedValue { $0.count }
        try thread.start { rounds.withLockedValue { $0.append((99, true)) } }
        XCTAssertEqual(rounds.withLockedValue { $0.count }, roundsBefore)
        XCTAssertFalse(thread.isRunning, "a stopped thread is not started again")
    }

    func testAnAnswerGivenAtOnceOrByTheThreadReachesTheCaller() async throws {
        struct Mail: Sendable {
            var number = 0
            var replies: [MailboxReply<Int>] = []
        }
        let thread = MailboxThread<Mail>(named: "qactd-test", for: "the test thread", mail: Mail(), logger: logger)
        let before = await thread.ask { _, _ -> Int? in 1 }
        XCTAssertNil(before, "a thread not started takes no request")
        try runRounds(thread, take: { mail in defer { mail.replies = [] }; return mail }) { mail in
            for reply in mail.replies { reply.answer(mail.number * 10) }
        }
        let atOnce = await thread.ask { mail, _ -> Int? in mail.number + 7 }
        XCTAssertEqual(atOnce, 7)
        let byTheThread = await thread.ask { mail, reply -> Int? in
            mail.number = 4
            mail.replies.append(reply)
            return nil
        }
        XCTAssertEqual(byTheThread, 40)
        await thread.stop()
    }

    func testADescriptorTheOwnerPollsWakesTheThread() async throws {
        let gate = try Gate()
        defer { gate.close() }
        let thread = MailboxThread<Int>(named: "qactd-test", for: "the test thread", mail: 0, logger: logger)
        let readiness = NIOLockedValueBox<[Int16]>([])
        try thread.start {
            var descriptors: [pollfd] = []
            while true {
                let stopping = thread.isStopping
                if let polled = descriptors.first, polled.revents != 0 {
                    readiness.withLockedValue { $0.append(polled.revents) }
                    gate.pass()
                }
                if stopping { break }
                descriptors = [pollfd(fd: gate.reader, events: Int16(POLLIN), revents: 0)]
                thread.sleep(polling: &descriptors, timeoutMilliseconds: -1)
            }
        }
        gate.open()
        let woken = await waitUntil { readiness.withLockedValue { $0.count } == 1 }
        XCTAssertTrue(woken)
        XCTAssertEqual(readiness.withLockedValue { $0 }.first.map { $0 & Int16(POLLIN) }, Int16(POLLIN))
        gate.open()
        let again = await waitUntil { readiness.withLockedValue { $0.count } == 2 }
        XCTAssertTrue(again, "each time the descriptor is ready")
        XCTAssertEqual(thread.withMail { $0 }, 0, "woken by the descriptor, not by mail")
        await thread.stop()
    }

    func testAThreadNeverStartedStopsAtOnceAndNeverStarts() async throws {
        let thread = MailboxThread<Int>(named: "qactd-test", for: "the test thread", mail: 0, logger: logger)
        let ran = NIOLockedValueBox(false)
        await thread.stop()
        XCTAssertTrue(thread.isStopping)
        try thread.start { ran.withLockedValue { $0 = true } }
        XCTAssertFalse(thread.isRunning)
        XCTAssertFalse(thread.post { $0 = 1 })
        XCTAssertFalse(ran.withLockedValue { $0 })
    }

    /// With no descriptor left for its wake-up socket the thread does not start, as when no
    /// thread can be created: `start` throws (each owner then does without it), and a later call
    /// starts it.
    func testAThreadWithoutAWakeUpSocketDoesNotStartUntilALaterCall() async throws {
        let thread = MailboxThread<Int>(named: "qactd-test", for: "the test thread", mail: 0, logger: logger)
        let ran = NIOLockedValueBox(0)
        var limit = rlimit()
        XCTAssertEqual(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit), 0)
        // The lowest free descriptor as the limit: no new descriptor can be made.
        let lowestFree = dup(0)
        XCTAssertGreaterThanOrEqual(lowestFree, 0)
        close(lowestFree)
        var lowered = limit
        lowered.rlim_cur = rlim_t(lowestFree)
        XCTAssertEqual(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &lowered), 0)
        XCTAssertThrowsError(try thread.start { ran.withLockedValue { $0 += 1 } }) { error in
            XCTAssertEqual((error as? SystemCallError)?.errno, EMFILE, "\(error)")
        }
        XCTAssertEqual(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit), 0)
        XCTAssertFalse(thread.isRunning)
        XCTAssertFalse(thread.post { $0 = 1 }, "no thread takes mail")

        try thread.start { ran.withLockedValue { $0 += 1 } }
        await thread.stop()
        XCTAssertEqual(ran.withLockedValue { $0 }, 1)
    }

    /// The sleep until a deadline: none without one, 0 once it passed (however long ago: a
    /// negative timeout would make `poll` wait for ever), else rounded up to whole milliseconds.
    func testTheTimeoutUntilADeadlineIsNeverNegative() {
        XCTAssertEqual(WakeUpSocket.milliseconds(until: nil), -1)
        for past in [Duration.milliseconds(1), .milliseconds(500), .seconds(3)] {
            XCTAssertEqual(WakeUpSocket.milliseconds(until: .now - past), 0, "\(past) ago")
        }
        let ahead = WakeUpSocket.milliseconds(until: .now + .milliseconds(1500))
        XCTAssertTrue((1...1500).contains(ahead), "\(ahead)")
    }
}
