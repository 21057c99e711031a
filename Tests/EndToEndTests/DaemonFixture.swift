import Foundation
import TestSupport
import XCTest

/// Runs the built `qactd` in a scratch folder of its own (contacts, static items,
/// configuration, state and socket all inside it) and the built `qactl` against it.
/// End-to-end tests drive real processes; nothing here is mocked.
final class DaemonFixture {
    let root: URL
    var contacts: URL { root.appendingPathComponent("contacts") }
    var staticItems: URL { root.appendingPathComponent("shortcuts.plist") }
    var configFile: URL { root.appendingPathComponent("qactd.conf") }
    /// `$XDG_STATE_HOME`, whose `qactd` folder the daemon keeps its state in.
    var stateHome: URL { root.appendingPathComponent("state") }
    var stateDirectory: URL { stateHome.appendingPathComponent("qactd") }
    var stateFile: URL { stateDirectory.appendingPathComponent("state.json") }
    /// Where the daemon's socket is; a test that starts the daemon with no configuration file
    /// sets the one the daemon derives from its `XDG_RUNTIME_DIR`.
    var socketPathOverride: String?
    var socketPath: String { socketPathOverride ?? root.appendingPathComponent("run/qactd.sock").path }
    var logFile: URL { root.appendingPathComponent("qactd.log") }
    private(set) var daemon: Process?
    /// Set for the daemon only (not for qactl), e.g. its locale.
    var daemonEnvironment: [String: String] = [:]
    /// A command the daemon is started through (it must end by exec'ing its arguments), such
    /// as `unshare -m … sh -c 'mount …; exec "$0" "$@"'`: the process keeps qactd's pid.
    var daemonWrapper: [String] = []

    /// Folder of the built products: `$QACTD_BIN_DIR`, else the folder of the running test bundle.
    static let binDirectory: URL = {
        if let override = ProcessInfo.processInfo.environment["QACTD_BIN_DIR"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // swift test runs `<bin>/qactdPackageTests.xctest`; the products sit beside it.
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("qactd").path), directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        linkBuiltClient(in: directory.path)
        return directory
    }()

    static var qactd: String { binDirectory.appendingPathComponent("qactd").path }
    static var qactl: String { binDirectory.appendingPathComponent("qactl").path }
    /// The repository (for the shipped `etc/qactd` files and man pages).
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A scratch folder under /tmp: Unix socket paths must stay under 108 bytes.
    init(extraConfiguration: String = "", copyDemo: Bool = true) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("qactd-e2e-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: contacts, withIntermediateDirectories: true)
        if copyDemo {
            let etc = Self.repository.appendingPathComponent("etc/qactd")
            for collection in try FileManager.default.contentsOfDirectory(atPath: etc.appendingPathComponent("contacts").path) {
                try FileManager.default.copyItem(
                    at: etc.appendingPathComponent("contacts/\(collection)"), to: contacts.appendingPathComponent(collection))
            }
            try FileManager.default.copyItem(at: etc.appendingPathComponent("shortcuts.plist"), to: staticItems)
        }
        try writeConfiguration(extraConfiguration)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: root)
    }

    /// The tests of this fixture play the app (it resigns active) and name the app and books
    /// they use, so the defaults that serve a person's desktop with nothing written (their mail
    /// app, every Evolution book, khard's books, following the contacts) are turned off, after everything
    /// else (so the lines `extra` is on stay where the tests expect them), unless `extra` sets them.
    func writeConfiguration(_ extra: String = "") throws {
        let text = """
            [Contacts]
            Directory=contacts
            [Shortcuts]
            StaticItems=shortcuts.plist
            [Daemon]
            Socket=\(socketPath)
            \(extra)
            """ + Self.desktopDefaultsOff(unlessSetIn: extra)
        try text.write(to: configFile, atomically: true, encoding: .utf8)
    }

    static func desktopDefaultsOff(unlessSetIn extra: String) -> String {
        var lines = ""
        if !extra.contains("Evolution=") { lines += "\n[Contacts]\nEvolution=none" }
        if !extra.contains("Khard=") { lines += "\n[Contacts]\nKhard=none" }
        if !extra.contains("Recompute=") { lines += "\n[Shortcuts]\nRecompute=resign-active" }
        if !extra.contains("DesktopFile=") { lines += "\n[Launcher]\nDesktopFile=none" }
        return lines + "\n"
    }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = stateHome.path
        environment["STATE_DIRECTORY"] = nil
        environment["QACTD_SOCKET"] = socketPath
        environment["NO_COLOR"] = "1"
        for name in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "INVOCATION_ID"] {
            environment[name] = nil
        }
        return environment
    }

    /// Starts qactd and waits until it answers on its socket.
    @discardableResult
    /// `configured: false` starts it with no `--config`: the person's own file, else the
    /// system's, else the built-in defaults.
    func start(arguments: [String] = [], configured: Bool = true, file: StaticString = #filePath, line: UInt = #line) throws -> Process {
        let process = Process()
        let daemonArguments = (configured ? ["--config", configFile.path] : []) + ["--log-level", "debug"] + arguments
        if let wrapper = daemonWrapper.first {
            process.executableURL = URL(fileURLWithPath: wrapper)
            process.arguments = daemonWrapper.dropFirst() + [Self.qactd] + daemonArguments
        } else {
            process.executableURL = URL(fileURLWithPath: Self.qactd)
            process.arguments = daemonArguments
        }
        // No session bus unless a test gives one: a failing trigger must not show a notification
        // on the desktop of whoever runs the tests.
        let noBus = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(root.path)/no-session-bus"]
        process.environment = environment.merging(noBus) { $1 }.merging(daemonEnvironment) { $1 }
        if !FileManager.default.fileExists(atPath: logFile.path) { _ = FileManager.default.createFile(atPath: logFile.path, contents: nil) }
        let logHandle = try FileHandle(forWritingTo: logFile)
        logHandle.seekToEndOfFile()
        process.standardOutput = logHandle
        process.standardError = logHandle
        try process.run()
        daemon = process
        let answered = waitUntil(timeout: 15) { self.qactl(["status"]).status == 0 || !process.isRunning }
        XCTAssertTrue(answered && process.isRunning, "qactd did not start; its log:\n\(self.log())", file: file, line: line)
        return process
    }

    /// SIGTERM and wait; returns the exit status.
    @discardableResult
    func stop() -> Int32? {
        guard let process = daemon, process.isRunning else { return daemon?.terminationStatus }
        process.terminate()
        _ = waitUntil(timeout: 10) { !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        return process.terminationStatus
    }

    func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        func json() throws -> [String: Any] {
            let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
            return object as? [String: Any] ?? [:]
        }
    }

    /// Runs `qactl` against this daemon (`QACTD_SOCKET` points at it).
    func qactl(_ arguments: [String], environment extra: [String: String] = [:]) -> Result {
        Self.run(Self.qactl, arguments, environment: environment.merging(extra) { $1 })
    }

    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: Data? = nil) -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return Result(status: -1, stdout: "", stderr: "\(error)") }
        // Read both pipes before waiting so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var stdoutData = Data(), stderrData = Data()
        group.enter()
        DispatchQueue.global().async { stdoutData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        stderrData = err.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self), stderr: String(decoding: stderrData, as: UTF8.self))
    }

    func write(contact name: String, _ text: String) throws {
        let url = contacts.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    /// Installs the app's own desktop entry `text` as `share/applications/<name>` of the system's
    /// data folders and sets the daemon's `XDG_DATA_HOME` and `XDG_DATA_DIRS` to find it, qactd's
    /// exports folder first, as its environment generator puts it for a session. Returns the path
    /// of the entry qactd exports for the app.
    @discardableResult
    func installAppEntry(_ text: String, name: String = "io.qactd.Test.desktop") throws -> String {
        let applications = root.appendingPathComponent("share/applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try text.write(to: applications.appendingPathComponent(name), atomically: true, encoding: .utf8)
        daemonEnvironment["XDG_DATA_HOME"] = root.appendingPathComponent("data").path
        daemonEnvironment["XDG_DATA_DIRS"] =
            root.appendingPathComponent("data/qactd/exports/share").path + ":" + root.appendingPathComponent("share").path
        return root.appendingPathComponent("data/qactd/exports/share/applications/" + name).path
    }
}
