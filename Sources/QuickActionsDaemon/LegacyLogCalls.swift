// TEMPORARY: removed when the core is rewritten.
//
// DaemonCore.swift, AppDelivery.swift, ContactsWatching.swift, QuickActionsHandler.swift and
// WatchBroadcaster.swift are being rewritten elsewhere and still make the old home-made
// logger's calls, `logger.log(.warning, "…", fields: ["QACTD_PATH": path])`, on a `Logger`
// they do not import. This keeps them compiling on swift-log until then; new code calls
// `logger.warning("…", metadata: ["QACTD_PATH": "\(path)"])`.

// Re-exported so that those files, which do not `import Logging`, can name its `Logger`.
@_exported import Logging

extension Logger {
    func log(
        _ level: Logger.Level, _ message: @autoclosure () -> String, fields: [String: String] = [:],
        file: String = #fileID, function: String = #function, line: UInt = #line
    ) {
        log(
            level: level, "\(message())", metadata: fields.mapValues { .string($0) }, source: nil,
            file: file, function: function, line: line)
    }
}
