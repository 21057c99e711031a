import Contacts
import NIOConcurrencyHelpers
import Dispatch
import Foundation
import Glibc
import Synchronization
import QuickActionsProtocol
import Logging
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// A `DirectoryWatcher` on a real temp folder with real inotify, feeding an index the way
/// `DaemonCore` does; tests wait for the index to reach a condition, never for a time.
final class WatcherHarness: Sendable {
    struct Seen {
        var index = ContactIndex()
        var work = ActivityCounters()
        var health = WatchHealthInfo(state: "none")
    }

    let watcher: DirectoryWatcher
    let log: RecordingLogHandler.Store
    private let seen = NIOLockedValueBox(Seen())

    init(
        root: String, timing: DirectoryWatcherTiming = DirectoryWatcherTiming(), addWatch: @escaping InotifyAddWatch = { inotify_add_watch($0, $1, $2) },
        probeWriter: @escaping WriterProbe = OpenForWritingProbe.acquireReadLease
    ) {
        let (logger, log) = Logger.recording(level: .debug)
        self.log = log
        watcher = DirectoryWatcher(
            scanner: ContactsDirectoryScanner(root: root), logger: logger, timing: timing, addWatch: addWatch,
            probeWriter: probeWriter)
        apply(watcher.attach())
        watcher.run { [self] update in apply(update) }
    }

    /// While held, deliveries wait (as behind a busy core), so events pile up in the kernel queue.
    private let gate = NIOLockedValueBox((held: false, waiting: 0))

    func holdDeliveries() { gate.withLockedValue { $0.held = true } }
    func releaseDeliveries() { gate.withLockedValue { $0.held = false } }
    var waitingDeliveries: Int { gate.withLockedValue { $0.waiting } }

    private func apply(_ update: ContactsDirectoryUpdate) {
        if gate.withLockedValue({ gate -> Bool in
            if gate.held { gate.waiting += 1 }
            return gate.held
        }) {
            _ = waitUntil(timeout: 60, every: .milliseconds(1)) { !gate.withLockedValue { $0.held } }
            gate.withLockedValue { $0.waiting -= 1 }
        }
        seen.withLockedValue { seen in
            for change in update.changes {
                switch change {
                case .file(let path, let result): seen.index.apply(path: path, result: result)
                case .removed(let path): seen.index.remove(path: path)
                case .removedTree(let directory): seen.index.removeAll(under: directory)
                }
            }
            seen.work.eventsHandled += update.work.eventsHandled
            seen.work.filesParsed += update.work.filesParsed
            seen.work.rescans += update.work.rescans
            seen.health = update.health
        }
    }

    var index: ContactIndex { seen.withLockedValue { $0.index } }
    var work: ActivityCounters { seen.withLockedValue { $0.work } }
    var health: WatchHealthInfo { seen.withLockedValue { $0.health } }
    var names: [String] { index.paths.flatMap { (try? index.entry(path: $0)?.get())?.map(\.name) ?? [] }.sorted() }
    var favoriteNames: [String] { index.favorites.map(\.name) }

    func stop() {
        let done = DispatchSemaphore(value: 0)
        Task { [watcher] in
            await watcher.stop()
            done.signal()
        }
        done.wait()
    }
}

/// The writer probe with a script: the next `staleAnswers` probes say a writer is still there
/// (as the kernel does for a writer between queuing its `IN_CLOSE_WRITE` and dropping its
/// write access), then the real lease decides.
final class ScriptedWriterProbe: Sendable {
    private let staleAnswers = NIOLockedValueBox(0)
    private let made = NIOLockedValueBox(0)

    func reportStaleWriter(times: Int) { staleAnswers.withLockedValue { $0 = times } }
    var staleAnswersLeft: Int { staleAnswers.withLockedValue { $0 } }
    var probesMade: Int { made.withLockedValue { $0 } }

    var probe: WriterProbe {
        { [self] descriptor in
            made.withLockedValue { $0 += 1 }
            let stale = staleAnswers.withLockedValue { left -> Bool in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
            return stale ? true : OpenForWritingProbe.acquireReadLease(descriptor)
        }
    }
}

/// Rewrites a file in place the way `open('w')`, write, close does: same inode, no rename.
func rewriteInPlace(_ path: String, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
    let descriptor = open(path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0o644)
    XCTAssertGreaterThanOrEqual(descriptor, 0, "open \(path)", file: file, line: line)
    let bytes = Array(text.utf8)
    XCTAssertEqual(bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }, bytes.count, file: file, line: line)
    close(descriptor)
}

/// A file in the middle of a save: opened for writing with the first half of its text
/// written, the rest written and the file closed by `finish()`.
struct HalfWrittenFile {
    let path: String
    private let descriptor: CInt
    private let rest: [UInt8]

    init(_ path: String, _ text: String, flags: CInt = O_CREAT | O_EXCL, file: StaticString = #filePath, line: UInt = #line) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CLOEXEC | flags, 0o644)
        XCTAssertGreaterThanOrEqual(descriptor, 0, "open \(path)", file: file, line: line)
        let bytes = Array(text.utf8)
        let half = bytes.count / 2
        rest = Array(bytes[half...])
        XCTAssertEqual(bytes[..<half].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }, half, file: file, line: line)
    }

    func finish(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(rest.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }, rest.count, file: file, line: line)
        close(descriptor)
    }
}
