import Foundation
import Logging
import TestSupport
import QuickActionsProtocol
import XCTest

@testable import QuickActionsDaemon

final class ServiceNotificationTests: XCTestCase {
    func testMessageFormat() {
        XCTAssertEqual(
            SystemdNotifier.message([.ready, .status("12 contacts, 3 favorites, generation 7")], monotonicMicroseconds: 0),
            "READY=1\nSTATUS=12 contacts, 3 favorites, generation 7")
        XCTAssertEqual(
            SystemdNotifier.message([.reloading], monotonicMicroseconds: 123_456),
            "RELOADING=1\nMONOTONIC_USEC=123456")
        XCTAssertEqual(SystemdNotifier.message([.stopping, .watchdog], monotonicMicroseconds: 0), "STOPPING=1\nWATCHDOG=1")
        XCTAssertEqual(
            SystemdNotifier.message([.status("line one\nREADY=1")], monotonicMicroseconds: 0),
            "STATUS=line one READY=1", "a newline in a status must not smuggle in another assignment")
    }

    func testMonotonicClockAdvances() {
        let first = monotonicMicroseconds()
        let second = monotonicMicroseconds()
        XCTAssertGreaterThan(first, 0)
        XCTAssertGreaterThanOrEqual(second, first)
    }

    func testRecordingNotifier() {
        let notifier = RecordingNotifier()
        notifier.notify(.reloading)
        notifier.notify([.ready, .status("ok")])
        XCTAssertEqual(notifier.calls, [[.reloading], [.ready, .status("ok")]])
    }

    func testRealNotifierWithoutSystemdSendsNothingAndFailsNothing() {
        unsetenv("NOTIFY_SOCKET")
        // sd_notify(3): 0 when there is no service manager to tell, negative on an error.
        XCTAssertEqual(SystemdNotifier().send([.ready, .status("testing")]), 0)
        XCTAssertEqual(SystemdNotifier().send([]), 0, "nothing to say, nothing sent")
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
        XCTAssertGreaterThan(SystemdNotifier().send([.reloading]), 0, "sent")

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

final class LoggingTests: XCTestCase {
    func testLevelParsing() {
        XCTAssertEqual(Logger.Level(argument: "debug"), .debug)
        XCTAssertEqual(Logger.Level(argument: "INFO"), .info)
        XCTAssertEqual(Logger.Level(argument: "notice"), .notice)
        XCTAssertEqual(Logger.Level(argument: "warn"), .warning)
        XCTAssertEqual(Logger.Level(argument: "warning"), .warning)
        XCTAssertEqual(Logger.Level(argument: "err"), .error)
        XCTAssertNil(Logger.Level(argument: "loud"))
        // `--log-level` offers swift-log's levels from debug to error, not trace or critical.
        XCTAssertNil(Logger.Level(argument: "trace"))
        XCTAssertNil(Logger.Level(argument: "critical"))
        XCTAssertEqual(([.debug, .info, .notice, .warning, .error] as [Logger.Level]).map(\.syslogPriority), [7, 6, 5, 4, 3])
        XCTAssertEqual(Logger.Level.trace.syslogPriority, 7, "syslog has nothing below debug")
        XCTAssertEqual(Logger.Level.critical.syslogPriority, 2)
    }

    func testLoggerFiltersByLevel() {
        let (logger, log) = Logger.recording(level: .notice)
        logger.debug("d")
        logger.info("i")
        logger.notice("n")
        logger.warning("w", metadata: ["QACTD_PATH": "/x"])
        logger.error("e")
        XCTAssertEqual(log.messages, ["n", "w", "e"])
        XCTAssertEqual(log.all[1].metadata, ["QACTD_PATH": "/x"])
        XCTAssertTrue(log.all[0].file.hasSuffix("SystemdTests.swift"))
    }

    func testFilteredMessagesAreNotEvaluated() {
        let (logger, _) = Logger.recording(level: .error)
        var evaluated = false
        func expensive() -> String {
            evaluated = true
            return "x"
        }
        logger.debug("\(expensive())")
        XCTAssertFalse(evaluated)
    }

    func testLoggerIsUsableFromManyThreads() {
        let (logger, log) = Logger.recording(level: .debug)
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            logger.info("message \(index)")
        }
        XCTAssertEqual(log.all.count, 200)
    }

    func testStderrFormat() {
        let handler = StderrLogHandler(identifier: "qactd", processID: 42)
        XCTAssertEqual(
            handler.format(level: .warning, message: "Skipping invalid contact file", metadata: [
                "QACTD_PATH": "/c/a b.vcf", "QACTD_GENERATION": "7", "EMPTY": "",
            ]),
            "qactd[42]: warning: Skipping invalid contact file EMPTY=\"\" QACTD_GENERATION=7 QACTD_PATH=\"/c/a b.vcf\"\n")
        XCTAssertEqual(handler.format(level: .info, message: "ready", metadata: [:]), "qactd[42]: info: ready\n")
        // swift-log's notice keeps its own name.
        XCTAssertEqual(handler.format(level: .notice, message: "Started", metadata: [:]), "qactd[42]: notice: Started\n")
        // Backslash, quote and every line feed (also the one in a CR LF pair) are escaped.
        XCTAssertEqual(
            handler.format(level: .info, message: "m", metadata: ["V": "a \"q\" \\ b\r\nc\nd"]),
            "qactd[42]: info: m V=\"a \\\"q\\\" \\\\ b\r\\nc\\nd\"\n")
    }

    func testHandlersKeepTheirLevelAndMetadataForTheLogger() {
        var handler = StderrLogHandler(identifier: "qactd", processID: 42, logLevel: .warning)
        handler[metadataKey: "QACTD_GENERATION"] = "7"
        var logger = Logger(label: "test") { _ in handler }
        XCTAssertEqual(logger.logLevel, .warning, "the level comes from --log-level through the handler")
        XCTAssertEqual(logger[metadataKey: "QACTD_GENERATION"], "7")
        logger.logLevel = .debug
        XCTAssertEqual(logger.logLevel, .debug)

        var journal = Logger(label: "test") { _ in JournalLogHandler(logLevel: .error) }
        XCTAssertEqual(journal.logLevel, .error)
        journal[metadataKey: "QACTD_PATH"] = "/x"
        XCTAssertEqual(journal[metadataKey: "QACTD_PATH"], "/x")
    }

    func testJournalFieldNames() {
        XCTAssertEqual(JournalLogHandler.fieldName(for: "QACTD_CONTACT_ID"), "QACTD_CONTACT_ID")
        XCTAssertEqual(JournalLogHandler.fieldName(for: "qactd_path"), "QACTD_PATH")
        XCTAssertEqual(JournalLogHandler.fieldName(for: "contact-id"), "CONTACT_ID")
        XCTAssertEqual(JournalLogHandler.fieldName(for: "_PID"), "PID", "trusted fields cannot be forged")
        XCTAssertEqual(JournalLogHandler.fieldName(for: "2fast"), "QACTD_2FAST")
        XCTAssertEqual(JournalLogHandler.fieldName(for: ""), "QACTD_")
        XCTAssertEqual(JournalLogHandler.fieldName(for: String(repeating: "A", count: 80)).count, 64)
    }

    func testJournalFields() {
        let handler = JournalLogHandler()
        XCTAssertEqual(
            handler.fields(level: .error, message: "Could not save state", metadata: [
                "qactd_generation": "7", "MESSAGE": "forged", "QACTD_PATH": "/s/state.json",
            ]),
            [
                "MESSAGE=Could not save state", "PRIORITY=3", "SYSLOG_IDENTIFIER=qactd",
                "QACTD_PATH=/s/state.json", "QACTD_GENERATION=7",
            ])
        // swift-log's notice is syslog's notice.
        XCTAssertEqual(
            handler.fields(level: .notice, message: "Started", metadata: ["CODE_LINE": "1", "sl-service": "socket"]),
            ["MESSAGE=Started", "PRIORITY=5", "SYSLOG_IDENTIFIER=qactd", "SL_SERVICE=socket"])
    }

    func testJournalSendDoesNotCrashWithoutJournald() {
        // No journald here: sd_journal_sendv reports an error code, which must be all that happens.
        let result = JournalLogHandler().send(
            LogEvent(
                level: .info, message: "hello", metadata: ["QACTD_CONTACT_ID": "abc"], source: nil,
                file: "x.swift", function: "f", line: 1))
        XCTAssertLessThanOrEqual(result, 0)
    }

    func testJournalStreamChoosesTheHandler() throws {
        XCTAssertFalse(LogDestination.isStderrTheJournal(environment: [:]))
        XCTAssertTrue(LogDestination.logger(level: .info, environment: [:]).handler is StderrLogHandler)
        XCTAssertFalse(LogDestination.isStderrTheJournal(environment: ["JOURNAL_STREAM": "garbage"]))

        var info = stat()
        XCTAssertEqual(fstat(STDERR_FILENO, &info), 0)
        let matching = ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]
        XCTAssertTrue(LogDestination.isStderrTheJournal(environment: matching))
        let journal = LogDestination.logger(level: .notice, environment: matching)
        XCTAssertTrue(journal.handler is JournalLogHandler)
        XCTAssertEqual(journal.logLevel, .notice)
        let other = ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"]
        XCTAssertFalse(LogDestination.isStderrTheJournal(environment: other), "stderr was redirected elsewhere")
    }

    /// An app's instance names its app on every entry: `QACTD_APP=` in the journal (metadata of
    /// the call cannot replace it), `qactd@NAME[PID]:` on stderr; the plain daemon neither.
    func testAnAppsEntriesNameTheApp() throws {
        let mail = InstanceName.app(try AppName(validating: "mail"))
        var info = stat()
        XCTAssertEqual(fstat(STDERR_FILENO, &info), 0)
        let matching = ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"]
        let journal = try XCTUnwrap(LogDestination.logger(level: .info, environment: matching, instance: mail).handler as? JournalLogHandler)
        let fields = journal.fields(
            level: .info, message: "hello", metadata: journal.metadata.merging(["QACTD_PATH": "/x"]) { $1 })
        XCTAssertTrue(fields.contains("QACTD_APP=mail"), "\(fields)")
        XCTAssertTrue(fields.contains("SYSLOG_IDENTIFIER=qactd"), "\(fields)")
        XCTAssertTrue(fields.contains("QACTD_PATH=/x"), "\(fields)")
        let plain = try XCTUnwrap(LogDestination.logger(level: .info, environment: matching).handler as? JournalLogHandler)
        XCTAssertFalse(plain.fields(level: .info, message: "hello", metadata: plain.metadata).contains { $0.hasPrefix("QACTD_APP=") })

        let stderr = try XCTUnwrap(LogDestination.logger(level: .info, environment: [:], instance: mail).handler as? StderrLogHandler)
        XCTAssertTrue(stderr.format(level: .info, message: "hello", metadata: [:]).hasPrefix("qactd@mail[\(getpid())]: info: hello"))
        let plainStderr = try XCTUnwrap(LogDestination.logger(level: .info, environment: [:]).handler as? StderrLogHandler)
        XCTAssertTrue(plainStderr.format(level: .info, message: "hello", metadata: [:]).hasPrefix("qactd[\(getpid())]: info: hello"))
    }
}
