import Foundation
import TestSupport
import Varlink
import XCTest

/// A `qactd` of a `DaemonFixture` started and killed many times in a row, with an in-process
/// Varlink client instead of `qactl` so that each round costs milliseconds: for the crash and
/// stress loops.
final class DaemonProcess {
    let fixture: DaemonFixture
    private(set) var process: Process?

    init(_ fixture: DaemonFixture) {
        self.fixture = fixture
    }

    /// Starts the daemon and waits until it answers `Status` (it listens only once its first
    /// scan filled the index); returns the reply.
    @discardableResult
    func start(timeout: TimeInterval = 20) throws -> JSONValue {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonFixture.qactd)
        process.arguments = ["--config", fixture.configFile.path, "--log-level", "notice"]
        process.environment = fixture.environment
        if !FileManager.default.fileExists(atPath: fixture.logFile.path) { _ = FileManager.default.createFile(atPath: fixture.logFile.path, contents: nil) }
        let log = try FileHandle(forWritingTo: fixture.logFile)
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.process = process
        var status: JSONValue?
        let answered = waitUntil(timeout: timeout) {
            status = try? self.call("Status")
            return status != nil || !process.isRunning
        }
        // The very failure the crash loops hunt for: never a skip.
        guard answered, let status else {
            throw DaemonDidNotStart(log: String(fixture.log().suffix(3000)))
        }
        return status
    }

    /// One call of `io.qactd.QuickActions` on a connection of its own.
    func call(_ method: String, _ parameters: JSONValue? = nil) throws -> JSONValue {
        try VarlinkClient(unixSocketPath: fixture.socketPath).call("io.qactd.QuickActions." + method, parameters: parameters)
    }

    /// SIGKILL: no clean-up of any kind runs.
    func kill() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

/// Long versions of the crash and stress loops run under `make stress` (STRESS=1).
let isStressRun = ProcessInfo.processInfo.environment["STRESS"] == "1"

/// `qactd` exited or did not answer `Status` in time: a failure of the test that started it.
struct DaemonDidNotStart: Error, CustomStringConvertible {
    let log: String
    var description: String { "qactd did not start; its log:\n\(log)" }
}
