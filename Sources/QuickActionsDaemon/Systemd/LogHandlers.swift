import CSystemd
import Glibc
import Logging
import QuickActionsProtocol
import SystemCalls

// The daemon logs through swift-log's `Logger`; these handlers are its two outputs:
// structured journal entries under systemd, text lines on stderr otherwise.

extension Logger.Level {
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

    /// syslog(3) priority, which journald stores as `PRIORITY=`. syslog has no level below
    /// debug, so swift-log's `trace` is debug too.
    var syslogPriority: Int {
        switch self {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }
}

extension Logger.Metadata {
    /// The handler's own metadata with the event's on top, as swift-log's handlers merge them.
    fileprivate func merging(_ event: Logger.Metadata?) -> Logger.Metadata {
        guard let event else { return self }
        return merging(event) { _, new in new }
    }
}

/// `qactd[1234]: warning: message KEY=value` on stderr, one write(2) per line so
/// concurrent lines never interleave.
struct StderrLogHandler: LogHandler {
    var identifier = "qactd"
    var processID = getpid()
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// One line, fields sorted by key; a value that is empty or holds a space, a quote or a
    /// line break is quoted, with backslash, quote and line feed escaped.
    func format(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata) -> String {
        var line = "\(identifier)[\(processID)]: \(level): \(message)"
        for key in metadata.keys.sorted() {
            let value = metadata[key].map { "\($0)" } ?? ""
            let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0.isNewline }
            line += needsQuotes ? " \(key)=\"\(Self.escaped(value))\"" : " \(key)=\(value)"
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

    func log(event: LogEvent) {
        let line = format(level: event.level, message: event.message, metadata: metadata.merging(event.metadata))
        // Nothing sensible remains to be done when stderr itself fails.
        try? FileIO.writeAll(STDERR_FILENO, Array(line.utf8), path: nil)
    }
}

/// Sends structured entries to journald with `sd_journal_sendv`: each metadata key becomes a
/// journal field (`QACTD_PATH`, `QACTD_CONTACT_ID`, …).
struct JournalLogHandler: LogHandler {
    var identifier = "qactd"
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// journald field names: `[A-Z0-9_]`, not starting with `_` (reserved for trusted fields)
    /// or a digit, at most 64 characters. Metadata keys are upper-cased and other characters
    /// replaced, so a field is never lost for its spelling.
    static func fieldName(for key: String) -> String {
        var name = String(
            key.uppercased().unicodeScalars.map { scalar -> Character in
                let isValid = ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
                return isValid ? Character(scalar) : "_"
            })
        while name.hasPrefix("_") { name.removeFirst() }
        if name.isEmpty || name.first?.isNumber == true { name = "QACTD_" + name }
        return String(name.prefix(64))
    }

    private static let reservedFields: Set<String> = [
        "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC",
    ]

    /// The `FIELD=value` strings of one entry, in a stable order; the iovecs point at these.
    /// Metadata cannot overwrite the fields the handler sets itself.
    func fields(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata) -> [String] {
        var fields = [
            "MESSAGE=\(message)",
            "PRIORITY=\(level.syslogPriority)",
            "SYSLOG_IDENTIFIER=\(identifier)",
        ]
        for key in metadata.keys.sorted() {
            let name = Self.fieldName(for: key)
            guard !Self.reservedFields.contains(name) else { continue }
            fields.append("\(name)=\(metadata[key].map { "\($0)" } ?? "")")
        }
        return fields
    }

    func log(event: LogEvent) {
        send(event)
    }

    /// Returns sd_journal_sendv's result (negative errno when journald is unreachable).
    @discardableResult
    func send(_ event: LogEvent) -> CInt {
        let entries = fields(level: event.level, message: event.message, metadata: metadata.merging(event.metadata))
            .map { Array($0.utf8) }
        let pointers = entries.map { bytes -> UnsafeMutableRawBufferPointer in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
            buffer.copyBytes(from: bytes)
            return buffer
        }
        defer { pointers.forEach { $0.deallocate() } }
        var vectors = zip(pointers, entries).map { buffer, bytes in
            iovec(iov_base: buffer.baseAddress, iov_len: bytes.count)
        }
        let codeFile = "CODE_FILE=\(event.file)"
        let codeLine = "CODE_LINE=\(event.line)"
        return vectors.withUnsafeMutableBufferPointer { buffer in
            sd_journal_sendv_with_location(codeFile, codeLine, event.function, buffer.baseAddress, CInt(buffer.count))
        }
    }
}

enum LogDestination {
    /// Journal when stderr is connected to it (systemd.exec(5): `$JOURNAL_STREAM` holds the
    /// `device:inode` of that stream, so a redirected stderr under systemd still gets text).
    static func isStderrTheJournal(environment: [String: String]) -> Bool {
        guard let stream = environment["JOURNAL_STREAM"] else { return false }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard (try? retryingSystemCall("fstat", path: "stderr") { fstat(STDERR_FILENO, &info) }) != nil else {
            return false
        }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// The journal field that names an app's instance on every entry it logs.
    static let appField = "QACTD_APP"

    /// The daemon's logger: to the journal or to stderr, dropping what is below `level`. An app's
    /// instance names its app on every entry: the `QACTD_APP=` field in the journal (where
    /// `SYSLOG_IDENTIFIER=qactd` stays, so `journalctl -t qactd` still shows every instance), and
    /// `qactd@NAME[PID]:` on stderr, as the unit is named.
    static func logger(level: Logger.Level, environment: [String: String], instance: InstanceName = .plain) -> Logger {
        var handler: any LogHandler
        if isStderrTheJournal(environment: environment) {
            handler = JournalLogHandler(logLevel: level)
            if let app = instance.app { handler[metadataKey: appField] = "\(app.name)" }
        } else {
            handler = StderrLogHandler(identifier: instance.app.map { "qactd@\($0.name)" } ?? "qactd", logLevel: level)
        }
        return Logger(label: "qactd") { [handler] _ in handler }
    }
}
