import Foundation
import Logging

/// A swift-log handler that keeps every entry in memory, for tests that check what was logged.
/// Copies share one store, as the copies a `Logger` makes of its handler must.
public struct RecordingLogHandler: LogHandler {
    public struct Entry: Sendable, Equatable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
        public var file: String
        public var function: String
        public var line: UInt
    }

    /// Guarded by an `NSLock` (a pthread mutex), not `Synchronization.Mutex`: ThreadSanitizer
    /// cannot see the latter hand a contended lock over (it happens in the kernel) and reported
    /// the appends of `testLoggerIsUsableFromManyThreads` as racing.
    public final class Store: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [Entry] = []

        fileprivate func append(_ entry: Entry) { lock.withLock { entries.append(entry) } }

        /// Everything logged so far, oldest first.
        public var all: [Entry] { lock.withLock { entries } }
        public var messages: [String] { all.map(\.message) }
    }

    public let store = Store()
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]

    public init(logLevel: Logger.Level = .debug) {
        self.logLevel = logLevel
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        store.append(Entry(
            level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" },
            file: event.file, function: event.function, line: event.line))
    }
}

extension Logger {
    /// A logger at `level` whose entries land in the returned store.
    public static func recording(level: Logger.Level = .debug) -> (Logger, RecordingLogHandler.Store) {
        let handler = RecordingLogHandler(logLevel: level)
        return (Logger(label: "test") { _ in handler }, handler.store)
    }
}
