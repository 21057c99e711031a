import Foundation
import TestSupport
import XCTest

/// A per-user daemon sits in every session: with no client, no change and no watchdog, its
/// threads sleep until something happens. Counted as the kernel counts them: the sum of
/// `voluntary_ctxt_switches` over `/proc/PID/task/*/status`, watched over a quiet window for
/// the one condition that matters: more wake-ups than allowed.
final class IdleEndToEndTests: XCTestCase {
    static let window: Duration = .seconds(10)
    /// "A handful a minute": over the window, at most this many wake-ups of all threads together.
    static let allowedWakeUps = 2

    func testAnIdleDaemonSleepsAfterServingClientsAndChanges() throws {
        let fixture = try DaemonFixture()
        // Enough cards that the start-up scan reads them on several threads at once.
        for number in 0..<300 {
            try fixture.write(contact: "many/\(number).vcf", "BEGIN:VCARD\nVERSION:3.0\nUID:many-\(number)\nFN:Person \(number)\nEND:VCARD\n")
        }
        let daemon = try fixture.start()
        // Everything a session does at first: a scan of many cards, calls (each runs as a task), a watcher that comes
        // and goes, a contact edited (the watcher and the state writer wake), a trigger.
        XCTAssertEqual(fixture.qactl(["status"]).status, 0)
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertEqual(fixture.qactl(["list", "--all"]).status, 0)
        XCTAssertEqual(fixture.qactl(["trigger", "1"]).status, 0)
        try fixture.write(contact: "idle.vcf", "BEGIN:VCARD\nVERSION:3.0\nUID:idle\nFN:Idle Person\nCATEGORIES:starred\nEND:VCARD\n")
        XCTAssertTrue(waitUntil(timeout: 10, every: .milliseconds(50)) { fixture.qactl(["status"]).stdout.contains("307 (5 favorites)") }, fixture.qactl(["status"]).stdout)
        XCTAssertTrue(
            waitUntil(timeout: 10, every: .milliseconds(50)) { (try? fixture.qactl(["status", "--json"]).json()["persisted"] as? Bool) ?? false },
            "the state reached the disk before the quiet window")

        let wakeUps = try Self.wakeUps(of: daemon.processIdentifier)
        let total = wakeUps.values.reduce(0, +)
        print("idle: \(total) wake-ups in \(Self.window) (\(wakeUps.filter { $0.value > 0 }))")
        XCTAssertLessThanOrEqual(total, Self.allowedWakeUps, "threads that woke while idle: \(wakeUps.filter { $0.value > 0 })")
        XCTAssertEqual(fixture.stop(), 0)
    }

    /// Under systemd with `WatchdogSec=`, the watchdog ping is the only periodic work: over the
    /// window the daemon's wake-ups stay within a few per ping (the timer, the hop to the core
    /// and an event loop that prove it is alive, the datagram), and the pings keep coming.
    func testWithAWatchdogThePingIsTheOnlyPeriodicWork() throws {
        let fixture = try DaemonFixture()
        let notifications = try NotifySocket(path: fixture.root.appendingPathComponent("notify").path)
        fixture.daemonEnvironment = ["NOTIFY_SOCKET": notifications.path, "WATCHDOG_USEC": "2000000"]
        let daemon = try fixture.start()
        XCTAssertTrue(waitUntil(timeout: 10, every: .milliseconds(20)) { notifications.received().contains("READY=1") })
        XCTAssertTrue(waitUntil(timeout: 10, every: .milliseconds(20)) { notifications.received().contains("WATCHDOG=1") }, "a first ping")

        let pingsBefore = notifications.received().filter { $0 == "WATCHDOG=1" }.count
        let before = try Self.voluntarySwitches(of: daemon.processIdentifier)
        func pings() -> Int { notifications.received().filter { $0 == "WATCHDOG=1" }.count - pingsBefore }
        // Ten more pings, one a second (half of WATCHDOG_USEC): the event the window is made of.
        XCTAssertTrue(waitUntil(timeout: 20, every: .milliseconds(50)) { pings() >= 10 }, "the pings keep coming")
        let after = try Self.voluntarySwitches(of: daemon.processIdentifier)
        let total = after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
        print("idle with a watchdog: \(total) wake-ups and \(pings()) pings")
        XCTAssertLessThanOrEqual(total, pings() * 3 + Self.allowedWakeUps, "nothing but the pings wakes the daemon")
        XCTAssertEqual(fixture.stop(), 0)
    }

    // MARK: Whatever else writes

    /// GTK rewrites `recently-used.xbel` in `$XDG_DATA_HOME` at every file a person opens; the
    /// Evolution watcher watches only what leads to the address books, so while another program
    /// rewrites it ten times a second, with `Evolution=all` and an online account's book to
    /// follow, the daemon wakes at most `busyAllowedWakeUps` times in `busyWindow` (ten a
    /// minute) and reads nothing but its inotify queue: no book, no registry.
    func testWritesInTheDataHomeDoNotWakeTheEvolutionWatcher() throws {
        try assertQuietWhileTheDataHomeIsWritten(localBooksFolder: true)
    }

    /// The same where EDS never kept a local book, so the data home itself is watched for its
    /// `evolution` folder to appear: an entry of another name narrows that watch for a while.
    func testWritesInADataHomeWithoutEvolutionsFolderDoNotWakeTheWatcherEither() throws {
        try assertQuietWhileTheDataHomeIsWritten(localBooksFolder: false)
    }

    static let busyWindow: Duration = .seconds(30)
    static let busyAllowedWakeUps = 5

    private func assertQuietWhileTheDataHomeIsWritten(localBooksFolder: Bool, file: StaticString = #filePath, line: UInt = #line) throws {
        if let reason = EBookCacheDriver.unavailableReason() {
            throw unavailable("\(reason): run scripts/install-deps --test", file: file, line: line)
        }
        try PrivateEvolutionDataServer.requireInstalled()
        let fixture = try DaemonFixture(extraConfiguration: "[Contacts]\nEvolution=all\n")
        let eds = try PrivateEvolutionDataServer(in: fixture.root)
        let (data, config, cache) = (eds.dataHome, eds.configHome, eds.cacheHome)
        try FileManager.default.createDirectory(at: config.appendingPathComponent("evolution/sources"), withIntermediateDirectories: true)
        try "[Data Source]\nDisplayName=Contacts\nEnabled=true\n\n[Address Book]\nBackendName=carddav\n"
            .write(to: config.appendingPathComponent("evolution/sources/online.source"), atomically: true, encoding: .utf8)
        // EDS's factory makes the book's database where EDS keeps it; then EDS stops, so the
        // only writer while the daemon is watched is the one below.
        try eds.start()
        let database = eds.openOnlineBook("online", file: file, line: line)
        eds.stop()
        // The data home as the test wants it, whatever EDS made there.
        try FileManager.default.removeItem(at: data)
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        if localBooksFolder {
            try FileManager.default.createDirectory(at: data.appendingPathComponent("evolution/addressbook"), withIntermediateDirectories: true)
        }
        let books = try EBookCacheDriver(outputFile: fixture.root.appendingPathComponent("eds-cache.out"))
        try books.put(database, uid: "ada", name: "Online Ada", star: true)
        fixture.daemonEnvironment = ["XDG_DATA_HOME": data.path, "XDG_CONFIG_HOME": config.path, "XDG_CACHE_HOME": cache.path]
        let daemon = try fixture.start()
        func onlineBook() -> [String: Any]? {
            let evolution = (try? fixture.qactl(["status", "--json"]).json())?["evolution"] as? [String: Any]
            return (evolution?["books"] as? [[String: Any]])?.first { $0["uid"] as? String == "online" }
        }
        XCTAssertTrue(waitUntil(timeout: 10, every: .milliseconds(50)) { onlineBook()?["favorites"] as? Int == 1 && onlineBook()?["indexing"] == nil },
                      "the online book is read: \(fixture.log())", file: file, line: line)

        // Rewritten as GLib's g_file_set_contents does: a temporary file renamed over it.
        let writer = try BackgroundProcess("/usr/bin/python3", ["-c", """
            import os, sys, time
            target = os.path.join(sys.argv[1], "recently-used.xbel")
            count = 0
            while True:
                temporary = os.path.join(sys.argv[1], ".recently-used.xbel.%06d" % count)
                with open(temporary, "w") as f:
                    f.write("<xbel version='1.0'>%d</xbel>" % count)
                os.replace(temporary, target)
                count += 1
                print(count, flush=True)
                time.sleep(0.1)
            """, data.path], environment: ProcessInfo.processInfo.environment, outputFile: fixture.root.appendingPathComponent("writer.out"))
        func writes() -> Int { Int(writer.output.split(separator: "\n").last ?? "") ?? 0 }
        XCTAssertTrue(waitUntil(timeout: 10, every: .milliseconds(20)) { writes() >= 10 }, writer.output, file: file, line: line)

        let readsBefore = try Self.readCalls(of: daemon.processIdentifier)
        let writesBefore = writes()
        let wakeUps = try Self.wakeUps(of: daemon.processIdentifier, window: Self.busyWindow, allowed: Self.busyAllowedWakeUps)
        let reads = try Self.readCalls(of: daemon.processIdentifier) - readsBefore
        let total = wakeUps.values.reduce(0, +)
        print("while the data home was written \(writes() - writesBefore) times: \(total) wake-ups and \(reads) read calls in \(Self.busyWindow) (\(wakeUps.filter { $0.value > 0 }))")
        XCTAssertGreaterThanOrEqual(writes() - writesBefore, 100, "the writer kept writing", file: file, line: line)
        XCTAssertLessThanOrEqual(total, Self.busyAllowedWakeUps, "threads that woke: \(wakeUps.filter { $0.value > 0 })", file: file, line: line)
        // Each wake-up reads the inotify queue until it is empty (two calls); reading a book or
        // the registry would take many more.
        XCTAssertLessThanOrEqual(reads, 2 * total, "read calls beyond the inotify queue's", file: file, line: line)
        XCTAssertEqual(onlineBook()?["favorites"] as? Int, 1, file: file, line: line)
        XCTAssertEqual(fixture.stop(), 0, file: file, line: line)
    }

    /// The read system calls the process made so far (`syscr` in `/proc/PID/io`).
    static func readCalls(of pid: Int32) throws -> Int {
        let io = try String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)
        let line = io.split(separator: "\n").first { $0.hasPrefix("syscr:") }
        return Int(line?.split(separator: " ").last ?? "") ?? 0
    }

    /// The daemon's wake-ups per thread over the quiet `window`. The condition watched is the
    /// one the tests are about — more than `allowed` — so a daemon that wakes returns at once; a
    /// quiet one is watched (its `/proc` read every 100 ms, which wakes it not) until the
    /// window's deadline.
    static func wakeUps(of pid: Int32, window: Duration = window, allowed: Int = allowedWakeUps) throws -> [String: Int] {
        let before = try voluntarySwitches(of: pid)
        var wakeUps: [String: Int] = [:]
        _ = waitUntil(timeout: TimeInterval(window.components.seconds), every: .milliseconds(100)) {
            let now = (try? voluntarySwitches(of: pid)) ?? [:]
            wakeUps = now.reduce(into: [:]) { $0[$1.key] = $1.value - (before[$1.key] ?? 0) }
            return wakeUps.values.reduce(0, +) > allowed
        }
        return wakeUps
    }

    /// Each thread's `voluntary_ctxt_switches`, keyed by "tid name".
    static func voluntarySwitches(of pid: Int32) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for thread in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            let folder = "/proc/\(pid)/task/\(thread)"
            guard let status = try? String(contentsOfFile: folder + "/status", encoding: .utf8) else { continue }
            let name = ((try? String(contentsOfFile: folder + "/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                counts["\(thread) \(name)"] = Int(line.split(separator: "\t").last.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
            }
        }
        return counts
    }
}

/// A `NOTIFY_SOCKET` as systemd's: a datagram socket whose messages the test reads.
private final class NotifySocket {
    let path: String
    private let descriptor: CInt
    private var messages: [String] = []

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// Every notification line received so far (`READY=1`, `STATUS=…`, `WATCHDOG=1`, …).
    func received() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = recv(descriptor, &buffer, buffer.count, CInt(MSG_DONTWAIT)), count > 0 {
            messages += String(decoding: buffer.prefix(count), as: UTF8.self).split(separator: "\n").map(String.init)
        }
        return messages
    }
}
