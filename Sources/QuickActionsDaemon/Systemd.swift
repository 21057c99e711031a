import CSystemd
import Glibc
import Synchronization
import SystemCalls

// MARK: - Service manager notifications

/// One assignment of the `sd_notify` protocol (systemd.notify(3)).
public enum ServiceNotification: Equatable, Sendable {
    case ready
    /// Sent with `MONOTONIC_USEC=` automatically: `Type=notify-reload` (systemd ≥ 253) requires it.
    case reloading
    case stopping
    case status(String)
    case watchdog
}

public protocol ServiceManagerNotifier: Sendable {
    func notify(_ notifications: [ServiceNotification])
}

extension ServiceManagerNotifier {
    public func notify(_ notifications: ServiceNotification...) {
        notify(notifications)
    }
}

public enum ServiceNotificationMessage {
    /// The newline-separated datagram for `sd_notify`. `monotonicMicroseconds` is passed
    /// in so the format is testable without a clock.
    public static func format(_ notifications: [ServiceNotification], monotonicMicroseconds: UInt64) -> String {
        var lines: [String] = []
        for notification in notifications {
            switch notification {
            case .ready: lines.append("READY=1")
            case .reloading:
                lines.append("RELOADING=1")
                lines.append("MONOTONIC_USEC=\(monotonicMicroseconds)")
            case .stopping: lines.append("STOPPING=1")
            // A newline would end the assignment early and start a bogus one.
            case .status(let text):
                lines.append("STATUS=" + text.map { $0.isNewline ? " " : String($0) }.joined())
            case .watchdog: lines.append("WATCHDOG=1")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}

/// Talks to the real service manager. Outside systemd (`NOTIFY_SOCKET` unset) `sd_notify`
/// is a no-op, so the daemon needs no "am I under systemd" branch.
public struct SystemdNotifier: ServiceManagerNotifier {
    public init() {}

    public func notify(_ notifications: [ServiceNotification]) {
        guard !notifications.isEmpty else { return }
        let message = ServiceNotificationMessage.format(
            notifications, monotonicMicroseconds: ServiceNotificationMessage.monotonicMicroseconds())
        // A failed notification is not actionable: systemd's own watchdog or start timeout reports it.
        _ = sd_notify(0, message)
    }
}

/// Records notifications instead of sending them, for tests of the code that decides when to notify.
public final class RecordingNotifier: ServiceManagerNotifier {
    private let recorded = Mutex<[[ServiceNotification]]>([])

    public init() {}

    public func notify(_ notifications: [ServiceNotification]) {
        recorded.withLock { $0.append(notifications) }
    }

    /// Every call so far, one array per `notify` call.
    public var calls: [[ServiceNotification]] {
        recorded.withLock { $0 }
    }
}

// MARK: - Socket activation

public enum SocketActivationError: Error, Equatable, Sendable, CustomStringConvertible {
    case listenFailed(errno: CInt)
    case notAListeningUnixStreamSocket(descriptor: CInt)
    case checkFailed(descriptor: CInt, errno: CInt)

    public var description: String {
        switch self {
        case .listenFailed(let errno):
            return "Could not read the sockets passed by systemd (LISTEN_FDS): \(errnoText(errno))."
        case .notAListeningUnixStreamSocket(let descriptor):
            return "The descriptor \(descriptor) passed by systemd is not a listening Unix stream socket; "
                + "check ListenStream= in qactd.socket."
        case .checkFailed(let descriptor, let errno):
            return "Could not inspect the descriptor \(descriptor) passed by systemd: \(errnoText(errno))."
        }
    }
}

public enum SocketActivation {
    /// The listening sockets systemd passed (empty when not socket-activated). Unsets
    /// `LISTEN_FDS`/`LISTEN_PID` so a launched app does not think they are its own.
    public static func listeningDescriptors() throws(SocketActivationError) -> [CInt] {
        let count = sd_listen_fds(1)
        guard count >= 0 else { throw .listenFailed(errno: -count) }
        var descriptors: [CInt] = []
        for descriptor in SD_LISTEN_FDS_START..<(SD_LISTEN_FDS_START + count) {
            let check = sd_is_socket_unix(descriptor, CInt(SOCK_STREAM.rawValue), 1, nil, 0)
            if check < 0 { throw .checkFailed(descriptor: descriptor, errno: -check) }
            if check == 0 { throw .notAListeningUnixStreamSocket(descriptor: descriptor) }
            descriptors.append(descriptor)
        }
        return descriptors
    }
}

// MARK: - Watchdog

public struct WatchdogSettings: Equatable, Sendable {
    /// `WatchdogSec=` as systemd passed it.
    public let timeout: Duration

    public init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Half the timeout, as sd_watchdog_enabled(3) recommends, so one late ping is not fatal.
    public var pingInterval: Duration { timeout / 2 }

    /// nil when systemd expects no pings (no `WATCHDOG_USEC`, or it is meant for another PID).
    public static func fromEnvironment() -> WatchdogSettings? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(1, &microseconds) > 0, microseconds > 0 else { return nil }
        return WatchdogSettings(timeout: .microseconds(Int64(clamping: microseconds)))
    }
}

// MARK: - Logging

public enum LogLevel: Int, Comparable, CaseIterable, Sendable, CustomStringConvertible {
    case debug, info, notice, warning, error

    /// Parses `--log-level` values; accepts the syslog spellings `warn` and `err` too.
    public init?(argument: String) {
        switch argument.lowercased() {
        case "debug": self = .debug
        case "info": self = .info
        case "notice": self = .notice
        case "warning", "warn": self = .warning
        case "error", "err": self = .error
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .debug: return "debug"
        case .info: return "info"
        case .notice: return "notice"
        case .warning: return "warning"
        case .error: return "error"
        }
    }

    /// syslog(3) priority, which journald stores as `PRIORITY=`.
    public var syslogPriority: Int {
        switch self {
        case .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

public struct LogRecord: Equatable, Sendable {
    public let level: LogLevel
    public let message: String
    public let fields: [String: String]
    public let file: String
    public let line: UInt
    public let function: String

    public init(
        level: LogLevel, message: String, fields: [String: String] = [:],
        file: String = "", line: UInt = 0, function: String = ""
    ) {
        self.level = level
        self.message = message
        self.fields = fields
        self.file = file
        self.line = line
        self.function = function
    }
}

public protocol LogSink: Sendable {
    func write(_ record: LogRecord)
}

/// `qactd[1234]: warning: message KEY=value` on stderr, one write(2) per line so
/// concurrent lines never interleave.
public struct StderrLogSink: LogSink {
    public let identifier: String
    public let processID: pid_t

    public init(identifier: String = "qactd", processID: pid_t = getpid()) {
        self.identifier = identifier
        self.processID = processID
    }

    public func format(_ record: LogRecord) -> String {
        var line = "\(identifier)[\(processID)]: \(record.level): \(record.message)"
        for key in record.fields.keys.sorted() {
            let value = record.fields[key] ?? ""
            let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0.isNewline }
            if needsQuotes {
                line += " \(key)=\"\(Self.escaped(value))\""
            } else {
                line += " \(key)=\(value)"
            }
        }
        return line + "\n"
    }

    /// Backslash, quote and line feed escaped, scalar by scalar (a CR LF pair is one
    /// `Character`, so a character-wise replace would miss its line feed).
    private static func escaped(_ value: String) -> String {
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    public func write(_ record: LogRecord) {
        // Nothing sensible remains to be done when stderr itself fails.
        try? FileIO.writeAll(STDERR_FILENO, Array(format(record).utf8), path: nil)
    }
}

/// Sends structured entries to journald with `sd_journal_sendv`.
public struct JournalLogSink: LogSink {
    public let identifier: String

    public init(identifier: String = "qactd") {
        self.identifier = identifier
    }

    /// journald field names: `[A-Z0-9_]`, not starting with `_` (reserved for trusted fields)
    /// or a digit, at most 64 characters. Caller keys are upper-cased and other characters
    /// replaced, so a field is never lost for its spelling.
    public static func fieldName(for key: String) -> String {
        var name = String(
            key.uppercased().unicodeScalars.map { scalar -> Character in
                let isValid = ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
                return isValid ? Character(scalar) : "_"
            })
        while name.hasPrefix("_") { name.removeFirst() }
        if name.isEmpty || name.first?.isNumber == true { name = "QACTD_" + name }
        return String(name.prefix(64))
    }

    /// The `FIELD=value` strings of one entry, in a stable order; the iovecs point at these.
    public func fields(for record: LogRecord) -> [String] {
        var fields = [
            "MESSAGE=\(record.message)",
            "PRIORITY=\(record.level.syslogPriority)",
            "SYSLOG_IDENTIFIER=\(identifier)",
        ]
        let reserved: Set<String> = ["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC"]
        for key in record.fields.keys.sorted() {
            let name = Self.fieldName(for: key)
            guard !reserved.contains(name) else { continue }
            fields.append("\(name)=\(record.fields[key] ?? "")")
        }
        return fields
    }

    public func write(_ record: LogRecord) {
        _ = send(record)
    }

    /// Returns sd_journal_sendv's result (negative errno when journald is unreachable).
    @discardableResult
    public func send(_ record: LogRecord) -> CInt {
        let entries = fields(for: record).map { Array($0.utf8) }
        let pointers = entries.map { bytes -> UnsafeMutableRawBufferPointer in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
            buffer.copyBytes(from: bytes)
            return buffer
        }
        defer { pointers.forEach { $0.deallocate() } }
        var vectors = zip(pointers, entries).map { buffer, bytes in
            iovec(iov_base: buffer.baseAddress, iov_len: bytes.count)
        }
        let codeFile = "CODE_FILE=\(record.file)"
        let codeLine = "CODE_LINE=\(record.line)"
        return vectors.withUnsafeMutableBufferPointer { buffer in
            sd_journal_sendv_with_location(codeFile, codeLine, record.function, buffer.baseAddress, CInt(buffer.count))
        }
    }
}

public enum LogDestination {
    /// Journal when stderr is connected to it (systemd.exec(5): `$JOURNAL_STREAM` holds the
    /// `device:inode` of that stream, so a redirected stderr under systemd still gets text).
    public static func isStderrTheJournal(environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard (try? retryingSystemCall("fstat", path: "stderr") { fstat(STDERR_FILENO, &info) }) != nil else {
            return false
        }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    public static func sink(environment: [String: String]) -> any LogSink {
        isStderrTheJournal(environment: environment) ? JournalLogSink() : StderrLogSink()
    }
}

/// Filters by level and hands records to a sink. A plain value: copy it anywhere, from any thread.
public struct Logger: Sendable {
    public let minimumLevel: LogLevel
    public let sink: any LogSink

    public init(minimumLevel: LogLevel = .info, sink: any LogSink) {
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= minimumLevel }

    public func log(
        _ level: LogLevel, _ message: @autoclosure () -> String, fields: [String: String] = [:],
        file: String = #fileID, line: UInt = #line, function: String = #function
    ) {
        guard isEnabled(level) else { return }
        sink.write(
            LogRecord(level: level, message: message(), fields: fields, file: file, line: line, function: function))
    }

    public func debug(_ message: @autoclosure () -> String, fields: [String: String] = [:], file: String = #fileID, line: UInt = #line, function: String = #function) {
        log(.debug, message(), fields: fields, file: file, line: line, function: function)
    }

    public func info(_ message: @autoclosure () -> String, fields: [String: String] = [:], file: String = #fileID, line: UInt = #line, function: String = #function) {
        log(.info, message(), fields: fields, file: file, line: line, function: function)
    }

    public func notice(_ message: @autoclosure () -> String, fields: [String: String] = [:], file: String = #fileID, line: UInt = #line, function: String = #function) {
        log(.notice, message(), fields: fields, file: file, line: line, function: function)
    }

    public func warning(_ message: @autoclosure () -> String, fields: [String: String] = [:], file: String = #fileID, line: UInt = #line, function: String = #function) {
        log(.warning, message(), fields: fields, file: file, line: line, function: function)
    }

    public func error(_ message: @autoclosure () -> String, fields: [String: String] = [:], file: String = #fileID, line: UInt = #line, function: String = #function) {
        log(.error, message(), fields: fields, file: file, line: line, function: function)
    }
}
