import Foundation
import Synchronization
import XCTest

@testable import QuickActionsDaemon

final class ServiceNotificationTests: XCTestCase {
    func testMessageFormat() {
        XCTAssertEqual(
            ServiceNotificationMessage.format([.ready, .status("12 contacts, 3 favorites, generation 7")], monotonicMicroseconds: 0),
            "READY=1\nSTATUS=12 contacts, 3 favorites, generation 7")
        XCTAssertEqual(
            ServiceNotificationMessage.format([.reloading], monotonicMicroseconds: 123_456),
            "RELOADING=1\nMONOTONIC_USEC=123456")
        XCTAssertEqual(ServiceNotificationMessage.format([.stopping, .watchdog], monotonicMicroseconds: 0), "STOPPING=1\nWATCHDOG=1")
        XCTAssertEqual(
            ServiceNotificationMessage.format([.status("line one\nREADY=1")], monotonicMicroseconds: 0),
            "STATUS=line one READY=1", "a newline in a status must not smuggle in another assignment")
    }

    func testMonotonicClockAdvances() {
        let first = ServiceNotificationMessage.monotonicMicroseconds()
        let second = ServiceNotificationMessage.monotonicMicroseconds()
        XCTAssertGreaterThan(first, 0)
        XCTAssertGreaterThanOrEqual(second, first)
    }

    func testRecordingNotifier() {
        let notifier = RecordingNotifier()
        notifier.notify(.reloading)
        notifier.notify([.ready, .status("ok")])
        XCTAssertEqual(notifier.calls, [[.reloading], [.ready, .status("ok")]])
    }

    func testRealNotifierWithoutSystemdIsHarmless() {
        unsetenv("NOTIFY_SOCKET")
        SystemdNotifier().notify(.ready, .status("testing"))
    }

    func testRealNotifierSendsToNotifySocket() throws {
        let path = NSTemporaryDirectory() + "qactd-notify-\(UUID().uuidString).sock"
        defer { unlink(path) }
        let descriptor = socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: Array(path.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        XCTAssertEqual(bound, 0)

        setenv("NOTIFY_SOCKET", path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        SystemdNotifier().notify(.reloading)

        var buffer = [UInt8](repeating: 0, count: 4096)
        let received = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        XCTAssertGreaterThan(received, 0)
        let message = String(decoding: buffer.prefix(max(received, 0)), as: UTF8.self)
        XCTAssertTrue(message.hasPrefix("RELOADING=1\nMONOTONIC_USEC="), message)
    }
}

final class SocketActivationTests: XCTestCase {
    func testNoListenFdsMeansNoDescriptors() throws {
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_PID")
        XCTAssertEqual(try SocketActivation.listeningDescriptors(), [])
    }

    func testDescriptorsMeantForAnotherProcessAreIgnoredAndUnset() throws {
        setenv("LISTEN_PID", "1", 1)
        setenv("LISTEN_FDS", "2", 1)
        XCTAssertEqual(try SocketActivation.listeningDescriptors(), [])
        XCTAssertNil(ProcessInfo.processInfo.environment["LISTEN_FDS"], "the variables are not passed on to children")
    }

    func testErrorDescriptionsPointAtTheSocketUnit() {
        XCTAssertEqual(
            SocketActivationError.notAListeningUnixStreamSocket(descriptor: 3).description,
            "The descriptor 3 passed by systemd is not a listening Unix stream socket; check ListenStream= in qactd.socket.")
    }
}

final class WatchdogTests: XCTestCase {
    func testDisabledWithoutEnvironment() {
        unsetenv("WATCHDOG_USEC")
        unsetenv("WATCHDOG_PID")
        XCTAssertNil(WatchdogSettings.fromEnvironment())
    }

    func testPingsAtHalfTheTimeout() {
        setenv("WATCHDOG_USEC", "3000000", 1)
        setenv("WATCHDOG_PID", "\(getpid())", 1)
        let settings = WatchdogSettings.fromEnvironment()
        XCTAssertEqual(settings?.timeout, .seconds(3))
        XCTAssertEqual(settings?.pingInterval, .milliseconds(1500))
        XCTAssertNil(ProcessInfo.processInfo.environment["WATCHDOG_USEC"], "unset so children do not inherit it")
    }

    func testWatchdogForAnotherProcessIsIgnored() {
        setenv("WATCHDOG_USEC", "3000000", 1)
        setenv("WATCHDOG_PID", "1", 1)
        XCTAssertNil(WatchdogSettings.fromEnvironment())
        unsetenv("WATCHDOG_USEC")
        unsetenv("WATCHDOG_PID")
    }
}

private final class CollectingSink: LogSink {
    let records = Mutex<[LogRecord]>([])
    func write(_ record: LogRecord) { records.withLock { $0.append(record) } }
    var messages: [String] { records.withLock { $0.map(\.message) } }
}

final class LoggingTests: XCTestCase {
    func testLevelParsing() {
        XCTAssertEqual(LogLevel(argument: "debug"), .debug)
        XCTAssertEqual(LogLevel(argument: "INFO"), .info)
        XCTAssertEqual(LogLevel(argument: "notice"), .notice)
        XCTAssertEqual(LogLevel(argument: "warn"), .warning)
        XCTAssertEqual(LogLevel(argument: "warning"), .warning)
        XCTAssertEqual(LogLevel(argument: "err"), .error)
        XCTAssertNil(LogLevel(argument: "loud"))
        XCTAssertEqual(LogLevel.allCases.map(\.syslogPriority), [7, 6, 5, 4, 3])
    }

    func testLoggerFiltersByLevel() {
        let sink = CollectingSink()
        let logger = Logger(minimumLevel: .notice, sink: sink)
        logger.debug("d")
        logger.info("i")
        logger.notice("n")
        logger.warning("w", fields: ["QACTD_PATH": "/x"])
        logger.error("e")
        XCTAssertEqual(sink.messages, ["n", "w", "e"])
        XCTAssertEqual(sink.records.withLock { $0[1].fields }, ["QACTD_PATH": "/x"])
        XCTAssertTrue(sink.records.withLock { $0[0].file }.hasSuffix("SystemdTests.swift"))
    }

    func testFilteredMessagesAreNotEvaluated() {
        let logger = Logger(minimumLevel: .error, sink: CollectingSink())
        var evaluated = false
        func expensive() -> String {
            evaluated = true
            return "x"
        }
        logger.debug(expensive())
        XCTAssertFalse(evaluated)
    }

    func testLoggerIsUsableFromManyThreads() {
        let sink = CollectingSink()
        let logger = Logger(minimumLevel: .debug, sink: sink)
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            logger.info("message \(index)")
        }
        XCTAssertEqual(sink.records.withLock { $0.count }, 200)
    }

    func testStderrFormat() {
        let sink = StderrLogSink(identifier: "qactd", processID: 42)
        XCTAssertEqual(
            sink.format(LogRecord(level: .warning, message: "Skipping invalid contact file", fields: [
                "QACTD_PATH": "/c/a b.vcf", "QACTD_GENERATION": "7", "EMPTY": "",
            ])),
            "qactd[42]: warning: Skipping invalid contact file EMPTY=\"\" QACTD_GENERATION=7 QACTD_PATH=\"/c/a b.vcf\"\n")
        XCTAssertEqual(sink.format(LogRecord(level: .info, message: "ready")), "qactd[42]: info: ready\n")
        // Backslash, quote and every line feed (also the one in a CR LF pair) are escaped.
        XCTAssertEqual(
            sink.format(LogRecord(level: .info, message: "m", fields: ["V": "a \"q\" \\ b\r\nc\nd"])),
            "qactd[42]: info: m V=\"a \\\"q\\\" \\\\ b\r\\nc\\nd\"\n")
    }

    func testJournalFieldNames() {
        XCTAssertEqual(JournalLogSink.fieldName(for: "QACTD_CONTACT_ID"), "QACTD_CONTACT_ID")
        XCTAssertEqual(JournalLogSink.fieldName(for: "qactd_path"), "QACTD_PATH")
        XCTAssertEqual(JournalLogSink.fieldName(for: "contact-id"), "CONTACT_ID")
        XCTAssertEqual(JournalLogSink.fieldName(for: "_PID"), "PID", "trusted fields cannot be forged")
        XCTAssertEqual(JournalLogSink.fieldName(for: "2fast"), "QACTD_2FAST")
        XCTAssertEqual(JournalLogSink.fieldName(for: ""), "QACTD_")
        XCTAssertEqual(JournalLogSink.fieldName(for: String(repeating: "A", count: 80)).count, 64)
    }

    func testJournalFields() {
        let sink = JournalLogSink()
        let record = LogRecord(level: .error, message: "Could not save state", fields: [
            "qactd_generation": "7", "MESSAGE": "forged", "QACTD_PATH": "/s/state.json",
        ])
        XCTAssertEqual(
            sink.fields(for: record),
            [
                "MESSAGE=Could not save state", "PRIORITY=3", "SYSLOG_IDENTIFIER=qactd",
                "QACTD_PATH=/s/state.json", "QACTD_GENERATION=7",
            ])
    }

    func testJournalSendDoesNotCrashWithoutJournald() {
        // No journald here: sd_journal_sendv reports an error code, which must be all that happens.
        let result = JournalLogSink().send(
            LogRecord(level: .info, message: "hello", fields: ["QACTD_CONTACT_ID": "abc"], file: "x.swift", line: 1, function: "f"))
        XCTAssertLessThanOrEqual(result, 0)
    }

    func testJournalStreamChoosesTheSink() throws {
        XCTAssertFalse(LogDestination.isStderrTheJournal(environment: [:]))
        XCTAssertTrue(LogDestination.sink(environment: [:]) is StderrLogSink)
        XCTAssertFalse(LogDestination.isStderrTheJournal(environment: ["JOURNAL_STREAM": "garbage"]))

        var info = stat()
        XCTAssertEqual(fstat(STDERR_FILENO, &info), 0)
        let matching = ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]
        XCTAssertTrue(LogDestination.isStderrTheJournal(environment: matching))
        XCTAssertTrue(LogDestination.sink(environment: matching) is JournalLogSink)
        let other = ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"]
        XCTAssertFalse(LogDestination.isStderrTheJournal(environment: other), "stderr was redirected elsewhere")
    }
}
